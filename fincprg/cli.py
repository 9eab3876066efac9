"""The ``fincprg`` command line (typer). Heavy libraries load only inside the commands that need them."""
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


def _setup_logging(quiet: bool) -> None:
    import os

    from rich.logging import RichHandler

    level = logging.WARNING if quiet else logging.INFO
    # the handler's own level matters: libraries such as bm25s set their loggers to DEBUG
    handler = RichHandler(show_path=False, show_time=False, level=level)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)
    if quiet:
        os.environ["TQDM_DISABLE"] = "1"  # also silences the bars of BERTopic and other libraries


def _fail(e: Exception) -> None:
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


def _print_outcomes(outcomes: list[Any], out: Path) -> None:
    typer.echo(f"\nfincprg build summary ({out}):")
    for o in outcomes:
        typer.echo(f"  {o.name:<9} {o.status:<8} {o.seconds:7.1f}s")
        _print_counts(o.counts)


def _run(corpus: Callable[[], Path], out: Path, config: Optional[Path], set_: Optional[list[str]], quiet: bool,
         *, upto: Optional[str] = None, force: bool = False) -> None:
    """Shared body of ``build`` and ``demo``: logging, config (default: the shipped offline
    pipeline), run, errors as exit code 2, and the summary."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.pipeline.runner import STAGE_BY_NAME, run_pipeline

    _setup_logging(quiet)
    try:
        if upto and upto not in STAGE_BY_NAME:
            raise FincprgError(f"--upto {upto!r} is not a stage; choose one of {', '.join(STAGE_BY_NAME)}")
        path = corpus()
        cfg = load_config(config or bundled_pipeline("offline"), set_)
        outcomes = run_pipeline(path, out, cfg, upto=upto, force=force, show_progress=not quiet and None)
    except FincprgError as e:
        _fail(e)
    _print_outcomes(outcomes, out)


@app.command()
def build(
    corpus: Annotated[Path, typer.Argument(help="A .jsonl or .csv file, or a directory of .txt/.md reports.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder; one sub-folder per stage.")],
    config: ConfigOpt = None,
    set_: SetOpt = None,
    upto: Annotated[Optional[str], typer.Option(help="Stop after this stage (see `fincprg stages`).")] = None,
    force: Annotated[bool, typer.Option(help="Re-run every stage even when its signature is unchanged.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Run every stage on CORPUS, writing OUT/<stage>/ (skips finished stages, resumes half-done ones)."""
    _run(lambda: corpus, out, config, set_, quiet, upto=upto, force=force)


@app.command()
def stages(
    out: Annotated[Optional[Path], typer.Argument(help="A build's output folder (omit to list the stages only).")] = None,
) -> None:
    """List the stages in order, and their status in OUT (complete, partial/resumable, missing)."""
    from fincprg.pipeline.runner import STAGES, stage_status

    if out is None:
        for s in STAGES:
            typer.echo(f"{s.name:<9} -> OUT/{s.dir + '/':<10} {s.description}")
        return
    if not out.is_dir():
        _fail(FincprgError(f"{out} is not a build folder; run `fincprg build CORPUS -o {out}` first"))
    for row in stage_status(out):
        extra = f" ({row['batches_done']} batches committed)" if row["status"] == "partial" else ""
        secs = f" {row['seconds']:.1f}s" if row["seconds"] is not None else ""
        typer.echo(f"{row['stage']:<9} {row['status']:<9}{secs}{extra}  OUT/{row['dir']}/")


def _sample_corpus() -> Path:
    for base in (Path.cwd(), Path(__file__).resolve().parents[1]):
        p = base / "datasets" / "sample"
        if p.exists():
            return p
    raise FincprgError("datasets/sample/ not found; run `fincprg demo` from a clone of the fincprg repository")


@app.command()
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")] = Path("runs/demo"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Build the bundled sample corpus (datasets/sample/) fully offline with pipelines/offline.yaml."""
    _run(_sample_corpus, out, config, set_, quiet)
    typer.echo(f"\nDataset written to {out / 'dataset'} (BEIR layout). Next: fincprg eval {out / 'dataset'}")


@app.command()
def doctor() -> None:
    """Report which optional backends are importable and whether an LLM API key is set."""
    import importlib.util
    import os

    from fincprg.config import LLMConfig

    for pkg in ("torch", "transformers", "sentence_transformers", "FlagEmbedding", "bertopic", "hdbscan",
                "umap", "openai", "bm25s", "pytrec_eval", "faiss", "datasets", "ray", "jieba"):
        ok = importlib.util.find_spec(pkg) is not None
        typer.echo(f"  {'ok ' if ok else '-- '} {pkg}")
    env = LLMConfig().api_key_env
    typer.echo(f"  {'ok ' if os.environ.get(env) else '-- '} ${env} ({'set' if os.environ.get(env) else 'not set'})")
    typer.echo(f"  HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE', '(unset)')}")


def _register_optional_commands() -> None:
    # These modules are light at import (their heavy deps load inside the command bodies).
    from fincprg.evaluate.audit_cli import audit_cmd
    from fincprg.evaluate.commands import eval_cmd
    from fincprg.report.commands import report_cmd

    app.command("eval")(eval_cmd)
    app.command("audit")(audit_cmd)
    app.command("report")(report_cmd)


_register_optional_commands()


def main() -> None:
    app()


if __name__ == "__main__":
    main()
