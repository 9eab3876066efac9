"""Stage ``topics``: industry + title + time clustering, topic intents/subqueries, industry subtrees.

Input records: ``ingest/reports.jsonl`` (Report: title, date, industry, company) and ``ingest/extra_titles.jsonl``
(titles without bodies, ``ingest.extra_titles``: clustered with the reports' titles, ids ``extra:…``).

Output records (``OUT/topics/``, written atomically: this is a global stage):

* ``titles.jsonl``: one ``Title`` per report, kept or dropped (reason ``empty``/``too_short``/
  ``duplicate``), with the CITIC industry of kept titles and where it came from
  (``metadata`` = Report.industry mapped to CITIC, ``company`` = another report's metadata for the
  same company, else the classifier's name);
* ``tree.json``: ``{"nodes": [Topic...], "root": id}`` with dominant industries;
* ``assignments.jsonl``: ``{report_id, title, date, industry, leaf_topic, subtree_topic, reassigned}``
  (``reassigned``: an HDBSCAN outlier moved to the nearest topic of its industry afterwards);
* ``queries.jsonl``: intent (``qi:``) and topic-level (``qt:``) Query records;
* ``failures.jsonl``: topics whose intents could not be generated (LLM backend);
* ``topics.html``, ``hierarchy.html``: visualisations;
* ``bertopic/``: the fitted BERTopic model in BERTopic's safetensors format (``BERTopic.load`` opens it;
  engine ``bertopic``, the default), with ``fincprg.json`` saying how its topics were clustered.
"""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from collections import Counter
from typing import Any

import numpy as np

from fincprg.contract import StageContext
from fincprg.finance import register_companies
from fincprg.finance.industries import CITIC_INDUSTRIES, to_citic
from fincprg import layout as L
from fincprg.llm.retry import retry_counts
from fincprg.io import atomic_write_json, atomic_write_jsonl
from fincprg.records import Failure, Query, Report, TopicAssignment, TopicHierarchy
from fincprg.finance.stocks import stock_table as load_table
from fincprg.topics.classify import company_map, make_classifier
from fincprg.topics.cluster import TopicTree, cluster_titles
from fincprg.models.embedders import make_embedder
from fincprg.topics.intents import (
    TEMPLATE_ID,
    TEMPLATE_VERSION,
    TopicInput,
    llm_intents,
    period_label,
    template_intents,
    to_queries,
)
from fincprg.topics.subtrees import build_nodes, subtree_for
from fincprg.topics.time2vec import reference_date, time2vec
from fincprg.topics.titles import Title, select_titles

log = logging.getLogger(__name__)


def label_industries(titles: list[Title], reports: list[Report], cfg: Any,
                     stock_table: str | None = None) -> tuple[list[Title], Any]:
    """Fill ``industry``/``industry_source``: metadata, the stock table, company metadata, the classifier.

    ``stock_table``: the ``finance.stock_table`` setting, used when ``cfg.classifier.stock_table`` is null."""
    companies = company_map([(r.company, r.industry) for r in reports])
    classifier = make_classifier(cfg.classifier, companies)
    own = cfg.classifier.stock_table is not None  # null follows finance.stock_table; "none" is none
    stocks = load_table(cfg.classifier.stock_table if own else stock_table,
                        "topics.classifier.stock_table" if own else "finance.stock_table")
    out: list[Title | None] = []
    todo: list[int] = []
    for i, t in enumerate(titles):
        meta = to_citic(t.source_industry)
        listed = stocks.lookup(t.stock_code, t.company) if stocks else None
        if meta:
            out.append(t.model_copy(update={"industry": meta, "industry_source": "metadata"}))
        elif listed:
            out.append(t.model_copy(update={"industry": listed, "industry_source": "stock_table"}))
        elif t.company and t.company in companies:
            out.append(t.model_copy(update={"industry": companies[t.company], "industry_source": "company"}))
        else:
            out.append(None)
            todo.append(i)
    for i, ind in zip(todo, classifier.classify([titles[i].title for i in todo]), strict=True):
        out[i] = titles[i].model_copy(update={"industry": ind, "industry_source": classifier.name})
    return [t for t in out if t is not None], classifier


