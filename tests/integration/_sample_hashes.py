"""sha256 of every file a build of datasets/sample writes, for the before/after comparison in
test_sample_unchanged.py.

Data files are hashed as written. Manifests are hashed over the fields that describe the data (stage, config,
counts) so that timing, signatures and new provenance fields may change; the dataset cards are hashed with
their signatures blanked (a code change changes every signature, by design). Float tensors (BERTopic's
safetensors) are hashed rounded to 4 decimals: their last bits follow the CPU's BLAS kernels (the topic
embeddings, means of LSA vectors, differed in them between an Intel and an AMD machine), not the code.

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

from fincprg import layout as L

MANIFEST_FIELDS = ("stage", "config", "counts")
DECIMALS = 4  # of a float tensor's values, hashed
_SIGNATURE = re.compile(r"\b[0-9a-f]{16}\b")  # a stage signature or hash in a card (the hf revision is one)


def file_digest(out: Path, p: Path) -> str:
    data = p.read_bytes()
    if p.name == L.MANIFEST:
        m = json.loads(data)
        data = json.dumps({k: m.get(k) for k in MANIFEST_FIELDS}, sort_keys=True, ensure_ascii=False).encode()
    elif p.name == L.CARD:
        data = _SIGNATURE.sub("<sig>", data.decode("utf-8")).encode()
    elif p.suffix == ".safetensors":
        data = _tensors(p)
    return hashlib.sha256(data).hexdigest()


def _tensors(p: Path) -> bytes:
    """A safetensors file's names, dtypes, shapes and values (floats rounded, -0.0 as 0.0) as bytes."""
    import numpy as np
    from safetensors.numpy import load_file

    out = []
    for name, v in sorted(load_file(p).items()):
        vals = np.round(v.astype(np.float64), DECIMALS) + 0.0 if v.dtype.kind == "f" else v
        out.append(f"{name} {v.dtype} {v.shape}".encode() + np.ascontiguousarray(vals).tobytes())
    return b"\n".join(out)


def build_hashes(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): file_digest(out, p) for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != L.LOCK}


if __name__ == "__main__":
    print(json.dumps(build_hashes(Path(sys.argv[1])), indent=1, sort_keys=True))
