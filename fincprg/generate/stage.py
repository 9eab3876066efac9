"""Generate stage: one query tree per passage, completion, direct qrels (FinCPRG §3.1.2-3.1.3).

Input records: ingest/reports.jsonl (Report), chunk/passages.jsonl (Passage), chunk/sentences.jsonl (Sentence).
Output records: generate/queries.jsonl (Query, level "passage" and "sentence"), generate/qrels.jsonl
(Qrel, provenance "direct": passage query = its passage, sentence query < its passage) and
generate/failures.jsonl (Failure: every passage without a usable tree, among them "no_subject" where the
report names no company the templates can ask about, counted as ``no_subject_passages``; plus
"misaligned" LLM answers whose aligned part was kept) and generate/hierarchy.json (each report's queries merged into one
hierarchical set, report -> passages -> sentences; see :func:`fincprg.generate.complete.hierarchy`).
"""
from __future__ import annotations

import functools
import gc
import itertools
import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from fincprg import layout as L
from fincprg.config import PipelineConfig
from fincprg.contract import Prepared, StageContext
from fincprg.errors import FincprgError
from fincprg.finance import extra_words, register_companies, use_words
from fincprg.finance.stocks import stock_table
from fincprg.generate.base import BEFORE, PassageInput, QueryTree, TreeGenerator
from fincprg.generate.complete import complete_query
from fincprg.generate.llm_tree import RETRYABLE_KINDS, TRUNCATED_PREFIX, failure_for
from fincprg.generate.report_level import ReportInput, group_reports, template_report_queries
from fincprg.generate.rewrite import make_rewriter, rewrite_counts
from fincprg.llm.retry import retry_counts
from fincprg.finance.reportkind import broker_of
from fincprg.generate.industry import WIDE_TYPES
from fincprg.generate.subject import body_subject
from fincprg.generate.tally import QueryTally
from fincprg.generate.templates import NO_SUBJECT, TemplateGenerator, report_company, title_subject
from fincprg.io import atomic_write_jsonl, atomic_write_text, count_lines, read_jsonl
from fincprg.records import Failure, Qrel, Query, Report

log = logging.getLogger(__name__)

OUTPUTS = (L.QUERIES, L.QRELS, L.FAILURES)
_PASSAGE_ID = re.compile(rb'"passage_id":("(?:[^"\\]|\\.)*")')


def make_generator(cfg: PipelineConfig, cache_dir: Any, *, progress: bool = True) -> TreeGenerator:
    """The configured generator: offline templates (default) or the LLM (imported lazily)."""
    if cfg.generate.backend == "llm":
        import openai  # noqa: F401 - the client imports it at the first request; here, run() freezes it (gc)

        from fincprg.generate.llm_tree import LLMTreeGenerator
        from fincprg.llm import LLMClient

        return LLMTreeGenerator(LLMClient(cfg.llm, cache_dir), cfg.generate, progress=progress)
    return TemplateGenerator(cfg.generate, table=stock_table(cfg.finance.stock_table))


def uses_llm_actors(cfg: Any) -> bool:
    """The spec's ``llm_actors``: with engine: ray the LLM generator's requests go out from Ray actors."""
    return bool(cfg.generate.backend == "llm")


def llm_worker(gen_cfg: Any, client: Any) -> TreeGenerator:
    """The tree generator an LLM actor runs (``ctx.llm_stream``'s ``worker``), around the actor's own client."""
    from fincprg.generate.llm_tree import LLMTreeGenerator

    return LLMTreeGenerator(client, gen_cfg, progress=False)


