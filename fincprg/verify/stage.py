"""Verify stage: keep or drop every generated query, with a reason a reader can check.

Input records: ingest/reports.jsonl (Report), chunk/passages.jsonl (Passage), chunk/sentences.jsonl
(Sentence), generate/queries.jsonl + qrels.jsonl (sentence/passage Query, direct Qrel),
topics/queries.jsonl (topic/intent Query), topics/tree.json and assignments.jsonl (a topic's reports).

Output records (OUT/verify, written at the end: a global stage):
- queries.jsonl: the kept Query records of every level, generate's first, then topics' (a kept query whose
  parent was dropped gets ``parent_id`` None);
- qrels.jsonl: the direct Qrel records of the kept queries;
- dropped.jsonl: ``{query_id, level, text, reason, detail}`` per dropped query.

Checks, in order, the first failing one giving the reason (``verify.checks``): subject
(:mod:`.subject`), answerability (:mod:`.answer`) then a strict reader's rules (:mod:`.strict` for
sentences and passages, :mod:`.topicrules` for topics and intents; part of the ``answer`` check), related companies of an intent (:mod:`.related`), round
trip (:mod:`.roundtrip`), then the optional LLM judge (:mod:`.judge`).
"""
from __future__ import annotations

import dataclasses
import logging
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from fincprg import layout as L
from fincprg.io import atomic_write_jsonl
from fincprg.records import Passage, Query
from fincprg.verify.answer import Verdict, check_answer, check_topic_answer
from fincprg.verify.related import check_related
from fincprg.verify.roundtrip import CharBM25, Target, dense_search, judge_ranking, own_floors
from fincprg.verify.sources import ReportInfo, passage_subjects, report_info, topic_subjects
from fincprg.verify.figures import check_amount, check_combined, check_rate_level, check_risk, check_valuation
from fincprg.verify.strict import (
    check_event,
    check_garbled,
    check_in_sentence,
    check_part_whole,
    check_vague,
)
from fincprg.verify.readers import norm
from fincprg.verify.subject import Subjects, check_subject
from fincprg.verify.summary import LEVELS
from fincprg.verify.topicrules import as_of_year, check_topic_strict, infer_date

log = logging.getLogger(__name__)
N_EXAMPLES = 3


class _Sources:
    """Everything a query is checked against, read once."""

    def __init__(self, ctx: Any, table: Any | None):
        self.table = table
        self.reports: dict[str, ReportInfo] = {}
        for r in ctx.read(L.INGEST, L.REPORTS):
            info = report_info(r, table)
            if info.date is None:  # undated: read as of the latest year it states actual results for
                info = dataclasses.replace(info, date=infer_date(as_of_year([r.text])))
            self.reports[r.id] = info
        self.passages = list(ctx.read(L.CHUNK, L.PASSAGES))
        self.passage_at = {p.id: i for i, p in enumerate(self.passages)}
        self.sentences = {s.id: s.text for s in ctx.read(L.CHUNK, L.SENTENCES)}
        self.nodes = L.read_topic_tree(ctx.input_path(L.TOPICS, L.TREE)).by_id()
        self.assign = {a.report_id: a for a in ctx.read(L.TOPICS, L.ASSIGNMENTS)}
        self._mentions: dict[str, tuple[str, ...]] = {}
        self._subjects: dict[str, Subjects] = {}

    def mentioned(self, text: str) -> tuple[str, ...]:
        """The listed companies ``text`` names (the stock table), cached per text."""
        if self.table is None:
            return ()
        if text not in self._mentions:
            self._mentions[text] = tuple(m.name for m in self.table.mentions(text))
        return self._mentions[text]

    def passage(self, pid: str) -> Passage | None:
        i = self.passage_at.get(pid)
        return self.passages[i] if i is not None else None

    def passage_subjects(self, p: Passage) -> Subjects:
        if p.id not in self._subjects:
            info = self.reports[p.report_id]
            self._subjects[p.id] = passage_subjects(info, p.text, self.mentioned(f"{p.text}\n{info.title}"))
        return self._subjects[p.id]

    def topic_reports(self, topic_id: str) -> list[ReportInfo]:
        node = self.nodes.get(topic_id)
        return [self.reports[r] for r in (node.title_ids if node else ()) if r in self.reports]

    def topic_subjects(self, topic_id: str) -> Subjects:
        key = f"topic:{topic_id}"
        if key not in self._subjects:
            infos = self.topic_reports(topic_id)
            inds = [(self.assign[i.id].industry if i.id in self.assign else None) or i.industry for i in infos]
            self._subjects[key] = topic_subjects(infos, inds, self.mentioned("\n".join(i.title for i in infos)))
        return self._subjects[key]


