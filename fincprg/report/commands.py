"""CLI command ``fincprg report``: one self-contained HTML page for a build."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any, Optional

import typer


def build_context(out: Path, eval_dirs: list[Path] | None = None, samples: int = 3) -> dict[str, Any]:
    """Everything the report template shows, read from OUT (each missing part is reported as missing)."""
    from fincprg.report import data

    return {
        "out": str(out), "title": out.resolve().name, "generated": dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "stages": data.stages(out), "subsets": data.subset_stats(out / "dataset"), "hist": data.histograms(out),
        "mined": data.mined_examples(out), "audit": data.audit(out), "tree": data.topic_tree(out),
        "trees": data.query_trees(out, samples), "evals": data.eval_tables(data.eval_dirs(out, eval_dirs)),
    }


def write_report(out: Path, dest: Path | None = None, eval_dirs: list[Path] | None = None,
                 samples: int = 3) -> Path:
    """Render the report for build ``out`` to ``dest`` (default OUT/report.html)."""
    from fincprg.errors import InputError
    from fincprg.pipeline.io import atomic_write_text
    from fincprg.report.html import render

    out = Path(out)
    if not out.is_dir():
        raise InputError(f"{out} is not a folder; give a build's output folder (the --out of fincprg build)")
    dest = Path(dest) if dest else out / "report.html"
    atomic_write_text(dest, render("report.html.j2", **build_context(out, eval_dirs, samples)))
    return dest


def report_cmd(
    out: Annotated[Path, typer.Argument(help="A build's output folder.")],
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="HTML file (default OUT/report.html).")]
    = None,
    eval_: Annotated[Optional[list[str]], typer.Option(
        "--eval", help="An eval --out folder (or its results.csv), repeatable. Default: OUT/eval and OUT/eval/*/.")]
    = None,
    samples: Annotated[int, typer.Option(min=0, help="Sample query trees shown per level.")] = 3,
) -> None:
    """Write one self-contained HTML report: subset statistics, mined-score histogram with the threshold,
    audit FP/FN by interval, topic tree, sample query trees and eval tables. No external resources;
    all document text is HTML-escaped."""
    from fincprg.errors import FincprgError

    try:
        dest = write_report(out, output, [Path(e) for e in eval_ or []] or None, samples)
    except FincprgError as e:
        typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
        raise typer.Exit(2) from None
    typer.echo(f"wrote {dest}")
