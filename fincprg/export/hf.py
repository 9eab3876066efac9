"""HuggingFace ``datasets`` layout under ``OUT/dataset/hf/`` (MTEB-style configs).

```
hf/README.md                         dataset card with YAML ``configs:`` front matter
hf/corpus.parquet                    config "corpus", split "corpus"
hf/queries.parquet                   config "queries", split "queries" (provenance as a JSON string)
hf/qrels/<subset>/<split>.parquet    config "<subset>", splits "train" and "test"
```

MTEB 2.x reads a retrieval dataset through ``RetrievalDatasetLoader``
(mteb/abstasks/retrieval_dataset_loaders.py): with no subset it loads the qrels from config
``default`` (else ``qrels``), the corpus from ``corpus`` and the queries from ``queries``; with
subset ``X`` (a task's ``hf_subsets``) from ``X-qrels``, ``X-corpus`` and ``X-queries``. So the
front matter also declares ``default`` (the ``all`` qrels) and, per subset,
``<subset>-qrels/-corpus/-queries`` configs that point at the same files: no data is duplicated.

A split without labels has no file and no entry (``datasets`` cannot read a zero-row parquet
file), and a subset without any labels has no config; the BEIR files still list them empty.
MTEB reads a config that has one split whatever split was asked for (``_get_split``), so it
would score a subset without test labels on its *train* labels without a word: the configs MTEB
reads (``default`` and ``<subset>-qrels/-corpus/-queries``) are declared only for subsets with
labels in every split, and asking MTEB for another subset fails with "config not found".

MTEB's batches reject ``None`` in any column (``Found None in batch for key 'parent_id'``) and
its corpus reader takes ``len(title)``, so a missing value is an empty string here (the BEIR
files keep ``null``); every id is non-empty, so ``""`` is never a real value of an id column.

``datasets.load_dataset("OUT/dataset/hf", "sentence-mined", split="test")`` works offline.
Parquet with an explicit schema is used rather than JSONL so that type inference never trips
over the free-form ``provenance`` dicts or all-null columns.
"""
from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.export.splits import SPLITS
from fincprg.io import atomic_write_text


_BATCH = 8192  # rows turned into Arrow at a time: the corpus never exists as one list of Python dicts


def _write_parquet(path: Path, rows: Iterable[Mapping[str, Any]], schema: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    it = iter(rows)
    batches = iter(lambda: pa.RecordBatch.from_pylist(list(itertools.islice(it, _BATCH)), schema=schema), None)
    # one chunk per column, as a table made from one list: the same row groups and pages, the same bytes
    table = pa.Table.from_batches(itertools.takewhile(lambda b: b.num_rows, batches), schema=schema).combine_chunks()
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


def mteb_subsets(qrel_files: Mapping[str, Sequence[str]], splits: Sequence[str] = SPLITS) -> list[str]:
    """The subsets MTEB may read: those with labels in every split (module docstring)."""
    return [s for s, have in qrel_files.items() if set(splits) <= set(have)]


def front_matter(qrel_files: Mapping[str, Sequence[str]]) -> str:
    """YAML front matter declaring one config per file group (paths relative to hf/).

    ``qrel_files`` maps each subset to the splits that have a file.
    """
    lines = ["---", "configs:",
             "- config_name: corpus", "  data_files:", "  - split: corpus", "    path: corpus.parquet",
             "- config_name: queries", "  data_files:", "  - split: queries", "    path: queries.parquet"]

    def qrels_config(name: str, subset: str) -> list[str]:
        out = [f"- config_name: {name}", "  data_files:"]
        for split in qrel_files[subset]:
            out += [f"  - split: {split}", f"    path: qrels/{subset}/{split}.parquet"]
        return out

    for_mteb = mteb_subsets(qrel_files)
    if "all" in for_mteb:  # MTEB's default subset (and datasets.load_dataset(path) with no name)
        lines += qrels_config("default", "all")
    for subset in qrel_files:
        lines += qrels_config(subset, subset)
    for subset in for_mteb:  # MTEB hf_subsets: <subset>-qrels / -corpus / -queries
        lines += qrels_config(f"{subset}-qrels", subset)
        lines += [f"- config_name: {subset}-corpus", "  data_files:", "  - split: corpus",
                  "    path: corpus.parquet",
                  f"- config_name: {subset}-queries", "  data_files:", "  - split: queries",
                  "    path: queries.parquet"]
    lines += ["---", ""]
    return "\n".join(lines)


def _no_nulls(rows: Iterable[Mapping[str, Any]], columns: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Each row with exactly ``columns``, ``None`` as ``""`` (MTEB cannot batch ``None``)."""
    return ({c: "" if r.get(c) is None else r[c] for c in columns} for r in rows)


def write_hf(
    folder: Path,
    corpus: Iterable[Mapping[str, Any]],
    queries: Iterable[Mapping[str, Any]],
    subset_qrels: Mapping[str, Mapping[str, Mapping[str, Mapping[str, int]]]],
    card: str,
) -> list[Path]:
    """Write the parquet files and ``README.md`` (``card`` below the front matter); ``corpus`` and ``queries``
    may be generators (they are read once, a batch at a time)."""
    import pyarrow as pa

    s = pa.string()
    corpus_schema = pa.schema([("_id", s), ("title", s), ("text", s), ("report_id", s), ("date", s),
                               ("industry", s)])
    query_schema = pa.schema([("_id", s), ("text", s), ("level", s), ("parent_id", s), ("report_id", s),
                              ("provenance", s)])
    qrel_schema = pa.schema([("query-id", s), ("corpus-id", s), ("score", pa.int32())])
    written = [folder / "corpus.parquet", folder / "queries.parquet"]
    _write_parquet(written[0], _no_nulls(corpus, corpus_schema.names), corpus_schema)
    _write_parquet(written[1], _no_nulls(
        ({**q, "provenance": json.dumps(q["provenance"], ensure_ascii=False, sort_keys=True)} for q in queries),
        query_schema.names), query_schema)
    files: dict[str, list[str]] = {}
    for subset, by_split in subset_qrels.items():
        for split, qrels in by_split.items():
            if not qrels:  # datasets cannot read a zero-row parquet file: leave the split out
                continue
            files.setdefault(subset, []).append(split)
            rows = [{"query-id": q, "corpus-id": p, "score": r}
                    for q in sorted(qrels) for p, r in sorted(qrels[q].items())]
            path = folder / L.QRELS_DIR / subset / f"{split}.parquet"
            _write_parquet(path, rows, qrel_schema)
            written.append(path)
    atomic_write_text(folder / L.CARD, front_matter(files) + card)
    written.append(folder / L.CARD)
    return written