def check_rules(q: Query, src: _Sources, checks: set[str], industry_of: dict[str, str | None]) -> Verdict | None:
    """The rule checks of one query (subject, answer, related), first failure first."""
    if q.level in ("sentence", "passage"):
        p = src.passage(q.source_ids[0]) if q.source_ids else None
        if p is None or p.report_id not in src.reports:
            return Verdict("no_source", "its passage is not in the corpus")
        info = src.reports[p.report_id]
        if "subject" in checks:
            v = check_subject(q.text, src.passage_subjects(p), listed=src.mentioned)
            if v is not None:
                return v
        if "answer" in checks:
            sentence = src.sentences.get(str(q.provenance.get("sentence_id"))) if q.level == "sentence" else None
            v = check_answer(q.text, p.text, title=info.title, sentence=sentence, date=info.date)
            if v is not None:
                return v
            return strict_checks(q.text, p.text, info.title, sentence, src.passage_subjects(p).names)
        return None
    topic = q.source_ids[0] if q.source_ids else ""
    infos = src.topic_reports(topic)
    if not infos:
        return Verdict("no_source", f"topic {topic!r} has no reports")
    subjects = src.topic_subjects(topic)
    if "subject" in checks:
        v = check_subject(q.text, subjects, listed=src.mentioned) or check_garbled(q.text)
        if v is not None:
            return v
    if "answer" in checks:
        v = check_topic_strict(q.text, infos, subjects.companies, subjects.industries, listed=src.mentioned)
        if v is not None:
            return v
        v = check_topic_answer(q.text, [(i.title, i.date) for i in infos])
        if v is not None:
            return v
    if "related" in checks and q.level == "intent":
        return check_related(q.text, sorted(subjects.companies), industry_of)
    return None


def strict_checks(query: str, passage: str, title: str, sentence: str | None, names: frozenset[str]
                  ) -> Verdict | None:
    """A strict reader's checks (:mod:`.strict`): boilerplate, vague asks, the sentence states the ask, part
    as whole, events with specifics; and of figures (:mod:`.figures`): an amount or a rate's level the source gives
    only as a change, a part of a combined category, a multiple at today's price asked as reached, a risk only
    listed. A sentence query is read against its sentence, a passage query against its passage and title."""
    source = sentence if sentence else f"{passage}\n{title}"
    return (check_garbled(query) or check_vague(query, source, names)
            or (check_in_sentence(query, sentence, names) if sentence else None)
            or _part_whole(query, passage, title, sentence, names) or check_event(query, source, names)
            or check_amount(query, source) or check_rate_level(query, source) or check_combined(query, source, names)
            or check_valuation(query, source) or check_risk(query, source))


def _part_whole(query: str, passage: str, title: str, sentence: str | None, names: frozenset[str]) -> Verdict | None:
    """Part as whole; a sentence is read in its passage, since a sentence that opens on its figure speaks of
    the subject of the one before (「顶立科技是…龙头。上半年实现净利润7671万元」)."""
    if not sentence:
        return check_part_whole(query, f"{passage}\n{title}", names)
    p, s = norm(passage), norm(sentence)
    at = p.find(s)
    if at < 0:
        return check_part_whole(query, sentence, names)
    return check_part_whole(query, p[:at + len(s)], names, start=at)


