"""The package floors: each top-level package of fincprg imports only its own floor or lower ones, the package
graph has no loop, and the engine names no stage.

Imports are read with ast, lazy (function-level) ones included: a loop through a lazy import is still a loop
in the design. README.md "Architecture" draws the same floors.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fincprg import layout as L
from tests.unit.test_stage_contract import _docstrings

PKG = Path(__file__).resolve().parents[2] / "fincprg"

# lowest first; a package may import its own floor and those below (the package graph is checked for loops)
FLOORS: tuple[tuple[str, frozenset[str]], ...] = (
    ("ground", frozenset({"errors", "version", "records", "io", "config", "config_sections", "registry", "layout",
                         "codehash", "contract", "manifest_counts", "wordlists"})),
    ("libraries", frozenset({"finance", "models", "llm", "evaluate"})),
    ("stages", frozenset({"ingest", "chunking", "generate", "topics", "verify", "mine", "export"})),
    ("engine", frozenset({"pipeline"})),
    ("tools", frozenset({"estimate", "audit", "report", "train"})),
    ("entry points", frozenset({"cli", "__main__", "fincprg"})),
)
FLOOR_OF = {pkg: i for i, (_, pkgs) in enumerate(FLOORS) for pkg in pkgs}
# the engine modules that must not know any stage (the table of stages is the contract's, fincprg/contract.py)
ENGINE = ("runner.py", "context.py", "ray_engine.py", "outputs.py", "lock.py")


def _package(f: Path, root: Path = PKG) -> str:
    """The top-level package (or top-level module) a file belongs to: ``fincprg/mine/stage.py`` -> mine."""
    rel = f.relative_to(root)
    if len(rel.parts) == 1:
        return "fincprg" if rel.stem == "__init__" else rel.stem
    return rel.parts[0]


def _imported(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] != "fincprg":
        return None
    return parts[1] if len(parts) > 1 else "fincprg"


def package_edges(root: Path = PKG) -> dict[tuple[str, str], list[str]]:
    """(importer, imported) package -> the ``file:line`` of each import, every import in the file counted."""
    edges: dict[tuple[str, str], list[str]] = {}
    for f in sorted(root.rglob("*.py")):
        src = _package(f, root)
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            targets: list[str | None] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "fincprg":  # from fincprg import layout: the names are the packages
                    targets = [a.name for a in node.names]
                else:
                    targets = [_imported(node.module)]
            elif isinstance(node, ast.Import):
                targets = [_imported(a.name) for a in node.names]
            for t in targets:
                if t and t != src:
                    edges.setdefault((src, t), []).append(f"{f.relative_to(root.parent)}:{node.lineno}")
    return edges


def test_every_package_has_a_floor():
    pkgs = {_package(f) for f in PKG.rglob("*.py")}
    assert pkgs - set(FLOOR_OF) == set(), "add the new package to a floor in FLOORS (and README's Architecture)"


def test_each_package_imports_only_its_floor_or_lower():
    upward = [f"{a} ({FLOORS[FLOOR_OF[a]][0]}) imports {b} ({FLOORS[FLOOR_OF[b]][0]}) at {', '.join(where)}"
              for (a, b), where in sorted(package_edges().items())
              if a in FLOOR_OF and b in FLOOR_OF and FLOOR_OF[b] > FLOOR_OF[a]]
    assert not upward, "imports that reach up a floor:\n" + "\n".join(upward)


def test_the_package_graph_has_no_loop():
    graph: dict[str, set[str]] = {}
    for a, b in package_edges():
        graph.setdefault(a, set()).add(b)
    loops: list[str] = []
    state: dict[str, int] = {}

    def visit(p: str, path: list[str]) -> None:
        state[p] = 1
        for q in sorted(graph.get(p, ())):
            if state.get(q) == 1:
                loops.append(" -> ".join(path[path.index(q):] + [q]))
            elif q not in state:
                visit(q, path + [q])
        state[p] = 2

    for p in sorted(graph):
        if p not in state:
            visit(p, [p])
    assert not loops, "package import loops:\n" + "\n".join(loops)


def test_the_checks_see_lazy_imports_and_loops(tmp_path):
    """The edge reader counts an import inside a function, so a lazy loop cannot hide."""
    pkg = tmp_path / "fincprg"
    (pkg / "a").mkdir(parents=True)
    (pkg / "b").mkdir()
    (pkg / "a" / "m.py").write_text("from fincprg.b import x\n")
    (pkg / "b" / "x.py").write_text("def f():\n    from fincprg.a import m\n    return m\n")
    assert set(package_edges(pkg)) == {("a", "b"), ("b", "a")}


@pytest.mark.parametrize("name", ENGINE)
def test_the_engine_names_no_stage(name):
    """What a stage needs from an engine is a field of its spec: the runner, the context and the Ray engine
    name no stage (no ``L.MINE``, no ``"mine"``, no stage package import)."""
    f = PKG / "pipeline" / name
    tree = ast.parse(f.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    stage_consts = {"INGEST", "CHUNK", "GENERATE", "TOPICS", "VERIFY", "MINE", "EXPORT"}
    stage_names = set(L.STAGE_DIRS) | set(L.STAGE_DIRS.values()) | {"chunking"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in stage_consts:
            found.append(f"{node.lineno}: L.{node.attr}")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                and node.value in stage_names:
            found.append(f"{node.lineno}: {node.value!r}")
    assert not found, f"pipeline/{name} names stages: {found}"


def test_the_engine_imports_no_stage_package():
    """It sits above the stages but reaches them only through the ``module:function`` strings of their specs."""
    stages = FLOORS[FLOOR_OF["mine"]][1]
    found = {b: where for (a, b), where in package_edges().items() if a == "pipeline" and b in stages}
    assert not found, found


STAGES = FLOORS[2][1]


def test_no_stage_imports_another_stages_module():
    """A stage reads what another stage wrote from disk, never its code: what several stages share sits on the
    libraries floor (finance, models, llm) or the ground. Lazy imports count."""
    cross = {(a, b): where for (a, b), where in package_edges().items() if a in STAGES and b in STAGES}
    assert not cross, "a stage imports another stage's module:\n" + "\n".join(
        f"{a} -> {b} at {', '.join(w)}" for (a, b), w in sorted(cross.items()))
