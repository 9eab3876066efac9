"""Check a training checkpoint before ``fincprg train --resume`` hands it to the trainer.

A run killed while saving, a full disk or a copy cut short leaves a checkpoint whose files are partial. The
trainer finds out only deep inside ``torch.load`` (``PytorchStreamReader failed reading zip archive``), after
the data and the model are loaded, with a traceback that names neither the file nor what to do. Every file is
checked here by its container alone, and nothing is unpickled:

- ``*.pt``, ``*.pth``, ``*.bin`` (``torch.save``: optimizer, scheduler, RNG state, training args): a whole zip
  archive whose records match their CRC;
- ``*.safetensors``: a readable header whose tensors all lie inside the file;
- ``*.json`` (``trainer_state.json`` is required, as the trainer reads it first): valid JSON.
"""
from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

from fincprg.errors import InputError

REQUIRED = ("trainer_state.json",)
_TORCH = (".pt", ".pth", ".bin")


def check_checkpoint(ck: Path) -> None:
    """Raise :class:`InputError` naming the first damaged or missing file of checkpoint folder ``ck`` and the fix."""
    for name in REQUIRED:
        if not (ck / name).is_file():
            raise _damaged(ck, ck / name, "is missing")
    for f in sorted(p for p in ck.rglob("*") if p.is_file()):
        why = _problem(f)
        if why:
            raise _damaged(ck, f, why)


def _problem(f: Path) -> str | None:
    """Why ``f`` cannot be read back, or None."""
    try:
        if f.suffix in _TORCH:
            return _zip_problem(f)
        if f.suffix == ".safetensors":
            return _safetensors_problem(f)
        if f.suffix == ".json":
            json.loads(f.read_bytes())
    except (OSError, ValueError) as e:
        return f"cannot be read ({type(e).__name__}: {e})"
    return None


def _zip_problem(f: Path) -> str | None:
    if not zipfile.is_zipfile(f):
        return f"is not a whole torch.save archive ({f.stat().st_size} bytes, no zip directory at its end)"
    try:
        with zipfile.ZipFile(f) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, EOFError) as e:
        return f"is a damaged torch.save archive ({e})"
    return f"has a damaged record {bad!r}" if bad else None


def _safetensors_problem(f: Path) -> str | None:
    size = f.stat().st_size
    with open(f, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            return f"is too short to be a safetensors file ({size} bytes)"
        (n,) = struct.unpack("<Q", head)
        if n > size - 8:
            return f"is cut short: its header alone needs {n} bytes of {size - 8}"
        header = json.loads(fh.read(n))
    if not isinstance(header, dict):
        return "has a safetensors header that is not a JSON object"
    ends = [int(v["data_offsets"][1]) for k, v in header.items()
            if k != "__metadata__" and isinstance(v, dict) and isinstance(v.get("data_offsets"), list)]
    need = 8 + n + max(ends, default=0)
    return f"is cut short: its tensors need {need} bytes, the file has {size}" if need > size else None


def _damaged(ck: Path, f: Path, why: str) -> InputError:
    earlier = sorted((p for p in ck.parent.glob("checkpoint-*") if p != ck and p.name.rsplit("-", 1)[-1].isdigit()),
                     key=lambda p: int(p.name.rsplit("-", 1)[-1]))
    older = [p for p in earlier if int(p.name.rsplit("-", 1)[-1]) < int(ck.name.rsplit("-", 1)[-1] or 0)] \
        if ck.name.rsplit("-", 1)[-1].isdigit() else earlier
    then = (f"then --resume continues from {older[-1].name}" if older
            else "then --resume starts from the base model (it is the only checkpoint)")
    return InputError(
        f"checkpoint {ck} is damaged: {f} {why} (a run killed while saving, or a full disk?). Fix: delete it "
        f"(rm -r {ck}) and {then}; or start afresh by deleting {ck.parent} or writing to another -o folder "
        "(--no-resume alone refuses a folder that holds checkpoints).")
