"""Verify stage: keep or drop every generated query, with a reason a reader can check.

Input records: ingest/reports.jsonl (Report), chunk/passages.jsonl (Passage), chunk/sentences.jsonl
(Sentence), generate/queries.jsonl + qrels.jsonl (sentence/passage Query, direct Qrel), generate/report_queries.jsonl
+ report_qrels.jsonl (report-level Query, graded direct Qrel; :mod:`.reportlevel`),
topics/queries.jsonl (topic/intent Query), topics/tree.json and assignments.jsonl (a topic's reports).

Output records (OUT/verify, written at the end: a global stage):
- queries.jsonl: the kept Query records of every level, generate's first, then topics' (a kept query whose
  parent was dropped gets ``parent_id`` None);
- qrels.jsonl: the direct Qrel records of the kept queries;
- dropped.jsonl: ``{query_id, level, text, reason, detail}`` per dropped query.

Checks, in order, the first failing one giving the reason (``verify.checks``): subject
(:mod:`.subject`), answerability (:mod:`.answer`) then a strict reader's rules (:mod:`.strict` for
sentences and passages, :mod:`.topicrules` for topics and intents; part of the ``answer`` check), related
companies of an intent (:mod:`.related`), round trip (:mod:`.roundtrip`), then the optional LLM judge
(:mod:`.judge`). The rule checks are per query and run as ``ctx.map_batches`` batches (Ray Data actors with
``engine: ray``); the round trip and the judge run in the driver.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

from fincprg import layout as L
from fincprg.io import atomic_write_jsonl, read_jsonl
from fincprg.records import Passage, Query
from fincprg.spec import Prepared
from fincprg.verify.answer import check_answer, check_topic_answer
from fincprg.verify.checks import strict_checks
from fincprg.verify.related import check_related
from fincprg.verify.reportlevel import check_report_rules
from fincprg.verify.roundtrip import RoundTrip
from fincprg.verify.rules import RULES
from fincprg.verify.sources import (ReportInfo, listed_in, passage_subjects, report_info, source_and_subject,
                                    topic_subjects)
from fincprg.verify.strict import check_garbled
from fincprg.verify.subject import Subjects, check_fact_owner, check_segment, check_subject, variants
from fincprg.verify.summary import LEVELS
from fincprg.verify.topicrules import as_of_year, check_topic_strict, infer_date
from fincprg.verify.verdict import Reason, Verdict, stamp

log = logging.getLogger(__name__)
N_EXAMPLES = 3


@dataclasses.dataclass(frozen=True, slots=True)
class Ask:
    """What the round trip and the judge read of a query that passed the rules: not the whole record (a Query
    takes ~1.7 KB; 160k of them were a sixth of the stage's peak memory at 16x)."""

    id: str
    level: str
    text: str
    source: str  # its passage's id (sentence, passage level) or its topic's id


class _Sources:
    """Everything a query is checked against, read once."""

    def __init__(self, ctx: Any, table: Any | None, sentence_ids: set[str]):
        self.table = table
        self.reports: dict[str, ReportInfo] = {}
        for r in ctx.read(L.INGEST, L.REPORTS):
            info = report_info(r, table)
            if info.date is None:  # undated: read as of the latest year it states actual results for
                info = dataclasses.replace(info, date=infer_date(as_of_year([r.text])), date_inferred=True)
            self.reports[r.id] = info
        # titles without bodies (ingest.extra_titles) are sources of their topics' queries, never of a passage's
        self.titles_only = {r.id: report_info(r, table) for r in L.read_extra_titles(ctx)}
        self.passages = list(ctx.read(L.CHUNK, L.PASSAGES))
        self.passage_at = {p.id: i for i, p in enumerate(self.passages)}
        # only the sentences a sentence query is read against (a few in four at 16x): bounded memory (issue 23)
        self.sentences = {s.id: s.text for s in ctx.read(L.CHUNK, L.SENTENCES) if s.id in sentence_ids}
        self.nodes = L.read_topic_tree(ctx.input_path(L.TOPICS, L.TREE)).by_id()
        self.assign = {a.report_id: a for a in ctx.read(L.TOPICS, L.ASSIGNMENTS)}
        self._mentions: dict[str, tuple[str, ...]] = {}
        self._subjects: dict[str, Subjects] = {}  # a topic's
        self._last: tuple[str, Subjects] | None = None  # the last passage's (see passage_subjects)
        self._read: set[str] = set()  # passages whose subjects were read
        self._no_subject = 0  # of those, how many had none

    def mentioned(self, text: str, cache: bool = True) -> tuple[str, ...]:
        """The listed companies ``text`` names (:func:`~fincprg.verify.sources.listed_in`), cached per text."""
        if self.table is None:
            return ()
        if text in self._mentions:
            return self._mentions[text]
        got = listed_in(self.table, text)
        if cache:
            self._mentions[text] = got
        return got

    def release(self) -> None:
        """Drop what only the rule checks read (sentences, the per-text caches) before the round trip's index."""
        self.sentences, self._mentions, self._subjects = {}, {}, {}

    def passages_without_subject(self) -> int:
        """Passages of known reports from which no subject can be read (each read once: those the rules read
        were counted then)."""
        for p in self.passages:
            if p.id not in self._read and p.report_id in self.reports:
                self.passage_subjects(p)
        return self._no_subject

    def passage(self, pid: str) -> Passage | None:
        i = self.passage_at.get(pid)
        return self.passages[i] if i is not None else None

    def passage_subjects(self, p: Passage) -> Subjects:
        """A passage's subjects. Only the last passage's are kept: its queries come one after another (held for
        every passage they were ~80k objects at 16x, for no hit)."""
        if self._last is None or self._last[0] != p.id:
            info = self.reports[p.report_id]
            got = passage_subjects(info, p.text, self.mentioned(f"{p.text}\n{info.title}", cache=False))
            if p.id not in self._read:
                self._read.add(p.id)
                self._no_subject += got.empty
            self._last = (p.id, got)
        return self._last[1]

    def topic_reports(self, topic_id: str) -> list[ReportInfo]:
        """The topic's reports and its titles without bodies: what its intent and subqueries are read against."""
        node = self.nodes.get(topic_id)
        found = (self.reports.get(r) or self.titles_only.get(r) for r in (node.title_ids if node else ()))
        return [i for i in found if i is not None]

    def topic_has_reports(self, topic_id: str) -> bool:
        """Whether a report of the corpus (one with passages) is in the topic, not only titles without bodies."""
        node = self.nodes.get(topic_id)
        return any(r in self.reports for r in (node.title_ids if node else ()))

    def topic_subjects(self, topic_id: str) -> Subjects:
        key = f"topic:{topic_id}"
        if key not in self._subjects:
            infos = self.topic_reports(topic_id)
            inds = [(self.assign[i.id].industry if i.id in self.assign else None) or i.industry for i in infos]
            self._subjects[key] = topic_subjects(infos, inds, self.mentioned("\n".join(i.title for i in infos)))
        return self._subjects[key]


def check_rules(q: Query, src: _Sources, checks: set[str], industry_of: dict[str, str | None],
                disabled: frozenset[str] = frozenset()) -> Verdict | None:
    """The rule checks of one query (subject, answer, related), first failure first; each Verdict carries the id of
    its rule (:mod:`.rules`), and a rule in ``disabled`` is skipped."""
    on = checks.union(("",))  # "": the rules no coarse switch turns off (the source's)
    run = {r.id for r in RULES if r.switch in on and r.id not in disabled}
    if q.level == "report":
        return check_report_rules(q, src, run, checks, disabled)
    if q.level in ("sentence", "passage"):
        p, info, v = source_and_subject(q, src, run, "its passage is not in the corpus")
        if v is not None or p is None or info is None:
            return v
        sentence = src.sentences.get(str(q.provenance.get("sentence_id"))) \
            if q.level == "sentence" and ("fact_owner" in run or "answer" in checks) else None
        if "fact_owner" in run:
            v = check_fact_owner(q.text, sentence, src.passage_subjects(p), src.mentioned,
                                 passage=p.text if q.level == "passage" else None)
            if v is not None:
                return stamp(v, "fact_owner")
        if "segment" in run:
            v = check_segment(q.text, p.text, src.passage_subjects(p), src.mentioned)
            if v is not None:
                return stamp(v, "segment")
        if "answer" in checks:
            v = check_answer(q.text, p.text, title=info.title, sentence=sentence, date=info.date,
                             dated=not info.date_inferred) if "answer" in run else None
            if v is not None:
                return stamp(v, "answer")
            return strict_checks(q.text, p.text, info.title, sentence, _asked_names(q.text, src.passage_subjects(p)),
                                 disabled)
        return None
    topic = q.source_ids[0] if q.source_ids else ""
    infos = src.topic_reports(topic)
    if not infos:
        return Verdict(Reason.NO_SOURCE, f"topic {topic!r} has no reports", "source")
    subjects = src.topic_subjects(topic)
    if "subject" in checks:  # a topic query's garbled rule runs under the subject switch
        v = (stamp(check_subject(q.text, subjects, listed=src.mentioned), "subject") if "subject" in run else None) \
            or (stamp(check_garbled(q.text), "garbled") if "garbled" not in disabled else None)
        if v is not None:
            return v
    if "topic_strict" in run:
        v = check_topic_strict(q.text, infos, subjects.companies, subjects.industries, listed=src.mentioned)
        if v is not None:
            return stamp(v, "topic_strict")
    if "topic_answer" in run:
        v = check_topic_answer(q.text, [(i.title, i.date) for i in infos])
        if v is not None:
            return stamp(v, "topic_answer")
    if "related" in run and q.level == "intent":
        return stamp(check_related(q.text, sorted(subjects.companies), industry_of), "related")
    return None


def _asked_names(query: str, subjects: Subjects) -> frozenset[str]:
    """The names of the company a query asks about: those of its subjects it writes. Another listed name in the
    passage is a peer (or a common word: 机器人 is a stock), never read as the company."""
    asked = [vs for vs in (frozenset(variants(c)) for c in subjects.companies) if any(v in query for v in vs)]
    return frozenset().union(*asked) if asked else subjects.names


def _judge_source(q: Ask, src: _Sources) -> str:
    if q.level in ("sentence", "passage", "report"):  # a report query: the passage stating its claim
        p = src.passage(q.source)
        assert p is not None
        return f"标题：{src.reports[p.report_id].title}\n{p.text}"
    return "\n".join(f"{i.date or ''} {i.title}" for i in src.topic_reports(q.source))


def run(ctx: Any) -> dict[str, Any]:
    """Check every query; write the kept queries, their direct qrels and the dropped ones with reasons.

    Queries are streamed from their files rather than held (three reads: the sentence ids and counts, the rule
    checks, the writing): only the verdicts and the queries left for the round trip stay in memory."""
    cfg = ctx.config.verify
    from fincprg.finance.stocks import stock_table

    table = stock_table(ctx.config.finance.stock_table)
    generated: Counter[str] = Counter()
    wanted: set[str] = set()
    for q in _stream(ctx):
        generated[q.level] += 1
        if q.level == "sentence":
            wanted.add(str(q.provenance.get("sentence_id")))
    src = _Sources(ctx, table, wanted)
    checks, disabled = set(cfg.checks), frozenset(cfg.disable)
    verdicts: dict[str, Verdict] = {}
    asks, titles_only = _rule_pass(ctx, src, checks, disabled, _industries(table, src), verdicts,
                                   sum(generated.values()))
    no_subject = src.passages_without_subject()
    src.release()
    if "round_trip" in checks and "round_trip" not in disabled:
        asks = _round_trips(ctx, src, cfg, asks, verdicts, disabled)
    asks += titles_only
    judge_counts: dict[str, Any] | bool = False
    if cfg.judge.backend == "llm" and "judge" not in disabled:
        from fincprg.verify.judge import JudgeItem, judge

        items = [JudgeItem(q.text, q.level, _judge_source(q, src)) for q in asks]
        got, judge_counts = judge(items, cfg.judge, ctx.config.llm, ctx.cache_dir, progress=ctx.show_progress)
        asks = _keep(asks, got, verdicts, "judge")
    kept_ids = {q.id for q in asks}
    del asks
    dropped = _write(ctx, verdicts, kept_ids)
    counts = summarise(generated, dropped, src, no_subject, judge_counts, sorted(checks))
    log.info("verify: kept %s", {lv: f"{c['kept']}/{c['generated']}" for lv, c in counts["levels"].items()})
    return counts


def _stream(ctx: Any) -> Iterator[Query]:
    """Generate's queries, then topics': the order they are written in."""
    yield from ctx.read(L.GENERATE, L.QUERIES)
    yield from ctx.read(L.GENERATE, L.REPORT_QUERIES)
    yield from ctx.read(L.TOPICS, L.QUERIES)


def _industries(table: Any | None, src: _Sources) -> dict[str, str | None]:
    """Company -> industry for the related check: the table's own industry (Tushare's 白酒 vs 食品, finer than
    CITIC level 1), else its reports' CITIC industry."""
    industry_of: dict[str, str | None] = dict(table.own_industry) if table is not None else {}
    for info in src.reports.values():
        a = src.assign.get(info.id)
        for c in info.companies:
            industry_of.setdefault(c, (a.industry if a else None) or info.industry)
    return industry_of


_RULED = ".ruled.jsonl"  # scratch: each query's rule verdict, committed a batch at a time, removed at the end


class _RuleBatch:
    """The rule checks of a batch of queries, as scratch rows (``ctx.map_batches``: on Ray actors with
    ``engine: ray``, each unpickling its own copy of the sources)."""

    def __init__(self, src: _Sources, checks: set[str], industry_of: dict[str, str | None],
                 disabled: frozenset[str]):
        self.src, self.checks, self.industry_of, self.disabled = src, checks, industry_of, disabled

    def __call__(self, batch: list[Query]) -> dict[str, list[dict[str, Any]]]:
        rows = []
        for q in batch:
            v = check_rules(q, self.src, self.checks, self.industry_of, self.disabled)
            source = q.source_ids[0] if q.source_ids else ""
            rows.append({"id": q.id, "level": q.level, "text": q.text, "source": source,
                         "verdict": None if v is None else [str(v.reason), v.detail, v.rule],
                         "title_only": v is None and q.level in ("topic", "intent")
                         and not self.src.topic_has_reports(source)})
        return {_RULED: rows}


def _rule_pass(ctx: Any, src: _Sources, checks: set[str], disabled: frozenset[str],
               industry_of: dict[str, str | None], verdicts: dict[str, Verdict],
               total: int) -> tuple[list[Ask], list[Ask]]:
    """The rule checks of every query: failures go to ``verdicts``; returns the passing queries to round-trip
    and those of topics of titles without bodies (no passage to retrieve, so no round trip)."""
    from fincprg.finance import extra_words, use_words

    # Ray actors get this process's tokenizer words (company names) before their first batch
    fn = Prepared(_RuleBatch(src, checks, industry_of, disabled), functools.partial(use_words, extra_words()))
    ctx.map_batches(_stream(ctx), fn, outputs=(_RULED,), batch_size=ctx.config.verify.batch_size, total=total,
                    desc="verify rules")
    asks: list[Ask] = []
    titles_only: list[Ask] = []
    for row in read_jsonl(ctx.output(_RULED)):
        if row["verdict"] is not None:
            reason, detail, rule = row["verdict"]
            verdicts[row["id"]] = Verdict(Reason(reason), detail, rule)
        else:
            ask = Ask(row["id"], row["level"], row["text"], row["source"])
            (titles_only if row["title_only"] else asks).append(ask)
    return asks, titles_only  # the scratch file goes once the manifest is written (the runner removes it)


def _round_trips(ctx: Any, src: _Sources, cfg: Any, asks: list[Ask], verdicts: dict[str, Verdict],
                 disabled: frozenset[str]) -> list[Ask]:
    """The BM25 round trip, then (``verify.dense.model``) the dense one on what it kept: the asks kept."""
    from tqdm.auto import tqdm

    round_trip = RoundTrip(src, cfg)
    passes = [("round_trip", False)]
    if cfg.dense.model and "round_trip_dense" not in disabled:
        passes.append(("round_trip_dense", True))
    for rule, dense in passes:
        desc = "verify dense round trip" if dense else "verify round trip"
        with tqdm(total=len(asks), desc=desc, disable=not ctx.show_progress, leave=False) as bar:
            found = round_trip(asks, progress=bar.update, dense=dense)
        asks = _keep(asks, found, verdicts, rule)
    return asks


def _write(ctx: Any, verdicts: dict[str, Verdict], kept_ids: set[str]) -> list[dict[str, Any]]:
    """Write the kept queries (a kept query whose parent was dropped loses its parent), their direct qrels and
    the dropped ones; returns the dropped rows."""
    dropped: list[dict[str, Any]] = []

    def kept() -> Iterator[Query]:
        for q in _stream(ctx):
            v = verdicts.get(q.id)
            if v is not None:
                dropped.append({"query_id": q.id, "level": q.level, "text": q.text, "reason": v.reason,
                                "rule": v.rule, "detail": v.detail})
            elif q.parent_id is not None and q.parent_id in verdicts:
                yield q.model_copy(update={"parent_id": None})
            else:
                yield q

    atomic_write_jsonl(ctx.output(L.QUERIES), kept())
    direct = itertools.chain(ctx.read(L.GENERATE, L.QRELS), ctx.read(L.GENERATE, L.REPORT_QRELS))
    atomic_write_jsonl(ctx.output(L.QRELS), (r for r in direct if r.query_id in kept_ids))
    atomic_write_jsonl(ctx.output(L.DROPPED), dropped)
    return dropped


def _keep(asks: list[Ask], found: list[Verdict | None], verdicts: dict[str, Verdict], rule: str) -> list[Ask]:
    """The asks with no verdict in ``found`` (one per ask); the others' verdicts, stamped with ``rule``, go to
    ``verdicts``."""
    verdicts.update({q.id: stamp(v, rule) for q, v in zip(asks, found) if v is not None})
    return [q for q, v in zip(asks, found) if v is None]


def summarise(generated: Counter[str], dropped: list[dict[str, Any]], src: _Sources, no_subject: int,
              judge_counts: dict[str, Any] | bool, checks: list[str]) -> dict[str, Any]:
    """Manifest counts: yield per level, reasons (overall and per level), examples, subject sources."""
    lost = Counter(d["level"] for d in dropped)
    levels = {lv: {"generated": generated[lv], "kept": generated[lv] - lost[lv],
                   "yield": round((generated[lv] - lost[lv]) / generated[lv], 4) if generated[lv] else 0.0}
              for lv in LEVELS if generated[lv]}
    reasons = Counter(d["reason"] for d in dropped)
    rules = Counter(d["rule"] for d in dropped)
    by_level: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, list[dict[str, str]]] = defaultdict(list)
    for d in dropped:
        by_level[d["level"]][d["reason"]] += 1
        if len(examples[d["reason"]]) < N_EXAMPLES:
            examples[d["reason"]].append({"level": d["level"], "text": d["text"], "detail": d["detail"]})
    return {
        "checks": checks,
        "levels": levels,
        "kept": sum(c["kept"] for c in levels.values()), "dropped": len(dropped),
        "reasons": dict(reasons.most_common()),
        "rules": dict(rules.most_common()),
        "reasons_by_level": {lv: dict(by_level[lv].most_common()) for lv in LEVELS if by_level[lv]},
        "report_subjects": dict(sorted(Counter(r.subject_from for r in src.reports.values()).items())),
        "passages_without_subject": no_subject,
        "judge": judge_counts,
        "examples": dict(examples),
    }
