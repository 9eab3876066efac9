"""Training and evaluation examples from a fincprg (or any BEIR) dataset folder.

Positives come from ``qrels/<subset>-train.tsv`` (the BEIR export, read by
:func:`fincprg.evaluate.data.load_beir`); hard negatives from ``train/flagembedding.jsonl``, joined
on the query text. Passages are embedded as title + text, exactly as ``fincprg eval``'s dense
retriever embeds them, so training and evaluation see the same strings.
"""
from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

from fincprg import layout as L
from fincprg.errors import InputError
from fincprg.evaluate.data import load_beir
from fincprg.evaluate.retrievers.base import doc_text

log = logging.getLogger(__name__)


@dataclass
class Pairs:
    """(query, positive passage) training pairs plus what is needed to find negatives.

    Attributes:
        queries: query text per pair.
        positives: passage text per pair.
        pos_ids: passage id per pair.
        pool: passage id -> text of every passage a random negative may come from (train-split passages).
        known: query text -> ids of every passage labelled relevant for it (never a negative).
        by_text: passage text -> title + text, to embed the exported negatives (which hold the bare
            text) the way positives are embedded; otherwise the title alone would tell them apart.
        report_of: passage id -> its report id (every passage of the dataset that has one).
        bare: passage id -> its text without the report title (what a title query is matched against: the
            title inside the passage would answer it verbatim).
        titles: report id -> its title, where the dataset gives one (the human-written proxies, issue 49).
        plain: queries whose rows use bare passages (report titles, :mod:`fincprg.train.mix`).
        crops: queries that are a sentence cropped out of their positive (:mod:`fincprg.train.mix`).
    """

    queries: list[str] = field(default_factory=list)
    positives: list[str] = field(default_factory=list)
    pos_ids: list[str] = field(default_factory=list)
    pool: dict[str, str] = field(default_factory=dict)
    known: dict[str, set[str]] = field(default_factory=dict)
    by_text: dict[str, str] = field(default_factory=dict)
    report_of: dict[str, str] = field(default_factory=dict)
    bare: dict[str, str] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    plain: set[str] = field(default_factory=set)
    crops: set[str] = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.queries)

    def head(self, n: int) -> "Pairs":
        """The first ``n`` pairs (the pairs are shuffled by the seed, so this is a seeded sample)."""
        from dataclasses import replace

        return replace(self, queries=self.queries[:n], positives=self.positives[:n], pos_ids=self.pos_ids[:n])

    def select(self, keep: list[int]) -> "Pairs":
        """The pairs at indices ``keep``, in that order (the pool and the labels unchanged)."""
        from dataclasses import replace

        return replace(self, queries=[self.queries[i] for i in keep], positives=[self.positives[i] for i in keep],
                       pos_ids=[self.pos_ids[i] for i in keep])

    def text(self, pid: str, query: str) -> str:
        """Passage ``pid`` as a row of ``query`` shows it: bare for a title query, title + text otherwise."""
        return self.bare.get(pid, self.pool[pid]) if query in self.plain else self.pool[pid]

    def untitled(self, text: str) -> str:
        """``text`` (title + text) without its leading report title, for a title query's negatives."""
        head, sep, rest = text.partition("\n")
        return rest if sep and head in self._title_set() else text

    def _title_set(self) -> set[str]:
        if "_tset" not in self.__dict__:  # once per Pairs: it is read for every negative of a title query
            self.__dict__["_tset"] = {t.strip() for t in self.titles.values()}
        return self.__dict__["_tset"]

    def kinds(self) -> dict[str, int]:
        """Pairs per query source: generated labels, report titles, cropped sentences (the run records it)."""
        out = {"generated": 0, "titles": 0, "crops": 0}
        for q in self.queries:
            out["titles" if q in self.plain else "crops" if q in self.crops else "generated"] += 1
        return out


