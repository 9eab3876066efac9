"""pyproject.toml is true to the code (scripts/check_deps.py): imports declared, declared packages used,
requires-python no lower than the pinned packages need."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _check(pyproject: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "check_deps.py"), "--pyproject", str(pyproject)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_pyproject_declares_what_fincprg_imports():
    res = _check(ROOT / "pyproject.toml")
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_check_finds_each_kind_of_mistake(tmp_path):
    """The state before issue 21: scipy undeclared, pandas unused, requires-python >=3.10."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    bad = text.replace('  "scipy>=1.11",\n', '  "pandas==3.1.1",\n').replace('requires-python = ">=3.11"',
                                                                         'requires-python = ">=3.10"')
    assert bad != text
    (tmp_path / "pyproject.toml").write_text(bad, encoding="utf-8")
    res = _check(tmp_path / "pyproject.toml")
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    assert any(ln.startswith("scipy (scipy): imported by ") and "not declared" in ln for ln in lines), lines
    assert "pandas: declared in pyproject.toml but imported nowhere in fincprg/" in lines
    assert any(ln.startswith("numpy==2.4.6 requires Python >=3.11") for ln in lines), lines


def test_optional_imports_need_no_declaration(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import check_deps
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("try:\n    import numba\nexcept ImportError:\n    numba = None\n"
                              "def f():\n    import tiktoken\n", encoding="utf-8")
    found = check_deps.imports(pkg)
    assert found["numba"] == {"pkg/a.py": True} and found["tiktoken"] == {"pkg/a.py": False}
