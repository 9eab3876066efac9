"""What every command shares: the typer app, common options, logging setup and the one error exit."""
from __future__ import annotations

import errno
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fincprg.cli._help import HelpGroup, help_markup_mode
from fincprg.errors import FincprgError
from fincprg.version import __version__

HELP_MARKUP = help_markup_mode()  # rich panels on a wide terminal, whole-word plain text elsewhere (_help.py)

app = typer.Typer(
    help=(
        "fincprg turns Chinese financial research reports into a passage-retrieval dataset "
        "(queries, passages, relevance labels) with the FinCPRG method.\n\n"
        "Stages: ingest -> chunk -> generate -> topics -> verify -> mine -> export. "
        "Each writes OUT/<stage>/ with a manifest.json; re-running skips finished stages "
        "and resumes a half-done one."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=HELP_MARKUP,
    cls=HelpGroup,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"fincprg {__version__}")
        raise typer.Exit()


@app.callback()
def _main(version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the fincprg version and exit.")] = False) -> None:
    pass  # the app's help is Typer(help=...) above; this callback only carries --version


ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", "-c", help="Pipeline YAML (default: the shipped pipelines/offline.yaml, fully offline)."),
]
SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", help="Dotted override, repeatable: --set chunk.passage_chars=400 --set llm.model=qwen2.5"),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars; summary only.")]
LimitOpt = Annotated[Optional[int], typer.Option(
    "--limit", min=1, help="Build from N reports only: a reproducible sample stratified by industry and year, "
                           "drawn with run.seed before chunking (same as --set run.sample_reports=N).")]
MaxRequestsOpt = Annotated[Optional[int], typer.Option(
    "--max-requests", min=0, help="Send at most N LLM requests (cache hits are free), then stop cleanly with "
                                  "exit code 3; re-running resumes where it stopped.")]
MaxCostOpt = Annotated[Optional[float], typer.Option(
    "--max-cost", min=0.0, help="Stop cleanly (exit code 3) before the LLM request that would take this build's "
                                "cost past USD (by llm.prices and the tokens the server reports); resumable.")]
STOPPED_EXIT = 3  # a clean stop at --max-requests / --max-cost: resumable, not an error


def setup_logging(quiet: bool) -> None:
    import os

    from rich.console import Console
    from rich.logging import RichHandler

    level = logging.WARNING if quiet else logging.INFO
    # the handler's own level matters: libraries such as bm25s set their loggers to DEBUG. Logs go to
    # stderr, so that stdout holds only what was asked for (`fincprg eval ... > results.md`); tqdm's bars
    # are on stderr already.
    handler = RichHandler(console=Console(stderr=True), show_path=False, show_time=False, level=level)
    logging.basicConfig(level=level, format="%(message)s", handlers=[handler], force=True)
    if quiet:
        os.environ["TQDM_DISABLE"] = "1"  # also silences the bars of BERTopic and other libraries


# What a user can do about each file-system error (the message names the path).
_OS_FIXES = {
    errno.ENOSPC: "the disk is full: free some space, or write to another disk (-o/--out, run.cache_dir), and "
                  "re-run the same command (finished stages are kept, a half-done one resumes)",
    errno.EDQUOT: "the disk quota is used up: free some space or write elsewhere (-o/--out), then re-run",
    errno.EFBIG: "the file is larger than this process may write (ulimit -f) or the file system allows: raise the "
                 "limit or write to another disk (-o/--out), then re-run the same command",
    errno.EROFS: "the file system is read-only: choose an output folder on a writable disk (-o/--out)",
    errno.EACCES: "permission denied: fix the permissions (chmod/chown) or choose a folder you can write to",
    errno.EPERM: "operation not permitted: fix the permissions or choose a folder you can write to",
    errno.ENOTDIR: "part of this path is a file, not a folder: choose another path",
    errno.EISDIR: "this path is a folder where a file is expected: choose a file path",
    errno.ENOENT: "it does not exist: check the path",
    errno.EEXIST: "something of that name is in the way (a file where a folder is needed?): remove it or choose "
                  "another path",
    errno.EMFILE: "too many open files: raise the limit (ulimit -n) and re-run",
    errno.ENAMETOOLONG: "the path is too long: choose a shorter one",
}
HANDLED = (FincprgError, OSError)  # what the commands turn into one line instead of a traceback


