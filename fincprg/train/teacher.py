"""Teacher rankings for distillation (issue 49): a retriever ranks each training query's top K passages once.

The teacher is any ``fincprg eval`` retriever SPEC (``bm25``, ``hybrid:0.75:dense:MODEL``, ``rerank:…``): the
student then learns its ranking (:mod:`fincprg.train.distill`). A hybrid of BM25 and the base model beats the base
alone on held-out human queries, so imitating it carries signal the contrastive labels lack.

Scores are cached in ``OUT/teacher/<key>.jsonl``, one line per query, appended and fsynced per batch: a killed run
resumes after its last batch, and a second run with the same teacher, K and candidate passages fits nothing. The
key hashes the SPEC, K and the candidate passages (ids and texts).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger(__name__)

Ranking = dict[str, float]  # passage id -> teacher score, the query's top K
BATCH = 64  # queries per search call and per committed cache batch


def cache_key(spec: str, k: int, corpus: dict[str, dict]) -> str:
    h = hashlib.sha256(f"{spec}\n{k}\n".encode())
    for pid in sorted(corpus):
        d = corpus[pid]
        h.update(f"{pid}\t{d.get('title', '')}\t{d.get('text', '')}\n".encode())
    return h.hexdigest()[:16]


def query_id(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _read_cache(path: Path) -> dict[str, Ranking]:
    """The whole lines of a cache file; a line cut by a kill is cut off the file (its query is ranked again and
    appended after the last whole line)."""
    done: dict[str, Ranking] = {}
    if not path.exists():
        return done
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(path, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                row = json.loads(line)
                done[row["qid"]] = {str(p): float(s) for p, s in row["ranking"]}
            except (json.JSONDecodeError, KeyError, TypeError, ValueError):
                continue
    return done


def rank(queries: Iterable[str], corpus: dict[str, dict], spec: str, k: int, cache_dir: Path, *,
         show_progress: bool = True) -> dict[str, Ranking]:
    """query text -> its teacher ranking (the top ``k`` of ``corpus``), computed once per (spec, k, corpus).

    Args:
        queries: training query texts (duplicates are ranked once).
        corpus: the candidate passages, id -> {"title", "text", ...} (BEIR), e.g. the training reports' passages.
        spec: a ``fincprg eval`` retriever SPEC.
        cache_dir: where ``<key>.jsonl`` is kept (``OUT/teacher``).
    """
    from tqdm.auto import tqdm

    from fincprg.evaluate.retriever_specs import build

    texts = sorted(set(queries))
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"{cache_key(spec, k, corpus)}.jsonl"
    done = _read_cache(path)
    todo = [t for t in texts if query_id(t) not in done]
    if todo:
        log.info("train: teacher %s ranks %d queries (%d cached) over %d passages", spec, len(todo),
                 len(texts) - len(todo), len(corpus))
        teacher = build(spec, show_progress=show_progress)
        teacher.fit(corpus)
        bar = tqdm(total=len(todo), desc=f"teacher {spec}", unit="q", disable=not show_progress)
        with open(path, "a", encoding="utf-8") as f:
            for i in range(0, len(todo), BATCH):
                batch = {query_id(t): t for t in todo[i:i + BATCH]}
                res = teacher.search(batch, k)
                for qid in batch:
                    ranking = sorted(res.get(qid, {}).items(), key=lambda x: (-x[1], x[0]))[:k]
                    f.write(json.dumps({"qid": qid, "ranking": ranking}, ensure_ascii=False) + "\n")
                    done[qid] = dict(ranking)
                f.flush()
                os.fsync(f.fileno())
                bar.update(len(batch))
        bar.close()
    return {t: done[query_id(t)] for t in texts}
