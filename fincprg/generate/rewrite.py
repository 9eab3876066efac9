"""The LLM rewrite pass of too-easy queries (``generate.rewrite``; ``generate.backend: llm`` only).

A generated query that copies its passage (overlap >= ``generate.rewrite.max_overlap``, see
:mod:`fincprg.finance.easiness`) is sent once to the ``query_rewrite`` prompt, which asks for the same
information need in other words. The rewrite replaces the query only when it keeps every number,
year and period and the report's company (:func:`fincprg.finance.easiness.keeps_facts`) and copies
less of the passage than the original; otherwise the original stays and its provenance says why
(``rewrite: rejected_facts | not_easier | failed``). A kept rewrite records ``rewritten_from``.
Requests go through the generate stage's LLM client: cached, retried, within the build's budget.
"""
from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.finance.easiness import keeps_facts, overlap
from fincprg.generate.base import PassageInput
from fincprg.llm import JSONParseError, LLMClient, parse_json
from fincprg.llm.prompts import stage_prompt
from fincprg.records import Query, Report

log = logging.getLogger(__name__)
PROMPT_VARIABLES = ("query", "passage", "title")


def _answer(text: str | None) -> str | None:
    try:
        data = parse_json(text)
    except JSONParseError:
        return None
    if isinstance(data, dict) and isinstance(data.get("query"), str) and data["query"].strip():
        return data["query"].strip()
    return None


class Rewriter:
    """Rewrites the too-easy queries of a generated batch (see the module docstring)."""

    def __init__(self, client: LLMClient, cfg: Any, language: str, *, progress: bool = True) -> None:
        self.client, self.cfg, self.progress = client, cfg, progress
        self.prompt = stage_prompt(_WithLanguage(cfg, language), allowed=PROMPT_VARIABLES, required=("query",),
                                   key="generate.rewrite.prompt_file")

    def apply(self, batch: list[PassageInput], out: dict[str, list[Any]], company: Callable[[Report], str | None]
              ) -> dict[str, list[Any]]:
        """Return ``out`` with its too-easy queries rewritten (pure apart from the client's cache)."""
        passages = {it.passage.id: it for it in batch}
        todo: list[tuple[int, Query, PassageInput]] = []
        for i, q in enumerate(out[L.QUERIES]):
            item = passages.get(q.source_ids[0]) if q.source_ids else None
            if item is not None and overlap(q.text, item.passage.text, self.cfg.measure) >= self.cfg.max_overlap:
                todo.append((i, q, item))
        if not todo:
            return out
        msgs = [self.prompt.render(query=q.text, passage=it.passage.text, title=it.report.title) for _, q, it in todo]
        results = self.client.chat_many(msgs, desc="generate (rewrite)", progress=self.progress)
        queries = list(out[L.QUERIES])
        for (i, q, it), res in zip(todo, results, strict=True):
            new = _answer(res.text) if res.ok else None
            prov = {**q.provenance, "rewrite_template": self.prompt.id, "rewrite_version": self.prompt.version}
            name = company(it.report)
            if new is None:
                prov["rewrite"] = "failed"
            elif not keeps_facts(q.text, new, [name] if name else []):
                prov["rewrite"] = "rejected_facts"
            elif overlap(new, it.passage.text, self.cfg.measure) >= overlap(q.text, it.passage.text, self.cfg.measure):
                prov["rewrite"] = "not_easier"
            else:
                prov.update({"rewrite": "kept", "rewritten_from": q.text})
                queries[i] = q.model_copy(update={"text": new, "provenance": prov})
                continue
            queries[i] = q.model_copy(update={"provenance": prov})
        return {**out, L.QUERIES: queries}


class _WithLanguage:
    """A ``generate.rewrite`` section seen with the generate stage's language (for :func:`stage_prompt`)."""

    def __init__(self, section: Any, language: str):
        self._s, self.language = section, language

    def __getattr__(self, name: str) -> Any:
        return getattr(self._s, name)


def make_rewriter(cfg: Any, generator: Any, *, progress: bool = True) -> Rewriter | None:
    """The configured rewriter, sharing the LLM generator's client; None when ``generate.rewrite`` is off."""
    if not cfg.generate.rewrite.enabled or getattr(generator, "client", None) is None:
        return None
    return Rewriter(generator.client, cfg.generate.rewrite, cfg.generate.language, progress=progress)


def rewrite_counts(queries_file: Path) -> dict[str, int]:
    """``{kept, rejected_facts, not_easier, failed}`` over a written queries.jsonl (right after a resume too)."""
    c: Counter[str] = Counter()
    with open(queries_file, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)["provenance"].get("rewrite")
            if r:
                c[r] += 1
    return {k: c[k] for k in ("kept", "rejected_facts", "not_easier", "failed")}
