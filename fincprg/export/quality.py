"""Query diversity and difficulty at export: near-duplicate removal (:mod:`fincprg.export.dedup`) and each
query's lexical overlap with its positive passages (:mod:`fincprg.finance.easiness`), with the optional
filter ``export.easiness.max_overlap``.

The overlap of a query is taken against its most-copied positive; it is written into the query's
provenance (``overlap: {bigram, token}``, over all its labels), summarised per subset and per level in
the export manifest, the dataset card and the report.
"""
from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from fincprg.export.tokens import TokenIds
from fincprg.finance.easiness import MEASURES, bigrams, distribution
from fincprg.finance.lexicon import tokenize
from fincprg.records import Qrel, Query

STATS = ("n", "mean", "median", "p90", "share_ge_0.8")


class Overlaps:
    """Overlap of queries with passages.

    A (query, passage) overlap is computed once and remembered (a labelled pair is asked for again per
    subset); a passage's bigrams are kept only for the last ``recent`` passages (the queries of one passage
    come together), and its tokens come from ``tokens`` (each passage cut once, shared with the BM25
    negatives): nothing per passage is held for the whole corpus.
    """

    def __init__(self, passage_texts: Mapping[str, str], tokens: TokenIds | None = None, recent: int = 1024):
        self.texts = passage_texts
        self.tokens = tokens or TokenIds()
        self._recent = recent
        self._bigrams: OrderedDict[str, set[str]] = OrderedDict()
        self._pairs: dict[tuple[str, str], tuple[float, ...]] = {}

    def _passage_bigrams(self, pid: str) -> set[str]:
        got = self._bigrams.get(pid)
        if got is None:
            got = self._bigrams[pid] = bigrams(self.texts[pid])
            if len(self._bigrams) > self._recent:
                self._bigrams.popitem(last=False)
        else:
            self._bigrams.move_to_end(pid)
        return got

    def _pair(self, query: str, pid: str) -> tuple[float, ...]:
        """The query's overlap with one passage, per measure (in ``MEASURES`` order); the query is not empty."""
        key = (query, pid)
        got = self._pairs.get(key)
        if got is None:
            vals = []
            for m in MEASURES:
                if m == "bigram":
                    q, p = bigrams(query), self._passage_bigrams(pid)
                else:
                    p = self.tokens.units(self.texts[pid])  # cut first: the query's tokens map onto its ids
                    q = self.tokens.query_units(tokenize(query))
                vals.append(len(q & p) / len(q) if q else None)
            got = self._pairs[key] = tuple(vals)
        return got

    def release_passages(self) -> None:
        """Let go of the passages' bigrams and tokens (a pair asked for later is computed again)."""
        self.tokens = TokenIds()
        self._bigrams.clear()

    def best(self, query: str, passage_ids: Sequence[str]) -> dict[str, float]:
        """``{measure: overlap with the most-copied passage}`` (passages unknown to the corpus are skipped)."""
        pairs = [self._pair(query, p) for p in passage_ids if p in self.texts] if query else []
        return {m: round(max((v[k] for v in pairs if v[k] is not None), default=0.0), 4)
                for k, m in enumerate(MEASURES)}


def annotate(queries: Sequence[Query], qrels: Sequence[Qrel], ov: Overlaps, *, max_overlap: float | None,
             measure: str) -> tuple[list[Query], list[Qrel], dict[str, Any]]:
    """Write each labelled query's overlap into its provenance; with ``max_overlap``, drop the labels of the
    queries at or above it (they stay in queries.jsonl, marked ``too_easy``, so the hierarchy stays whole).

    Returns (queries, qrels, ``{"filtered": {level: n}}``).
    """
    positives: dict[str, list[str]] = defaultdict(list)
    for r in qrels:
        if r.relevance > 0:
            positives[r.query_id].append(r.passage_id)
    out_q: list[Query] = []
    easy: set[str] = set()
    filtered: Counter[str] = Counter()
    for q in queries:
        if q.id not in positives:
            out_q.append(q)
            continue
        o = ov.best(q.text, positives[q.id])
        prov = {**q.provenance, "overlap": o}
        if max_overlap is not None and o[measure] >= max_overlap:
            prov["too_easy"] = True
            easy.add(q.id)
            filtered[q.level] += 1
        out_q.append(q.model_copy(update={"provenance": prov}))
    return out_q, [r for r in qrels if r.query_id not in easy], {"filtered": dict(sorted(filtered.items()))}


