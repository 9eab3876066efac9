"""``fincprg audit``: estimate the false-positive and false-negative rates of mined labels (paper §6.1).

Mined pairs are sampled per level (traversal space: sentence, passage, topic) from score
intervals (see :mod:`fincprg.audit.sample`), rescored by a judge on the paper's 1-5
synonymy scale, and counted:

- false positive: reranker score >= threshold and judge < 3;
- false negative: reranker score < threshold and judge > 3.

Rates are given two ways: over the judged sample (``rate``), and stratified by interval and side
of the threshold, weighting each stratum by how many pairs of the build fall in it
(``weighted_rate``: the estimate for the whole population of pairs scored >= the lowest edge).
Judge failures are recorded and excluded from both. A person's decisions (review page) replace
the judge's score with ``--apply-decisions``.

Outputs (OUT/audit/): samples.jsonl, judgements.jsonl, summary.json, summary.md, review.html,
and decisions.jsonl once someone reviews.
"""
from __future__ import annotations

import json
import logging
from collections import defaultdict
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.audit.judge import RULES_NOTE
from fincprg.audit.sample import (
    Interval,
    default_intervals,
    locate,
    pair_key,
    query_texts,
    read_threshold,
    sample_pairs,
)
from fincprg.evaluate.data import level_rank
from fincprg.io import read_jsonl

log = logging.getLogger(__name__)


def effective_score(j: dict[str, Any], decisions: dict[str, dict[str, Any]] | None) -> tuple[int | None, bool]:
    """(score, from_human): a person's override or confirmation wins over the judge."""
    d = (decisions or {}).get(j["key"])
    if d is not None:
        if d["decision"] == "override":
            return int(d["score"]), True
        if d["decision"] == "confirm" and j.get("judge_score") is not None:
            return int(j["judge_score"]), True
    return j.get("judge_score"), False


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


_LABELS = ("accepted_judged", "accepted_fp", "vetoed_judged", "vetoed_synonymous")