def embed_titles(titles: list[Title], cfg: Any, seed: int, classifier: Any, progress: Any = None) -> np.ndarray:
    """L2-normalised text embedding with the weighted Time2Vec block appended."""
    texts = [t.title for t in titles]
    if progress is not None and cfg.embedder.backend == "lsa":
        from fincprg.finance import tokenize

        # tokenising is the slow part of LSA (about a minute for 49k titles); doing it here fills
        # the tokenizer's cache and gives the user a progress bar
        for text in progress(texts, total=len(texts), desc="topics: tokenise titles"):
            tokenize(text)
    # every embedder returns L2-normalised float32 rows (fincprg.models.embedders), so no second pass here
    emb = make_embedder(cfg.embedder, seed=seed, classifier=classifier).embed(texts)
    dates = [t.date for t in titles]
    ref = reference_date(dates, cfg.time2vec.reference_date)
    blocks = [emb, time2vec(dates, reference=ref, weight=cfg.time2vec.weight)]
    if cfg.embedder.backend != "classifier" and cfg.embedder.industry_weight > 0:
        blocks.append(industry_block([t.industry for t in titles], cfg.embedder.industry_weight))
    return np.hstack(blocks).astype(np.float32)


def industry_block(industries: list[str | None], weight: float) -> np.ndarray:
    """Weighted one-hot over the 30 CITIC industries (+ unknown).

    The paper embeds titles with the industry model, so similar titles from different industries
    separate. LSA and generic sentence vectors know nothing of industries; this block restores
    that separation for the offline default (the ``classifier`` backend already carries it).
    """
    index = {name: i for i, name in enumerate(CITIC_INDUSTRIES)}
    out = np.zeros((len(industries), len(CITIC_INDUSTRIES) + 1), dtype=np.float32)
    for row, ind in enumerate(industries):
        out[row, index.get(ind or "", len(CITIC_INDUSTRIES))] = weight
    return out


def topic_inputs(topics: list[int], nodes: dict, titles: list[Title], emb: np.ndarray) -> list[TopicInput]:
    """Leaf topics (not outliers) with titles ranked by cosine to the topic centroid (``topics``: the
    leaf topic number of each kept title)."""
    members: dict[int, list[int]] = {}
    for i, k in enumerate(topics):
        members.setdefault(k, []).append(i)
    out = []
    for k in sorted(set(topics) - {-1}):
        idx = members[k]
        sub = emb[idx]
        centroid = sub.mean(axis=0)
        sims = sub @ centroid / (np.linalg.norm(sub, axis=1) * (np.linalg.norm(centroid) or 1.0) + 1e-12)
        order = [idx[j] for j in sorted(range(len(idx)), key=lambda j: (-round(float(sims[j]), 6), j))]
        tid = f"t{k}"
        out.append(TopicInput(topic_id=tid, keywords=tuple(nodes[tid].keywords),
                              titles=tuple(titles[i].title for i in order), industry=nodes[tid].industry,
                              title_dates=tuple(titles[i].date for i in order),
                              dates=tuple(titles[i].date for i in idx if titles[i].date is not None)))
    return out


# what llm_intents passes to the topic_intent template: a user's prompt_file may use only these
INTENT_VARIABLES = ("keywords", "titles", "industry", "max_intents", "max_subqueries", "error")


def intent_prompt_config(cfg: Any) -> Any:
    """``topics.intents`` with a user's ``prompt_file`` checked and put in place of the bundled prompt name
    (``load_prompt`` loads a path as a file)."""
    if not cfg.prompt_file:
        return cfg
    from fincprg.llm.prompts import stage_prompt

    stage_prompt(cfg, allowed=INTENT_VARIABLES, required=("keywords", "titles"), key="topics.intents.prompt_file")
    return cfg.model_copy(update={"prompt": str(Path(cfg.prompt_file).resolve())})  # a path: loaded as a file