class RoundTrip:
    """Round-trip verdicts over the whole corpus. The corpus rows and each query's target (its own passages and
    related reports) are built once and shared by the BM25 pass and the dense pass that follows it."""

    def __init__(self, src: _Sources, cfg: Any):
        self.src, self.cfg = src, cfg
        # a passage is indexed with its report's title, as the exported corpus row carries it
        self.docs = [f"{src.reports[p.report_id].title}\n{p.text}" if p.report_id in src.reports else p.text
                     for p in src.passages]
        self.report_of = [p.report_id for p in src.passages]
        self.passages_of: dict[str, list[int]] = defaultdict(list)
        for i, rid in enumerate(self.report_of):
            self.passages_of[rid].append(i)
        self.reports_of: dict[str, set[str]] = defaultdict(set)  # company -> its reports (related to each other)
        for info in src.reports.values():
            for c in info.companies:
                self.reports_of[c].add(info.id)
        self.targets: dict[str, Target] = {}

    def target(self, q: Query) -> Target:
        src, targets = self.src, self.targets
        if q.level in ("sentence", "passage"):
            p = src.passage(q.source_ids[0])
            assert p is not None
            key = f"p:{p.id}"
            if key not in targets:
                same = {r for c in src.reports[p.report_id].companies for r in self.reports_of[c]}
                targets[key] = Target(frozenset({src.passage_at[p.id]}), frozenset({p.report_id}), frozenset(same))
            return targets[key]
        key = f"t:{q.source_ids[0]}"
        if key not in targets:
            reports = {i.id for i in src.topic_reports(q.source_ids[0])}
            targets[key] = Target(frozenset(i for r in reports for i in self.passages_of[r]), frozenset(reports))
        return targets[key]

    def __call__(self, queries: list[Query], progress: Callable[[int], None] | None = None,
                 dense: bool = False) -> list[Verdict | None]:
        """Verdicts for ``queries`` in one batched pass: character BM25, or (``dense``) the bi-encoder
        ``verify.dense.model``."""
        cfg = self.cfg
        if not queries or not self.docs:
            return [None] * len(queries)
        texts = [q.text for q in queries]
        if dense:
            idx, scores = dense_search(texts, self.docs, cfg.dense, cfg.top_k, progress=progress)
        else:
            depth = max(cfg.top_k, 10 * cfg.ambiguous_reports)
            bm = CharBM25(self.docs)
            # only the documents at or above each query's floor decide its verdict: pruning against it
            floors = own_floors(bm, texts, [self.target(q).own for q in queries], cfg.ambiguous_margin)
            idx, scores = bm.search(texts, depth, batch=cfg.batch_size, progress=progress, floors=floors)
            got = (idx >= 0).sum(axis=1)  # rows end in (-1, -inf) below the floor
            idx, scores = [i[:g] for i, g in zip(idx, got)], [s[:g] for s, g in zip(scores, got)]
        return [judge_ranking(idx[r], scores[r], self.target(q), self.report_of, k=cfg.top_k,
                              n=None if dense else cfg.ambiguous_reports, margin=cfg.ambiguous_margin,
                              dense=cfg.dense.model if dense else None) for r, q in enumerate(queries)]


def _judge_source(q: Query, src: _Sources) -> str:
    if q.level in ("sentence", "passage"):
        p = src.passage(q.source_ids[0])
        assert p is not None
        return f"标题：{src.reports[p.report_id].title}\n{p.text}"
    return "\n".join(f"{i.date or ''} {i.title}" for i in src.topic_reports(q.source_ids[0]))


