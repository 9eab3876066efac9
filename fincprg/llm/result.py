"""What one chat request gives back (:class:`LLMResult`), whether the caller accepts it, what the cache keeps of it,
and the price of a model: the plain records around :class:`fincprg.llm.client.LLMClient` (split from it to keep
each module short; ``fincprg.llm.client`` re-exports every name).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Callable

from fincprg.llm.redact import redact

log = logging.getLogger(__name__)

Accept = Callable[["LLMResult"], bool]


@dataclass(frozen=True)
class LLMResult:
    """One answer (or the reason there is none). ``chat_many`` never raises per item, except
    :class:`LLMAuthError` (and ``BudgetExceeded``), which stop the whole batch."""

    text: str | None
    error: str | None = None
    cached: bool = False
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    model: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


def price_for(model: str, prices: dict[str, dict[str, float]]) -> dict[str, float] | None:
    """USD per 1M tokens for ``model``: exact key, else the longest key the model name starts with
    (so ``gpt-4o-2024-08-06`` uses ``gpt-4o``)."""
    if model in prices:
        return prices[model]
    keys = [k for k in prices if model.startswith(k)]
    return prices[max(keys, key=len)] if keys else None


def _accepts(accept: Accept | None, result: LLMResult) -> bool:
    """The caller's verdict on an answer; by default any answer not cut off at ``max_tokens``.
    A validator that raises refuses the answer (it must not sink the batch)."""
    if accept is None:
        return result.finish_reason != "length"
    try:
        return bool(accept(result))
    except Exception:  # noqa: BLE001
        log.debug("answer validation raised; treating the answer as invalid", exc_info=True)
        return False


def _cached(result: LLMResult) -> dict[str, Any]:
    """What the cache stores of an accepted answer (read back by ``achat``)."""
    return {"text": result.text, "usage": result.usage, "finish_reason": result.finish_reason, "model": result.model}


def _restored(hit: dict[str, Any]) -> LLMResult:
    """A cached answer (:func:`_cached`) as ``achat`` returns it, masked again: a cache written before answers
    were redacted may hold a key."""
    return LLMResult(redact(hit["text"]), None, True, hit.get("usage", {}), hit.get("finish_reason"), hit.get("model"))