def summarise(subset_qrels: Mapping[str, Mapping[str, Mapping[str, Mapping[str, int]]]],
              queries: Mapping[str, Query], ov: Overlaps) -> dict[str, Any]:
    """Overlap distributions per subset (over its labels, both splits) and per level (``all`` subset)."""
    by_subset: dict[str, Any] = {}
    by_level: dict[str, dict[str, list[float]]] = defaultdict(lambda: {m: [] for m in MEASURES})
    for subset, splits in subset_qrels.items():
        vals: dict[str, list[float]] = {m: [] for m in MEASURES}
        for split in splits.values():
            for qid, rels in split.items():
                o = ov.best(queries[qid].text, [p for p, v in rels.items() if v > 0])
                for m in MEASURES:
                    vals[m].append(o[m])
                    if subset == "all":
                        by_level[queries[qid].level][m].append(o[m])
        by_subset[subset] = {m: _short(distribution(vals[m])) for m in MEASURES}
    return {"by_subset": by_subset,
            "by_level": {lv: {m: _short(distribution(v[m])) for m in MEASURES} for lv, v in sorted(by_level.items())}}


def _short(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d[k] for k in STATS if k in d}


def card_lines(dedup: Mapping[str, Any] | None, easiness: Mapping[str, Any] | None) -> list[str]:
    """The dataset card's "Query diversity and difficulty" section."""
    from fincprg.export.card import md_text  # the card's escaping; card.py imports the stage's modules

    out = ["## Query diversity and difficulty", ""]
    if dedup is None:
        out += ["Near-duplicate removal was off (`export.dedup.enabled: false`).", ""]
    else:
        removed = dedup.get("removed") or {}
        desc = ", ".join(f"{lv}: {n}" for lv, n in removed.items()) or "none"
        out += [f"Near-duplicate queries removed within each level (Jaccard of character {dedup['ngram']}-grams "
                f">= {dedup['threshold']}, same company, period, metric, numbers and direction): {desc}. Each removed query's labels moved to the query "
                f"it duplicates, as mined labels ({dedup.get('labels_moved', 0)} labels).", ""]
        for kept, dup, sim in dedup.get("examples") or []:
            out.append(f"- 「{md_text(dup)}」 duplicates 「{md_text(kept)}」 ({sim})")
        if dedup.get("examples"):
            out.append("")
    if easiness:
        out += ["Easiness: the share of a query's character bigrams (jieba tokens) found in its most-copied "
                "positive passage; 1.0 means the query is copied from the passage, which any lexical retriever "
                "finds. Per subset, both splits:", "",
                "| subset | queries | bigram median | bigram p90 | bigram share >= 0.8 | token median | token p90 |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for subset, d in (easiness.get("by_subset") or {}).items():
            b, t = d.get("bigram", {}), d.get("token", {})
            if b.get("n"):
                out.append(f"| {subset} | {b['n']} | {b['median']} | {b['p90']} | {b['share_ge_0.8']} | "
                           f"{t.get('median', '')} | {t.get('p90', '')} |")
        filtered = easiness.get("filtered") or {}
        if easiness.get("max_overlap") is not None:
            out += ["", f"Filter `export.easiness.max_overlap={easiness['max_overlap']}` ({easiness['measure']}): "
                        f"labels dropped for {sum(filtered.values())} queries ({filtered or 'none'}); they stay in "
                        "queries.jsonl with `provenance.too_easy`."]
        out.append("")
    return out
