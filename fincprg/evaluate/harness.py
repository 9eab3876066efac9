"""Run retrievers over a BEIR folder and tabulate the metrics per subset (paper Tables 2–3)."""
from __future__ import annotations

import csv
import io
import logging
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.errors import FincprgError
from fincprg.evaluate.data import BeirDataset, load_beir, merge_qrels
from fincprg.evaluate.metrics import METRICS, evaluate, mean, per_query, pool_recall
from fincprg.evaluate.retrievers import build_retriever, default_specs
from fincprg.evaluate.retrievers.base import TrainingData, forward_query_meta, forward_training

log = logging.getLogger(__name__)


@dataclass
class EvalResult:
    """Metrics of every retriever on every subset, plus per-retriever notes.

    Attributes:
        scores: retriever spec -> subset -> {metric: value, "n": queries}.
        extras: retriever spec -> {"seconds", "pool_recall@N" (rerankers), Borda stability ...}.
        failures: retriever spec -> error message (the retriever was skipped).
        runs: retriever spec -> BEIR results (kept for run files).
    """

    dataset: str
    split: str
    subsets: list[str]
    n_docs: int = 0
    scores: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    extras: dict[str, dict[str, float]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    runs: dict[str, dict] = field(default_factory=dict)
    slices: dict[str, dict[str, dict[str, dict[str, dict[str, float]]]]] = field(default_factory=dict)
    """retriever -> subset -> slice kind ("level", "year") -> slice value -> {metric: value, "n"}."""

    def metric(self, metric: str = "nDCG@10") -> dict[str, dict[str, float]]:
        """subset -> {retriever: value} for one metric (the input of the correlation analysis)."""
        return {s: {r: sc[s][metric] for r, sc in self.scores.items() if s in sc} for s in self.subsets}


def _queries_for(ds: BeirDataset) -> dict[str, str]:
    wanted = set().union(*(ds.qrels[s] for s in ds.qrels))
    return {q: t for q, t in ds.queries.items() if q in wanted}


SLICES = ("level", "year")


def slice_keys(ds: BeirDataset, kind: str) -> dict[str, str]:
    """query id -> its slice value: ``level`` (queries.jsonl level) or ``year`` (its report's year, from
    the ``date`` of the corpus passages with the query's ``report_id``); ``unknown`` where absent."""
    if kind not in SLICES:
        raise FincprgError(f"--slice {kind!r} is not one of {', '.join(SLICES)}")
    if kind == "level":
        return {q: str(m.get("level") or "unknown") for q, m in ds.query_meta.items()}
    years: dict[str, str] = {}
    for doc in ds.corpus.values():
        rid, date = doc.get("report_id"), str(doc.get("date") or "")
        if rid and date[:4].isdigit():
            years.setdefault(str(rid), date[:4])
    return {q: years.get(str(m.get("report_id")), "unknown") for q, m in ds.query_meta.items()}


def _slice_scores(qrels: dict, run: dict, keys: dict[str, str]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, float]]] = {}
    for q, row in per_query(qrels, run).items():
        groups.setdefault(keys.get(q, "unknown"), []).append(row)
    return {v: {**mean(rows), "n": float(len(rows))} for v, rows in sorted(groups.items())}


