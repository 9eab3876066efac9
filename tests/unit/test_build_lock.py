"""One build per OUT: a second build exits at once naming the holder; a killed holder leaves no stale lock."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from fincprg.errors import BuildLockedError
from fincprg.pipeline.lock import build_lock


def test_second_holder_is_refused_with_the_pid(tmp_path):
    with build_lock(tmp_path):
        with pytest.raises(BuildLockedError, match=f"pid {os.getpid()}"):
            with build_lock(tmp_path):
                pass
    with build_lock(tmp_path):  # released on exit: the next build goes ahead
        pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path):
    code = ("import sys, time; from pathlib import Path; from fincprg.pipeline.lock import build_lock\n"
            "with build_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(BuildLockedError, match=f"pid {proc.pid}"):
            with build_lock(tmp_path):
                pass
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while True:  # the kernel drops the flock with the process
        try:
            with build_lock(tmp_path):
                break
        except BuildLockedError:
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_cli_build_into_a_locked_out_exits_2_with_one_line(tmp_path, sample_corpus):
    from typer.testing import CliRunner

    from fincprg.cli import app

    out = tmp_path / "out"
    out.mkdir()
    with build_lock(out):
        res = CliRunner().invoke(app, ["build", str(sample_corpus), "-o", str(out), "-q"])
    assert res.exit_code == 2
    assert "being written by another fincprg build" in res.output and "Traceback" not in res.output
    assert not (out / "ingest").exists()  # nothing was written


def test_a_torn_jsonl_output_is_never_marked_complete(tmp_path):
    from fincprg.errors import InputError
    from fincprg.pipeline.outputs import validate_jsonl as _validate_jsonl

    p = tmp_path / "x.jsonl"
    p.write_text('{"a": 1}\n{"a": 2}\n{"a"', encoding="utf-8")
    with pytest.raises(InputError, match=r"x.jsonl:3 .*torn write"):
        _validate_jsonl(p)
    p.write_text('{"a": 1}\n{"a": 2}{"b": 3}\n', encoding="utf-8")  # two writers interleaved
    with pytest.raises(InputError, match=r"x.jsonl:2"):
        _validate_jsonl(p)
