"""A stage's code hash: the source of every fincprg module its entry module imports, transitively.

Imports are read with :mod:`ast` (never executed), lazy ones inside functions included, so an edit to
``llm/`` or ``layout.py`` changes the signature of exactly the stages that can run that code, and an edit
to a module no stage imports (the report, the CLI) re-runs nothing. A package's ``data/`` folder (the
finance lexicons) counts as part of each of its modules. The engine's own modules are not hashed: it moves
bytes, and the same bytes either way is what the engine tests check. The contract (:mod:`fincprg.contract`) is:
every stage imports it, and a change to it (the table of stages, how a signature is made) re-runs every stage.

Ground floor, below the contract whose signatures use it: a stage is anything that names its modules.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Protocol

from fincprg.io import hash_files

PKG = Path(__file__).resolve().parent  # the fincprg package folder


class Stage(Protocol):
    """What the code hash reads of a stage's spec (:class:`fincprg.contract.StageSpec`)."""

    def modules(self) -> list[str]:
        """The modules its entry and engine hooks name."""


def module_file(root: Path, name: str) -> Path | None:
    """The file of module ``name`` (``fincprg.x.y``) under ``root`` (the fincprg folder), or None."""
    parts = name.split(".")[1:]
    base = root.joinpath(*parts) if parts else root
    for f in (base.with_suffix(".py") if parts else None, base / "__init__.py"):
        if f is not None and f.is_file():
            return f
    return None


@functools.lru_cache(maxsize=4096)
def _deps(path: Path, mtime_ns: int, size: int, root: Path) -> tuple[Path, ...]:
    """The files of the fincprg modules ``path`` imports. ``from fincprg.a import b`` depends on module
    ``fincprg.a.b`` when there is one, else on ``fincprg.a`` (``b`` is a name in it); a package's
    ``__init__`` is not added for its submodules. Cached by file identity and mtime."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "fincprg":
            for a in node.names:
                names.append(f"{node.module}.{a.name}" if module_file(root, f"{node.module}.{a.name}")
                             else node.module or "")
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names if a.name.split(".")[0] == "fincprg"]
    return tuple(f for n in names if (f := module_file(root, n)) is not None)


def imported_files(modules: list[str], root: Path = PKG) -> set[Path]:
    """The files of ``modules`` and of every fincprg module they import, transitively."""
    seen: set[Path] = set()
    todo = [f for m in modules if (f := module_file(root, m)) is not None]
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            st = f.stat()
            todo += _deps(f, st.st_mtime_ns, st.st_size, root)
    return seen


def stage_files(spec: Stage, root: Path = PKG) -> list[Path]:
    """What a stage's code hash covers: its modules' closure plus the ``data/`` folders of their packages."""
    files = imported_files(spec.modules(), root)
    data = {f.parent / "data" for f in files}
    extra = {p for d in data if d.is_dir() for p in d.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    return sorted(files | extra)


def code_hash(spec: Stage, root: Path | None = None) -> str:
    """Hash of the source a stage's output depends on (see the module docstring)."""
    root = root or PKG  # looked up at call time: a test points it at an edited copy
    return hash_files(stage_files(spec, root), root)
