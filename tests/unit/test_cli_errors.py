"""File-system failures are one clear line with the fix, never a traceback (issue 12, case 7).

Tests run as root, for whom chmod does not block writes, so a read-only or full disk is simulated
by making the OS call raise the errno a real one raises (checked by hand on a tmpfs mounted ro and one
of 200 KiB: the same single lines)."""
from __future__ import annotations

import errno
import os

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.cli._common import describe_os_error

runner = CliRunner()


def _errors(res) -> list[str]:
    return [ln for ln in res.output.splitlines() if ln.startswith("error:")]


def test_out_under_a_file_is_one_line(tmp_path, sample_corpus):
    (tmp_path / "afile").write_text("x")
    res = runner.invoke(app, ["build", str(sample_corpus), "-o", str(tmp_path / "afile" / "out"), "-q"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    [line] = _errors(res)
    assert "Not a directory" in line and str(tmp_path / "afile" / "out") in line and "choose another path" in line


@pytest.mark.parametrize("code,call,fix", [
    (errno.ENOSPC, "replace", "free some space"),
    (errno.EROFS, "mkdir", "read-only"),
    (errno.EACCES, "mkdir", "permissions"),
])
def test_disk_full_read_only_and_permission_denied(tmp_path, sample_corpus, monkeypatch, code, call, fix):
    real = getattr(os, call)

    def broken(*args, **kw):
        if str(args[0]).startswith(str(tmp_path / "out")):
            raise OSError(code, os.strerror(code), str(args[0]))
        return real(*args, **kw)

    monkeypatch.setattr(os, call, broken)
    res = runner.invoke(app, ["build", str(sample_corpus), "-o", str(tmp_path / "out"), "-q"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    [line] = _errors(res)  # printed once
    assert os.strerror(code) in line and fix in line


def test_describe_without_a_file_name_and_unknown_errno():
    assert describe_os_error(OSError(errno.ENOSPC, "No space left on device")).startswith(
        "No space left on device; the disk is full")
    line = describe_os_error(OSError(errno.EIO, "Input/output error", "/x"))
    assert line == "Input/output error: /x; check the path, its permissions and the free disk space"


def test_other_commands_map_os_errors_too(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    out = tmp_path / "build"
    (out / "dataset").mkdir(parents=True)
    res = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "afile" / "r.html")])
    assert res.exit_code == 2 and "Traceback" not in res.output, res.output
    assert len(_errors(res)) == 1


def test_a_failed_atomic_write_leaves_no_temp_file(tmp_path, monkeypatch):
    from fincprg import io

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(OSError):
        io.atomic_write_text(tmp_path / "x.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_eval_with_a_failing_retriever_exits_1_and_keeps_the_others(tmp_path):
    """`fincprg eval -r bm25 -r dense:/nonexistent` used to exit 0 with a yellow line; the tables and files of
    the retrievers that worked must still come, and only the tables go to stdout (logs to stderr)."""
    from tests.unit import _eval_fixture as fx

    data = fx.write_beir(tmp_path / "ds")
    res = runner.invoke(app, ["eval", str(data), "-r", "bm25", "-r", str("dense:" + str(tmp_path / "none")),
                              "--k", "10", "-o", str(tmp_path / "ev")])
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    assert "| bm25 | 1.0000 |" in res.stdout and (tmp_path / "ev" / "results.csv").read_text().count("bm25,") == 2
    assert res.stdout.startswith("Dataset: ")  # no log line before the markdown
    assert "INFO" not in res.stdout and "wrote " not in res.stdout and "INFO" in res.stderr
    [line] = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
    assert "1 retriever(s) failed: dense:" in line
    ok = runner.invoke(app, ["eval", str(data), "-r", "bm25", "--k", "10", "-q"])
    assert ok.exit_code == 0 and not [ln for ln in ok.stderr.splitlines() if ln.startswith("error:")]
