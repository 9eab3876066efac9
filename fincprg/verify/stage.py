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

Checks: the rules of the registry (:mod:`.rules`), each declared beside its check with its levels and its
``verify.checks`` switch, in its order, the first failing one giving the reason: the source, subject
(:mod:`.subject`), answerability (:mod:`.answer`), a strict reader's rules (:mod:`.wording`, :mod:`.figures` and
others for sentences and passages, :mod:`.topicrules` for topics and intents, :mod:`.reportlevel` for reports),
related companies of an intent (:mod:`.related`); then over the whole corpus the round trip (:mod:`.roundtrip`)
and the optional LLM judge (:mod:`.judge`). The per-query rules read one :class:`~.sources.QueryReading` each and
run as ``ctx.map_batches`` batches (Ray Data actors with ``engine: ray``); the round trip and the judge run in
the driver.
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
from fincprg.contract import Prepared, StageContext
from fincprg.io import atomic_write_jsonl, read_jsonl
from fincprg.records import Query
from fincprg.verify.roundtrip import RoundTrip
from fincprg.verify.rules import first_failure, switched_on
from fincprg.verify.sources import QueryReading, Sources
from fincprg.verify.summary import LEVELS
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


def check_rules(q: Query, src: Sources, checks: set[str], industry_of: dict[str, str | None],
                disabled: frozenset[str] = frozenset()) -> Verdict | None:
    """The per-query rules of one query (the registry's, :mod:`.rules`), first failure first; the Verdict carries
    its rule's id, and a rule in ``disabled`` or of a switch not in ``checks`` is skipped."""
    return first_failure(QueryReading(q, src, industry_of), checks, disabled)


def _judge_source(q: Ask, src: Sources) -> str:
    if q.level in ("sentence", "passage", "report"):  # a report query: the passage stating its claim
        p = src.passage(q.source)
        assert p is not None
        return f"标题：{src.reports[p.report_id].title}\n{p.text}"
    return "\n".join(f"{i.date or ''} {i.title}" for i in src.topic_reports(q.source))


def run(ctx: StageContext) -> dict[str, Any]:
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
    src = Sources(ctx, table, wanted)
    checks, disabled = set(cfg.checks), frozenset(cfg.disable)
    verdicts: dict[str, Verdict] = {}
    asks, titles_only = _rule_pass(ctx, src, checks, disabled, _industries(table, src), verdicts,
                                   sum(generated.values()))
    no_subject = src.passages_without_subject()
    src.release()
    if switched_on("round_trip", checks, disabled):
        asks = _round_trips(ctx, src, cfg, asks, verdicts, checks, disabled)
    asks += titles_only
    judge_counts: dict[str, Any] | bool = False
    if cfg.judge.backend == "llm" and switched_on("judge", checks, disabled):
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


def _stream(ctx: StageContext) -> Iterator[Query]:
    """Generate's queries, then topics': the order they are written in."""
    yield from ctx.read(L.GENERATE, L.QUERIES)
    yield from ctx.read(L.GENERATE, L.REPORT_QUERIES)
    yield from ctx.read(L.TOPICS, L.QUERIES)


def _industries(table: Any | None, src: Sources) -> dict[str, str | None]:
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

    def __init__(self, src: Sources, checks: set[str], industry_of: dict[str, str | None],
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


def _rule_pass(ctx: StageContext, src: Sources, checks: set[str], disabled: frozenset[str],
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


def _round_trips(ctx: StageContext, src: Sources, cfg: Any, asks: list[Ask], verdicts: dict[str, Verdict],
                 checks: set[str], disabled: frozenset[str]) -> list[Ask]:
    """The BM25 round trip, then (``verify.dense.model``) the dense one on what it kept: the asks kept."""
    from tqdm.auto import tqdm

    round_trip = RoundTrip(src, cfg)
    passes = [("round_trip", False)]
    if cfg.dense.model and switched_on("round_trip_dense", checks, disabled):
        passes.append(("round_trip_dense", True))
    for rule, dense in passes:
        desc = "verify dense round trip" if dense else "verify round trip"
        with tqdm(total=len(asks), desc=desc, disable=not ctx.show_progress, leave=False) as bar:
            found = round_trip(asks, progress=bar.update, dense=dense)
        asks = _keep(asks, found, verdicts, rule)
    return asks


def _write(ctx: StageContext, verdicts: dict[str, Verdict], kept_ids: set[str]) -> list[dict[str, Any]]:
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


def summarise(generated: Counter[str], dropped: list[dict[str, Any]], src: Sources, no_subject: int,
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