def describe_os_error(e: OSError) -> str:
    """One line for a file-system error: what happened, to which path, and the fix."""
    what = e.strerror or type(e).__name__
    where = f": {e.filename}" if e.filename else ""
    if e.filename2:
        where += f" -> {e.filename2}"
    fix = _OS_FIXES.get(e.errno or -1, "check the path, its permissions and the free disk space")
    return f"{what}{where}; {fix}".replace("\n", " ")


def print_error(e: Exception) -> None:
    """The one red ``error: ...`` line on stderr."""
    msg = describe_os_error(e) if isinstance(e, OSError) and not isinstance(e, FincprgError) else str(e)
    typer.secho(f"error: {msg}", fg=typer.colors.RED, err=True)


def fail(e: Exception) -> None:
    print_error(e)
    raise typer.Exit(2)


def _fmt(v: Any) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _print_counts(counts: dict[str, Any], indent: str = "    ") -> None:
    for k, v in counts.items():
        if isinstance(v, dict):
            if not v:
                typer.echo(f"{indent}{k}: none")
                continue
            if len(indent) >= 8 and not any(isinstance(x, (dict, list)) for x in v.values()):
                # deep, flat dicts (per split, per measure) on one line keep the summary readable
                typer.echo(f"{indent}{k}: " + ", ".join(f"{a}={_fmt(b)}" for a, b in v.items()))
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
        if o.name == "verify" and o.counts.get("levels"):  # yield per level and reasons, not the raw counts
            from fincprg.verify.summary import summary_lines

            for line in summary_lines(o.counts):
                typer.echo(f"    {line}")
        elif o.name == "chunk":  # the ids of heavily cleaned reports go to the warning below, not here
            _print_counts({k: v for k, v in o.counts.items() if k != "reports_over_half_removed_ids"})
        else:
            _print_counts(o.counts)
    _warn_heavy_cleaning(outcomes, out)
    _warn_no_queries(outcomes, out)
    failed = {o.name: o.counts.get("retryable_failures") for o in outcomes if o.counts.get("retryable_failures")}
    if failed:
        where = ", ".join(f"{n} in {stage}" for stage, n in failed.items())
        typer.secho(f"\n{where} failed (no valid LLM answer; see <stage>/failures.jsonl). To ask exactly "
                    f"those again, re-run the same command with --retry-failed (fincprg build "
                    f"{corpus or 'CORPUS'} -o {out} ... --retry-failed)", fg=typer.colors.YELLOW)


def _warn_heavy_cleaning(outcomes: list[Any], out: Path) -> None:
    """A yellow line when cleaning took more than half of some reports, in PDF layout reading (ingest) or in
    chunk: never silent (issue 48), also with -q."""
    from fincprg import layout as L

    ingest = next((o for o in outcomes if o.name == "ingest"), None)
    pdf = (ingest.counts.get("pdf") or {}) if ingest else {}
    if pdf.get("over_half_removed"):
        typer.secho(f"\nwarning: {pdf['over_half_removed']} PDF(s) lost more than half their characters in layout "
                    f"cleaning ({', '.join(pdf.get('over_half_removed_ids', [])[:3])}); see "
                    f"{L.Build(out).path(L.INGEST, L.LAYOUT_REMOVED)}", fg=typer.colors.YELLOW, err=True)
    chunk = next((o for o in outcomes if o.name == "chunk"), None)
    n = chunk.counts.get("reports_over_half_removed", 0) if chunk else 0
    if not n:
        return
    ids = chunk.counts.get("reports_over_half_removed_ids", [])
    named = ", ".join(ids[:3]) + (f" and {n - 3} more" if n > 3 else "")
    typer.secho(f"\nwarning: {n} report(s) lost more than half their characters in cleaning ({named}); see "
                f"{out}/chunk/removed.jsonl for what each rule removed; all their ids: {out}/chunk/manifest.json "
                f"(counts.reports_over_half_removed_ids)", fg=typer.colors.YELLOW, err=True)


