"""Finance facts of query texts, extracted once per distinct text and shared by scorer and veto.

The extractor is injected (default :func:`fincprg.finance.extract`) so tests and
benchmarks can swap it; every consumer reads only the documented fields
``companies``, ``codes``, ``periods``, ``metrics`` and ``numbers``.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
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


def query_sources(queries: Iterable[Any], sentences: Iterable[Any], passages: Iterable[Any]) -> dict[str, str]:
    """Query id -> the text it was generated from: a sentence query's sentence
    (``provenance["sentence_id"]``, else its passage), a passage query's passage. Topic-level queries
    have no single source and are left out."""
    sent = {s.id: s.text for s in sentences}
    pas = {p.id: p.text for p in passages}
    out: dict[str, str] = {}
    for q in queries:
        pid = q.source_ids[0] if q.source_ids else None
        if q.level == "sentence":
            text = sent.get(q.provenance.get("sentence_id", "")) or pas.get(pid or "")
        elif q.level == "passage":
            text = pas.get(pid or "")
        else:
            continue
        if text:
            out[q.id] = text
    return out


def build_sources(out: Any) -> dict[str, str]:
    """:func:`query_sources` for a build folder (generate/ and chunk/ outputs; empty when absent)."""
    from pathlib import Path  # noqa: PLC0415

    from fincprg.pipeline.io import read_jsonl  # noqa: PLC0415
    from fincprg.records import Passage, Query, Sentence  # noqa: PLC0415

    from fincprg import layout as L  # noqa: PLC0415

    build = L.Build(Path(out))
    files = [build.path(L.GENERATE, L.QUERIES), build.path(L.CHUNK, L.SENTENCES), build.path(L.CHUNK, L.PASSAGES)]
    if not all(f.is_file() for f in files):
        return {}
    return query_sources(read_jsonl(files[0], Query), read_jsonl(files[1], Sentence), read_jsonl(files[2], Passage))
