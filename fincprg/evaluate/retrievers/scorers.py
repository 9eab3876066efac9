"""Real relevance scorers for the rerankers that have a rule-based default (cards, Borda, hier, rewrite).

* :class:`CrossEncoderScorer`: a cross-encoder (sentence-transformers ``CrossEncoder``) loaded through
  :mod:`fincprg.models` like mining's rerankers: a local folder or a hub id, scores in [0, 1].
* :class:`LLMGroupScorer`: ``prompts/passage_relevance.<lang>.j2`` through fincprg's one LLM client
  (retries, cache, accounting): one request grades a group of passages 0–3 for a query. An answer that
  does not parse into one grade per passage is not cached and scores the group 0 (counted in ``failed``).

SPECs name the LLM as ``llm`` or ``llm:CONFIG``: the ``llm`` section (and ``run.cache_dir``) of the
pipeline YAML CONFIG, default the bundled offline pipeline (base_url http://localhost:8000/v1). Answers
are cached under ``run.cache_dir``, else ``$XDG_CACHE_HOME/fincprg`` (``~/.cache/fincprg``).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fincprg.evaluate.retrievers.base import doc_text

MAX_PASSAGE_CHARS = 600  # a group of 4–5 passages stays well inside a small model's context


def cache_root(configured: str | None) -> Path:
    if configured:
        return Path(configured)
    from fincprg import layout as L

    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / L.CACHE_DIR) / "fincprg"


def llm_client(config: str | None):
    """An :class:`~fincprg.llm.LLMClient` from the ``llm`` section of ``config`` (default: bundled offline)."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.llm import LLMClient

    cfg = load_config(config or bundled_pipeline("offline"))
    return LLMClient(cfg.llm, cache_root(cfg.run.cache_dir))


class CrossEncoderScorer:
    """(query, document) scores in [0, 1] from a cross-encoder, memoised per pair within one process."""

    def __init__(self, model: str, where: str, batch_size: int = 32, device: str | None = None):
        self.model_id, self.where, self.batch_size, self.device = model, where, batch_size, device
        self._model: Any = None
        self._memo: dict[tuple[str, str], float] = {}

    def score(self, query: str, docs: Sequence[str], corpus: dict[str, dict]) -> list[float]:
        todo = list(dict.fromkeys(d for d in docs if (query, d) not in self._memo))
        if todo:
            if self._model is None:
                from fincprg.models import CrossEncoderBackend

                self._model = CrossEncoderBackend(self.model_id, batch_size=self.batch_size, device=self.device,
                                                  where=self.where, alternative=None)
            for d, s in zip(todo, self._model.score([(query, doc_text(corpus[d])) for d in todo])):
                self._memo[(query, d)] = float(s)
        return [self._memo[(query, d)] for d in docs]


def parse_grades(text: str | None, n: int) -> list[float] | None:
    """``{"scores": [g1, …, gn]}`` with n grades in [0, 3] -> the grades, else ``None``."""
    from fincprg.llm import JSONParseError, parse_json

    try:
        obj = parse_json(text)
    except JSONParseError:
        return None
    raw = obj.get("scores") if isinstance(obj, dict) else obj
    if not isinstance(raw, list) or len(raw) != n:
        return None
    try:
        grades = [float(g) for g in raw]
    except (TypeError, ValueError):
        return None
    return grades if all(0 <= g <= 3 for g in grades) else None


class LLMGroupScorer:
    """Grades groups of passages for a query through the LLM client, several groups per ``chat_many``."""

    def __init__(self, config: str | None, language: str = "zh", progress: bool = False):
        from fincprg.llm import load_prompt

        self.config = config
        self.prompt = load_prompt("passage_relevance", language)
        self.progress = progress
        self._client: Any = None
        self.failed = self.asked = 0

    @property
    def client(self):
        if self._client is None:
            self._client = llm_client(self.config)
        return self._client

    def score_groups(self, items: list[tuple[str, Sequence[str]]], corpus: dict[str, dict]) -> list[list[float]]:
        """One list of grades per (query text, doc ids) item; a failed item grades every passage 0."""
        if not items:
            return []
        convs = [self.prompt.render(query=q, passages=[doc_text(corpus[d])[:MAX_PASSAGE_CHARS] for d in docs])
                 for q, docs in items]
        sizes = [len(docs) for _, docs in items]
        results = self.client.chat_many(convs, desc="llm relevance", progress=self.progress,
                                        accept=lambda i, r: parse_grades(r.text, sizes[i]) is not None)
        out = []
        for r, n in zip(results, sizes):
            g = parse_grades(r.text, n) if r.ok else None
            self.asked += 1
            if g is None:
                self.failed += 1
                g = [0.0] * n
            out.append(g)
        return out

    def close(self) -> None:
        """Close the client's response cache (sqlite); a later call opens a fresh client."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def stats(self) -> dict[str, float]:
        s = self.client.stats if self._client is not None else {}
        return {"llm_requests": float(s.get("requests", 0)), "llm_cache_hits": float(s.get("cache_hits", 0)),
                "llm_failed_groups": float(self.failed)}
