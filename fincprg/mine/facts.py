"""Finance facts of query texts, extracted once per distinct text and shared by scorer and veto.

The extractor is injected (default :func:`fincprg.finance.extract`) so tests and
benchmarks can swap it; every consumer reads only the documented fields
``companies``, ``codes``, ``periods``, ``metrics`` and ``numbers``.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Extractor = Callable[[str], Any]


def default_extractor() -> Extractor:
    """Return :func:`fincprg.finance.extract` (jieba itself loads lazily inside fincprg.finance)."""
    from fincprg.finance import extract  # noqa: PLC0415 - keeps importing this module light

    return extract


class FactsCache:
    """Memoised ``text -> FinanceFacts``; query texts repeat a lot (templates, boilerplate)."""

    def __init__(self, extractor: Extractor | None = None):
        self._extract = extractor
        self._cache: dict[str, Any] = {}

    @property
    def extractor(self) -> Extractor:
        if self._extract is None:
            self._extract = default_extractor()
        return self._extract

    def get(self, text: str) -> Any:
        f = self._cache.get(text)
        if f is None:
            f = self.extractor(text)
            self._cache[text] = f
        return f

    def many(self, texts: Iterable[str]) -> list[Any]:
        return [self.get(t) for t in texts]

    def prefetch(self, texts: Iterable[str], workers: int = 1, min_parallel: int = 20000) -> None:
        """Extract facts for many texts, in ``workers`` processes when there are enough of them.

        Extraction is ~0.5-1 ms per text (regex passes over a large lexicon), so 160k paper-scale
        query texts take minutes on one core; the work is embarrassingly parallel.
        """
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if workers > 1 and len(todo) >= min_parallel and self._extract is None:
            import multiprocessing as mp  # noqa: PLC0415

            with mp.get_context("fork").Pool(workers) as pool:
                facts = pool.map(_extract_default, todo, chunksize=2000)
            self._cache.update(zip(todo, facts, strict=True))
        else:
            for t in todo:
                self.get(t)

    def __len__(self) -> int:
        return len(self._cache)


def _extract_default(text: str) -> Any:
    return default_extractor()(text)


def period_key(p: Any) -> str:
    """A hashable string for a Period: ``"2023|Q1|F"`` (missing parts as ``-``)."""
    year = "-" if p.year is None else str(p.year)
    part = p.part or "-"
    return f"{year}|{part}|{'F' if p.forecast else 'A'}"


def entity_keys(f: Any) -> set[str]:
    """Companies and stock codes as one key set (a code and a name name the same firm)."""
    return {f"c:{c}" for c in f.companies} | {f"s:{s}" for s in f.codes}


class TextIndex:
    """``id -> text`` of a stage's JSONL records (sentences, passages), read from disk when asked.

    Holds one byte offset per record instead of its text, so mining a large corpus does not keep the
    corpus in memory; the veto asks for the sources of the few pairs that pass the threshold. It pickles
    without its open file (a Ray actor reopens the path).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.offsets: dict[str, int] = {}
        pos = 0
        with open(self.path, "rb") as f:
            for line in f:
                rid = _ID.search(line)
                if rid:
                    self.offsets[json.loads(b'"' + rid.group(1) + b'"')] = pos  # JSON escapes decoded
                pos += len(line)
        self._f: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "offsets": self.offsets}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _f=None)

    def __contains__(self, rid: object) -> bool:
        return rid in self.offsets

    def get(self, rid: str | None) -> str | None:
        pos = self.offsets.get(rid or "")
        if pos is None:
            return None
        if self._f is None:
            self._f = open(self.path, "rb")  # noqa: SIM115 - kept open for the index's life
        self._f.seek(pos)
        return json.loads(self._f.readline())["text"]


_ID = re.compile(rb'"id"\s*:\s*"((?:[^"\\]|\\.)*)"')


class QuerySources:
    """Query id -> the text it was generated from (see :func:`query_sources`), read lazily through
    :class:`TextIndex` es; a ``Mapping``-like ``get``/``[]``/``in``."""

    def __init__(self, source_of: dict[str, tuple[str, str]], indexes: dict[str, Any]) -> None:
        self.source_of, self.indexes = source_of, indexes  # query id -> (kind, record id)

    def get(self, qid: str, default: str | None = None) -> str | None:
        ref = self.source_of.get(qid)
        if ref is None:
            return default
        text = self.indexes[ref[0]].get(ref[1])
        return text if text else default

    def __getitem__(self, qid: str) -> str:
        text = self.get(qid)
        if text is None:
            raise KeyError(qid)
        return text

    def __contains__(self, qid: object) -> bool:
        return isinstance(qid, str) and self.get(qid) is not None

    def __len__(self) -> int:
        return len(self.source_of)


def query_sources(queries: Iterable[Any], sentences: Any, passages: Any) -> QuerySources:
    """Query id -> the text it was generated from: a sentence query's sentence
    (``provenance["sentence_id"]``, else its passage), a passage query's passage. Topic-level queries
    have no single source and are left out.

    ``sentences`` and ``passages``: :class:`TextIndex` es (or any ``id -> text`` mapping with ``get``).
    """
    out: dict[str, tuple[str, str]] = {}
    for q in queries:
        pid = q.source_ids[0] if q.source_ids else None
        if q.level == "sentence":
            sid = q.provenance.get("sentence_id", "")
            ref = ("sentence", sid) if sid and sid in sentences else ("passage", pid or "")
        elif q.level == "passage":
            ref = ("passage", pid or "")
        else:
            continue
        out[q.id] = ref
    return QuerySources(out, {"sentence": sentences, "passage": passages})


def build_sources(out: Any) -> QuerySources | dict[str, str]:
    """:func:`query_sources` for a build folder (generate/ and chunk/ outputs; empty when absent)."""
    from fincprg.io import read_jsonl  # noqa: PLC0415
    from fincprg.records import Query  # noqa: PLC0415

    from fincprg import layout as L  # noqa: PLC0415

    build = L.Build(Path(out))
    files = [build.path(L.GENERATE, L.QUERIES), build.path(L.CHUNK, L.SENTENCES), build.path(L.CHUNK, L.PASSAGES)]
    if not all(f.is_file() for f in files):
        return {}
    return query_sources(read_jsonl(files[0], Query), TextIndex(files[1]), TextIndex(files[2]))
