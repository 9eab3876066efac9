"""Gather what the report shows from a build's OUT folder. Every section tolerates missing inputs
(it then says what is missing instead of failing), so a partial build still gets a report."""
from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.config import ExportConfig
from fincprg.errors import InputError
from fincprg.evaluate.data import level_rank, read_qrels
from fincprg.io import read_jsonl
from fincprg.manifest_counts import ordered_levels, ordered_reasons
from fincprg.records import TopicHierarchy
from fincprg.report import svg

log = logging.getLogger(__name__)



def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Rows of ``path``; none when it is missing, and the rows before a damaged line (with a warning)."""
    if not path.is_file():
        return
    try:
        yield from read_jsonl(path)
    except InputError as e:  # a partial report beats none; the warning names file:line
        log.warning("report: %s; the rest of that file is left out", e)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except json.JSONDecodeError:
        log.warning("report: %s is not valid JSON; section skipped", path)
        return None


def _rel(build: L.Build, stage: str, name: str) -> str:
    return build.path(stage, name).relative_to(build.out).as_posix()


def _tree(out: Path) -> TopicHierarchy | None:
    path = L.Build(out).path(L.TOPICS, L.TREE)
    if not path.is_file():
        return None
    try:
        return L.read_topic_tree(path)
    except InputError as e:
        log.warning("report: %s; topic sections skipped", e)
        return None


def clip(text: str | None, n: int) -> str:
    text = text or ""
    return text if len(text) <= n else text[: n - 1] + "…"


def stages(out: Path) -> list[dict[str, Any]]:
    """One row per stage manifest: status and its scalar counts (nested counts are left out)."""
    rows = []
    build = L.Build(out)
    for name in L.STAGE_DIRS:
        m = build.manifest(name)
        if m is None:
            rows.append({"stage": name, "status": "partial" if build.dir(name).is_dir() else "missing", "counts": []})
            continue
        counts = [(k, f"{v:.4g}" if isinstance(v, float) else str(v)) for k, v in (m.get("counts") or {}).items()
                  if isinstance(v, (int, float, str)) and not isinstance(v, bool)]
        rows.append({"stage": name, "status": "complete", "counts": counts})
    return rows


def subset_stats(dataset: Path) -> list[dict[str, Any]]:
    """Per qrels file: queries, pairs, relevant passages per query, average query/passage length."""
    ds = L.Dataset(dataset)
    files = sorted(ds.qrels_dir.glob("*.tsv")) if ds.qrels_dir.is_dir() else []
    if not files:
        return []
    qlen = {r["_id"]: len(r.get("text", "")) for r in _jsonl(ds.queries)}
    plen = {r["_id"]: len(r.get("text", "")) for r in _jsonl(ds.corpus)}
    rows = []
    for f in files:
        try:
            judged = read_qrels(f)
        except InputError as e:
            log.warning("report: %s; subset left out", e)
            continue
        qrels = {q: rel for q, docs in judged.items() if (rel := {d for d, s in docs.items() if s != 0})}
        subset, _, split = f.stem.rpartition("-")
        pairs = sum(len(v) for v in qrels.values())
        pids = {p for v in qrels.values() for p in v}
        ql = [qlen[q] for q in qrels if q in qlen]
        pl = [plen[p] for p in pids if p in plen]
        rows.append({"subset": subset or f.stem, "split": split if subset else "", "queries": len(qrels),
                     "pairs": pairs, "rel_per_query": round(pairs / len(qrels), 2) if qrels else 0,
                     "avg_query_chars": round(sum(ql) / len(ql), 1) if ql else None,
                     "avg_passage_chars": round(sum(pl) / len(pl), 1) if pl else None})
    return rows


def quality(out: Path) -> dict[str, Any] | None:
    """Near-duplicate removal and easiness distributions (per subset, then per level) from the export manifest."""
    counts = (L.Build(out).manifest(L.EXPORT) or {}).get("counts") or {}
    e = counts.get("easiness")
    if not e or "by_subset" not in e:
        return None
    from fincprg.export.beir import SUBSETS

    order = {s: i for i, s in enumerate(SUBSETS)}
    rows = [{"name": name, **d} for name, d in sorted(e["by_subset"].items(), key=lambda kv: order.get(kv[0], 99))
            if (d.get("bigram") or {}).get("n")]
    rows += [{"name": f"level {name}", **d} for name, d in (e.get("by_level") or {}).items()]
    return {"dedup": counts.get("dedup") or None, "rows": rows, "key": "subset / level",
            "measure": e.get("measure"), "max_overlap": e.get("max_overlap"),
            "filtered_total": sum((e.get("filtered") or {}).values())}


def verification(out: Path) -> dict[str, Any] | None:
    """The verify stage's yield per level, drop reasons per level and the first dropped queries of each reason
    (the manifest's examples: the first of dropped.jsonl per reason, without reading that file again)."""
    build = L.Build(out)
    counts = (build.manifest(L.VERIFY) or {}).get("counts") or {}
    if not counts.get("levels"):
        return None
    by_level = counts.get("reasons_by_level") or {}
    reasons = [r for r, _ in ordered_reasons(counts)]
    examples = counts.get("examples") or {}
    return {"levels": [{"level": lv, **c, "reasons": by_level.get(lv, {})} for lv, c in ordered_levels(counts)],
            "reasons": reasons, "examples": [{"reason": r, "rows": examples.get(r, [])} for r in reasons],
            "no_subject": counts.get("passages_without_subject", 0), "source": _rel(build, L.VERIFY, L.DROPPED)}


def histograms(out: Path) -> dict[str, Any]:
    """Score histograms per space from mine/histogram.json (all traversed pairs), else from pairs.jsonl."""
    build = L.Build(out)
    h = build.histogram()
    used = build.used(L.MINE)  # the threshold and scorer the mine stage used, from its manifest
    thr = used.get("threshold")
    if h and h.get("counts"):
        lo, hi = (h.get("range") or [0.0, 1.0])[:2]
        return {"source": f"{_rel(build, L.MINE, L.HISTOGRAM)} (every traversed pair)", "reranker": used.get("reranker", h.get("reranker")),
                "model": used.get("model"), "threshold": thr,
                "charts": [{"space": s, **svg.histogram(c, thr, lo, hi)} for s, c in h["counts"].items()]}
    pairs = list(_jsonl(build.path(L.MINE, L.PAIRS)))
    if not pairs:
        return {}
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * 100)
    for p in pairs:
        counts[p["space"]][min(99, max(0, int(float(p["score"]) * 100)))] += 1
    return {"source": f"{_rel(build, L.MINE, L.PAIRS)} (only pairs kept on disk)", "reranker": used.get("reranker"),
            "model": used.get("model"), "threshold": thr,
            "charts": [{"space": s, **svg.histogram(c, thr)} for s, c in counts.items()]}


