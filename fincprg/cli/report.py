"""CLI command ``fincprg report`` (the page itself is :mod:`fincprg.report.page`)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from fincprg.cli._common import guarded


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
    from fincprg.report.page import write_report

    dest = guarded(lambda: write_report(out, output, [Path(e) for e in eval_ or []] or None, samples))
    typer.echo(f"wrote {dest}")