def make_queries(inputs: list[TopicInput], ctx: StageContext) -> tuple[list[Query], list[Failure], dict[str, Any]]:
    cfg = ctx.config.topics.intents
    queries: list[Query] = []
    if cfg.backend == "llm":
        done, failures, stats = llm_intents(inputs, intent_prompt_config(cfg), ctx.config.llm, ctx.cache_dir)
        for t in inputs:
            if t.topic_id in done:
                prov = {"generator": "llm", "template": stats["template"], "version": stats["version"],
                        "model": ctx.config.llm.model}
                queries.extend(to_queries(t.topic_id, done[t.topic_id], prov))
        return queries, failures, {k: v for k, v in stats.items() if k not in ("template", "version")}
    tcfg = ctx.config.topics.classifier
    table = load_table(tcfg.stock_table if tcfg.stock_table is not None else ctx.config.finance.stock_table)
    listed = frozenset(table.code_of) if table else frozenset()  # a keyword naming one is a company, no theme
    used: dict[str, Counter[str]] = {"intent": Counter(), "topic": Counter()}  # frames so far, in topic order
    for t in inputs:
        intents = template_intents(t, max_subqueries=cfg.max_subqueries, max_intents=cfg.max_intents,
                                   listed=listed, used=used)
        prov = {"generator": "templates", "template": TEMPLATE_ID, "version": TEMPLATE_VERSION,
                "keywords": list(t.keywords[:3]), "industry": t.industry, "period": period_label(t.dates)}
        queries.extend(to_queries(t.topic_id, intents, prov))
    return queries, [], {}


_EMB, _CLUSTERED = ".embeddings.npy", ".clustered.json"  # scratch of the clustering checkpoint



def cluster_step(ctx: StageContext, cfg: Any, seed: int) -> dict[str, Any]:
    """Titles, industries, embeddings, clustering, tree, assignments and plots: the expensive part.

    Writes titles.jsonl, tree.json, assignments.jsonl and the HTML views, plus scratch files that let a
    killed run resume at the intents (see :func:`load_clustered`). Returns what the intents step needs.
    """
    from fincprg.topics.viz import write_html

    # the corpus' reports first: a catalogue title that repeats a report's is dropped as its duplicate
    reports = [*ctx.read(L.INGEST, L.REPORTS), *L.read_extra_titles(ctx)]
    kept, dropped = select_titles(reports, cfg.min_title_chars)
    kept, classifier = label_industries(kept, reports, cfg, ctx.config.finance.stock_table)
    order = {r.id: i for i, r in enumerate(reports)}
    atomic_write_jsonl(ctx.output(L.TITLES), sorted([*kept, *dropped], key=lambda t: order[t.report_id]))
    if kept:
        emb = embed_titles(kept, cfg, seed, classifier, progress=ctx.progress)
        log.info("topics: clustering %d titles (HDBSCAN, %s engine)...", len(kept), cfg.cluster.engine)
        tree = cluster_titles([t.title for t in kept], emb, cfg.cluster, seed=seed,
                              industries=[t.industry for t in kept], progress=ctx.progress)
    else:
        emb = np.zeros((0, 1), dtype=np.float32)
        tree = TopicTree([], {"t0": []}, {"t0": None}, {}, "t0", notes=["no titles"])
    nodes = build_nodes(tree, [t.report_id for t in kept], [t.industry for t in kept], cfg.dominance)
    atomic_write_json(ctx.output(L.TREE), TopicHierarchy(nodes=tuple(nodes.values()), root=tree.root)
                      .model_dump(mode="json"))
    atomic_write_jsonl(ctx.output(L.ASSIGNMENTS), [
        TopicAssignment(report_id=t.report_id, title=t.title, date=t.date, industry=t.industry,
                        leaf_topic=f"t{k}", subtree_topic=subtree_for(f"t{k}", t.industry, nodes), reassigned=moved)
        for t, k, moved in zip(kept, tree.topics, tree.reassigned or [False] * len(kept), strict=True)])
    viz = write_html(ctx.dir, tree, nodes, cfg.viz)
    save_model(ctx, tree, cfg.cluster)
    with open(ctx.output(_EMB), "wb") as f:
        np.save(f, emb)
    atomic_write_json(ctx.output(_CLUSTERED), {"n_topics": tree.n_topics, "outlier_share": tree.outlier_share,
                                               "notes": tree.notes, "viz": viz})
    return load_clustered(ctx)


def save_model(ctx: StageContext, tree: TopicTree, cfg: Any) -> None:
    """Save the fitted BERTopic (engine ``bertopic``) to ``topics/bertopic/``; remove one an earlier run left
    when there is none now (the native engine, or a corpus too small for two topics)."""
    path = ctx.output(L.BERTOPIC_DIR + "/")
    if tree.model is None:
        if path.exists():
            shutil.rmtree(path)
        return
    from fincprg.topics import bertopic_engine

    bertopic_engine.save(tree.model, path, bertopic_engine.describe(cfg, tree.reassigned, cfg.by_industry))


