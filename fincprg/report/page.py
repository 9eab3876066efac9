"""The build report: one self-contained HTML page for a build (``fincprg report``)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from fincprg import layout as L


def build_context(out: Path, eval_dirs: list[Path] | None = None, samples: int = 3) -> dict[str, Any]:
    """Everything the report template shows, read from OUT (each missing part is reported as missing)."""
    from fincprg.report import data

    return {
        "out": str(out), "title": out.resolve().name, "generated": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "stages": data.stages(out), "subsets": data.subset_stats(L.Build(out).dataset.root), "hist": data.histograms(out),
        "quality": data.quality(out), "verify": data.verification(out),
        "mined": data.mined_examples(out), "audit": data.audit(out), "tree": data.topic_tree(out),
        "trees": data.query_trees(out, samples), "backends": data.backends(out),
        "evals": data.eval_tables(data.eval_dirs(out, eval_dirs), L.Build(out).dataset.content_hash()),
    }


def write_report(out: Path, dest: Path | None = None, eval_dirs: list[Path] | None = None,
                 samples: int = 3) -> Path:
    """Render the report for build ``out`` to ``dest`` (default OUT/report.html)."""
    from fincprg.io import atomic_write_text
    from fincprg.report.html import render

    out = Path(out)
    L.Build(out).require_build()
    dest = Path(dest) if dest else L.Build(out).report_file
    atomic_write_text(dest, render("report.html.j2", **build_context(out, eval_dirs, samples)))
    return dest
