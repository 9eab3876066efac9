"""Client-side rate limit: requests and tokens per minute, as reservations.

A caller reserves a slot and is told how long to wait; it never holds a lock while it waits. That
makes one limiter easy to share: in one process the client calls it directly, on Ray every LLM actor
asks one limiter actor (:mod:`fincprg.pipeline.ray_engine`), so the cluster as a whole stays within
the provider's limits. Slots are spaced evenly (no burst at the start of each minute), which is what
providers' sliding windows accept.
"""
from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol


class Limiter(Protocol):
    async def wait(self, tokens: int) -> None: ...


class RateLimiter:
    """Evenly spaced reservations for ``rpm`` requests and ``tpm`` tokens per minute (None = no limit)."""

    def __init__(self, rpm: float | None, tpm: float | None) -> None:
        self.rpm, self.tpm = rpm, tpm
        self._next_request = 0.0
        self._next_token = 0.0

    def reserve(self, tokens: int, now: float | None = None) -> float:
        """Book one request of ``tokens`` tokens; return the seconds the caller must wait before sending."""
        now = time.monotonic() if now is None else now
        start = now
        if self.rpm:
            start = max(start, self._next_request)
            self._next_request = start + 60.0 / self.rpm
        if self.tpm:
            t = max(now, self._next_token)
            start = max(start, t)
            # a request larger than a minute's tokens still goes (alone), rather than never
            self._next_token = t + 60.0 * min(tokens, self.tpm) / self.tpm
        return max(0.0, start - now)

    async def wait(self, tokens: int) -> None:
        delay = self.reserve(tokens)
        if delay > 0:
            await asyncio.sleep(delay)


class RemoteLimiter:
    """A :class:`RateLimiter` living in a Ray actor (``handle``), shared by every process that holds it."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    async def wait(self, tokens: int) -> None:
        delay = await self.handle.reserve.remote(tokens)
        if delay > 0:
            await asyncio.sleep(delay)


def make_limiter(rpm: float | None, tpm: float | None) -> RateLimiter | None:
    return RateLimiter(rpm, tpm) if rpm or tpm else None
