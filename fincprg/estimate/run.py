"""``fincprg estimate``: LLM calls, tokens, dollars and wall time per stage, and mining pairs per space.

It runs what is free and deterministic for real: ingest and chunk (into OUT with ``-o``, so the
build then skips them; else into a temporary folder) and the title clustering of the topics stage
(into a temporary folder). It renders the real prompts of the generate stage (query trees, rewrites,
report-level queries) and of the topics stage (intents) over the result, and counts the mining traversal without scoring
(:mod:`fincprg.estimate.pairs`). It sends nothing, except the ``--probe`` requests
(:mod:`fincprg.estimate.llm`), which land in the build's LLM cache.
"""
from __future__ import annotations

import json
import logging
import shutil
import statistics
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.config import PipelineConfig
from fincprg.estimate.llm import Measured, Request, account, counter_for, mark_cached, measure, probe
from fincprg.estimate.tokens import TokenCounter
from fincprg.records import Passage, Sentence

log = logging.getLogger(__name__)


def _tree_requests(cfg: PipelineConfig, client: Any, build: L.Build, counter: TokenCounter) -> list[Request]:
    from fincprg.generate.base import PassageInput
    from fincprg.generate.llm_tree import LLMTreeGenerator

    gen = LLMTreeGenerator(client, cfg.generate, progress=False)
    reports = {r.id: r for r in build.reports()}
    sents: dict[str, list[Sentence]] = defaultdict(list)
    for s in build.sentences():
        sents[s.passage_id].append(s)
    qc = cfg.estimate.query_chars
    out = []
    for k, p in enumerate(build.passages()):
        item = PassageInput(reports[p.report_id], p, tuple(sorted(sents.get(p.id, ()), key=lambda s: s.order)))
        msgs = gen.render(item)
        answer = json.dumps({"passage_query": "字" * qc, "sentence_queries": ["字" * qc] * len(item.sentences)},
                            ensure_ascii=False)
        out.append(Request("generate", "tree", msgs, None, counter.messages(msgs), counter.text(answer),
                           n=len(item.sentences), batch=k // cfg.generate.batch_size, item=item))
    return out


def _rewrite_requests(cfg: PipelineConfig, client: Any, trees: list[Request], counter: TokenCounter,
                      share: float, empty: float) -> list[Request]:
    """One rewrite per query expected to copy its passage (``share`` of the non-empty queries)."""
    from fincprg.generate.rewrite import Rewriter

    prompt = Rewriter(client, cfg.generate.rewrite, cfg.generate.language, progress=False).prompt
    qc = cfg.estimate.query_chars
    completion = counter.text(json.dumps({"query": "字" * qc}, ensure_ascii=False))
    out = []
    for t in trees:
        msgs = prompt.render(query="字" * qc, passage=t.item.passage.text, title=t.item.report.title)
        out.append(Request("generate", "rewrite", msgs, None, counter.messages(msgs), completion,
                           batch=t.batch, weight=share * (1 + t.n * (1 - empty))))
    return out


def _report_requests(cfg: PipelineConfig, build: L.Build, counter: TokenCounter, batch: int) -> list[Request]:
    """One report-level request per report with a claim, rendered as generate.report_llm renders them; they go out
    after every tree batch (``batch``)."""
    from fincprg.generate.report_level import claim_of, group_reports
    from fincprg.generate.report_llm import KEY, render
    from fincprg.llm import load_prompt

    rc = cfg.generate.report
    prompt = load_prompt(rc.prompt, cfg.generate.language)
    answer = counter.text(json.dumps({KEY: ["字" * cfg.estimate.query_chars] * rc.max_queries}, ensure_ascii=False))
    reports = {r.id: r for r in build.reports()}
    out = []
    for item in group_reports(build.passages(), reports):
        if (c := claim_of(item)) is not None:
            msgs = render(prompt, item, c, rc.max_queries)
            out.append(Request("generate", "report", msgs, None, counter.messages(msgs), answer, batch=batch))
    return out


def _cluster(cfg: PipelineConfig, reports_file: Path, scratch: Path, show_progress: bool) -> dict[str, Any]:
    """The topics stage's estimate hook (its clustering step) in ``scratch``: topic inputs, nodes,
    report -> subtree, report -> industry."""
    from fincprg.contract import STAGE_BY_NAME
    from fincprg.pipeline.runner import estimate_stage

    (scratch / L.STAGE_DIRS[L.INGEST]).mkdir(parents=True)
    shutil.copy(reports_file, L.Build(scratch).path(L.INGEST, L.REPORTS))
    quiet = cfg.model_copy(deep=True)
    quiet.topics.viz = "none"  # the plots are not needed to count anything
    return estimate_stage(STAGE_BY_NAME[L.TOPICS], scratch, quiet, show_progress=show_progress)


def _intent_requests(cfg: PipelineConfig, inputs: list[Any], counter: TokenCounter) -> list[Request]:
    from fincprg.llm import load_prompt
    from fincprg.topics.intents import surface_form
    from fincprg.topics.stage import intent_prompt_config

    ic = intent_prompt_config(cfg.topics.intents)
    prompt = load_prompt(ic.prompt, ic.language)
    limits = {"max_intents": ic.max_intents, "max_subqueries": ic.max_subqueries}
    qc = cfg.estimate.query_chars
    answer = json.dumps([{"intent": "字" * qc, "subqueries": ["字" * qc] * ic.max_subqueries}] * ic.max_intents,
                        ensure_ascii=False)
    out = []
    for t in inputs:  # exactly as fincprg.topics.intents.llm_intents renders them
        msgs = prompt.render(keywords=[surface_form(k, t.titles) for k in t.keywords[:ic.max_keywords]],
                             titles=list(t.titles[:ic.max_titles]), industry=t.industry or "", **limits)
        out.append(Request("topics", "intents", msgs, False, counter.messages(msgs), counter.text(answer)))
    return out


def _tree_findings(probes: list[Any], cfg: PipelineConfig) -> dict[str, float]:
    """Re-ask share, empty sentence queries and the share of queries copying their passage, from tree probes."""
    from fincprg.finance.easiness import overlap
    from fincprg.generate.llm_tree import TreeAnswer, parse_tree

    bad = empty = total = easy = 0
    for p in probes:
        item = p.request.item
        parsed = parse_tree(p.text, p.request.n)
        if not isinstance(parsed, TreeAnswer):
            bad += 1
            continue
        qs = [parsed.passage_query, *parsed.sentence_queries]
        total += len(qs)
        empty += sum(not q.strip() for q in parsed.sentence_queries)
        rw = cfg.generate.rewrite
        easy += sum(bool(q.strip()) and overlap(q, item.passage.text, rw.measure) >= rw.max_overlap for q in qs)
    return {"reask_share": bad / len(probes), "empty_share": round(empty / total, 4) if total else 0.0,
            "rewrite_share": round(easy / total, 4) if total else 0.0}


def _intent_findings(probes: list[Any], cfg: PipelineConfig) -> dict[str, float]:
    from fincprg.llm import JSONParseError, parse_json
    from fincprg.topics.intents import validate

    ic = cfg.topics.intents
    bad, subs = 0, []
    for p in probes:
        try:
            got = validate(parse_json(p.text), max_intents=ic.max_intents, max_subqueries=ic.max_subqueries)
            subs.append(sum(len(i["subqueries"]) for i in got))
        except (JSONParseError, ValueError):
            bad += 1
    return {"reask_share": bad / len(probes), **({"subqueries_per_topic": statistics.mean(subs)} if subs else {})}


Plan = tuple[list[Request], Measured, float]  # a stage's requests, what probes measured, its re-ask share


def _probed(cfg: PipelineConfig, client: Any, reqs: list[Request], probes: int, timed: list[float],
            findings: Any) -> Measured:
    """Send ``probes`` of ``reqs`` and measure them; ``findings(sent, cfg)`` gives the stage's own statistics
    with its re-ask share, and ``timed`` gets the probes' latencies."""
    sent = probe(client, reqs, probes)
    m = measure(sent)
    if sent:
        m.extra = findings(sent, cfg)
        m.reask_share = m.extra.pop("reask_share")
    timed += [p.seconds for p in sent if p.seconds is not None]
    return m


def _plan(cfg: PipelineConfig, reqs: list[Request], m: Measured) -> Plan:
    return reqs, m, m.reask_share if m.reask_share is not None else cfg.estimate.reask_share


def _generate_plan(cfg: PipelineConfig, client: Any, build: L.Build, counter: TokenCounter, probes: int,
                   timed: list[float]) -> Plan:
    """The generate stage's requests (trees, and rewrites when enabled), probed; ``timed`` gets probe latencies."""
    trees = _tree_requests(cfg, client, build, counter)
    m = _probed(cfg, client, trees, probes, timed, _tree_findings)
    reqs = list(trees)
    if not cfg.generate.rewrite.enabled:
        m.extra.pop("rewrite_share", None)
    else:
        share = m.extra.get("rewrite_share", 1.0)
        m.extra["rewrite_share"] = share
        reqs += _rewrite_requests(cfg, client, trees, counter, share, m.extra.get("empty_share", 0.0))
    if cfg.generate.report.enabled:
        reports = _report_requests(cfg, build, counter, batch=(trees[-1].batch + 1) if trees else 0)
        # their answers are a short list, not a tree: probed on their own, their mean completion stands for each
        sent = probe(client, reports, probes)
        if got := [p.completion_tokens for p in sent if p.completion_tokens]:
            for r in reports:
                r.completion_base = statistics.fmean(got)
        timed += [p.seconds for p in sent if p.seconds is not None]
        reqs += reports
    return _plan(cfg, reqs, m)


def _topics_plan(cfg: PipelineConfig, client: Any, inputs: list[Any], counter: TokenCounter, probes: int,
                 timed: list[float]) -> tuple[Plan | None, dict[str, int]]:
    """The topics stage's intent requests (None with template intents), probed, and the subqueries each topic
    is expected to get (what mining traverses)."""
    ic = cfg.topics.intents
    if ic.backend != "llm":
        from fincprg.topics.intents import template_intents

        return None, {t.topic_id: sum(len(i["subqueries"]) for i in template_intents(
            t, max_subqueries=ic.max_subqueries)) for t in inputs}
    intents = _intent_requests(cfg, inputs, counter)
    m = _probed(cfg, client, intents, probes, timed, _intent_findings)
    k = round(m.extra.get("subqueries_per_topic", ic.max_intents * ic.max_subqueries))
    return _plan(cfg, intents, m), {t.topic_id: k for t in inputs}


def _stage_rows(cfg: PipelineConfig, client: Any, plans: dict[str, Plan], price: Any, latency: float
                ) -> dict[str, dict[str, Any]]:
    """Requests, tokens, cost and wall time per stage, cached answers counted out."""
    rows = {}
    for stage, (reqs, m, share) in plans.items():
        mark_cached(client, reqs)
        row = account(reqs, m, reask_share=share, price=price, concurrency=cfg.llm.concurrency, latency=latency)
        row["prompt_correction"] = round(m.factor, 4) if m.factor else None
        row["reask_share"] = round(share, 4)
        row.update(m.extra)
        rows[stage] = row
    return rows


def estimate(corpus: Path, cfg: PipelineConfig, *, out: Path | None = None, probes: int = 0,
             show_progress: bool = False) -> dict[str, Any]:
    """Estimate a build of ``corpus`` with ``cfg`` (see the module docstring); with ``out``, also write
    ``OUT/estimate.json``, which ``fincprg build`` compares with what it sent."""
    from fincprg.estimate.pairs import mine_pairs
    from fincprg.io import atomic_write_json
    from fincprg.llm import LLMClient, price_for
    from fincprg.pipeline.runner import run_pipeline

    with tempfile.TemporaryDirectory(prefix="fincprg-estimate-") as tmp:
        work = out or Path(tmp) / "build"
        run_pipeline(corpus, work, cfg, upto=L.CHUNK, show_progress=show_progress)
        build = L.Build(work)
        passages: list[Passage] = list(build.passages())
        sentences: list[Sentence] = list(build.sentences())
        clustered = _cluster(cfg, build.path(L.INGEST, L.REPORTS), Path(tmp) / "clustering", show_progress)
        counter = counter_for(cfg)
        client = LLMClient(cfg.llm, Path(cfg.run.cache_dir) if cfg.run.cache_dir else build.cache_dir)
        price = price_for(cfg.llm.model, cfg.llm.prices)
        result: dict[str, Any] = {
            "corpus": str(corpus), "reports": sum(1 for _ in build.reports()), "passages": len(passages),
            "sentences": len(sentences), "topics": len(clustered["inputs"]), "model": cfg.llm.model,
            "priced": price is not None, "tokens": counter.name, "concurrency": cfg.llm.concurrency,
            "probes": probes, "stages": {}}
        timed: list[float] = []
        try:
            plans: dict[str, Plan] = {}
            if cfg.generate.backend == "llm":
                plans[L.GENERATE] = _generate_plan(cfg, client, build, counter, probes, timed)
            topics_plan, subqueries = _topics_plan(cfg, client, clustered["inputs"], counter, probes, timed)
            if topics_plan is not None:
                plans[L.TOPICS] = topics_plan
            latency = statistics.median(timed) if timed else cfg.estimate.latency_s
            result["latency_s"] = round(latency, 3)
            result["latency_source"] = f"median of {len(timed)} probes" if timed else "estimate.latency_s"
            result["stages"] = _stage_rows(cfg, client, plans, price, latency)
        finally:
            client.close()
        result["total"] = {k: sum(s.get(k, 0) for s in result["stages"].values())
                           for k in ("requests", "cached", "to_send", "prompt_tokens", "completion_tokens",
                                     "to_send_prompt_tokens", "to_send_completion_tokens", "wall_s",
                                     *(("cost_usd", "to_send_cost_usd") if price else ()))}
        result["mine"] = mine_pairs(cfg.mine, passages, sentences, clustered["nodes"], clustered["subtree"],
                                    subqueries, clustered["industry"])
        if out is not None:
            atomic_write_json(out / L.ESTIMATE, result)
    return result
