"""Export stage: turn every label of the build into the dataset people load (``OUT/dataset/``).

Input records: ingest/reports.jsonl (Report), chunk/passages.jsonl (Passage),
verify/queries.jsonl + qrels.jsonl (the kept Query of every level, their direct Qrel),
topics/assignments.jsonl, topics/tree.json,
mine/qrels.jsonl (Qrel mined).

Output: corpus.jsonl, queries.jsonl, qrels/<subset>-<split>.tsv (see ``beir``; splits see
``splits``), train/flagembedding.jsonl (see ``flagembedding``), hf/ (see ``hf``) and README.md.
Before the split, near-duplicate queries are removed within each level and every labelled query gets
its overlap with its positives (see ``quality``).
"""
from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from dataclasses import dataclass, field
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fincprg.config import ExportConfig

from fincprg import layout as L
from fincprg.contract import StageContext
from fincprg.export import negatives as negatives_mod
from fincprg.export import quality
from fincprg.export.beir import SUBSETS, build_subset_qrels, write_qrels
from fincprg.export.dedup import dedup_queries
from fincprg.export.card import produced_by, render_card, subset_stats, verify_lines
from fincprg.export.flagembedding import build_examples, negatives_summary, write_flagembedding
from fincprg.export.splits import SPLITS, split_reports, split_topics
from fincprg.export.tokens import TokenIds
from fincprg.io import atomic_write_jsonl, atomic_write_text
from fincprg.records import Passage, Qrel, Query, Report, Topic, TopicAssignment

log = logging.getLogger(__name__)
UPSTREAM = (L.INGEST, L.CHUNK, L.GENERATE, L.TOPICS, L.VERIFY, L.MINE)


@dataclass
class Passages:
    """The corpus's passages as three columns, in chunk order: the one copy of their texts export holds
    (no Passage records, no rows; corpus.jsonl and the parquet corpus are written from it row by row)."""

    ids: list[str] = field(default_factory=list)
    report_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, records: Iterable[Passage]) -> Passages:
        out = cls()
        for p in records:
            out.ids.append(p.id)
            out.report_ids.append(p.report_id)
            out.texts.append(p.text)
        return out

    def __len__(self) -> int:
        return len(self.ids)

    def report_of(self) -> dict[str, str]:
        return dict(zip(self.ids, self.report_ids))

    def text_of(self) -> dict[str, str]:
        return dict(zip(self.ids, self.texts))


@dataclass
class ExportInputs:
    """Everything export reads, already parsed."""

    reports: list[Report]
    passages: Passages
    queries: list[Query]
    qrels: list[Qrel]
    assignments: dict[str, TopicAssignment] = field(default_factory=dict)
    topic_nodes: dict[str, Topic] = field(default_factory=dict)
    manifests: dict[str, dict[str, Any]] = field(default_factory=dict)  # upstream stage -> its manifest


def load_inputs(ctx: StageContext) -> ExportInputs:
    """Read the upstream stage outputs the export spec declares."""
    return ExportInputs(
        # metadata only: the corpus file carries passage texts, never whole reports
        reports=[r.model_copy(update={"text": ""}) for r in ctx.read(L.INGEST, L.REPORTS, Report)],
        passages=Passages.read(ctx.read(L.CHUNK, L.PASSAGES, Passage)),
        queries=list(ctx.read(L.VERIFY, L.QUERIES, Query)),  # the kept queries of every level
        qrels=list(ctx.read(L.VERIFY, L.QRELS, Qrel)) + list(ctx.read(L.MINE, L.QRELS, Qrel)),
        assignments={a.report_id: a for a in ctx.read(L.TOPICS, L.ASSIGNMENTS, TopicAssignment)},
        topic_nodes=L.read_topic_tree(ctx.input_path(L.TOPICS, L.TREE)).by_id(),
        manifests={s: L.load_json(ctx.input_path(s, L.MANIFEST)) or {} for s in UPSTREAM},
    )


def _query_row(q: Query) -> dict[str, Any]:
    return {"_id": q.id, "text": q.text, "level": q.level, "parent_id": q.parent_id,
            "report_id": q.report_id, "provenance": q.provenance}


def corpus_rows(inp: ExportInputs) -> Iterator[dict[str, Any]]:
    """corpus.jsonl's rows (BEIR field names), one at a time, in chunk order."""
    reports = {r.id: r for r in inp.reports}
    ps = inp.passages
    for pid, rid, text in zip(ps.ids, ps.report_ids, ps.texts):
        r = reports.get(rid)
        a = inp.assignments.get(rid)
        industry = (r.industry if r else None) or (a.industry if a else None)
        yield {"_id": pid, "title": r.title if r else "", "text": text, "report_id": rid,
               "date": r.date.isoformat() if r and r.date else None, "industry": industry}


@dataclass
class Splits:
    """Which split every report, passage and query is in."""

    reports: dict[str, str]
    passages: dict[str, str]
    queries: dict[str, str]


