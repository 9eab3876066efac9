"""eval/ has no import loops (issue 51): a section module never imports the benchmark that runs it."""
from __future__ import annotations

import ast
from pathlib import Path

EVAL = Path(__file__).resolve().parents[2] / "eval"


def _imports() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for p in EVAL.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):  # lazy imports inside functions count
            if isinstance(node, ast.ImportFrom) and node.module == "eval":
                deps |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("eval."):
                deps.add(node.module.split(".", 1)[1])
            elif isinstance(node, ast.Import):
                deps |= {a.name.split(".", 1)[1] for a in node.names if a.name.startswith("eval.")}
        out[p.stem] = deps
    return out


def test_eval_modules_import_no_loop():
    graph = _imports()
    loops = []

    def walk(start: str, node: str, path: list[str]) -> None:
        for d in graph.get(node, ()):
            if d == start:
                loops.append(" -> ".join([*path, d]))
            elif d not in path and d in graph:
                walk(start, d, [*path, d])

    for m in graph:
        walk(m, m, [m])
    assert not loops, loops
    assert "_faults_common" in graph["bench_faults"] and "bench_faults" not in graph["_faults_misuse"]
