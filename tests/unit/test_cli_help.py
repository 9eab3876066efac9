"""Every command's help is whole when piped (CI logs, `| cat`) and on a wide terminal; `--version` works.

Before issue 21 typer's rich panels were printed 80 columns wide into a pipe and cut 21 words and option
names with "…", and click's command list cut first sentences with "..."."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.cli import _help

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> dict[tuple[str, ...], object]:
    """Every click command and group of the app by its path, the app itself as ()."""
    found = {}

    def walk(cmd, path):
        found[path] = cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, (*path, name))

    walk(get_command(app), ())
    return found


def _norm(text: str) -> str:
    return " ".join(text.split())


def _piped_help() -> dict[tuple[str, ...], str]:
    """`python -m fincprg ... --help` with stdout a pipe, all commands at once (each is a fresh process)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    for k in ("TERMINAL_WIDTH", "COLUMNS", "FORCE_COLOR"):
        env.pop(k, None)
    procs = {path: subprocess.Popen([sys.executable, "-m", "fincprg", *path, "--help"], cwd=ROOT, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for path in _commands()}
    out = {}
    for path, p in procs.items():
        stdout, stderr = p.communicate(timeout=120)
        assert p.returncode == 0 and not stderr, (path, stderr)
        out[path] = stdout
    return out


def test_piped_help_is_whole_for_every_command():
    helps = _piped_help()
    assert len(helps) >= 12  # the app, 10 commands, the models group and its import-e5
    for path, text in helps.items():
        name = " ".join(("fincprg", *path))
        assert "…" not in text, f"{name} --help is cut:\n{text}"
        assert "╭" not in text, f"{name} --help drew rich panels into a pipe"
        flat = _norm(text)
        cmd = _commands()[path]
        # every paragraph of the command's own help and every option's help, word for word, in order:
        # a word broken over two lines ("--add-" / "cjk") or cut would not be found
        for par in inspect.cleandoc(cmd.help or "").split("\n\n"):
            assert _norm(par.replace("\b", "")) in flat, f"{name}: lost or broken: {par!r}"
        for param in cmd.params:
            if getattr(param, "help", None):
                assert _norm(param.help) in flat, f"{name} {param.opts}: lost or broken: {param.help!r}"
        for sub_name, sub in getattr(cmd, "commands", {}).items():  # the command list: whole first sentences
            first = sub.get_short_help_str(limit=10_000)
            assert f"{sub_name} {_norm(first)}" in flat, f"{name}: the entry of {sub_name} is cut"


def test_rich_help_on_a_wide_terminal_cuts_nothing(monkeypatch):
    """The boxed help is used from RICH_HELP_MIN_WIDTH columns on; at that width nothing is cut."""
    import typer.rich_utils

    from fincprg.cli.models import models_app

    monkeypatch.setattr(app, "rich_markup_mode", "rich")
    monkeypatch.setattr(models_app, "rich_markup_mode", "rich")
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", _help.RICH_HELP_MIN_WIDTH)
    for path in _commands():
        res = CliRunner().invoke(app, [*path, "--help"])
        assert res.exit_code == 0 and "╭" in res.output, res.output  # really the rich panels
        assert "…" not in res.output, f"fincprg {' '.join(path)} --help at {_help.RICH_HELP_MIN_WIDTH} columns:\n" \
                                      f"{res.output}"
    monkeypatch.setattr(typer.rich_utils, "MAX_WIDTH", 80)  # the check can fail: 80 columns cut words
    assert "…" in CliRunner().invoke(app, ["train", "--help"]).output


@pytest.mark.parametrize(("tty", "columns", "want"), [
    (False, "200", None), (True, "80", None), (True, "119", None), (True, "120", "rich"), (True, "200", "rich")])
def test_rich_help_only_on_a_wide_terminal(monkeypatch, tty, columns, want):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: tty)
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    monkeypatch.setenv("COLUMNS", columns)
    assert _help.help_markup_mode() == want


def test_wrap_breaks_at_spaces_only():
    text = "Example: fincprg train runs/demo/dataset -m MODEL -o runs/demo/model --add-cjk --eval-on ../beir/x"
    lines = _help.wrap(text, 40)
    assert all(len(ln) <= 40 for ln in lines) and " ".join(lines) == text
    assert _help.wrap("one\n\n\b\nkept  as\nwritten", 40) == ["one", "", "kept  as", "written"]


def test_version():
    from fincprg.version import __version__

    out = subprocess.run([sys.executable, "-m", "fincprg", "--version"], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert out.returncode == 0 and out.stdout == f"fincprg {__version__}\n", out
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    # one version: the package metadata reads it from fincprg/version.py
    assert 'dynamic = ["version"]' in pyproject and 'path = "fincprg/version.py"' in pyproject