def run(ctx: Any) -> dict[str, Any]:
    """Check every query; write the kept queries, their direct qrels and the dropped ones with reasons."""
    cfg = ctx.config.verify
    table_path = ctx.config.finance.stock_table
    table = None
    if table_path:
        from fincprg.finance.stocks import load_stock_table

        table = load_stock_table(table_path)
    src = _Sources(ctx, table)
    gen = list(ctx.read(L.GENERATE, L.QUERIES))
    queries = gen + list(ctx.read(L.TOPICS, L.QUERIES))
    checks = set(cfg.checks)
    # the table's own industry (Tushare's 白酒 vs 食品) is finer than CITIC level 1
    industry_of: dict[str, str | None] = dict(table.own_industry) if table_path else {}
    for info in src.reports.values():  # companies without a table entry: their reports' CITIC industry
        a = src.assign.get(info.id)
        for c in info.companies:
            industry_of.setdefault(c, (a.industry if a else None) or info.industry)

    verdicts: dict[str, Verdict] = {}
    for q in ctx.progress(queries, total=len(queries), desc="verify rules"):
        v = check_rules(q, src, checks, industry_of)
        if v is not None:
            verdicts[q.id] = v
    if "round_trip" in checks:
        from tqdm.auto import tqdm

        round_trip = RoundTrip(src, cfg)
        todo = [q for q in queries if q.id not in verdicts]
        with tqdm(total=len(todo), desc="verify round trip", disable=not ctx.show_progress, leave=False) as bar:
            found = round_trip(todo, progress=bar.update)
        verdicts.update({q.id: v for q, v in zip(todo, found) if v is not None})
        if cfg.dense.model:
            todo = [q for q in queries if q.id not in verdicts]
            with tqdm(total=len(todo), desc="verify dense round trip", disable=not ctx.show_progress,
                      leave=False) as bar:
                found = round_trip(todo, progress=bar.update, dense=True)
            verdicts.update({q.id: v for q, v in zip(todo, found) if v is not None})
    judge_counts: dict[str, Any] | bool = False
    if cfg.judge.backend == "llm":
        from fincprg.verify.judge import JudgeItem, judge

        todo = [q for q in queries if q.id not in verdicts]
        items = [JudgeItem(q.text, q.level, _judge_source(q, src)) for q in todo]
        got, judge_counts = judge(items, cfg.judge, ctx.config.llm, ctx.cache_dir, progress=ctx.show_progress)
        verdicts.update({q.id: v for q, v in zip(todo, got) if v is not None})

    kept = [q if q.parent_id is None or q.parent_id not in verdicts else q.model_copy(update={"parent_id": None})
            for q in queries if q.id not in verdicts]
    kept_ids = {q.id for q in kept}
    atomic_write_jsonl(ctx.output(L.QUERIES), kept)
    atomic_write_jsonl(ctx.output(L.QRELS), [r for r in ctx.read(L.GENERATE, L.QRELS) if r.query_id in kept_ids])
    dropped = [{"query_id": q.id, "level": q.level, "text": q.text, "reason": verdicts[q.id].reason,
                "detail": verdicts[q.id].detail} for q in queries if q.id in verdicts]
    atomic_write_jsonl(ctx.output(L.DROPPED), dropped)
    counts = summarise(queries, dropped, src, judge_counts, sorted(checks))
    log.info("verify: kept %s", {lv: f"{c['kept']}/{c['generated']}" for lv, c in counts["levels"].items()})
    return counts


def summarise(queries: list[Query], dropped: list[dict[str, Any]], src: _Sources, judge_counts: dict[str, Any] | bool,
              checks: list[str]) -> dict[str, Any]:
    """Manifest counts: yield per level, reasons (overall and per level), examples, subject sources."""
    generated = Counter(q.level for q in queries)
    lost = Counter(d["level"] for d in dropped)
    levels = {lv: {"generated": generated[lv], "kept": generated[lv] - lost[lv],
                   "yield": round((generated[lv] - lost[lv]) / generated[lv], 4) if generated[lv] else 0.0}
              for lv in LEVELS if generated[lv]}
    reasons = Counter(d["reason"] for d in dropped)
    by_level: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, list[dict[str, str]]] = defaultdict(list)
    for d in dropped:
        by_level[d["level"]][d["reason"]] += 1
        if len(examples[d["reason"]]) < N_EXAMPLES:
            examples[d["reason"]].append({"level": d["level"], "text": d["text"], "detail": d["detail"]})
    no_subject = sum(1 for p in src.passages if p.report_id in src.reports and src.passage_subjects(p).empty)
    return {
        "checks": checks,
        "levels": levels,
        "kept": sum(c["kept"] for c in levels.values()), "dropped": len(dropped),
        "reasons": dict(reasons.most_common()),
        "reasons_by_level": {lv: dict(by_level[lv].most_common()) for lv in LEVELS if by_level[lv]},
        "report_subjects": dict(sorted(Counter(r.subject_from for r in src.reports.values()).items())),
        "passages_without_subject": no_subject,
        "judge": judge_counts,
        "examples": dict(examples),
    }