def load_clustered(ctx: StageContext) -> dict[str, Any]:
    """The clustering step's results, read back from its files (the same after a resume)."""
    titles = list(L.read_records(ctx.output(L.TITLES), L.TOPICS, L.TITLES))
    assignments = list(L.read_records(ctx.output(L.ASSIGNMENTS), L.TOPICS, L.ASSIGNMENTS))
    by_id = {t.report_id: t for t in titles if t.kept}
    return {"kept": [by_id[a.report_id] for a in assignments], "dropped": [t for t in titles if not t.kept],
            "assignments": assignments, "topics": [int(a.leaf_topic[1:]) for a in assignments],
            "nodes": L.read_topic_tree(ctx.output(L.TREE)).by_id(), "emb": np.load(ctx.output(_EMB)),
            **json.loads(ctx.output(_CLUSTERED).read_text(encoding="utf-8"))}


def estimate_inputs(ctx: StageContext) -> dict[str, Any]:
    """The spec's ``estimate`` hook for ``fincprg estimate``: the clustering step (free and deterministic) and
    the topics the intents step would ask about; it sends nothing."""
    register_companies(ctx.read(L.INGEST, L.REPORTS))
    c = cluster_step(ctx, ctx.config.topics, ctx.config.run.seed)
    return {"inputs": topic_inputs(c["topics"], c["nodes"], c["kept"], c["emb"]), "nodes": c["nodes"],
            "subtree": {a.report_id: a.subtree_topic for a in c["assignments"] if a.subtree_topic},
            "industry": {a.report_id: a.industry for a in c["assignments"]}}


def run(ctx: StageContext) -> dict[str, Any]:
    """Run the topics stage (see the module docstring for inputs and outputs).

    Resumable in two steps: a run killed after clustering starts again at the intents.
    """
    cfg = ctx.config.topics
    if cfg.intents.backend == "llm":
        intent_prompt_config(cfg.intents)  # a bad prompt_file fails now, not after the clustering
    register_companies(ctx.read(L.INGEST, L.REPORTS))
    if ctx.step_done("clustered"):
        c = load_clustered(ctx)
        log.info("topics: resuming after the committed clustering step")
    else:
        c = cluster_step(ctx, cfg, ctx.config.run.seed)
        ctx.commit_step("clustered")
    kept, dropped, nodes, assignments = c["kept"], c["dropped"], c["nodes"], c["assignments"]
    queries, failures, llm_stats = make_queries(topic_inputs(c["topics"], nodes, kept, c["emb"]), ctx)
    atomic_write_jsonl(ctx.output(L.QUERIES), queries)
    atomic_write_jsonl(ctx.output(L.FAILURES), failures)
    # the scratch files (_EMB, _CLUSTERED) stay until the runner has written the manifest: a kill before
    # it resumes from them

    counts: dict[str, Any] = {
        "titles_kept": len(kept),
        "titles_dropped": dict(sorted(Counter(t.reason for t in dropped).items())),
        "industries": dict(Counter(t.industry or "unknown" for t in kept).most_common()),
        "industry_sources": dict(Counter(t.industry_source for t in kept).most_common()),
        "industry_unknown_share": round(sum(t.industry is None for t in kept) / len(kept), 4) if kept else 0.0,
        "topics": c["n_topics"],
        "tree_nodes": len(nodes),
        "outlier_share": round(c["outlier_share"], 4),
        "outliers_reassigned": sum(a.reassigned for a in assignments),
        "subtrees_above_leaf": sum(a.subtree_topic != a.leaf_topic for a in assignments),
        "intents": sum(q.level == "intent" for q in queries),
        "subqueries": sum(q.level == "topic" for q in queries),
        "intent_failures": len(failures),
        # every intent failure is an LLM answer that was not cached: --retry-failed asks it again
        **retry_counts({f.item_id for f in failures}, ctx.previous_failures,
                       retrying=ctx.retry_failed),
        "viz": c["viz"],
    }
    if c["notes"]:
        counts["notes"] = c["notes"]
    if llm_stats:
        counts["llm"] = llm_stats
    log.info("topics: %d titles -> %d topics (%.1f%% outliers), %d intents, %d subqueries",
             len(kept), c["n_topics"], 100 * c["outlier_share"], counts["intents"], counts["subqueries"])
    return counts
