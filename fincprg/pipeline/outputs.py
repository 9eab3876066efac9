"""What a finished stage wrote: its data files, their validation, and the provenance a manifest records.

A stage is complete only over whole files: every declared file present, no undeclared one, and every
JSONL line whole JSON (a torn or interleaved write is never marked complete).
"""
from __future__ import annotations

import platform
from pathlib import Path

from fincprg import layout as L
from fincprg.contract import StageSpec
from fincprg.errors import InputError
from fincprg.version import __version__


def versions() -> dict[str, str]:
    """Versions of fincprg, Python and the libraries that shape the output (recorded in every manifest)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"fincprg": __version__, "python": platform.python_version()}
    for pkg in ("pydantic", "jieba", "numpy", "scikit-learn", "openai", "torch", "transformers",
                "sentence-transformers", "FlagEmbedding", "bertopic"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def output_files(stage_dir: Path) -> list[Path]:
    """Data files whose bytes define a stage's output hash.

    HTML views are left out: they are views of the data, and a chart re-drawn by another plotly
    version must not invalidate every later stage.
    """
    return [p for p in stage_dir.rglob("*") if p.is_file() and p.name not in (L.MANIFEST, L.PROGRESS)
            and not p.name.startswith(".") and p.suffix != ".html"]


def check_outputs(spec: StageSpec, stage_dir: Path) -> None:
    """A stage is complete only with every declared file present and no undeclared one."""
    written = {p.relative_to(stage_dir).as_posix() for p in stage_dir.rglob("*") if p.is_file()
               and p.name not in (L.MANIFEST, L.PROGRESS) and not p.name.startswith(".")}
    undeclared = sorted(w for w in written if not spec.writes_file(w))
    missing = sorted(w for w in spec.writes if not w.endswith("/") and w not in written
                     and not L.artifact(spec.name, w).optional)  # the topic plots with topics.viz=none
    if undeclared or missing:
        raise RuntimeError(f"stage {spec.name!r} broke its contract: undeclared files {undeclared}, "
                           f"missing files {missing} (see ARTIFACTS in fincprg/layout.py)")
    for rel in sorted(written):
        if rel.endswith(".jsonl"):
            validate_jsonl(stage_dir / rel)


def validate_jsonl(path: Path) -> None:
    """Every line whole JSON: a stage whose file was torn or interleaved is never marked complete."""
    import json

    with open(path, "rb") as f:
        for i, line in enumerate(f, 1):
            try:
                if not line.endswith(b"\n"):
                    raise ValueError("the last line has no newline (a torn write)")
                json.loads(line)
            except ValueError as e:
                raise InputError(f"{path}:{i} is not a whole JSON line ({e}); the stage is not marked complete. "
                                 "Re-run `fincprg build` (it re-runs the stage)") from None
