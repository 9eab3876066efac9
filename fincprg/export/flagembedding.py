"""FlagEmbedding training file ``train/flagembedding.jsonl``: ``{"query", "pos": [...], "neg": [...]}``.

One line per training-split query with at least one label in the ``all`` subset (sentence,
passage and topic queries; direct and mined labels). ``pos`` holds the texts of its train-split
positives. Negatives come only from passages of training reports (the test reports stay unseen)
and exclude every known positive of the query, whatever its subset, split or provenance.

Every line has ``export.negatives.n`` negatives when the pool allows: when the miner finds fewer
(BM25 scores nothing for a query whose words no passage shares), random training passages fill the
rest. FlagEmbedding 1.4.2's ``AbsEmbedderTrainDataset`` divides by ``len(neg)``, so an empty list
would stop its training; a query for which no passage qualifies at all is left out and counted.
"""
from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fincprg.config import NegativesConfig
from fincprg.export.negatives import mine_negatives
from fincprg.export.tokens import TokenIds
from fincprg.io import atomic_writer


def build_examples(
    query_texts: Mapping[str, str],
    train_qrels: Mapping[str, Mapping[str, int]],
    known_positives: Mapping[str, set[str]],
    passage_texts: Mapping[str, str],
    pool_ids: list[str],
    cfg: NegativesConfig,
    show_progress: bool = False,
    tokens: TokenIds | None = None,
) -> list[dict[str, Any]]:
    """Build the training lines.

    Args:
        query_texts: query id -> text.
        train_qrels: the training labels (``all`` subset, train split).
        known_positives: query id -> every passage id labelled relevant anywhere (exclusion list).
        passage_texts: passage id -> text, for every passage of the corpus.
        pool_ids: passage ids negatives may come from (the training reports' passages).
        cfg: ``export.negatives``.
        show_progress: progress bars while mining negatives (minutes at paper scale).
        tokens: passages already cut by jieba (BM25 negatives), see :mod:`fincprg.export.tokens`.
    """
    qids = sorted(q for q, rels in train_qrels.items() if any(v > 0 for v in rels.values()))
    index = {pid: i for i, pid in enumerate(pool_ids)}
    pool_texts = [passage_texts[p] for p in pool_ids]
    excl_idx = [{index[p] for p in known_positives.get(q, set()) | set(train_qrels[q]) if p in index}
                for q in qids]
    excl_txt = [{passage_texts[p] for p in known_positives.get(q, set()) if p in passage_texts} for q in qids]
    negs = mine_negatives([query_texts[q] for q in qids], excl_idx, pool_texts, method=cfg.method, n=cfg.n,
                          positive_texts=excl_txt, model=cfg.model, batch_size=cfg.batch_size, device=cfg.device,
                          show_progress=show_progress, cfg=cfg, tokens=tokens)
    out = []
    for q, neg, excl, ptx in zip(qids, negs, excl_idx, excl_txt, strict=True):
        mined = len(neg)
        neg = fill_negatives(q, list(neg), excl, ptx, pool_texts, cfg.n)
        if neg:  # an empty list breaks FlagEmbedding; negatives_summary counts the dropped queries
            out.append({"query": query_texts[q],
                        "pos": [passage_texts[p] for p in sorted(train_qrels[q]) if train_qrels[q][p] > 0],
                        "neg": [pool_texts[j] for j in neg], "mined": mined})
        else:
            out.append({"query": query_texts[q], "pos": [], "neg": [], "mined": 0})
    return out


def fill_negatives(qid: str, chosen: list[int], excluded: set[int], excluded_texts: set[str], pool: list[str],
                   n: int) -> list[int]:
    """Top ``chosen`` up to ``n`` with random pool passages that are not positives (or equal to one).

    The draw is seeded by the query id, so a rebuild writes the same file whatever the query order.
    """
    if len(chosen) >= n or not pool:
        return chosen
    rng = random.Random(int(hashlib.sha1(qid.encode("utf-8")).hexdigest()[:16], 16))
    bad = excluded_texts | {pool[j] for j in excluded}
    taken = {pool[j] for j in chosen}

    def take(j: int) -> None:
        if j not in excluded and pool[j] not in bad and pool[j] not in taken:
            chosen.append(j)
            taken.add(pool[j])

    for _ in range(20 * n):  # random draws: cheap when the pool is large next to the exclusions
        if len(chosen) >= n:
            return chosen
        take(rng.randrange(len(pool)))
    order = list(range(len(pool)))  # a small or crowded pool: walk all of it once, in random order
    rng.shuffle(order)
    for j in order:
        if len(chosen) >= n:
            break
        take(j)
    return chosen


def negatives_summary(examples: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """What the dataset card says about the negatives: per-row counts, how many were mined, dropped rows."""
    kept = [e for e in examples if e["neg"]]
    per_row = sorted(len(e["neg"]) for e in kept)
    mined = sum(min(e.get("mined", len(e["neg"])), len(e["neg"])) for e in kept)
    total = sum(per_row)
    return {"rows": len(kept), "dropped": len(examples) - len(kept), "n": n,
            "min": per_row[0] if per_row else 0, "max": per_row[-1] if per_row else 0,
            "full_rows": sum(1 for k in per_row if k >= n), "mined": mined, "random": total - mined}


def write_flagembedding(path: Path, examples: Iterable[dict[str, Any]]) -> int:
    """Write the examples atomically as JSONL, streaming (returns the line count).

    Lines inline passage texts, so at paper scale the file is ~2 GB: it is written line by line
    to a temp file and renamed, never joined in memory.
    """
    n = 0
    with atomic_writer(path) as write:  # a failed write names the file and leaves no temp file behind
        for ex in examples:
            if not ex["neg"]:
                continue  # FlagEmbedding divides by len(neg); negatives_summary reports these
            write(json.dumps({"query": ex["query"], "pos": ex["pos"], "neg": ex["neg"]}, ensure_ascii=False) + "\n")
            n += 1
    return n
