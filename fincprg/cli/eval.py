"""CLI command ``eval`` (``audit`` lives in :mod:`fincprg.cli.audit`). Heavy imports stay inside the command bodies."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from fincprg.cli._common import HANDLED, fail, setup_logging
from fincprg.evaluate.retriever_specs import cli_help

RETRIEVER_FAILED_EXIT = 1  # some retrievers failed, the others' results were printed and written (2: bad input)
_SPEC_HELP = cli_help()


def eval_cmd(
    dataset: Annotated[Optional[Path], typer.Argument(
        help="A BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/<subset>-<split>.tsv or qrels/<split>.tsv "
             "(the latter is reported as subset 'all'). Optional only with --results.")] = None,
    retriever: Annotated[Optional[list[str]], typer.Option("--retriever", "-r", help=_SPEC_HELP)] = None,
    subset: Annotated[Optional[list[str]], typer.Option(
        "--subset", "-s", help="Qrels subset, repeatable (all, sentence, sentence-mined, passage, passage-mined, report, "
                               "topic; default: every subset present for --split).")] = None,
    split: Annotated[str, typer.Option(help="Qrels split: reads qrels/<subset>-<split>.tsv or qrels/<split>.tsv.")]
    = "test",
    k: Annotated[int, typer.Option("--k", min=1, help="Documents retrieved per query (R@100/MAP@100 need 100).")]
    = 100,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Write results.md and results.csv (and runs/*.trec with --save-runs) here.")] = None,
    save_runs: Annotated[bool, typer.Option(help="Also write each retriever's run in TREC format to OUT/runs/.")]
    = False,
    correlate: Annotated[Optional[Path], typer.Option(
        help="CSV of external-benchmark scores (columns retriever,score; retriever names must match the SPECs). "
             "Prints Pearson and Kendall matrices against every subset (paper Fig. 6).")] = None,
    metric: Annotated[str, typer.Option(help="Metric correlated with --correlate: R@1, R@5, R@10, R@100, "
                                             "nDCG@10, MRR@10, MAP@100.")] = "nDCG@10",
    results: Annotated[Optional[Path], typer.Option(
        help="Reuse a results.csv from an earlier run instead of running retrievers (with --correlate).")] = None,
    slice_: Annotated[Optional[list[str]], typer.Option(
        "--slice", help="Also score each subset per slice, repeatable: level (query level: sentence, passage, "
                        "topic) or year (the year of the query's report). Tables in results.md, rows in "
                        "slices.csv.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars or logs; tables only.")] = False,
) -> None:
    """Benchmark retrievers on a BEIR-layout dataset: Recall@1/5/10/100, nDCG@10, MRR@10, MAP@100 per subset.

    MRR@10 truncates each run to its top 10 before trec_eval's recip_rank (which has no cut-off).
    The tables go to stdout, logs and progress to stderr. Exit code 1 when a retriever failed (the
    others' results are still printed and written), 2 on bad input.
    Example: fincprg eval runs/demo/dataset -r bm25 -r lsa -r hybrid:0.6 --out runs/demo/eval
    """
    from fincprg.errors import FincprgError
    from fincprg.evaluate.metrics import METRICS

    setup_logging(quiet)
    failed: dict[str, str] = {}
    try:
        if metric not in METRICS:
            raise FincprgError(f"--metric {metric!r} is not one of {', '.join(METRICS)}")
        if results is not None:
            by_subset = _read_results(results, metric, correlate)
        else:
            by_subset, failed = _run_retrievers(dataset, retriever, subset, split, k, out, save_runs, slice_,
                                                metric, quiet)
        if correlate is not None:
            _print_correlation(correlate, metric, by_subset)
    except HANDLED as e:
        fail(e)
    if failed:
        # the others' tables are printed and written above; a script must still see that the run was incomplete
        typer.secho(f"error: {len(failed)} retriever(s) failed: {', '.join(failed)} (why: the log above and the "
                    "tables' notes); the other retrievers' results are complete", err=True, fg=typer.colors.RED)
        raise typer.Exit(RETRIEVER_FAILED_EXIT)


def _read_results(results: Path, metric: str, correlate: Optional[Path]) -> dict[str, dict[str, float]]:
    """``metric`` per subset and retriever from an earlier results.csv (only for --correlate)."""
    from fincprg.errors import FincprgError
    from fincprg.evaluate.harness import read_results_csv

    if correlate is None:
        raise FincprgError("--results only makes sense with --correlate")
    return read_results_csv(results, metric)


def _run_retrievers(dataset: Optional[Path], retriever: Optional[list[str]], subset: Optional[list[str]], split: str,
                    k: int, out: Optional[Path], save_runs: bool, slice_: Optional[list[str]], metric: str,
                    quiet: bool) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Run and print the retrievers' tables (and write them to ``out``); ``metric`` per subset, and the failures."""
    from fincprg.errors import FincprgError

    if dataset is None:
        raise FincprgError("give a DATASET folder (or --results CSV with --correlate)")
    from fincprg.evaluate.harness import format_markdown, run_eval, write_outputs

    res = run_eval(dataset, retriever or None, subsets=subset or None, split=split, k=k,
                   show_progress=not quiet, keep_runs=save_runs, slices=slice_ or None)
    typer.echo(format_markdown(res))  # stdout holds the tables only: `fincprg eval ... > results.md`
    if out is not None:
        for p in write_outputs(res, out):
            typer.echo(f"wrote {p}", err=True)
    return res.metric(metric), res.failures


def _print_correlation(correlate: Path, metric: str, by_subset: dict[str, dict[str, float]]) -> None:
    from fincprg.evaluate.correlation import correlate as corr
    from fincprg.evaluate.correlation import read_scores_csv

    typer.echo(f"\n### Correlation of {metric} with {correlate.name}\n")
    typer.echo(corr(read_scores_csv(correlate), by_subset))
