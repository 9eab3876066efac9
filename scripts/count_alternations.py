"""Count regex alternation bars written as code (issue 51, "patterns as data").

Every ``|`` in a non-docstring string literal of a module under ``fincprg/`` counts: word alternations belong in
word lists (``fincprg/*/data/*.jsonl``, compiled by :func:`fincprg.wordlists.alternation`), so the count
measures how much vocabulary is still written as regex source. Docstrings are left out (they explain patterns,
they are not patterns); f-string pieces count like any other literal.

Usage: ``python scripts/count_alternations.py [--top N]`` prints the total and the files with the most bars.
"""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "fincprg"


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string constants that are docstrings (of the module, a class or a function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out.add(id(first.value))
    return out


def count_file(path: Path) -> int:
    """The ``|`` characters in the file's non-docstring string literals."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docs = _docstrings(tree)
    return sum(node.value.count("|") for node in ast.walk(tree)
               if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs)


def count_all(pkg: Path = PKG) -> dict[str, int]:
    """{path relative to ``fincprg/``: bars} for every module under ``pkg`` (files without bars included)."""
    return {p.relative_to(pkg).as_posix(): count_file(p) for p in sorted(pkg.rglob("*.py"))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=15, help="how many files to list (default 15)")
    args = ap.parse_args()
    counts = count_all()
    print(f"total {sum(counts.values())} bars in {sum(1 for n in counts.values() if n)} files")
    for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:args.top]:
        print(f"{n:6d}  {name}")


if __name__ == "__main__":
    main()