def assign_splits(inp: ExportInputs, ecfg: ExportConfig, queries: dict[str, Query],
                  report_of: dict[str, str]) -> Splits:
    """Reports by ``export.split_unit`` (topic labels kept in test), passages with their report, topic and
    intent queries with their topic, the other queries with their report (see ``splits``)."""
    # labelled topic node -> reports of its labelled passages (so the split can keep topic labels in test)
    topic_labels: dict[str, set[str]] = {}
    for qr in inp.qrels:
        q = queries.get(qr.query_id)
        if q is not None and q.level == "topic" and q.source_ids and qr.relevance > 0 and qr.passage_id in report_of:
            topic_labels.setdefault(q.source_ids[0], set()).add(report_of[qr.passage_id])
    report_split = split_reports(sorted({r.id for r in inp.reports}), inp.assignments, unit=ecfg.split_unit,
                                 seed=ecfg.seed, test_fraction=ecfg.test_fraction, nodes=inp.topic_nodes,
                                 topic_labels=topic_labels)
    passage_split = {pid: report_split[rid] for pid, rid in report_of.items() if rid in report_split}
    topic_ids = sorted({q.source_ids[0] for q in queries.values() if q.level in ("topic", "intent") and q.source_ids})
    topic_split = split_topics(topic_ids, inp.topic_nodes, report_split, seed=ecfg.seed,
                               test_fraction=ecfg.test_fraction)
    query_split: dict[str, str] = {}
    for q in queries.values():
        if q.level in ("topic", "intent"):
            if q.source_ids:
                query_split[q.id] = topic_split[q.source_ids[0]]
        else:
            rid = q.report_id or (report_of.get(q.source_ids[0]) if q.source_ids else None)
            if rid in report_split:
                query_split[q.id] = report_split[rid]
    return Splits(report_split, passage_split, query_split)


def write_train_file(ds: L.Dataset, inp: ExportInputs, ecfg: ExportConfig, train_qrels: dict[str, dict[str, int]],
                     passage_split: dict[str, str], passage_texts: dict[str, str], tokens: TokenIds,
                     show_progress: bool) -> tuple[int, dict[str, Any]]:
    """train/flagembedding.jsonl, negatives from the training reports' passages: (lines, negatives summary)."""
    known: dict[str, set[str]] = {}
    for q in inp.qrels:  # every label, before any split filtering: never a negative
        if q.relevance > 0:
            known.setdefault(q.query_id, set()).add(q.passage_id)
    pool = [pid for pid in inp.passages.ids if passage_split.get(pid) == "train"]
    examples = build_examples({q.id: q.text for q in inp.queries}, train_qrels, known, passage_texts, pool,
                              ecfg.negatives, show_progress=show_progress, tokens=tokens)
    return write_flagembedding(ds.train_file, examples), negatives_summary(examples, ecfg.negatives.n)


def export_dataset(inp: ExportInputs, ecfg: ExportConfig, dest: Path, signature: str | None = None,
                   show_progress: bool = False) -> dict[str, Any]:
    """Write the dataset into ``dest`` and return counts per subset and split (``show_progress``: tqdm bars).

    The card describes the config and signatures recorded in the upstream manifests: the stages that
    actually produced the data, not whatever config is loaded now.
    """
    ds = L.Dataset(dest)
    passage_texts = inp.passages.text_of()
    tokens = TokenIds()  # each passage cut by jieba once, for the overlaps and the BM25 negatives
    inp, dedup, easiness, overlaps = _diversity(inp, ecfg, passage_texts, tokens)
    queries = {q.id: q for q in inp.queries}
    splits = assign_splits(inp, ecfg, queries, inp.passages.report_of())
    subset_qrels, dropped = build_subset_qrels(queries, inp.qrels, splits.queries, splits.passages, SPLITS)
    if any(dropped.values()):
        log.info("export: labels dropped %s", dropped)

    atomic_write_jsonl(ds.corpus, corpus_rows(inp))
    atomic_write_jsonl(ds.queries, (_query_row(q) for q in inp.queries))
    write_qrels(ds.qrels, subset_qrels)
    train_examples = negatives = None
    if ecfg.flagembedding:
        train_examples, negatives = write_train_file(ds, inp, ecfg, subset_qrels["all"]["train"], splits.passages,
                                                     passage_texts, tokens, show_progress)
    overlaps.release_passages()  # the tokens of every passage: the pairs still asked for are remembered

    query_texts = {q.id: q.text for q in inp.queries}
    stats = {s: {sp: subset_stats(subset_qrels[s][sp], query_texts, passage_texts) for sp in SPLITS}
             for s in SUBSETS}
    easiness.update(quality.summarise(subset_qrels, queries, overlaps))
    split_counts = Counter(splits.reports.values())
    card = _card(inp, ecfg, signature, stats, split_counts, dedup, easiness, dropped, train_examples, negatives)
    atomic_write_text(ds.card, card)
    if ecfg.hf:
        from fincprg.export.hf import write_hf

        write_hf(ds.hf_dir, corpus_rows(inp), (_query_row(q) for q in inp.queries), subset_qrels, card)

    counts: dict[str, Any] = {
        "corpus": len(inp.passages),
        "queries": dict(sorted(Counter(q.level for q in inp.queries).items())),
        "queries_emitted": len(inp.queries),  # 0 makes the build summary warn (cli/_common.py)
        "reports": {"train": split_counts["train"], "test": split_counts["test"]},
        "qrels": {s: {sp: {"queries": stats[s][sp]["queries"], "pairs": stats[s][sp]["pairs"]} for sp in SPLITS}
                  for s in SUBSETS},
        "dropped": dropped,
        "dedup": {k: v for k, v in dedup.items() if k != "examples"} if dedup else False,
        "easiness": easiness,
    }
    if train_examples is not None:
        counts["train_examples"] = train_examples
    log.info("export: %d passages, %d queries, all-train %d / all-test %d labelled queries", len(inp.passages),
             len(inp.queries), stats["all"]["train"]["queries"], stats["all"]["test"]["queries"])
    return counts