def audit(out: Path) -> dict[str, Any] | None:
    s = _json(L.Build(out).audit_dir / L.SUMMARY_JSON)
    if not s or "levels" not in s:
        return None
    levels = [{"level": lv, **r, "chart": svg.fp_fn_bars(r["intervals"])}
              for lv, r in sorted(s["levels"].items(), key=lambda kv: level_rank(kv[0]))]
    return {**s, "level_rows": levels}


def topic_tree(out: Path, max_nodes: int = 2000) -> dict[str, Any] | None:
    """The topic tree as nested dicts ``{id, keywords, industry, size, leaf, children}``."""
    t = _tree(out)
    if t is None or not t.nodes:
        return None
    nodes = t.by_id()
    seen: set[str] = set()

    def build(nid: str, depth: int) -> dict[str, Any] | None:
        n = nodes.get(nid)
        if n is None or nid in seen or len(seen) >= max_nodes:
            return None
        seen.add(nid)
        kids = [c for c in (build(k, depth + 1) for k in n.children) if c]
        return {"id": nid, "keywords": list(n.keywords)[:10], "industry": n.industry,
                "size": n.size, "leaf": n.is_leaf, "children": kids, "depth": depth}

    roots = [t.root] if t.root in nodes else [n.id for n in t.nodes if not n.parent_id]
    return {"roots": [r for r in (build(x, 0) for x in roots) if r], "nodes": len(nodes),
            "leaves": sum(1 for n in t.nodes if n.is_leaf), "truncated": len(seen) >= max_nodes}


def query_trees(out: Path, n: int = 3) -> dict[str, Any]:
    """Sample trees: passage -> passage query -> sentence queries; topic intent -> subqueries."""
    build = L.Build(out)
    queries = list(_jsonl(build.path(L.GENERATE, L.QUERIES)))
    passages = {p["id"]: p["text"] for p in _jsonl(build.path(L.CHUNK, L.PASSAGES))}
    sentences = {s["id"]: s["text"] for s in _jsonl(build.path(L.CHUNK, L.SENTENCES))}
    children: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in queries:
        if q.get("parent_id"):
            children[q["parent_id"]].append(q)
    passage_trees = []
    for q in (q for q in queries if q["level"] == "passage"):
        if len(passage_trees) >= n:
            break
        pid = (q.get("source_ids") or [None])[0]
        passage_trees.append({
            "id": q["id"], "text": q["text"], "passage_id": pid, "passage": clip(passages.get(pid), 600),
            "generator": (q.get("provenance") or {}).get("generator"),
            "sentences": [{"id": c["id"], "text": c["text"],
                           "sentence": clip(sentences.get((c.get("provenance") or {}).get("sentence_id", "")), 200)}
                          for c in children[q["id"]]]})
    tq = list(_jsonl(build.path(L.TOPICS, L.QUERIES)))
    sub: dict[str, list[str]] = defaultdict(list)
    for q in tq:
        if q["level"] == "topic" and q.get("parent_id"):
            sub[q["parent_id"]].append(q["text"])
    tree = _tree(out)
    kw = {t.id: list(t.keywords)[:8] for t in (tree.nodes if tree else ())}
    intents = [{"id": q["id"], "text": q["text"], "topic": (q.get("source_ids") or [""])[0],
                "keywords": kw.get((q.get("source_ids") or [""])[0], []), "subqueries": sub[q["id"]]}
               for q in tq if q["level"] == "intent"][:n]
    return {"passage": passage_trees, "intent": intents}


