"""What every command shares: the typer app, common options, logging setup and the one error exit."""
from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fincprg.errors import FincprgError

app = typer.Typer(
    help=(
        "fincprg turns Chinese financial research reports into a passage-retrieval dataset "
        "(queries, passages, relevance labels) with the FinCPRG method.\n\n"
        "Stages: ingest -> chunk -> generate -> topics -> mine -> export. "
        "Each writes OUT/<stage>/ with a manifest.json; re-running skips finished stages "
        "and resumes a half-done one."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", "-c", help="Pipeline YAML (default: the shipped pipelines/offline.yaml, fully offline)."),
]
SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", help="Dotted override, repeatable: --set chunk.passage_chars=400 --set llm.model=qwen2.5"),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars; summary only.")]


def setup_logging(quiet: bool) -> None:
    import os

    from rich.logging import RichHandler

    level = logging.WARNING if quiet else logging.INFO
    # the handler's own level matters: libraries such as bm25s set their loggers to DEBUG
    handler = RichHandler(show_path=False, show_time=False, level=level)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)
    if quiet:
        os.environ["TQDM_DISABLE"] = "1"  # also silences the bars of BERTopic and other libraries


def fail(e: Exception) -> None:
    typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
    raise typer.Exit(2)


def _print_counts(counts: dict[str, Any], indent: str = "    ") -> None:
    for k, v in counts.items():
        if isinstance(v, dict):
            if not v:
                typer.echo(f"{indent}{k}: none")
                continue
            typer.echo(f"{indent}{k}:")
            _print_counts(v, indent + "  ")
        elif isinstance(v, float):
            typer.echo(f"{indent}{k}: {v:.4g}")
        else:
            typer.echo(f"{indent}{k}: {v}")


def _print_outcomes(outcomes: list[Any], out: Path, corpus: Path | None = None) -> None:
    typer.echo(f"\nfincprg build summary ({out}):")
    for o in outcomes:
        typer.echo(f"  {o.name:<9} {o.status:<8} {o.seconds:7.1f}s")
        _print_counts(o.counts)
    failed = {o.name: o.counts.get("retryable_failures") for o in outcomes if o.counts.get("retryable_failures")}
    if failed:
        where = ", ".join(f"{n} in {stage}" for stage, n in failed.items())
        typer.secho(f"\n{where} failed (no valid LLM answer; see <stage>/failures.jsonl). To ask exactly "
                    f"those again, re-run the same command with --retry-failed (fincprg build "
                    f"{corpus or 'CORPUS'} -o {out} ... --retry-failed)", fg=typer.colors.YELLOW)


def run_build(corpus: Callable[[], Path], out: Path, config: Optional[Path], set_: Optional[list[str]], quiet: bool,
         *, upto: Optional[str] = None, force: bool = False, retry_failed: bool = False) -> None:
    """Shared body of ``build`` and ``demo``: logging, config (default: the shipped offline
    pipeline), run, errors as exit code 2, and the summary."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.pipeline.runner import STAGE_BY_NAME, run_pipeline

    setup_logging(quiet)
    try:
        if upto and upto not in STAGE_BY_NAME:
            raise FincprgError(f"--upto {upto!r} is not a stage; choose one of {', '.join(STAGE_BY_NAME)}")
        path = corpus()
        cfg = load_config(config or bundled_pipeline("offline"), set_)
        outcomes = run_pipeline(path, out, cfg, upto=upto, force=force, show_progress=not quiet and None,
                                retry_failed=retry_failed)
    except FincprgError as e:
        fail(e)
    _print_outcomes(outcomes, out, path)




def guarded(fn: Callable[[], Any]) -> Any:
    """Run a command body; a FincprgError becomes one red line and exit code 2 (no traceback)."""
    try:
        return fn()
    except FincprgError as e:
        fail(e)
