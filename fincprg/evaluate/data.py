"""Load any BEIR-layout folder: corpus.jsonl, queries.jsonl, qrels/<name>.tsv.

Two qrels naming schemes are understood:

* fincprg exports: ``qrels/<subset>-<split>.tsv`` (subset in sentence, sentence-mined, passage,
  passage-mined, topic, all);
* plain BEIR: ``qrels/<split>.tsv``, which is treated as the subset ``all``.
"""
from __future__ import annotations

import csv
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from fincprg import layout as L
from fincprg.errors import InputError
from fincprg.io import read_jsonl

log = logging.getLogger(__name__)

Corpus = dict[str, dict]
Queries = dict[str, str]
Qrels = dict[str, dict[str, int]]

LEVELS = ("sentence", "passage", "report", "topic")
"""Query levels (traversal spaces) in display order."""


def level_rank(level: str) -> int:
    """Sort key putting levels in :data:`LEVELS` order, unknown ones last."""
    return LEVELS.index(level) if level in LEVELS else len(LEVELS)


@dataclass
class BeirDataset:
    """A BEIR dataset in memory, with fincprg's optional extra fields kept aside.

    Attributes:
        corpus: doc id -> {"title", "text", and any extra field such as "report_id"}.
        queries: query id -> text (every query in queries.jsonl).
        query_meta: query id -> the other fields of its queries.jsonl line (report_id, level, ...).
        qrels: subset name -> qrels of that subset for the requested split.
    """

    path: Path
    corpus: Corpus
    queries: Queries
    query_meta: dict[str, dict] = field(default_factory=dict)
    qrels: dict[str, Qrels] = field(default_factory=dict)


class _BeirLine(BaseModel):
    """One corpus.jsonl / queries.jsonl line: an ``_id`` plus any other fields, kept as they are."""

    model_config = ConfigDict(extra="allow")
    id: str | int = Field(alias="_id")


def _read_beir_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        raise InputError(f"{path} is missing; a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/*.tsv")
    # read_jsonl names file:line for bad JSON and for a line without '_id'
    return [{"_id": r.id, **(r.model_extra or {})} for r in read_jsonl(path, _BeirLine)]


def read_qrels(path: Path) -> Qrels:
    """Read a BEIR qrels TSV (header ``query-id corpus-id score``; the header is optional)."""
    qrels: Qrels = {}
    with open(path, encoding="utf-8", newline="") as f:
        for i, row in enumerate(csv.reader(f, delimiter="\t"), 1):
            if not row or (i == 1 and row[0] == "query-id"):
                continue
            if len(row) < 3:
                raise InputError(f"{path}:{i}: expected 'query-id<TAB>corpus-id<TAB>score', got {row!r}")
            try:
                score = int(float(row[2]))
            except ValueError as e:
                raise InputError(f"{path}:{i}: score {row[2]!r} is not a number") from e
            qrels.setdefault(row[0], {})[row[1]] = score
    return qrels


def merge_qrels(subsets: Iterable[Qrels]) -> Qrels:
    """Several subsets' qrels in one (the highest grade of a pair wins)."""
    out: Qrels = {}
    for qr in subsets:
        for q, docs in qr.items():
            row = out.setdefault(q, {})
            for d, rel in docs.items():
                row[d] = max(rel, row.get(d, rel))
    return out


# Paper order (Tables 2-3); unknown subsets follow alphabetically.
SUBSET_ORDER = ("sentence", "sentence-mined", "passage", "passage-mined", "report", "topic", "all")


def available_subsets(folder: Path, split: str = "test") -> dict[str, Path]:
    """Map subset name -> qrels file for ``split`` (``all`` for a plain ``<split>.tsv``), in paper order."""
    qdir = L.Dataset(Path(folder)).qrels_dir
    if not qdir.is_dir():
        raise InputError(f"{qdir} is missing; a BEIR folder holds qrels/<split>.tsv or qrels/<subset>-<split>.tsv")
    found: dict[str, Path] = {}
    for p in sorted(qdir.glob("*.tsv")):
        stem = p.stem
        if stem == split:
            found.setdefault("all", p)
        elif stem.endswith(f"-{split}"):
            found[stem[: -len(split) - 1]] = p
    rank = {s: i for i, s in enumerate(SUBSET_ORDER)}
    return dict(sorted(found.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def load_beir(folder: str | Path, *, split: str = "test", subsets: list[str] | None = None) -> BeirDataset:
    """Load a BEIR folder.

    Args:
        folder: the dataset folder.
        split: qrels split (``test``, ``dev``, ``train``).
        subsets: subsets to load (default: every subset the folder has for ``split``).

    Raises:
        InputError: missing files, bad lines, or an unknown subset (the message lists the known ones).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"dataset folder {folder} does not exist; pass a BEIR folder such as runs/demo/dataset")
    files = available_subsets(folder, split)
    if not files:
        raise InputError(f"{L.Dataset(folder).qrels_dir} has no {split}.tsv or <subset>-{split}.tsv; try --split")
    wanted = subsets or list(files)
    unknown = [s for s in wanted if s not in files]
    if unknown:
        raise InputError(f"subset(s) {', '.join(unknown)} not in {L.Dataset(folder).qrels_dir} for split {split!r}; "
                         f"available: {', '.join(files)}")
    corpus: Corpus = {}
    for row in _read_beir_jsonl(L.Dataset(folder).corpus):
        doc = {k: v for k, v in row.items() if k != "_id"}
        doc.setdefault("title", "")
        doc.setdefault("text", "")
        corpus[str(row["_id"])] = doc
    queries: Queries = {}
    meta: dict[str, dict] = {}
    for row in _read_beir_jsonl(L.Dataset(folder).queries):
        qid = str(row["_id"])
        queries[qid] = str(row.get("text", ""))
        meta[qid] = {k: v for k, v in row.items() if k not in ("_id", "text")}
    qrels = {s: read_qrels(files[s]) for s in wanted}
    if not subsets:  # by default, leave out subsets with no queries in this split (e.g. no topic test queries)
        empty = [s for s, qr in qrels.items() if not qr]
        for s in empty:
            log.warning("subset %s has no %s queries; left out", s, split)
            del qrels[s]
        if not qrels:
            raise InputError(f"every qrels file for split {split!r} in {L.Dataset(folder).qrels_dir} is empty")
    for s, qr in qrels.items():
        missing = [q for q in qr if q not in queries]
        if missing:
            log.warning("subset %s: %d qrels queries are not in queries.jsonl (e.g. %s); they score 0",
                        s, len(missing), missing[0])
    log.info("loaded %s: %d docs, %d queries, subsets %s", folder, len(corpus), len(queries), ", ".join(wanted))
    return BeirDataset(folder, corpus, queries, meta, qrels)