def estimate(judged: list[dict[str, Any]], threshold: float, intervals: list[Interval],
             population: dict[str, dict[str, dict[str, int]]],
             decisions: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Per-level FP/FN counts and rates, with a per-interval breakdown (paper Fig. 5).

    Args:
        judged: judgement rows (``key, space, interval, score, judge_score``).
        threshold: the mining threshold (score >= threshold means a mined positive).
        intervals: the audit intervals, highest first.
        population: ``{space: {interval_label: {"above": n, "below": n}}}`` pair counts in the build.
        decisions: latest human decision per pair key, applied when given.
    """
    spaces = sorted({j["space"] for j in judged} | set(population),
                    key=level_rank)
    return {space: _level_estimate([j for j in judged if j["space"] == space], threshold, intervals,
                                   population.get(space, {}), decisions)
            for space in spaces}


def _level_estimate(rows: list[dict[str, Any]], threshold: float, intervals: list[Interval],
                    population: dict[str, dict[str, int]],
                    decisions: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    """One level's estimate: its intervals' tallies summed, the weighted rates from its ``population``."""
    by_iv: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for j in rows:
        by_iv[j["interval"]].append(j)
    tot = {"above": [0, 0, 0], "below": [0, 0, 0]}  # judged, errors, population-weighted errors
    # the labels actually written: accepted pairs (above threshold, not vetoed) and vetoed ones
    lab = dict.fromkeys(_LABELS, 0)
    weight = {"above": 0, "below": 0}
    failed = human = 0
    iv_rows = []
    for iv in intervals:
        pop = population.get(iv.label, {"above": 0, "below": 0})
        t = _tally(by_iv.get(iv.label, []), threshold, decisions)
        failed += t["failed"]
        human += t["human"]
        for k in _LABELS:
            lab[k] += t[k]
        for side in ("above", "below"):
            tot[side][0] += t[side][0]
            tot[side][1] += t[side][1]
            if t[side][0]:
                tot[side][2] += pop[side] * t[side][1] / t[side][0]
                weight[side] += pop[side]
        iv_rows.append(_interval_row(iv, pop, len(by_iv.get(iv.label, [])), t))
    return {
        "sampled": len(rows), "judged": len(rows) - failed, "failed": failed, "human_decided": human,
        "fp": tot["above"][1], "judged_above": tot["above"][0], "fp_rate": _rate(tot["above"][1], tot["above"][0]),
        "fp_weighted_rate": round(tot["above"][2] / weight["above"], 4) if weight["above"] else None,
        "fn": tot["below"][1], "judged_below": tot["below"][0], "fn_rate": _rate(tot["below"][1], tot["below"][0]),
        "fn_weighted_rate": round(tot["below"][2] / weight["below"], 4) if weight["below"] else None,
        **lab, "intervals": iv_rows,
    }


def _tally(rows: list[dict[str, Any]], threshold: float,
           decisions: dict[str, dict[str, Any]] | None) -> dict[str, Any]:
    """One interval's counts: judged and errors per side of the threshold, the written labels' counts
    (:data:`_LABELS`), judge failures (excluded from the rest), human decisions, and the scores."""
    t: dict[str, Any] = {"above": [0, 0], "below": [0, 0], "scores": [], "failed": 0, "human": 0,
                         **dict.fromkeys(_LABELS, 0)}
    for j in rows:
        s, from_human = effective_score(j, decisions)
        t["human"] += from_human
        if s is None:
            t["failed"] += 1
            continue
        t["scores"].append(s)
        if j.get("accepted"):
            t["accepted_judged"] += 1
            t["accepted_fp"] += s < 3
        elif j.get("veto"):
            t["vetoed_judged"] += 1
            t["vetoed_synonymous"] += s > 3
        side = "above" if j["score"] >= threshold else "below"
        t[side][0] += 1
        t[side][1] += (s < 3) if side == "above" else (s > 3)
    return t


def _interval_row(iv: Interval, pop: dict[str, int], sampled: int, t: dict[str, Any]) -> dict[str, Any]:
    """The interval's row of summary.json (paper Fig. 5) from its :func:`_tally`."""
    scores = t["scores"]
    return {
        "interval": iv.label, "lo": iv.lo, "hi": iv.hi,
        "population": pop["above"] + pop["below"], "population_above": pop["above"],
        "sampled": sampled, "judged": t["above"][0] + t["below"][0],
        "fp": t["above"][1], "fn": t["below"][1], "judged_above": t["above"][0],
        "judged_below": t["below"][0],
        "mean_judge": round(sum(scores) / len(scores), 3) if scores else None,
    }


def summary_markdown(s: dict[str, Any]) -> str:
    """Human-readable summary.md."""
    lines = [f"# Label audit of `{s['build']}`", "",
             f"- judge: **{s['judge']}**" + (f" ({s['judge_note']})" if s.get("judge_note") else ""),
             f"- threshold: {s['threshold']} (from {s['threshold_source']}); false positive = score >= threshold "
             "and judge < 3; false negative = score < threshold and judge > 3",
             f"- intervals: {', '.join(s['intervals'])}; up to {s['per_interval']} pairs each per level; "
             f"seed {s['seed']}",
             f"- human decisions: {s['decisions_available']} in decisions.jsonl, "
             + ("applied" if s["decisions_applied"] else "not applied (run with --apply-decisions)"), "",
             "| level | sampled | judged | failed | FP / judged above | FP rate | FP rate (weighted) "
             "| FN / judged below | FN rate | FN rate (weighted) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.1%}"

    for lv, r in s["levels"].items():
        lines.append(f"| {lv} | {r['sampled']} | {r['judged']} | {r['failed']} | {r['fp']} / {r['judged_above']} "
                     f"| {f(r['fp_rate'])} | {f(r['fp_weighted_rate'])} | {r['fn']} / {r['judged_below']} "
                     f"| {f(r['fn_rate'])} | {f(r['fn_weighted_rate'])} |")
    lines += ["", "Labels as written (accepted = above threshold and not vetoed by the finance veto):", ""]
    for lv, r in s["levels"].items():
        lines.append(f"- {lv}: accepted pairs judged < 3: {r.get('accepted_fp', 0)} / {r.get('accepted_judged', 0)}; "
                     f"vetoed pairs judged > 3: {r.get('vetoed_synonymous', 0)} / {r.get('vetoed_judged', 0)}")
    for lv, r in s["levels"].items():
        lines += ["", f"## {lv}: by interval", "", "| interval | pairs in build | sampled | judged | FP | FN "
                  "| mean judge |", "|---|---:|---:|---:|---:|---:|---:|"]
        for iv in r["intervals"]:
            mj = "n/a" if iv["mean_judge"] is None else f"{iv['mean_judge']:.2f}"
            lines.append(f"| {iv['interval']} | {iv['population']} | {iv['sampled']} | {iv['judged']} | {iv['fp']} "
                         f"| {iv['fn']} | {mj} |")
    return "\n".join(lines) + "\n"


def write_summary(audit_dir: Path, meta: dict[str, Any], judged: list[dict[str, Any]], apply: bool) -> dict[str, Any]:
    """Compute estimates (with decisions when ``apply``) and write summary.json/.md and review.html."""
    from fincprg.audit.review import read_decisions, write_review_page
    from fincprg.io import atomic_write_json, atomic_write_text

    decisions = read_decisions(audit_dir / L.DECISIONS)
    intervals = [Interval(lo, hi, top=i == 0) for i, (lo, hi) in enumerate(meta["interval_edges"])]
    summary = {**meta, "decisions_available": len(decisions), "decisions_applied": apply,
               "levels": estimate(judged, meta["threshold"], intervals, meta["population"],
                                  decisions if apply else None)}
    atomic_write_json(audit_dir / L.SUMMARY_JSON, summary)
    atomic_write_text(audit_dir / L.SUMMARY_MD, summary_markdown(summary))
    write_review_page(audit_dir, summary, judged, decisions)
    return summary


def run_audit(target: Path, *, judge: Any, intervals: list[Interval] | None = None, per_interval: int = 50,
              seed: int = 42, threshold: float | None = None, apply_decisions: bool = False) -> dict[str, Any]:
    """Sample, judge and summarise; returns the summary dict. ``judge`` is a :class:`~.audit_judge.Judge`."""
    from fincprg.errors import InputError
    from fincprg.io import atomic_write_jsonl

    paths = locate(target)
    thr, keep_min, source = read_threshold(paths.out)
    if threshold is not None:
        thr, source = threshold, "--threshold"
    if thr is None:
        raise InputError(f"no mining threshold found in {L.Build(paths.out).dir(L.MINE)}; pass --threshold")
    ivs = intervals or default_intervals(thr, keep_min)
    strata = sample_pairs(L.Build(paths.out).path(L.MINE, L.PAIRS), ivs, thr, per_interval, seed)
    texts = query_texts(paths.out)
    samples = []
    for iv in ivs:  # highest interval first, levels in pipeline order
        for space in sorted({k[0] for k in strata}, key=level_rank):
            st = strata.get((space, iv.label))
            for r in st.sample if st else []:
                samples.append({"key": pair_key(space, r["query_a"], r["query_b"]), **r,
                                "text_a": texts.get(r["query_a"]), "text_b": texts.get(r["query_b"])})
    missing = sum(s["text_a"] is None or s["text_b"] is None for s in samples)
    if missing:
        log.warning("audit: %d sampled pairs have a query id with no text in generate/topics/dataset queries", missing)
    todo = [i for i, s in enumerate(samples) if s["text_a"] is not None and s["text_b"] is not None]
    pairs = [(samples[i]["text_a"], samples[i]["text_b"]) for i in todo]
    if judge.name == "rules":  # the rules judge also compares the facts of the queries' sources
        from fincprg.mine.facts import build_sources

        src = build_sources(paths.out)
        verdicts = judge.judge(pairs, [(src.get(samples[i]["query_a"]), src.get(samples[i]["query_b"])) for i in todo])
    else:
        verdicts = judge.judge(pairs)
    by_index = dict(zip(todo, verdicts))
    judged = []
    for i, s in enumerate(samples):
        v = by_index.get(i)
        judged.append({"key": s["key"], "space": s["space"], "interval": s["interval"], "score": s["score"],
                       "accepted": s["accepted"], "veto": s["veto"],
                       "judge": v.judge if v else getattr(judge, "label", judge.name),
                       "judge_score": v.score if v else None, "reason": v.reason if v else "",
                       "error": v.error if v else "query text not found", "raw": v.raw if v else None,
                       "meta": v.meta if v else None})
    pop: dict[str, dict[str, dict[str, int]]] = defaultdict(dict)
    for (sp, lab), st in strata.items():
        pop[sp][lab] = {"above": st.above, "below": st.below}
    paths.audit.mkdir(parents=True, exist_ok=True)
    atomic_write_jsonl(paths.audit / L.SAMPLES, samples)
    atomic_write_jsonl(paths.audit / L.JUDGEMENTS, judged)
    meta = {
        "build": str(paths.out), "judge": getattr(judge, "label", judge.name),
        "judge_note": RULES_NOTE if judge.name == "rules" else "", "threshold": thr, "threshold_source": source,
        "intervals": [iv.label for iv in ivs], "interval_edges": [[iv.lo, iv.hi] for iv in ivs],
        "per_interval": per_interval, "seed": seed, "population": dict(pop),
    }
    return write_summary(paths.audit, meta, judged, apply_decisions)


def reapply(target: Path, apply: bool = True) -> dict[str, Any]:
    """Recompute summary/review from an existing audit (e.g. after people made decisions)."""
    from fincprg.errors import InputError

    paths = locate(target)
    old = paths.audit / L.SUMMARY_JSON
    if not old.is_file():
        raise InputError(f"no audit in {paths.audit}; run `fincprg audit {target}` first")
    meta = {k: v for k, v in json.loads(old.read_text(encoding="utf-8")).items()
            if k not in ("levels", "decisions_available", "decisions_applied")}
    judged = list(read_jsonl(paths.audit / L.JUDGEMENTS))
    return write_summary(paths.audit, meta, judged, apply)

