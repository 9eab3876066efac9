"""FlagEmbedding training file ``train/flagembedding.jsonl``: ``{"query", "pos": [...], "neg": [...]}``.

One line per training-split query with at least one label in the ``all`` subset (sentence,
passage and topic queries; direct and mined labels). ``pos`` holds the texts of its train-split
positives. Negatives come only from passages of training reports (the test reports stay unseen)
and exclude every known positive of the query, whatever its subset, split or provenance.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fincprg.config import NegativesConfig
from fincprg.export.negatives import mine_negatives


def build_examples(
    query_texts: Mapping[str, str],
    train_qrels: Mapping[str, Mapping[str, int]],
    known_positives: Mapping[str, set[str]],
    passage_texts: Mapping[str, str],
    pool_ids: list[str],
    cfg: NegativesConfig,
    show_progress: bool = False,
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
    """
    qids = sorted(q for q, rels in train_qrels.items() if any(v > 0 for v in rels.values()))
    index = {pid: i for i, pid in enumerate(pool_ids)}
    pool_texts = [passage_texts[p] for p in pool_ids]
    excl_idx = [{index[p] for p in known_positives.get(q, set()) | set(train_qrels[q]) if p in index}
                for q in qids]
    excl_txt = [{passage_texts[p] for p in known_positives.get(q, set()) if p in passage_texts} for q in qids]
    negs = mine_negatives([query_texts[q] for q in qids], excl_idx, pool_texts, method=cfg.method, n=cfg.n,
                          positive_texts=excl_txt, model=cfg.model, batch_size=cfg.batch_size, device=cfg.device,
                          show_progress=show_progress, cfg=cfg)
    return [
        {"query": query_texts[q],
         "pos": [passage_texts[p] for p in sorted(train_qrels[q]) if train_qrels[q][p] > 0],
         "neg": [pool_texts[j] for j in neg]}
        for q, neg in zip(qids, negs, strict=True)
    ]


def write_flagembedding(path: Path, examples: Iterable[dict[str, Any]]) -> int:
    """Write the examples atomically as JSONL, streaming (returns the line count).

    Lines inline passage texts, so at paper scale the file is ~2 GB: it is written line by line
    to a temp file and renamed, never joined in memory.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    n = 0
    with open(tmp, "w", encoding="utf-8") as f:
        for ex in examples:
            f.write(json.dumps({"query": ex["query"], "pos": ex["pos"], "neg": ex["neg"]}, ensure_ascii=False))
            f.write("\n")
            n += 1
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return n