def tree_records(item: PassageInput, tree: QueryTree | Failure, *, complete: bool) -> dict[str, list[Any]]:
    """Query, Qrel and Failure records for one passage's generated tree (pure)."""
    out: dict[str, list[Any]] = {name: [] for name in OUTPUTS}
    if isinstance(tree, Failure):
        out[L.FAILURES].append(tree)
        return out
    misaligned = failure_for(tree)
    if misaligned is not None:
        out[L.FAILURES].append(misaligned)
    pid, rid = item.passage.id, item.report.id
    company = report_company(item.report)
    # Query and Qrel are built with model_construct: every field is a str, tuple or dict made right here, so
    # validating them again (twice per query, 46k queries on 7,880 real passages) only costs the LLM stage CPU

    def finish(text: str, passage_text: str) -> tuple[str, dict[str, Any]]:
        text = text.strip()
        done = complete_query(text, company=company, passage_text=passage_text,
                                     title=item.report.title, date=item.report.date) if complete else text
        prov = dict(tree.provenance)
        if done != text:
            prov["original"] = text
        return done, prov

    parent: str | None = None
    if tree.passage_query.strip():
        text, prov = finish(tree.passage_query, item.passage.text)
        parent = f"qp:{pid}"
        out[L.QUERIES].append(Query.model_construct(id=parent, level="passage", text=text, source_ids=(pid,),
                                                    parent_id=None, report_id=rid, provenance=prov))
        out[L.QRELS].append(Qrel.model_construct(query_id=parent, passage_id=pid, relevance=1, provenance="direct"))
    else:
        out[L.FAILURES].append(Failure(stage="generate", item_id=pid, kind="empty_passage_query",
                                             message="the generator returned no passage query; sentence "
                                                     "queries were kept without a parent"))
    for sent, q in zip(item.sentences, tree.sentence_queries):
        if not q or not q.strip():
            continue  # "" = unclear sentence; counted by the stage, not written
        # the passage is the context that tells whether one year dominates
        text, prov = finish(q, item.passage.text)
        prov["sentence_id"] = sent.id
        qid = f"qs:{sent.id}"
        out[L.QUERIES].append(Query.model_construct(id=qid, level="sentence", text=text, source_ids=(pid,),
                                                    parent_id=parent, report_id=rid, provenance=prov))
        out[L.QRELS].append(Qrel.model_construct(query_id=qid, passage_id=pid, relevance=1, provenance="direct"))
    return out


def process_batch(generator: TreeGenerator, batch: list[PassageInput], *, complete: bool) -> dict[str, list[Any]]:
    """Generate and complete one batch (pure apart from the generator's own cache)."""
    trees = generator.generate(batch)
    if len(trees) != len(batch):  # a generator bug must not silently drop passages
        raise RuntimeError(f"generator {generator.name} returned {len(trees)} results for {len(batch)} passages")
    out: dict[str, list[Any]] = {name: [] for name in OUTPUTS}
    for item, tree in zip(batch, trees):
        for name, recs in tree_records(item, tree, complete=complete).items():
            out[name].extend(recs)
    return out


def load_reports(ctx: StageContext) -> dict[str, Report]:
    """Every report's metadata, by id: a passage needs its report's title, date and company, not its text.
    Dropping the text keeps the corpus out of memory and out of every batch shipped to a Ray actor.

    A report with no company (metadata or title) and no industry title gets the listed company its body
    names (:func:`fincprg.generate.subject.body_subject`, with ``finance.stock_table``) as its company;
    without one its passages get no queries (``no_subject_passages``)."""
    table = stock_table(ctx.config.finance.stock_table)
    out = {}
    for r in ctx.read(L.INGEST, L.REPORTS):
        update: dict[str, Any] = {"text": ""}
        # (an industry or strategy report has no issuer: its sentences name whom they are about)
        if table is not None and not report_company(r) and not title_subject(r.title) \
                and r.report_type not in WIDE_TYPES:
            found = body_subject(r.text, table, broker=broker_of(r.meta))
            if found:
                update.update(company=found[0], stock_code=r.stock_code or found[1])
        out[r.id] = r.model_copy(update=update)
    return out


