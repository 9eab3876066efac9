"""BEIR/MTEB layout: corpus.jsonl, queries.jsonl and qrels/<subset>-<split>.tsv.

Subsets (which queries, which labels):

=================  ==================  ====================================
subset             queries (level)     labels
=================  ==================  ====================================
sentence           sentence            direct (the passage the query came from)
sentence-mined     sentence            direct + mined
passage            passage             direct
passage-mined      passage             direct + mined
report             report              direct, graded: the passage stating the claim 2, the report's others 1
topic              topic (subqueries)  every label they have (mined only: no direct passage)
all                sentence+passage+   direct + mined (union of the six above)
                   report+topic
=================  ==================  ====================================

Intent queries are in queries.jsonl (level "intent") as the parents of topic subqueries; they
carry no labels and appear in no qrels file. A query appears in ``<subset>-<split>.tsv`` only
with at least one label there. ``GenericDataLoader(folder).load(split="sentence-test")`` from
the ``beir`` package reads these files as they are.
"""
from __future__ import annotations

from collections.abc import Callable

import csv
import io
from collections.abc import Iterable, Mapping
from pathlib import Path

from fincprg.io import atomic_write_text
from fincprg.records import Qrel, Query

SUBSETS: tuple[str, ...] = ("sentence", "sentence-mined", "passage", "passage-mined", "report", "topic", "all")
SUBSET_RULES: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "sentence": (frozenset({"sentence"}), frozenset({"direct"})),
    "sentence-mined": (frozenset({"sentence"}), frozenset({"direct", "mined"})),
    "passage": (frozenset({"passage"}), frozenset({"direct"})),
    "passage-mined": (frozenset({"passage"}), frozenset({"direct", "mined"})),
    "report": (frozenset({"report"}), frozenset({"direct"})),
    "topic": (frozenset({"topic"}), frozenset({"direct", "mined"})),
    "all": (frozenset({"sentence", "passage", "report", "topic"}), frozenset({"direct", "mined"})),
}
QRELS_HEADER = ("query-id", "corpus-id", "score")

# subset -> split -> query id -> passage id -> relevance
SubsetQrels = dict[str, dict[str, dict[str, dict[str, int]]]]


def build_subset_qrels(
    queries: Mapping[str, Query],
    qrels: Iterable[Qrel],
    query_split: Mapping[str, str],
    passage_split: Mapping[str, str],
    splits: tuple[str, ...],
) -> tuple[SubsetQrels, dict[str, int]]:
    """Sort every label into its subsets and split (see the module and ``splits`` docstrings).

    Returns the nested qrels and counts of labels dropped: ``dangling`` (unknown query or
    passage id), ``cross_split`` (query and passage in different splits), ``unlabelled_level``
    (labels on intent queries, which no subset takes).
    """
    out: SubsetQrels = {s: {sp: {} for sp in splits} for s in SUBSETS}
    dropped = {"dangling": 0, "cross_split": 0, "unlabelled_level": 0}
    for q in qrels:
        query = queries.get(q.query_id)
        p_split = passage_split.get(q.passage_id)
        split = query_split.get(q.query_id)
        if query is None or p_split is None or split is None:
            dropped["dangling"] += 1
            continue
        if split != p_split:
            dropped["cross_split"] += 1
            continue
        matched = False
        for subset, (levels, provenances) in SUBSET_RULES.items():
            if query.level in levels and q.provenance in provenances:
                rels = out[subset][split].setdefault(q.query_id, {})
                # Duplicate labels (direct and mined for one pair) keep the highest relevance.
                rels[q.passage_id] = max(rels.get(q.passage_id, 0), q.relevance)
                matched = True
        if not matched:
            dropped["unlabelled_level"] += 1
    return out, dropped


def qrels_tsv(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """Render one qrels file (header + sorted rows, tab separated)."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter="\t", lineterminator="\n")
    w.writerow(QRELS_HEADER)
    for qid in sorted(qrels):
        for pid in sorted(qrels[qid]):
            w.writerow((qid, pid, qrels[qid][pid]))
    return buf.getvalue()


def write_qrels(path_of: Callable[[str, str], Path], subset_qrels: SubsetQrels) -> list[Path]:
    """Write the qrels file ``path_of(subset, split)`` for every subset and split (header only when empty)."""
    paths = []
    for subset, by_split in subset_qrels.items():
        for split, qrels in by_split.items():
            p = path_of(subset, split)
            atomic_write_text(p, qrels_tsv(qrels))
            paths.append(p)
    return paths

