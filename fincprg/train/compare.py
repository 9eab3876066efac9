"""Before/after table: the base model and the fine-tuned one on the same benchmarks, by ``fincprg eval``.

Both sides run through :func:`fincprg.evaluate.harness.run_eval` with the ``dense:MODEL`` retriever,
so the figures are the ones ``fincprg eval -r dense:OUT_MODEL`` prints.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

from fincprg.errors import FincprgError
from fincprg.evaluate.harness import run_eval

log = logging.getLogger(__name__)


@dataclass
class Row:
    """One benchmark (a BEIR folder and qrels subset) scored by both models."""

    bench: str
    subset: str
    n: int
    ndcg_before: float
    ndcg_after: float
    recall_before: float
    recall_after: float


@dataclass
class Bench:
    """A benchmark to score: a BEIR folder, its qrels subsets (default: all it has) and split."""

    path: Path
    subsets: list[str] | None = None
    split: str = "test"
    label: str | None = None


def _scores(model: str, bench: Bench, show_progress: bool) -> dict[str, dict[str, float]]:
    res = run_eval(bench.path, [f"dense:{model}"], subsets=bench.subsets, split=bench.split, k=100,
                   show_progress=show_progress)
    if res.failures:
        raise FincprgError(f"evaluating {model} on {bench.path} failed: {next(iter(res.failures.values()))}")
    return next(iter(res.scores.values()))


def _labelled(bench: Bench) -> tuple[list[str], list[str]]:
    """(subsets of ``bench`` with labelled queries in its split, subsets asked by name without any); with no
    subsets named, empty ones are left out, as ``fincprg eval`` does."""
    from fincprg.evaluate.data import available_subsets, load_beir

    files = available_subsets(bench.path, bench.split)
    asked = bench.subsets or list(files)
    present = [s for s in asked if s in files]
    qrels = load_beir(bench.path, split=bench.split, subsets=present).qrels if present else {}
    have = [s for s in present if qrels.get(s)]
    return have, [s for s in bench.subsets or [] if s not in have]


def before_after(base: str, tuned: str, benches: list[Bench], show_progress: bool = False) -> list[Row]:
    """nDCG@10 and Recall@10 of ``base`` and ``tuned`` on every benchmark and subset; a subset without
    labelled queries in the split is a row with 0 queries and no scores (nothing is run for it)."""
    rows: list[Row] = []
    nan = float("nan")
    for b in benches:
        have, empty = _labelled(b)
        label = b.label or str(b.path)
        if have:
            b = Bench(b.path, have, b.split, b.label)
            before = _scores(base, b, show_progress)
            after = _scores(tuned, b, show_progress)
            for subset, sc in before.items():
                a = after[subset]
                rows.append(Row(label, subset, int(sc["n"]), sc["nDCG@10"], a["nDCG@10"], sc["R@10"], a["R@10"]))
        rows += [Row(label, s, 0, nan, nan, nan, nan) for s in empty]
    return rows


def _f(v: float) -> str:
    return "–" if math.isnan(v) else f"{v:.4f}"


def format_table(rows: list[Row], base: str, tuned: str) -> str:
    """Markdown: one line per benchmark and subset, before / after / change."""
    out = [f"before = `{base}`, after = `{tuned}` (dense retrieval, cosine; `fincprg eval -r dense:MODEL`)", "",
           "| benchmark | subset | queries | nDCG@10 before | nDCG@10 after | Δ nDCG@10 | R@10 before | R@10 after |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        delta = r.ndcg_after - r.ndcg_before
        change = "no test queries" if not r.n else "–" if math.isnan(delta) else f"{delta:+.4f}"
        out.append(f"| {r.bench} | {r.subset} | {r.n} | {_f(r.ndcg_before)} | {_f(r.ndcg_after)} | "
                   f"{change} | {_f(r.recall_before)} | {_f(r.recall_after)} |")
    return "\n".join(out)
