"""A spending limit for one build: the LLM client asks it before every request it would send.

``fincprg build --max-requests N`` / ``--max-cost USD`` make a :class:`Budget`; the runner makes it
the active one (:func:`use_budget`) for the whole build, and every :class:`fincprg.llm.LLMClient`
made meanwhile picks it up. Cache hits are free and never asked about.

The request that would pass a limit is not sent: :meth:`Budget.admit` raises
:class:`BudgetExceeded`. ``chat_many`` lets the requests already in flight finish (so their answers
reach the cache and are not paid for twice) and then raises it; the stage's batch is not
committed, and the runner ends the build with a resumable state (:class:`BuildStopped`).

The cost of a request is known only after its answer (the server reports the tokens), so the cost
limit is kept by estimate: before sending, a request reserves its prompt characters times the
tokens-per-character ratio seen so far (1.0 before any answer, high for Chinese on purpose) at the
input price, plus the mean completion seen so far (before any: half the prompt's tokens) at the
output price. It is refused when the settled cost plus every reservation in flight plus its own
would pass the limit; the reservation is replaced by the real cost when the answer comes.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from fincprg.errors import FincprgError

_ACTIVE: ContextVar[Budget | None] = ContextVar("fincprg_llm_budget", default=None)


class BudgetExceeded(FincprgError):
    """The next LLM request would pass ``--max-requests`` or ``--max-cost``; it was not sent."""


class BuildStopped(FincprgError):
    """A build stopped cleanly at a limit; its finished stages and committed batches are kept.

    Attributes:
        stage: the stage that was running.
        outcomes: the :class:`fincprg.pipeline.runner.StageOutcome` of the stages finished before it.
        spent: :meth:`Budget.summary` at the stop.
    """

    def __init__(self, message: str, *, stage: str, outcomes: list[Any], spent: dict[str, Any]):
        super().__init__(message)
        self.stage, self.outcomes, self.spent = stage, outcomes, spent


def message_chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(m.get("content") or "") if isinstance(m.get("content"), str) else len(str(m.get("content")))
               for m in messages)


@dataclass
class Ticket:
    """One admitted request: its reserved (estimated) cost and prompt size."""

    reserved: float
    prompt_chars: int


@dataclass
class Budget:
    """Limits on requests sent and dollars spent in one build (None = no limit)."""

    max_requests: int | None = None
    max_cost_usd: float | None = None
    requests: int = 0
    cost_usd: float = 0.0  # settled: from the tokens the server reported
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _reserved: float = 0.0
    _chars_seen: int = 0
    _answers: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.max_requests is not None and self.max_requests < 0:
            raise FincprgError(f"--max-requests must be >= 0, got {self.max_requests}")
        if self.max_cost_usd is not None and self.max_cost_usd < 0:
            raise FincprgError(f"--max-cost must be >= 0, got {self.max_cost_usd}")

    @property
    def limited(self) -> bool:
        return self.max_requests is not None or self.max_cost_usd is not None

    def _estimate(self, prompt_chars: int, price: dict[str, float] | None) -> float:
        if not price:
            return 0.0
        ratio = self.prompt_tokens / self._chars_seen if self._chars_seen else 1.0
        prompt = prompt_chars * ratio
        completion = self.completion_tokens / self._answers if self._answers else prompt / 2
        return (prompt * price.get("input", 0.0) + completion * price.get("output", 0.0)) / 1e6

    def admit(self, messages: list[dict[str, Any]], price: dict[str, float] | None) -> Ticket:
        """Reserve one request, or raise :class:`BudgetExceeded` (the request must then not be sent)."""
        chars = message_chars(messages)
        with self._lock:
            if self.max_requests is not None and self.requests >= self.max_requests:
                raise BudgetExceeded(f"--max-requests {self.max_requests} reached ({self.requests} requests sent)")
            est = self._estimate(chars, price)
            if self.max_cost_usd is not None and self.cost_usd + self._reserved + est > self.max_cost_usd:
                raise BudgetExceeded(
                    f"--max-cost {self.max_cost_usd:g} USD reached: {self.cost_usd:.4f} USD spent, "
                    f"{self._reserved:.4f} USD in flight, the next request is estimated at {est:.4f} USD")
            self.requests += 1
            self._reserved += est
            return Ticket(est, chars)

    def settle(self, ticket: Ticket, usage: dict[str, int], price: dict[str, float] | None) -> None:
        """Replace a request's reservation with its real cost (``usage`` empty: it failed, cost unknown)."""
        pt, ct = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
        with self._lock:
            self._reserved = max(0.0, self._reserved - ticket.reserved)
            if not usage:
                return
            self.prompt_tokens += pt
            self.completion_tokens += ct
            self._chars_seen += ticket.prompt_chars
            self._answers += 1
            if price:
                self.cost_usd += (pt * price.get("input", 0.0) + ct * price.get("output", 0.0)) / 1e6

    def summary(self) -> dict[str, Any]:
        """What this build sent and spent, with the limits."""
        with self._lock:
            return {"requests": self.requests, "max_requests": self.max_requests,
                    "cost_usd": round(self.cost_usd, 6), "max_cost_usd": self.max_cost_usd,
                    "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


def active_budget() -> Budget | None:
    """The budget of the build running in this context (None outside ``use_budget``)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def use_budget(budget: Budget | None) -> Iterator[Budget | None]:
    """Make ``budget`` the active one for the LLM clients created inside the block."""
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE.reset(token)