def _card(inp: ExportInputs, ecfg: ExportConfig, signature: str | None, stats: dict[str, Any], split_counts: Counter,
          dedup: dict[str, Any] | None, easiness: dict[str, Any], dropped: dict[str, int],
          train_examples: int | None, negatives: dict[str, Any] | None) -> str:
    """The dataset card (README.md) from the counts and the upstream manifests."""
    generators: dict[str, Counter[str]] = {}
    templates: Counter[str] = Counter()
    for q in inp.queries:
        generators.setdefault(q.level, Counter())[str(q.provenance.get("generator", "unlabelled"))] += 1
        if q.provenance.get("template") is not None:
            templates[f"{q.provenance.get('generator', '?')}/{q.provenance['template']}"
                      f"@{q.provenance.get('version', '?')}"] += 1
    texts = inp.passages.texts
    corpus_info = {
        "passages": len(texts), "reports": len({r.id for r in inp.reports}),
        "reports_train": split_counts["train"], "reports_test": split_counts["test"],
        "avg_passage_chars": round(sum(len(t) for t in texts) / len(texts), 1) if texts else 0.0,
        **{k: (inp.manifests.get(L.INGEST) or {}).get("counts", {}).get(k, 0) for k in ("untitled", "undated", "rejected")},
    }
    signatures = {s: inp.manifests[s].get("signature") for s in UPSTREAM}
    return render_card(cfg=produced_by(inp.manifests, ecfg), stats=stats, corpus=corpus_info,
                       query_levels=Counter(q.level for q in inp.queries), generators=generators,
                       templates=templates, signatures={**signatures, "export": signature},
                       dropped=dropped, train_examples=train_examples, negatives=negatives,
                       used={s: m.get("used") or {} for s, m in inp.manifests.items()},
                       extra=[*verify_lines(inp.manifests.get(L.VERIFY)), *quality.card_lines(dedup, easiness),
                              *negatives_mod.card_lines(ecfg.negatives)])


def _diversity(inp: ExportInputs, ecfg: ExportConfig, passage_texts: dict[str, str], tokens: TokenIds
               ) -> tuple[ExportInputs, dict[str, Any] | None, dict[str, Any], quality.Overlaps]:
    """Near-duplicate removal, then each labelled query's overlap with its positives and the easiness filter."""
    queries, qrels, dedup = list(inp.queries), list(inp.qrels), None
    if ecfg.dedup.enabled:
        queries, qrels, dedup = dedup_queries(queries, qrels, threshold=ecfg.dedup.threshold, ngram=ecfg.dedup.ngram)
        if any(dedup["removed"].values()):
            log.info("export: near-duplicate queries removed %s", dedup["removed"])
    overlaps = quality.Overlaps(passage_texts, tokens)
    queries, qrels, easiness = quality.annotate(queries, qrels, overlaps, max_overlap=ecfg.easiness.max_overlap,
                                                measure=ecfg.easiness.measure)
    easiness = {"measure": ecfg.easiness.measure, "max_overlap": ecfg.easiness.max_overlap, **easiness}
    return dataclasses.replace(inp, queries=queries, qrels=qrels), dedup, easiness, overlaps


def run(ctx: StageContext) -> dict[str, Any]:
    """Stage entry: read the build folder, write ``OUT/dataset``."""
    from fincprg.finance import register_companies

    inputs = load_inputs(ctx)
    register_companies(inputs.reports)  # BM25 negatives: tokens must not depend on earlier stages
    return export_dataset(inputs, ctx.config.export, ctx.dir, signature=ctx.signature,
                          show_progress=ctx.show_progress)
