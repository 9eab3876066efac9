"""Check pyproject.toml against the code: every third-party import in fincprg/ is declared, every declared
runtime dependency is used, and requires-python is no lower than what the installed dependencies need.

Run: ``python scripts/check_deps.py`` (exit code 1 and one line per problem; tests/unit/test_deps.py runs it).

- An import counts wherever it is, inside functions too; ``importlib.util.find_spec("x")`` and
  ``importlib.import_module("x")`` with a literal name count as imports of ``x``.
- An import inside ``try: ... except ImportError`` is optional (an accelerator or a feature that says
  what to install) and needs no declaration.
- Modules are mapped to distributions through the installed packages' metadata, so run it in the
  project's environment (``make install``).
- requires-python: every declared dependency that is installed at a version the declaration allows
  must accept the project's minimum Python (its own Requires-Python metadata).
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, metadata, packages_distributions, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
# extras whose packages the code under fincprg/ does not import (the test suite does)
NOT_IMPORTED_EXTRAS = {"test", "all"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _optional(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` sits in the body of a ``try`` that catches ImportError / ModuleNotFoundError."""
    child, cur = node, parents.get(node)
    while cur is not None:
        if isinstance(cur, ast.Try) and child in cur.body:
            for h in cur.handlers:
                names = [h.type] if not isinstance(h.type, ast.Tuple) else list(h.type.elts)
                if any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError") for n in names):
                    return True
        child, cur = cur, parents.get(cur)
    return False


def imports(package: Path) -> dict[str, dict[str, bool]]:
    """Top-level module -> {file: optional} for every non-relative import under ``package``."""
    found: dict[str, dict[str, bool]] = {}
    for f in sorted(package.rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"), str(f))
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("find_spec", "import_module") and node.args
                  and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                names = [node.args[0].value]
            for name in names:
                top = name.split(".")[0]
                opt = _optional(node, parents)
                where = found.setdefault(top, {})
                where[str(f.relative_to(package.parent))] = where.get(str(f.relative_to(package.parent)), True) and opt
    return found


def declared(pyproject: Path) -> tuple[dict[str, Requirement], dict[str, dict[str, Requirement]], str]:
    """(core requirements, extras -> requirements, requires-python), keyed by normalised name."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    core = {norm(r.name): r for r in map(Requirement, project.get("dependencies", []))}
    extras = {name: {norm(r.name): r for r in map(Requirement, reqs)}
              for name, reqs in project.get("optional-dependencies", {}).items()}
    return core, extras, project.get("requires-python", "")


def problems(pyproject: Path = ROOT / "pyproject.toml", package: Path = ROOT / "fincprg") -> list[str]:
    core, extras, requires_python = declared(pyproject)
    runtime = dict(core)
    for name, reqs in extras.items():
        if name not in NOT_IMPORTED_EXTRAS:
            runtime |= {k: r for k, r in reqs.items() if norm(r.name) != norm(package.name)}
    everything = runtime | {k: r for name in NOT_IMPORTED_EXTRAS for k, r in extras.get(name, {}).items()}
    dists = packages_distributions()
    stdlib = set(sys.stdlib_module_names)
    out: list[str] = []
    used: set[str] = set()
    for module, files in sorted(imports(package).items()):
        if module in stdlib or module == package.name:
            continue
        required = [f for f, opt in files.items() if not opt]
        names = [norm(d) for d in dists.get(module, [])]
        used.update(names)
        if not required:
            continue
        if not names:
            out.append(f"{module}: imported by {required[0]} but not installed here, so its distribution is "
                       "unknown; install the project (make install) and re-run")
        elif not any(n in everything for n in names):
            out.append(f"{module} ({names[0]}): imported by {', '.join(required[:3])} but not declared in "
                       f"{pyproject.name}")
    for name, req in sorted(runtime.items()):
        if name not in used:
            out.append(f"{req.name}: declared in {pyproject.name} but imported nowhere in {package.name}/")
    out += _python_floor(requires_python, everything)
    return out


def _python_floor(requires_python: str, reqs: dict[str, Requirement]) -> list[str]:
    floor = re.search(r">=\s*([0-9.]+)", requires_python)
    if not floor:
        return [f"requires-python {requires_python!r} has no lower bound (>=X.Y)"]
    lowest = Version(floor.group(1))
    out = []
    for req in reqs.values():
        try:
            have = version(req.name)
            needs = metadata(req.name).get("Requires-Python")
        except PackageNotFoundError:
            continue
        if needs and req.specifier.contains(have, prereleases=True) and not SpecifierSet(needs).contains(lowest):
            out.append(f"{req.name}=={have} requires Python {needs}, but requires-python is {requires_python!r}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pyproject", type=Path, default=ROOT / "pyproject.toml")
    ap.add_argument("--package", type=Path, default=ROOT / "fincprg")
    args = ap.parse_args()
    found = problems(args.pyproject, args.package)
    for line in found:
        print(line)
    if not found:
        print(f"{args.pyproject.name}: every import of {args.package.name}/ is declared, every runtime "
              "dependency is used, requires-python holds")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
