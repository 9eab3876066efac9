"""Issue 41: a damaged checkpoint is refused before --resume loads it, naming the file and the fix."""
from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.errors import InputError
from fincprg.train.checkpoints import check_checkpoint
from fincprg.train.trainer import TrainSettings, _check_resume


def _zip(path: Path, payload: bytes = b"\x80\x02}q\x00." * 200) -> None:
    with zipfile.ZipFile(path, "w") as z:  # torch.save's container: a zip archive of records
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/version", b"3\n")


def _safetensors(path: Path) -> None:
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00" * 8)


def make_checkpoint(out: Path, step: int = 4) -> Path:
    ck = out / "checkpoints" / f"checkpoint-{step}"
    ck.mkdir(parents=True)
    (ck / "trainer_state.json").write_text(json.dumps({"global_step": step}), encoding="utf-8")
    (ck / "config.json").write_text("{}", encoding="utf-8")
    _safetensors(ck / "model.safetensors")
    for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
        _zip(ck / name)
    return ck


def _truncate(p: Path, keep: float = 0.5) -> None:
    p.write_bytes(p.read_bytes()[: int(p.stat().st_size * keep)])


def test_a_whole_checkpoint_passes(tmp_path):
    ck = make_checkpoint(tmp_path)
    check_checkpoint(ck)
    assert _check_resume(tmp_path, TrainSettings(), "m", True) == ck


@pytest.mark.parametrize("damage", [
    ("optimizer.pt", _truncate), ("rng_state.pth", lambda p: p.write_bytes(b"")),
    ("model.safetensors", _truncate), ("trainer_state.json", lambda p: p.write_text("{\"global_", "utf-8")),
    ("trainer_state.json", lambda p: p.unlink()), ("training_args.bin", lambda p: p.write_bytes(b"\x00" * 64)),
])
def test_a_damaged_checkpoint_is_refused_naming_the_file_and_the_fix(tmp_path, damage):
    name, how = damage
    make_checkpoint(tmp_path, 2)
    ck = make_checkpoint(tmp_path, 4)
    how(ck / name)
    with pytest.raises(InputError) as e:
        _check_resume(tmp_path, TrainSettings(), "m", True)
    msg = str(e.value)
    assert str(ck / name) in msg and "checkpoint-2" in msg and f"rm -r {ck}" in msg


def test_train_resume_on_a_damaged_checkpoint_is_one_line_and_exit_2(tmp_path, sample_dataset):
    out = tmp_path / "model"
    ck = make_checkpoint(out)
    _truncate(ck / "optimizer.pt")
    res = CliRunner().invoke(app, ["train", str(sample_dataset), "-m", str(tmp_path / "no-model"), "-o", str(out),
                                   "--resume", "-q", "--no-compare"])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "optimizer.pt" in res.output
    assert [ln for ln in res.output.splitlines() if ln.startswith("error:")]