def _warn_no_queries(outcomes: list[Any], out: Path) -> None:
    """A dataset with no query is no dataset: say so, and where the queries were lost."""
    counts = {o.name: o.counts for o in outcomes}
    if counts.get("export", {}).get("queries_emitted", 1) != 0:
        return
    if not counts.get("chunk", {}).get("passages", 1):
        why = f"chunk kept no passage (see {out}/chunk/removed.jsonl for what each rule removed)"
    elif not counts.get("generate", {}).get("queries"):
        why = ("generate wrote no query (an untitled report that names no listed company has no subject: give "
               "reports a title or a company field)")
    else:
        why = f"verify dropped every query (see {out}/verify/dropped.jsonl for the reasons)"
    typer.secho(f"\nwarning: the dataset has no query: {why}", fg=typer.colors.YELLOW, err=True)


def run_build(corpus: Callable[[], Path], out: Path, config: Optional[Path], set_: Optional[list[str]], quiet: bool,
         *, upto: Optional[str] = None, force: bool = False, retry_failed: bool = False,
         limit: Optional[int] = None, max_requests: Optional[int] = None, max_cost: Optional[float] = None,
         timings: Optional[Path] = None) -> None:
    """Shared body of ``build`` and ``demo``: logging, config (default: the shipped offline
    pipeline), run, errors as exit code 2, a stop at a budget limit as exit code 3, and the summary."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.llm.budget import Budget, BuildStopped
    from fincprg.pipeline.runner import STAGE_BY_NAME, run_pipeline

    setup_logging(quiet)
    budget = None
    try:
        if upto and upto not in STAGE_BY_NAME:
            raise FincprgError(f"--upto {upto!r} is not a stage; choose one of {', '.join(STAGE_BY_NAME)}")
        path = corpus()
        overrides = [*(set_ or []), *([f"run.sample_reports={limit}"] if limit is not None else [])]
        cfg = load_config(config or bundled_pipeline("offline"), overrides)
        budget = Budget(max_requests=max_requests, max_cost_usd=max_cost)
        outcomes = run_pipeline(path, out, cfg, upto=upto, force=force, show_progress=not quiet and None,
                                budget=budget, retry_failed=retry_failed)
    except BuildStopped as e:
        _write_timings(timings, out, e.outcomes)
        _print_outcomes(e.outcomes, out, path)
        _print_spent(e.spent)
        typer.secho(str(e), fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(STOPPED_EXIT) from None
    except HANDLED as e:
        fail(e)
    _write_timings(timings, out, outcomes)
    _print_outcomes(outcomes, out, path)
    if budget is not None and budget.limited:
        _print_spent(budget.summary())
    from fincprg.estimate.compare import print_comparison

    print_comparison(out, typer.echo)


def _write_timings(path: Optional[Path], out: Path, outcomes: list[Any]) -> None:
    """Append this run's stage timings to ``path`` (``--timings``): provenance kept outside OUT."""
    if path is None:
        return
    import datetime as dt
    import json

    now = dt.datetime.now().isoformat(timespec="seconds")
    with open(path, "a", encoding="utf-8") as f:
        for o in outcomes:
            f.write(json.dumps({"out": str(out), "stage": o.name, "status": o.status, "seconds": round(o.seconds, 3),
                                "finished_at": now}, ensure_ascii=False) + "\n")


def _print_spent(spent: dict[str, Any]) -> None:
    if not spent:
        return
    req = f"{spent['requests']}" + (f" of {spent['max_requests']}" if spent.get("max_requests") is not None else "")
    cost = f"{spent['cost_usd']:.4f}" + (f" of {spent['max_cost_usd']:g}" if spent.get("max_cost_usd") is not None
                                         else "")
    typer.echo(f"  LLM budget: {req} requests sent, {cost} USD spent "
               f"({spent['prompt_tokens']} prompt + {spent['completion_tokens']} completion tokens)")




def guarded(fn: Callable[[], Any]) -> Any:
    """Run a command body; a FincprgError or a file-system error becomes one red line and exit code 2
    (no traceback)."""
    try:
        return fn()
    except HANDLED as e:
        fail(e)