def iter_inputs(ctx: StageContext, reports: dict[str, Report]) -> Iterator[PassageInput]:
    """Passages with their sentences and reports, in the chunk stage's (deterministic) order, streamed.

    chunk writes a passage's sentences in passage order, so the two files are merged in one pass and
    only one passage's sentences are held at a time.
    """
    sentences = ctx.read(L.CHUNK, L.SENTENCES)
    pending = next(sentences, None)
    report_id, before = None, ""
    for p in ctx.read(L.CHUNK, L.PASSAGES):
        sents = []
        while pending is not None and pending.passage_id == p.id:
            sents.append(pending)
            pending = next(sentences, None)
        before = before if p.report_id == report_id else ""
        yield PassageInput(reports[p.report_id], p, tuple(sorted(sents, key=lambda s: s.order)), before)
        report_id, before = p.report_id, (before + "\n" + p.text)[-BEFORE:]
    if pending is not None:
        raise RuntimeError(f"chunk/sentences.jsonl is not in passage order: sentence {pending.id} comes after "
                           "its passage; re-run the chunk stage (fincprg build --force)")


def run(ctx: StageContext) -> dict[str, Any]:
    """Generate query trees for every passage; write queries, direct qrels and failures."""
    cfg = ctx.config
    reports = load_reports(ctx)
    n_items = count_lines(ctx.input_path(L.CHUNK, L.PASSAGES))
    # every company name is known to the tokenizer before the first batch, so tokenisation
    # (and the template queries) do not depend on batch boundaries or on resuming
    register_companies(reports.values())
    tokenizer_words = extra_words()  # the same tokenizer in every Ray actor (Prepared.setup)
    generator = make_generator(cfg, ctx.cache_dir, progress=ctx.show_progress)
    rewriter = make_rewriter(cfg, generator, progress=ctx.show_progress)
    # What is alive now (modules, the config, the reports, openai's hundreds of pydantic types) lives to the
    # end of the stage: frozen, the cyclic collector stops walking it at each full collection. Those took
    # 1.3 s of a 32 s LLM stage (7,880 requests at concurrency 64), each (~0.1 s) stalling the event loop
    # with every request in flight; 0.4 s frozen. Unfrozen again when the stage ends, whatever happens.
    gc.freeze()
    try:
        ray_stats: dict[str, Any] = {}  # engine: ray - the LLM actors' summed client stats
        tally = QueryTally()
        sentences: dict[str, int] | None = None  # passage id -> its sentences, when every batch runs here and now
        if hasattr(generator, "stream"):
            lines, sentences = _stream_batches(ctx, reports, generator, rewriter, tally, ray_stats, n_items)
        else:
            lines = _local_batches(ctx, reports, generator, rewriter, tokenizer_words, n_items)
        if sentences is None:  # resumed, or batches made elsewhere: the counts and hierarchy from the written file
            for row in read_jsonl(ctx.output(L.QUERIES)):
                tally.add(row)
        counts = summarise(ctx, n_items, lines, tally, sentences)
        counts["hierarchy_reports"] = write_hierarchy(ctx, tally)
        counts["report_level"] = write_report_level(ctx, reports)
        if rewriter is not None:
            counts["rewrite"] = rewrite_counts(ctx.output(L.QUERIES))
        llm = _llm_counts(generator, ray_stats)
        if llm is not None:  # the report level's requests are the stage's too
            extra = counts["report_level"].pop("llm", {})
            counts["llm"] = {k: v + extra[k] if isinstance(v, int | float) and isinstance(extra.get(k), int | float)
                             and not isinstance(v, bool) else v for k, v in llm.items()}
        log.info("generate: %s", counts)
        if failed := counts["report_level"].get("failures"):
            log.warning("generate: %d reports have no valid report-level LLM answer (the generate manifest lists "
                        "them under report_level.failed); `fincprg build ... --force` asks them again, every valid "
                        "answer coming from the cache", failed)
        if counts["retryable_failures"]:
            log.warning("generate: %d passages have no valid LLM answer (see generate/failures.jsonl); "
                        "`fincprg build ... --retry-failed` asks exactly those again",
                        counts["retryable_failures"])
        return counts
    finally:
        gc.unfreeze()


