"""What a build of datasets/sample writes, for the before/after comparison in test_sample_unchanged.py.

Each file is recorded as the sha256 of its bytes, except:
- manifests: hashed over the fields that describe the data (stage, config, counts), so that timing,
  signatures and new provenance fields may change;
- dataset cards: hashed with their signatures blanked (a code change changes every signature, by design);
- computed floats: a float's last bits follow the CPU's BLAS kernels (the BERTopic topic embeddings, means of LSA
  vectors, differ between an Intel and an AMD machine), not the code, and rounding before hashing cannot fix
  that (a value within 1e-7 of a rounding boundary flips). So a file holding them is recorded as
  ``{"sha256": <hash of everything else>, "floats": [values]}``: names, dtypes, shapes and the text around
  the numbers must match exactly, the values within :data:`RTOL`/:data:`ATOL` (:func:`matches`). Computed
  floats are every float tensor of a safetensors file and every decimal with 4 or more fractional digits in a
  text file (plotly coordinates, c-TF-IDF scores, mined scores, shares in manifests).

Regenerate (only when an output change is intended, and say why in the commit), from the repository root
(the corpus path is part of each report's ``source``):
    PYTHONPATH=$PWD HF_HUB_OFFLINE=1 python -m fincprg build datasets/sample -o /tmp/s -q
    PYTHONPATH=$PWD python -m tests.integration._sample_hashes /tmp/s > tests/integration/sample_build.sha256.json
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from fincprg import layout as L

MANIFEST_FIELDS = ("stage", "config", "counts")
RTOL, ATOL = 1e-4, 1e-5  # far above BLAS noise (~1e-7 relative), far below any real change (>= 1e-3)
_SIGNATURE = re.compile(r"\b[0-9a-f]{16}\b")  # a stage signature or hash in a card (the hf revision is one)
_FLOAT = re.compile(rb"-?\d+\.\d{4,}(?:[eE][-+]?\d+)?")
_TEXT = {".json", ".jsonl", ".tsv", ".md", ".html", ".txt", ".csv"}
Entry = str | dict[str, Any]


def file_digest(out: Path, p: Path) -> Entry:
    data = p.read_bytes()
    if p.name == L.MANIFEST:
        m = json.loads(data)
        data = json.dumps({k: m.get(k) for k in MANIFEST_FIELDS}, sort_keys=True, ensure_ascii=False).encode()
    elif p.name == L.CARD:
        data = _SIGNATURE.sub("<sig>", data.decode("utf-8")).encode()
    if p.suffix == ".safetensors":
        return _entry(*_tensors(p))
    if p.suffix in _TEXT:
        floats = [float(x) for x in _FLOAT.findall(data)]
        return _entry(_FLOAT.sub(b"<f>", data), floats)
    return hashlib.sha256(data).hexdigest()


def _entry(rest: bytes, floats: list[float]) -> Entry:
    digest = hashlib.sha256(rest).hexdigest()
    return {"sha256": digest, "floats": [float(f"{v:.9g}") for v in floats]} if floats else digest


def _tensors(p: Path) -> tuple[bytes, list[float]]:
    """A safetensors file's names, dtypes, shapes and non-float values as bytes, and its float values."""
    from safetensors.numpy import load_file

    rest, floats = [], []
    for name, v in sorted(load_file(p).items()):
        rest.append(f"{name} {v.dtype} {v.shape}".encode())
        if v.dtype.kind == "f":
            floats.extend(float(x) for x in v.ravel())
        else:
            rest.append(v.tobytes())
    return b"\n".join(rest), floats


def matches(got: Entry, want: Entry) -> bool:
    """Whether a file's record equals the recorded one: hashes exactly, computed floats within tolerance."""
    import numpy as np

    if isinstance(got, str) or isinstance(want, str):
        return got == want
    return (got["sha256"] == want["sha256"] and len(got["floats"]) == len(want["floats"])
            and bool(np.allclose(got["floats"], want["floats"], rtol=RTOL, atol=ATOL)))


def build_hashes(out: Path) -> dict[str, Entry]:
    return {p.relative_to(out).as_posix(): file_digest(out, p) for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != L.LOCK}


if __name__ == "__main__":
    print(json.dumps(build_hashes(Path(sys.argv[1])), indent=1, sort_keys=True))