def run_eval(dataset: str | Path, specs: list[str] | None = None, *, subsets: list[str] | None = None,
             split: str = "test", k: int = 100, show_progress: bool = True, keep_runs: bool = False,
             slices: list[str] | None = None) -> EvalResult:
    """Fit and search every retriever once, then score its run on each subset.

    Args:
        dataset: BEIR folder.
        specs: retriever SPECs (see ``fincprg.evaluate.retrievers``); default: the offline baselines.
        subsets: qrels subsets (default: all the folder has for ``split``).
        k: documents retrieved per query (metrics need ≥ 100 for R@100 and MAP@100).
        slices: also score each subset per query ``level`` and/or report ``year`` (:data:`SLICES`).
    """
    ds = load_beir(dataset, split=split, subsets=subsets)
    # a build in this process leaves its company names in the shared tokenizer; scores must not depend on
    # what ran before, so eval tokenises as a fresh `fincprg eval` process does (no extra words)
    from fincprg.finance.lexicon import use_words

    use_words(())
    keys = {kind: slice_keys(ds, kind) for kind in slices or []}
    has_reports = any(m.get("report_id") for m in ds.query_meta.values())
    specs = specs or default_specs(has_reports)
    retrievers = [build_retriever(s, show_progress=show_progress) for s in specs]  # fail fast on bad specs
    queries = _queries_for(ds)
    result = EvalResult(str(dataset), split, list(ds.qrels), len(ds.corpus))
    log.info("evaluating %d retrievers on %d queries, %d docs", len(specs), len(queries), len(ds.corpus))
    training = TrainingData(Path(dataset), split, ds.queries, merge_qrels(ds.qrels.values()))
    for spec, r in zip(specs, retrievers):
        t0 = time.perf_counter()
        try:
            forward_query_meta([r], ds.query_meta)
            forward_training([r], training)
            r.fit(ds.corpus)
            run = r.search(queries, k)
        except FincprgError as e:
            log.error("retriever %s failed: %s", spec, e)
            result.failures[spec] = str(e)
            continue
        secs = time.perf_counter() - t0
        result.scores[spec] = {s: evaluate(qr, run) for s, qr in ds.qrels.items()}
        if keys:
            result.slices[spec] = {s: {kind: _slice_scores(qr, run, kv) for kind, kv in keys.items()}
                                   for s, qr in ds.qrels.items()}
        ex: dict[str, float] = {"seconds": secs}
        pool = getattr(r, "last_pool", None)
        if pool:
            depth = getattr(r, "pool", None) or max((len(v) for v in pool.values()), default=0)
            for s, qr in ds.qrels.items():
                ex[f"pool_recall@{depth}:{s}"] = pool_recall(qr, pool)
        ex.update(getattr(r, "stats", {}) or {})
        result.extras[spec] = ex
        if keep_runs:
            result.runs[spec] = run
        log.info("%s: nDCG@10 %s (%.1fs)", spec,
                 ", ".join(f"{s}={v['nDCG@10']:.3f}" for s, v in result.scores[spec].items()), secs)
    return result


def _fmt(v: float) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


def format_markdown(res: EvalResult, metrics: tuple[str, ...] = METRICS) -> str:
    """Markdown tables shaped like the paper's Tables 2–3: rows retrievers, columns metrics, one table per
    subset, then an overview of nDCG@10 across subsets and notes (pool recall, Borda stability, time)."""
    out = [f"Dataset: `{res.dataset}` (split {res.split}, {res.n_docs} documents)", ""]
    for s in res.subsets:
        n = next((int(v[s]["n"]) for v in res.scores.values() if s in v), 0)
        out += [f"### {s} ({n} queries)", "", "| retriever | " + " | ".join(metrics) + " |",
                "|---" * (len(metrics) + 1) + "|"]
        for r, sc in res.scores.items():
            out.append(f"| {r} | " + " | ".join(_fmt(sc[s][m]) for m in metrics) + " |")
        out.append("")
    if len(res.subsets) > 1:
        out += ["### nDCG@10 by subset", "", "| retriever | " + " | ".join(res.subsets) + " |",
                "|---" * (len(res.subsets) + 1) + "|"]
        for r, sc in res.scores.items():
            out.append(f"| {r} | " + " | ".join(_fmt(sc[s]["nDCG@10"]) for s in res.subsets) + " |")
        out.append("")
    out += format_slices(res)
    notes = []
    for r, ex in res.extras.items():
        bits, pool = [], []
        for key, v in ex.items():
            if key == "seconds":
                bits.append(f"{v:.1f}s")
            elif key.startswith("pool_recall@"):
                head, _, sub = key.partition(":")
                if not pool:
                    pool.append(head)
                pool.append(f"{sub} {_fmt(v)}")
            else:
                bits.append(f"{key} {v:.4g}")
        if pool:
            bits.insert(1, f"{pool[0]}: " + ", ".join(pool[1:]))
        notes.append(f"- {r}: " + "; ".join(bits))
    for r, msg in res.failures.items():
        notes.append(f"- {r}: FAILED ({msg.splitlines()[0]})")
    if notes:
        out += ["Notes (time = fit + search; pool_recall = share of relevant docs in a reranker's candidate "
                "pool; rounds/rank_variance = Borda stability):", ""] + notes + [""]
    return "\n".join(out)