def _stream_batches(ctx: StageContext, reports: dict[str, Report], generator: TreeGenerator, rewriter: Any,
                    tally: QueryTally, ray_stats: dict[str, Any],
                    n_items: int) -> tuple[dict[str, int], dict[str, int] | None]:
    """The LLM's batches: requests stream across batch boundaries (the window stays full); checkpoints stay per
    batch. Returns the written lines and, when every batch ran here and now, passage id -> its sentences."""
    cfg = ctx.config
    bs, complete = cfg.generate.batch_size, cfg.generate.complete
    # two readers of one stream: the LLM runs at most its window ahead of the writer, so tee holds
    # at most that many passages
    done = ctx.committed_batches(bs)
    todo, ask = itertools.tee(itertools.islice(iter_inputs(ctx, reports), done * bs, None))
    # the tail's counts and hierarchy are gathered as batches are written (see tally.py)
    sentences: dict[str, int] | None = None if done else {}

    def records(batch: list[tuple[PassageInput, Any]]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {name: [] for name in OUTPUTS}
        for item, tree in batch:
            for name, recs in tree_records(item, tree, complete=complete).items():
                out[name].extend(recs)
        items_ = [item for item, _ in batch]
        out = rewriter.apply(items_, out, report_company) if rewriter is not None else out
        if sentences is not None:
            for q in out[L.QUERIES]:
                tally.add(q.model_dump(mode="json"))
            for item in items_:
                sentences[item.passage.id] = sentences.get(item.passage.id, 0) + len(item.sentences)
        return out

    # in this process, or (engine: ray) from LLM actors that each build their own generator
    trees = ctx.llm_stream(ask, local=generator, worker=functools.partial(llm_worker, cfg.generate),
                           llm=cfg.llm, stats_out=ray_stats)
    try:
        lines = ctx.map_batches(zip(todo, trees), records, outputs=OUTPUTS, batch_size=bs,
                                total=n_items, desc=f"generate ({generator.name})", skipped=True)
    except Exception as e:
        cause = getattr(e, "cause", None)  # Ray wraps an actor's error (a refused key...) with its traceback
        if isinstance(cause, FincprgError):
            raise cause from None
        raise
    finally:
        trees.close()  # zip stops at the last item without exhausting the stream: close it now
    if (client := getattr(generator, "client", None)) is not None:
        client.check_answered()  # every request failed (an HTML page, 500s): stop, not export nothing
    return lines, sentences


def _local_batches(ctx: StageContext, reports: dict[str, Report], generator: TreeGenerator, rewriter: Any,
                   tokenizer_words: Any, n_items: int) -> dict[str, int]:
    """The templates' batches, here or on Ray (each worker's tokenizer set up with ``tokenizer_words``)."""
    complete = ctx.config.generate.complete

    def fn(batch: list[PassageInput]) -> dict[str, list[Any]]:
        out = process_batch(generator, batch, complete=complete)
        return rewriter.apply(batch, out, report_company) if rewriter is not None else out

    return ctx.map_batches(iter_inputs(ctx, reports),
                           Prepared(fn, functools.partial(use_words, tokenizer_words)), outputs=OUTPUTS,
                           batch_size=ctx.config.generate.batch_size, total=n_items,
                           desc=f"generate ({generator.name})")


def _llm_counts(generator: TreeGenerator, ray_stats: dict[str, Any]) -> dict[str, Any] | None:
    """The LLM client's request, token and cost counts (with the Ray actors' added), or None without a client."""
    stats = getattr(getattr(generator, "client", None), "stats", None)
    if stats is not None and ray_stats:
        stats = {k: ray_stats.get(k, 0) + v if isinstance(v, int | float) and not isinstance(v, bool) else v
                 for k, v in stats.items()}
    if stats is None:
        return None
    out = {k: stats.get(k) for k in ("requests", "cache_hits", "retries", "failures", "rejected",
                                     "stale_cache", "prompt_tokens", "completion_tokens",
                                     "total_tokens", "cost_usd", "model")}
    if stats.get("cache_errors"):  # answers the cache could not store: a re-run asks them again
        out["cache_errors"] = stats["cache_errors"]
    return out


def report_level(items: Iterable[ReportInput], cfg: Any, *, llm: Any = None, cache_dir: Any = None
                 ) -> tuple[list[Query], list[Qrel], dict[str, Any]]:
    """The stage's entry: every report's level queries and graded qrels (``cfg``: ``generate``), by the
    templates or (``cfg.backend: llm``) by the LLM (``llm``: the ``llm`` config); none when
    ``cfg.report.enabled`` is false."""
    if not cfg.report.enabled:
        return [], [], {"enabled": False}
    if cfg.backend == "llm":
        from fincprg.generate.report_llm import llm_report_queries

        queries, qrels, counts = llm_report_queries(list(items), cfg.report, llm, cache_dir, cfg.language)
    else:
        queries, qrels, counts = template_report_queries(items, cfg.report.max_queries)
    frames = Counter(str(q.provenance.get("frame")) for q in queries)
    return queries, qrels, {"enabled": True, **counts, "queries": len(queries), "frames": dict(frames.most_common())}


def write_report_level(ctx: StageContext, reports: dict[str, Report]) -> dict[str, Any]:
    """Write generate/report_queries.jsonl and report_qrels.jsonl (:mod:`fincprg.generate.report_level`), whole
    and atomically after the passages' batches: a resumed run makes them again (the LLM's from its cache)."""
    queries, qrels, counts = report_level(group_reports(ctx.read(L.CHUNK, L.PASSAGES), reports), ctx.config.generate,
                                          llm=ctx.config.llm, cache_dir=ctx.cache_dir)
    atomic_write_jsonl(ctx.output(L.REPORT_QUERIES), queries)
    atomic_write_jsonl(ctx.output(L.REPORT_QRELS), qrels)
    return counts


def write_hierarchy(ctx: StageContext, tally: QueryTally) -> int:
    """Write generate/hierarchy.json (:func:`fincprg.generate.complete.hierarchy` of every written query, in id
    order with sorted keys, compact: MBs at scale) from ``tally``. Returns the number of reports."""
    atomic_write_text(ctx.output(L.HIERARCHY), tally.hierarchy_json() + "\n")
    return tally.reports


def summarise(ctx: StageContext, n_items: int, lines: dict[str, int], tally: QueryTally,
              sentences: dict[str, int] | None = None) -> dict[str, Any]:
    """Counts of the whole stage, so a resumed run reports them too: ``tally`` holds every written query;
    ``sentences`` (passage id -> sentences) every passage of a run that made every batch, else
    chunk/sentences.jsonl is read."""
    levels, generators, completed = tally.levels, tally.generators, tally.completed
    kinds: Counter[str] = Counter()
    failed: set[str] = set()
    retryable: set[str] = set()
    with open(ctx.output(L.FAILURES), encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            kinds[rec["kind"]] += 1
            # misaligned, empty passage query and truncated-with-a-kept-part still gave a tree
            kept = rec["kind"] in ("misaligned", "empty_passage_query") or rec["message"].startswith(TRUNCATED_PREFIX)
            if not kept:
                failed.add(rec["item_id"])
            if rec["kind"] in RETRYABLE_KINDS:
                retryable.add(rec["item_id"])
    n_sent = 0  # sentences of passages that got a tree
    if sentences is not None:
        n_sent = sum(n for pid, n in sentences.items() if pid not in failed)
    else:
        with open(ctx.input_path(L.CHUNK, L.SENTENCES), "rb") as f:
            for line in f:
                m = _PASSAGE_ID.search(line)  # a regex, not a parse: this runs after the last answer, on the clock
                n_sent += bool(m) and json.loads(m.group(1)) not in failed
    empty = n_sent - levels["sentence"]
    return {
        "passages": n_items,
        "queries": dict(sorted(levels.items())),
        "qrels": lines[L.QRELS],
        "sentences": n_sent,
        "empty_sentence_queries": empty,
        "empty_share": round(empty / n_sent, 4) if n_sent else 0.0,
        "completed": completed,
        "generator": dict(sorted(generators.items())),
        "no_subject_passages": kinds[NO_SUBJECT],
        "failures": dict(sorted(kinds.items())),
        **retry_counts(retryable, ctx.previous_failures, RETRYABLE_KINDS, retrying=ctx.retry_failed),
    }
