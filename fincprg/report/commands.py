"""CLI command `report` (placeholder until the HTML report lands)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report_cmd(out: Annotated[Path, typer.Argument(help="A build's output folder.")]) -> None:
    """Write a self-contained HTML report for a build (not built yet)."""
    typer.secho("`fincprg report` is not implemented yet", err=True)
    raise typer.Exit(2)
