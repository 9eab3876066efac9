"""Stage ``topics``: industry + title + time clustering, topic intents/subqueries, industry subtrees.

Input records: ``ingest/reports.jsonl`` (Report: title, date, industry, company).

Output records (``OUT/topics/``, written atomically: this is a global stage):

* ``titles.jsonl``: one ``Title`` per report, kept or dropped (reason ``empty``/``too_short``/
  ``duplicate``), with the CITIC industry of kept titles and where it came from
  (``metadata`` = Report.industry mapped to CITIC, ``company`` = another report's metadata for the
  same company, else the classifier's name);
* ``tree.json``: ``{"nodes": [Topic...], "root": id}`` with dominant industries;
* ``assignments.jsonl``: ``{report_id, title, date, industry, leaf_topic, subtree_topic}``;
* ``queries.jsonl``: intent (``qi:``) and topic-level (``qt:``) Query records;
* ``failures.jsonl``: topics whose intents could not be generated (LLM backend);
* ``topics.html``, ``hierarchy.html``: visualisations.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import numpy as np

from fincprg.finance import register_companies
from fincprg.finance.industries import CITIC_INDUSTRIES, to_citic
from fincprg.pipeline.io import atomic_write_json, atomic_write_jsonl
from fincprg.records import Failure, Query, Report
from fincprg.topics.classify import StockTable, company_map, make_classifier
from fincprg.topics.cluster import TopicTree, cluster_titles
from fincprg.topics.embed import make_embedder
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


def label_industries(titles: list[Title], reports: list[Report], cfg: Any) -> tuple[list[Title], Any]:
    """Fill ``industry``/``industry_source``: metadata, the stock table, company metadata, the classifier."""
    companies = company_map([(r.company, r.industry) for r in reports])
    classifier = make_classifier(cfg.classifier, companies)
    stocks = StockTable(cfg.classifier.stock_table) if cfg.classifier.stock_table else None
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
    # every embedder returns L2-normalised float32 rows (fincprg.topics.embed), so no second pass here
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


def topic_inputs(tree: TopicTree, nodes: dict, titles: list[Title], emb: np.ndarray) -> list[TopicInput]:
    """Leaf topics (not outliers) with titles ranked by cosine to the topic centroid."""
    members: dict[int, list[int]] = {}
    for i, k in enumerate(tree.topics):
        members.setdefault(k, []).append(i)
    out = []
    for k in sorted(set(tree.topics) - {-1}):
        idx = members[k]
        sub = emb[idx]
        centroid = sub.mean(axis=0)
        sims = sub @ centroid / (np.linalg.norm(sub, axis=1) * (np.linalg.norm(centroid) or 1.0) + 1e-12)
        order = [idx[j] for j in sorted(range(len(idx)), key=lambda j: (-round(float(sims[j]), 6), j))]
        tid = f"t{k}"
        out.append(TopicInput(topic_id=tid, keywords=tuple(nodes[tid].keywords),
                              titles=tuple(titles[i].title for i in order), industry=nodes[tid].industry,
                              dates=tuple(titles[i].date for i in idx if titles[i].date is not None)))
    return out


def make_queries(inputs: list[TopicInput], ctx: Any) -> tuple[list[Query], list[Failure], dict[str, Any]]:
    cfg = ctx.config.topics.intents
    queries: list[Query] = []
    if cfg.backend == "llm":
        done, failures, stats = llm_intents(inputs, cfg, ctx.config.llm, ctx.cache_dir)
        for t in inputs:
            if t.topic_id in done:
                prov = {"generator": "llm", "template": stats["template"], "version": stats["version"],
                        "model": ctx.config.llm.model}
                queries.extend(to_queries(t.topic_id, done[t.topic_id], prov))
        return queries, failures, {k: v for k, v in stats.items() if k not in ("template", "version")}
    for t in inputs:
        intents = template_intents(t, max_subqueries=cfg.max_subqueries)
        prov = {"generator": "templates", "template": TEMPLATE_ID, "version": TEMPLATE_VERSION,
                "keywords": list(t.keywords[:3]), "industry": t.industry, "period": period_label(t.dates)}
        queries.extend(to_queries(t.topic_id, intents, prov))
    return queries, [], {}


def run(ctx: Any) -> dict[str, Any]:
    """Run the topics stage (see the module docstring for inputs and outputs)."""
    from fincprg.topics.viz import write_html

    cfg = ctx.config.topics
    seed = ctx.config.run.seed
    reports = list(ctx.read("ingest", "reports.jsonl", Report))
    register_companies(reports)
    kept, dropped = select_titles(reports, cfg.min_title_chars)
    kept, classifier = label_industries(kept, reports, cfg)
    order = {r.id: i for i, r in enumerate(reports)}
    all_titles = sorted([*kept, *dropped], key=lambda t: order[t.report_id])
    atomic_write_jsonl(ctx.dir / "titles.jsonl", all_titles)

    if kept:
        emb = embed_titles(kept, cfg, seed, classifier, progress=ctx.progress)
        log.info("topics: clustering %d titles (BERTopic + HDBSCAN)...", len(kept))
        tree = cluster_titles([t.title for t in kept], emb, cfg.cluster, seed=seed)
    else:
        emb = np.zeros((0, 1), dtype=np.float32)
        tree = TopicTree([], {"t0": []}, {"t0": None}, {}, "t0", notes=["no titles"])
    industries = [t.industry for t in kept]
    nodes = build_nodes(tree, [t.report_id for t in kept], industries, cfg.dominance)
    atomic_write_json(ctx.dir / "tree.json", {"nodes": [n.model_dump(mode="json") for n in nodes.values()],
                                              "root": tree.root})
    assignments = []
    for t, k in zip(kept, tree.topics, strict=True):
        leaf = f"t{k}"
        assignments.append({"report_id": t.report_id, "title": t.title,
                            "date": t.date.isoformat() if t.date else None, "industry": t.industry,
                            "leaf_topic": leaf, "subtree_topic": subtree_for(leaf, t.industry, nodes)})
    atomic_write_jsonl(ctx.dir / "assignments.jsonl", assignments)

    queries, failures, llm_stats = make_queries(topic_inputs(tree, nodes, kept, emb), ctx)
    atomic_write_jsonl(ctx.dir / "queries.jsonl", queries)
    atomic_write_jsonl(ctx.dir / "failures.jsonl", failures)
    viz = write_html(ctx.dir, tree, nodes, cfg.viz)

    counts: dict[str, Any] = {
        "titles_kept": len(kept),
        "titles_dropped": dict(sorted(Counter(t.reason for t in dropped).items())),
        "industries": dict(Counter(t.industry or "unknown" for t in kept).most_common()),
        "industry_sources": dict(Counter(t.industry_source for t in kept).most_common()),
        "industry_unknown_share": round(sum(t.industry is None for t in kept) / len(kept), 4) if kept else 0.0,
        "topics": tree.n_topics,
        "tree_nodes": len(nodes),
        "outlier_share": round(tree.outlier_share, 4),
        "subtrees_above_leaf": sum(a["subtree_topic"] != a["leaf_topic"] for a in assignments),
        "intents": sum(q.level == "intent" for q in queries),
        "subqueries": sum(q.level == "topic" for q in queries),
        "intent_failures": len(failures),
        "viz": viz,
    }
    if tree.notes:
        counts["notes"] = tree.notes
    if llm_stats:
        counts["llm"] = llm_stats
    log.info("topics: %d titles -> %d topics (%.1f%% outliers), %d intents, %d subqueries",
             len(kept), tree.n_topics, 100 * tree.outlier_share, counts["intents"], counts["subqueries"])
    return counts
