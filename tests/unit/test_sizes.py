"""Small modules, short functions (GUIDE habit 10, issues 39 and 51): no module of fincprg over 400 lines, and no
function anywhere in fincprg over 60 lines (each subpackage and top-level module checked as one case, so a failure
names where; a stage's entry, the ``module:function`` each spec names, is also checked by name). A function's length
is ``end_lineno - lineno + 1`` of its ``def``, its decorators not counted; a nested function counts within its parent
and on its own.
"""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from fincprg.contract import STAGES

PKG = Path(__file__).resolve().parents[2] / "fincprg"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# every top-level part of the package: a subpackage (cli/, verify/...) or a module (config.py, io.py...), found from
# the files themselves so that a new one is checked without being listed here
PARTS = sorted({f.relative_to(PKG).parts[0] for f in PKG.rglob("*.py")})
EXEMPT: frozenset[str] = frozenset()  # a module allowed over the limits, with the reason beside it


def _rel(f: Path) -> str:
    return f.relative_to(PKG.parent).as_posix()


def module_lines(f: Path) -> int:
    return len(f.read_text(encoding="utf-8").splitlines())


def long_functions(f: Path, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """``name:lines`` of each function in ``f`` longer than ``limit`` lines."""
    tree = ast.parse(f.read_text(encoding="utf-8"))
    return [f"{node.name}:{node.end_lineno - node.lineno + 1}" for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > limit]


def _entry_file(entry: str) -> tuple[Path, str]:
    module, func = entry.split(":")
    return Path(importlib.util.find_spec(module).origin), func


def test_no_module_over_400_lines():
    big = {_rel(f): n for f in sorted(PKG.rglob("*.py"))
           if (n := module_lines(f)) > MAX_MODULE_LINES and _rel(f) not in EXEMPT}
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them): {big}"


@pytest.mark.parametrize("part", PARTS)
def test_no_function_over_60_lines(part):
    files = sorted((PKG / part).rglob("*.py")) if (PKG / part).is_dir() else [PKG / part]
    long = {_rel(f): fs for f in files if _rel(f) not in EXEMPT and (fs := long_functions(f))}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines in fincprg/{part} (split them): {long}"


def test_every_module_is_in_a_part():
    """The parts above cover every module of fincprg, top-level ones and cli/ included."""
    assert {"cli", "config.py", "verify"} <= set(PARTS)
    covered = {f for part in PARTS for f in ((PKG / part).rglob("*.py") if (PKG / part).is_dir() else [PKG / part])}
    assert covered == set(PKG.rglob("*.py"))


@pytest.mark.parametrize("spec", STAGES, ids=lambda s: s.name)
def test_stage_entry_under_60_lines(spec):
    f, func = _entry_file(spec.entry)
    if _rel(f) in EXEMPT:
        pytest.skip(f"{_rel(f)} is exempt")
    tree = ast.parse(f.read_text(encoding="utf-8"))
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func)
    assert node.end_lineno - node.lineno + 1 <= MAX_FUNCTION_LINES, f"{spec.entry} is over {MAX_FUNCTION_LINES} lines"


def test_the_counts_see_what_they_should(tmp_path):
    """60 lines from the ``def`` pass (decorators not counted), 61 fail, a nested function counts on its own, and
    a 400-line module passes."""
    body = "".join(f"    x{i} = {i}\n" for i in range(59))  # with its def line, a 60-line function
    nested = "".join("    " + line + "\n" for line in ("def inner():\n" + body + "    y = 0").splitlines())
    f = tmp_path / "m.py"
    f.write_text("@decorator\n@decorator\ndef at_limit():\n" + body + "def over():\n" + body + "    y = 0\n"
                 + "def outer():\n" + nested)
    assert long_functions(f) == ["over:61", "outer:62", "inner:61"]
    f.write_text("x = 1\n" * 400)
    assert module_lines(f) == 400