def mined_examples(out: Path, n: int = 5) -> list[dict[str, Any]]:
    """The top-scoring accepted pairs per space, with their texts."""
    build = L.Build(out)
    texts = {q["id"]: q["text"] for st in (L.GENERATE, L.TOPICS) for q in _jsonl(build.path(st, L.QUERIES))}
    best: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in _jsonl(build.path(L.MINE, L.PAIRS)):
        if p.get("accepted"):
            best[p["space"]].append(p)
    rows = []
    for space, ps in sorted(best.items(), key=lambda kv: level_rank(kv[0])):
        for p in sorted(ps, key=lambda r: -float(r["score"]))[:n]:
            rows.append({"space": space, "score": float(p["score"]), "a": texts.get(p["query_a"], p["query_a"]),
                         "b": texts.get(p["query_b"], p["query_b"])})
    return rows


def backends(out: Path) -> list[dict[str, Any]]:
    """The model (or offline stand-in) behind each label, from the config and the ``used`` the stages recorded."""
    from fincprg.export.card import model_ids, produced_by

    build = L.Build(out)
    manifests = {s: build.manifest(s) or {} for s in L.STAGE_DIRS}
    if not any(manifests.values()):
        return []
    export_cfg = (manifests[L.EXPORT].get("config") or {}).get(L.EXPORT)
    cfg = produced_by({s: m for s, m in manifests.items() if s != L.EXPORT}, ExportConfig.model_validate(export_cfg or {}))
    used = {s: build.used(s) for s in L.STAGE_DIRS}  # what the stages used (a backend's default threshold)
    return [{"role": k, "model": v, "offline": "offline" in v or v.startswith(("bm25", "lsa"))}
            for k, v in model_ids(cfg, used).items()]


def eval_freshness(d: Path, build_hash: str | None) -> dict[str, Any]:
    """Whether an eval folder scored this build's dataset: ``fresh``, ``stale`` or ``unknown``."""
    meta = _json((d if d.is_dir() else d.parent) / L.EVAL_META) or {}
    got = meta.get("dataset_hash")
    if not got or not build_hash:
        return {"status": "unknown", "note": "no dataset hash recorded (results from an older fincprg?)"}
    if got != build_hash:
        return {"status": "stale", "note": f"scored dataset {got}, but this build's dataset is {build_hash}: "
                                           "re-run fincprg eval"}
    return {"status": "fresh", "note": ""}


def eval_tables(dirs: list[Path], build_hash: str | None = None) -> list[dict[str, Any]]:
    """Tables from eval --out folders (results.csv): one per (folder, subset), rows retrievers; each says
    whether it scored this build's dataset (``build_hash``, :meth:`fincprg.layout.Dataset.content_hash`)."""
    from fincprg.evaluate.harness import read_results_table  # loads the retrievers (numpy); only when asked

    tables = []
    for d in dirs:
        f = d / L.RESULTS_CSV if d.is_dir() else d
        if not f.is_file():
            log.warning("report: %s has no %s; eval table skipped", d, L.RESULTS_CSV)
            continue
        metrics, rows = read_results_table(f)
        by_subset: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in rows:
            by_subset[r["subset"]].append({"retriever": r["retriever"], "n": r["n"], "vals": r["vals"]})
        for subset, rows in by_subset.items():
            best = [max((r["vals"][i] for r in rows if r["vals"][i] is not None), default=None)
                    for i in range(len(metrics))]
            tables.append({"source": str(d), "subset": subset, "metrics": metrics, "rows": rows, "best": best,
                           "n": rows[0]["n"] if rows else None, **eval_freshness(d, build_hash)})
    return tables


def eval_dirs(out: Path, given: list[Path] | None) -> list[Path]:
    """--eval folders, else OUT/eval (and OUT/eval/*/) holding a results.csv."""
    if given:
        return list(given)
    base = L.Build(out).eval_dir
    return [p.parent for p in sorted([*base.glob(L.RESULTS_CSV), *base.glob(f"*/{L.RESULTS_CSV}")])]