def format_slices(res: EvalResult, metric: str = "nDCG@10") -> list[str]:
    """One table per subset and slice kind: retrievers × slice values (queries per value in the header)."""
    out: list[str] = []
    first = next(iter(res.slices.values()), {})
    for s in res.subsets:
        for kind, by_value in first.get(s, {}).items():
            values = list(by_value)
            if values == ["unknown"]:
                out += [f"### {metric} by {kind}, {s}: no query carries a {kind} (queries.jsonl level / "
                        "report_id with a dated corpus)", ""]
                continue
            out += [f"### {metric} by {kind}, {s}", "",
                    "| retriever | " + " | ".join(f"{v} ({int(by_value[v]['n'])})" for v in values) + " |",
                    "|---" * (len(values) + 1) + "|"]
            for r, sl in res.slices.items():
                row = sl.get(s, {}).get(kind, {})
                out.append(f"| {r} | " + " | ".join(_fmt(row[v][metric]) if v in row else "–" for v in values)
                           + " |")
            out.append("")
    return out


def format_slices_csv(res: EvalResult, metrics: tuple[str, ...] = METRICS) -> str:
    """One row per (retriever, subset, slice kind, value): ..., n, metrics."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["retriever", "subset", "slice", "value", "n", *metrics])
    for r, sl in res.slices.items():
        for s, kinds in sl.items():
            for kind, by_value in kinds.items():
                for v, sc in by_value.items():
                    w.writerow([r, s, kind, v, int(sc["n"]), *(f"{sc[m]:.6f}" for m in metrics)])
    return buf.getvalue()


def format_csv(res: EvalResult, metrics: tuple[str, ...] = METRICS) -> str:
    """One row per (retriever, subset): retriever, subset, n, metrics..."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["retriever", "subset", "n", *metrics])
    for r, sc in res.scores.items():
        for s in res.subsets:
            w.writerow([r, s, int(sc[s]["n"]), *(f"{sc[s][m]:.6f}" for m in metrics)])
    return buf.getvalue()


def read_results_table(path: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """(metric columns, rows) of a results.csv written by :func:`format_csv`; each row has ``retriever``,
    ``subset`` (``all`` when absent), ``n`` and ``vals`` (one float per metric, ``None`` where unparsable)."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        metrics = [m for m in (reader.fieldnames or []) if m not in ("retriever", "subset", "n")]
        rows = []
        for row in reader:
            vals: list[float | None] = []
            for m in metrics:
                try:
                    vals.append(float(row[m]))
                except (TypeError, ValueError):
                    vals.append(None)
            rows.append({"retriever": row.get("retriever") or "", "subset": row.get("subset") or "all",
                         "n": row.get("n"), "vals": vals})
    return metrics, rows


def read_results_csv(path: str | Path, metric: str = "nDCG@10") -> dict[str, dict[str, float]]:
    """subset -> {retriever: metric} from a results.csv written by :func:`format_csv`."""
    metrics, rows = read_results_table(path)
    if metric not in metrics:
        if not rows:
            return {}
        raise FincprgError(f"{path}: no column {metric!r}; choose one of {', '.join(METRICS)}")
    i = metrics.index(metric)
    out: dict[str, dict[str, float]] = {}
    for r in rows:
        if r["vals"][i] is None:
            raise FincprgError(f"{path}: {r['retriever']}/{r['subset']}: {metric} is not a number")
        out.setdefault(r["subset"], {})[r["retriever"]] = r["vals"][i]
    return out


def safe_name(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec).strip("_")[:80] or "retriever"


def write_outputs(res: EvalResult, out: Path) -> list[Path]:
    """Write results.md, results.csv, eval.json (which dataset, by content hash), slices.csv (with
    slices) and (when kept) runs/<spec>.trec under ``out``."""
    from fincprg.io import atomic_write_json, atomic_write_text

    out = Path(out)
    paths = [out / L.RESULTS_MD, out / L.RESULTS_CSV, out / L.EVAL_META]
    atomic_write_text(paths[0], format_markdown(res) + "\n")
    atomic_write_text(paths[1], format_csv(res))
    atomic_write_json(paths[2], {"dataset": res.dataset, "split": res.split,
                                 "dataset_hash": L.Dataset(Path(res.dataset)).content_hash()})
    if res.slices:
        paths.append(out / "slices.csv")
        atomic_write_text(paths[-1], format_slices_csv(res))
    for spec, run in res.runs.items():
        lines = [f"{q} Q0 {d} {i} {s:.6f} {safe_name(spec)}"
                 for q, docs in run.items() for i, (d, s) in
                 enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1)]
        p = out / L.RUNS_DIR / f"{safe_name(spec)}.trec"
        atomic_write_text(p, "\n".join(lines) + "\n")
        paths.append(p)
    return paths
