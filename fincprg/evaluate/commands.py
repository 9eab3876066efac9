"""CLI commands `eval` and `audit` (placeholders until the benchmark harness lands)."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def eval_cmd(dataset: Annotated[Path, typer.Argument(help="A BEIR-layout dataset folder.")]) -> None:
    """Benchmark retrievers on a BEIR-layout dataset (not built yet)."""
    raise typer.Exit(_todo("eval"))


def audit_cmd(dataset: Annotated[Path, typer.Argument(help="A build's dataset folder.")]) -> None:
    """Audit mined labels with an LLM judge (not built yet)."""
    raise typer.Exit(_todo("audit"))


def _todo(name: str) -> int:
    typer.secho(f"`fincprg {name}` is not implemented yet", err=True)
    return 2