def load_pairs(dataset: str | Path, subsets: list[str], *, split: str = "train", max_pairs: int | None = None,
               seed: int = 42) -> Pairs:
    """Every (query, relevant passage) pair of ``subsets`` in ``split``, deduplicated and shuffled.

    Args:
        dataset: BEIR folder (``fincprg build``'s ``OUT/dataset``).
        subsets: qrels subsets to train on (``all``, ``passage-mined``...).
        max_pairs: keep a seeded random sample of this many pairs (a CPU budget).
    """
    ds = load_beir(dataset, split=split, subsets=subsets)
    seen: set[tuple[str, str]] = set()
    out = Pairs()
    for qrels in ds.qrels.values():
        for qid, docs in sorted(qrels.items()):
            q = ds.queries.get(qid, "").strip()
            for pid, rel in sorted(docs.items()):
                if rel <= 0 or not q or pid not in ds.corpus or (q, pid) in seen:
                    continue
                seen.add((q, pid))
                out.known.setdefault(q, set()).add(pid)
                out.queries.append(q)
                out.pos_ids.append(pid)
                out.positives.append(doc_text(ds.corpus[pid]))
    if not out.queries:
        raise InputError(f"{dataset}: subsets {', '.join(subsets)} have no labelled {split} pairs; "
                         "pick another --subset (see the dataset card's statistics)")
    order = list(range(len(out.queries)))
    random.Random(seed).shuffle(order)
    if max_pairs is not None and max_pairs < len(order):
        log.info("train: sampled %d of %d pairs (--max-pairs)", max_pairs, len(order))
        order = order[:max_pairs]
    out.queries = [out.queries[i] for i in order]
    out.positives = [out.positives[i] for i in order]
    out.pos_ids = [out.pos_ids[i] for i in order]
    train_reports = {ds.corpus[p].get("report_id") for p in out.pos_ids}
    # random negatives come from the training reports only, like the exported hard negatives
    out.pool = {pid: doc_text(d) for pid, d in ds.corpus.items()
                if d.get("report_id") is None or d.get("report_id") in train_reports}
    out.by_text = {str(d.get("text", "")): doc_text(d) for d in ds.corpus.values()}
    out.report_of = {pid: str(d["report_id"]) for pid, d in ds.corpus.items() if d.get("report_id")}
    out.bare = {pid: str(d.get("text", "")).strip() for pid, d in ds.corpus.items() if pid in out.pool}
    for d in ds.corpus.values():
        title = str(d.get("title") or "").strip()
        if title and d.get("report_id"):
            out.titles[str(d["report_id"])] = title
    return out


def read_hard_negatives(dataset: str | Path) -> dict[str, list[str]]:
    """query text -> hard-negative passage texts, from ``train/flagembedding.jsonl``."""
    path = L.Dataset(Path(dataset)).train_file
    if not path.exists():
        raise InputError(f"{path} is missing; the mnrl loss trains on the exported hard negatives. Rebuild with "
                         "export.flagembedding: true, or use --loss cosent")
    out: dict[str, list[str]] = {}
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                q, neg = row["query"], row["neg"]
            except (json.JSONDecodeError, KeyError, TypeError) as e:
                raise InputError(f"{path}:{i}: expected {{'query', 'pos', 'neg'}} JSON ({e})") from e
            out.setdefault(q, []).extend(n for n in neg if n not in out.get(q, []))
    return out


def _random_negatives(pairs: Pairs, i: int, k: int, rng: random.Random, ids: list[str]) -> list[str]:
    q = pairs.queries[i]
    known = pairs.known.get(q, set())
    pos_text = pairs.positives[i]
    chosen: list[str] = []
    for _ in range(50 * k):  # the pool is large next to k; give up rather than loop on a tiny pool
        if len(chosen) >= k:
            break
        pid = ids[rng.randrange(len(ids))]
        text = pairs.text(pid, q)
        if pid not in known and text != pos_text and text not in chosen:
            chosen.append(text)
    return chosen


