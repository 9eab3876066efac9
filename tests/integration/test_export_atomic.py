"""A failed export keeps the previous dataset (issue 21): the new one is written beside it (OUT/.dataset.new)
and swapped in only when complete. Failures: a full disk half-way through (monkeypatched ENOSPC), and a
read-only OUT (a real chmod, in a CLI subprocess that obeys permissions even as root)."""
from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fincprg import layout as L
from fincprg.config import bundled_pipeline, load_config
from fincprg.pipeline.runner import run_pipeline
from tests.fs_limits import permissions_bind, without_root_override

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "datasets" / "sample"
BASE = ["topics.viz=none"]
CHANGE = "export.test_fraction=0.3"  # re-runs only the export


def _config(sets: list[str]):
    return load_config(bundled_pipeline(), sets)  # what the CLI loads without -c: its re-runs skip the same stages


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export-atomic") / "base"
    run_pipeline(SAMPLE, out, _config(BASE), show_progress=False)
    return out


@pytest.fixture(scope="module")
def changed(base, tmp_path_factory) -> dict[str, bytes]:
    """The dataset a fault-free export with CHANGE writes."""
    out = tmp_path_factory.mktemp("export-atomic") / "changed"
    shutil.copytree(base, out)
    run_pipeline(SAMPLE, out, _config([*BASE, CHANGE]), show_progress=False)
    return _snapshot(out / L.STAGE_DIRS[L.EXPORT])


def test_disk_full_during_export_keeps_the_previous_dataset(base, changed, tmp_path, monkeypatch):
    import fincprg.export.hf as hf

    out = tmp_path / "out"
    shutil.copytree(base, out)
    dataset = out / L.STAGE_DIRS[L.EXPORT]
    before = _snapshot(dataset)
    real = hf.write_hf

    def disk_fills(dest, *args, **kw):
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "partial.parquet").write_bytes(b"PAR1")  # half-way: some new files are already written
        raise OSError(errno.ENOSPC, "No space left on device", str(dest / "corpus.parquet"))

    monkeypatch.setattr(hf, "write_hf", disk_fills)
    with pytest.raises(OSError) as e:
        run_pipeline(SAMPLE, out, _config([*BASE, CHANGE]), show_progress=False)
    assert e.value.errno == errno.ENOSPC
    assert _snapshot(dataset) == before  # the previous dataset, manifest included, byte for byte
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".dataset")) == []  # no half one left

    monkeypatch.setattr(hf, "write_hf", real)  # space freed: the same command again
    run_pipeline(SAMPLE, out, _config([*BASE, CHANGE]), show_progress=False)
    assert _snapshot(dataset) == changed


@pytest.mark.skipif(not permissions_bind(), reason="a read-only folder does not refuse writes here (root "
                                                   "without CAP_SETPCAP): cannot simulate a read-only OUT")
def test_read_only_out_keeps_the_previous_dataset(base, changed, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(base, out)
    dataset = out / L.STAGE_DIRS[L.EXPORT]
    before = _snapshot(out)
    cmd = [sys.executable, "-m", "fincprg", "build", str(SAMPLE), "-o", str(out), "-q"]
    for s in (*BASE, CHANGE):
        cmd += ["--set", s]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    out.chmod(0o555)
    try:
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
                           preexec_fn=without_root_override)
    finally:
        out.chmod(0o755)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "error: Permission denied" in r.stderr, r.stderr[-2000:]
    assert _snapshot(out) == before  # the whole build, the previous dataset included
    assert ".dataset.new" in r.stderr  # it failed in the export (every other stage was up to date)

    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert _snapshot(dataset) == changed


def test_disk_full_at_the_export_manifest_keeps_the_previous_dataset(base, tmp_path, monkeypatch):
    """The export's body succeeded, but the disk fills while its manifest is written: the half-done
    .dataset.new (a whole dataset copy) must not stay behind, and the previous dataset stays as it was."""
    import fincprg.pipeline.runner as runner

    out = tmp_path / "out"
    shutil.copytree(base, out)
    dataset = out / L.STAGE_DIRS[L.EXPORT]
    before = _snapshot(dataset)
    real = runner.atomic_write_json

    def disk_fills(path, obj):
        if path.name == L.MANIFEST and path.parent.name.startswith(".dataset"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, obj)

    monkeypatch.setattr(runner, "atomic_write_json", disk_fills)
    with pytest.raises(OSError) as e:
        run_pipeline(SAMPLE, out, _config([*BASE, CHANGE]), show_progress=False)
    assert e.value.errno == errno.ENOSPC
    assert _snapshot(dataset) == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".dataset")) == []


def test_a_rerun_that_skips_a_complete_export_removes_the_leftovers_of_a_killed_one(base, tmp_path):
    # issue 41: kill -9 during a re-export leaves OUT/.dataset.new; a re-run with the old config finds the export
    # complete, skips it, and had left the partial folder behind for good
    out = tmp_path / "out"
    shutil.copytree(base, out)
    before = _snapshot(out / L.STAGE_DIRS[L.EXPORT])
    new, old = out / f".{L.STAGE_DIRS[L.EXPORT]}.new", out / f".{L.STAGE_DIRS[L.EXPORT]}.old"
    (new / "qrels").mkdir(parents=True)
    (new / "queries.jsonl").write_text('{"_id": "half', encoding="utf-8")
    (old / "train").mkdir(parents=True)  # killed while the replaced folder was being deleted
    outcomes = run_pipeline(SAMPLE, out, _config(BASE), show_progress=False)
    assert [o.status for o in outcomes if o.name == L.EXPORT] == ["skipped"]
    assert not new.exists() and not old.exists()
    assert _snapshot(out / L.STAGE_DIRS[L.EXPORT]) == before


def test_a_dataset_a_kill_left_aside_is_put_back_before_the_rerun_looks_at_it(base, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(base, out)
    before = _snapshot(out / L.STAGE_DIRS[L.EXPORT])
    os.replace(out / L.STAGE_DIRS[L.EXPORT], out / f".{L.STAGE_DIRS[L.EXPORT]}.old")  # killed between the renames
    outcomes = run_pipeline(SAMPLE, out, _config(BASE), show_progress=False)
    assert [o.status for o in outcomes if o.name == L.EXPORT] == ["skipped"]
    assert _snapshot(out / L.STAGE_DIRS[L.EXPORT]) == before