def cosent_rows(pairs: Pairs, negatives_per_pair: int = 1, seed: int = 42) -> dict[str, list]:
    """CoSENT columns ``sentence1, sentence2, score``: each positive pair scores 1.0, and each query
    also meets ``negatives_per_pair`` random training passages that are not its positives, scored 0.0
    (CoSENT ranks pairs by label, so a batch needs both; the paper's setting has no hard negatives)."""
    rng = random.Random(seed)
    ids = sorted(pairs.pool)
    s1: list[str] = []
    s2: list[str] = []
    score: list[float] = []
    for i, q in enumerate(pairs.queries):
        s1.append(q)
        s2.append(pairs.positives[i])
        score.append(1.0)
        for neg in _random_negatives(pairs, i, negatives_per_pair, rng, ids):
            s1.append(q)
            s2.append(neg)
            score.append(0.0)
    return {"sentence1": s1, "sentence2": s2, "score": score}


def mnrl_rows(pairs: Pairs, hard: dict[str, list[str]], negatives_per_pair: int = 1,
              seed: int = 42) -> tuple[dict[str, list], dict[str, int]]:
    """MultipleNegativesRanking columns ``anchor, positive, negative_1..k``.

    Negatives are the query's exported hard negatives (cycled through its pairs, so two pairs of one
    query see different ones); a query with fewer than ``k`` gets random training passages for the
    rest. Every row has the same number of columns, as the loss requires.

    Returns:
        (columns, {"hard": n, "random": n}) — where the negatives came from.
    """
    rng = random.Random(seed)
    ids = sorted(pairs.pool)
    cols: dict[str, list] = {"anchor": [], "positive": []}
    for j in range(negatives_per_pair):
        cols[f"negative_{j + 1}"] = []
    used: dict[str, int] = {}
    counts = {"hard": 0, "random": 0}
    for i, q in enumerate(pairs.queries):
        # exported negatives are bare texts, embedded with their title; a title query's stay bare
        pool = [pairs.untitled(pairs.by_text.get(n, n)) if q in pairs.plain else pairs.by_text.get(n, n)
                for n in hard.get(q, [])]
        pool = [n for n in pool if n != pairs.positives[i]]
        start = used.get(q, 0)
        negs = [pool[(start + j) % len(pool)] for j in range(min(negatives_per_pair, len(pool)))]
        used[q] = start + len(negs)
        counts["hard"] += len(negs)
        if len(negs) < negatives_per_pair:
            fill = _random_negatives(pairs, i, negatives_per_pair - len(negs), rng, ids)
            counts["random"] += len(fill)
            negs += fill
        if len(negs) < negatives_per_pair:
            continue  # a pool with nothing left to offer: skip the pair rather than pad with a positive
        cols["anchor"].append(q)
        cols["positive"].append(pairs.positives[i])
        for j, n in enumerate(negs):
            cols[f"negative_{j + 1}"].append(n)
    return cols, counts


def ir_eval_data(dataset: str | Path, subsets: list[str] | None, split: str = "test"
                 ) -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    """(queries, corpus, relevant_docs) for sentence-transformers' ``InformationRetrievalEvaluator``:
    the ``split`` labels of ``subsets`` (default: ``all`` when present), passages as title + text."""
    ds = load_beir(dataset, split=split, subsets=subsets or None)
    names = subsets or (["all"] if "all" in ds.qrels else list(ds.qrels))
    rel: dict[str, set[str]] = {}
    for s in names:
        for q, docs in ds.qrels.get(s, {}).items():
            rel.setdefault(q, set()).update(d for d, r in docs.items() if r > 0)
    queries = {q: ds.queries[q] for q in rel if q in ds.queries}
    corpus = {d: doc_text(doc) for d, doc in ds.corpus.items()}
    return queries, corpus, {q: r for q, r in rel.items() if q in queries and r}
