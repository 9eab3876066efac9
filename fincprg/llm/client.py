"""The one LLM client every fincprg call goes through: OpenAI-compatible, bounded, retried, cached, costed.

Retries are the ``openai`` package's own (``max_retries``): it retries 408/409/429/5xx answers,
timeouts and connection errors with exponential backoff (0.5 s doubling to 8 s) and up to 25 %
jitter, and honours ``Retry-After`` / ``retry-after-ms`` headers (up to 120 s). fincprg only counts
the retries, through an httpx request hook reading the ``x-stainless-retry-count`` header the client
sets on every attempt.

The API key is read from the environment variable *named* in the config and handed to the client
in memory only: it is not part of cache keys, cache values, stats, results or log lines, and every
error text is passed through :func:`fincprg.llm.redact.redact` (a server may quote the key in a 401).
A refused key or permission (HTTP 401/403) stops the whole batch at once with :class:`LLMAuthError`:
no request is sent after the first refusal comes back, since every other one would be refused too. So
do ``UNREACHABLE_AFTER`` failures in a row before any request succeeded (:class:`LLMNoAnswerError`:
500 or 429 everywhere, or a proxy's HTML page), and :meth:`LLMClient.check_answered` at the end of a
stage that sent fewer. An answer that is not a chat completion is a failed item with its cause
(:mod:`fincprg.llm.answer`), and the text of every answer is redacted before anything keeps it.

Only answers the caller accepts are cached (``accept=``, e.g. "parses into a valid query tree"), and
a cached answer is served again only while the caller still accepts it: an invalid answer is never
replayed as a success, so a re-run (``fincprg build --retry-failed``) re-asks exactly the items that
failed. Without ``accept``, every complete answer is cached, and answers cut off at ``max_tokens``
(``finish_reason == "length"``) never are.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import os
import threading
from pathlib import Path
from typing import Any, Callable

from fincprg.config import LLMConfig
from fincprg.llm.answer import Completion, NotACompletion, describe as _describe, read_completion
from fincprg.llm.auth import UNREACHABLE_AFTER, LLMAuthError, auth_error, no_answer_error, unreachable_error
from fincprg.llm.budget import Budget, BudgetExceeded, active_budget, message_chars
from fincprg.llm.ratelimit import Limiter, make_limiter
from fincprg.llm.cache import ResponseCache, cache_key
from fincprg.llm.redact import redact, register_secret
from fincprg.llm.result import LLMResult, _accepts, _cached, _restored, price_for  # noqa: F401 - re-exported
from fincprg.registry import LLM_CLIENTS

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
_WARNED_NO_KEY: set[str] = set()


@functools.lru_cache(maxsize=1)
def _ssl_context() -> Any:
    # Building the default SSL context loads the CA bundle (~0.3 s); each chat_many makes a fresh
    # httpx client for its own event loop, so share one context per process.
    import httpx2

    return httpx2.create_ssl_context()


class LLMClient:
    """Async OpenAI-compatible chat client with a sync ``chat_many`` for pipeline stages.

    Args:
        cfg: the ``llm`` config section (base_url, model, api_key_env, concurrency, retries...).
        cache_dir: root cache folder; answers go to ``<cache_dir>/llm/responses.sqlite3``.
    """

    def __init__(self, cfg: LLMConfig, cache_dir: Path | str, *, limiter: Limiter | None = None) -> None:
        self.cfg = cfg
        # llm.requests_per_minute / tokens_per_minute; on Ray one limiter actor shared by every client
        self.limiter = limiter if limiter is not None else make_limiter(cfg.requests_per_minute, cfg.tokens_per_minute)
        register_secret(os.environ.get(cfg.api_key_env))  # masked in every error text of this process
        self.cache = ResponseCache(Path(cache_dir)) if cfg.cache else None
        self._auth_error: LLMAuthError | None = None  # set by the first 401/403: nothing is sent after it
        self._answered = False  # the server answered once: later connection errors are per-item failures
        self._unreachable = 0  # connection failures in a row while nothing was ever answered
        self._succeeded = False  # a request came back as a chat completion: later failures are per item
        self._failed_in_row = 0  # failures of any kind in a row while none succeeded
        self._last_failure = ""
        self._json_mode_supported = True  # flipped once if the server rejects response_format
        self._lock = threading.Lock()
        self._stats: dict[str, float] = dict.fromkeys(
            ("requests", "cache_hits", "retries", "failures", "rejected", "stale_cache", "prompt_tokens",
             "completion_tokens", "json_mode_fallbacks", "reask_cached"), 0)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._openai: Any = None
        self._sem: asyncio.Semaphore | None = None
        # the build's --max-requests / --max-cost, if any (fincprg.llm.budget); asked before each request
        self.budget: Budget | None = active_budget()

    # -- accounting -------------------------------------------------------------------------------
    def _add(self, key: str, n: float = 1) -> None:
        with self._lock:
            self._stats[key] += n

    @property
    def stats(self) -> dict[str, Any]:
        """Counts since this client was made: requests sent (not counting retries), cache hits,
        retries, failures (no answer), rejected (answers ``accept`` refused, not cached),
        stale_cache (cached answers ``accept`` refused, asked again), reask_cached (re-ask answers
        also stored under the first question, :meth:`remember`), cache_errors (cache reads or writes
        that failed, see :class:`ResponseCache`), token usage and the cost estimate (USD) from ``cfg.prices``."""
        with self._lock:
            s: dict[str, Any] = {k: int(v) for k, v in self._stats.items()}
        s["total_tokens"] = s["prompt_tokens"] + s["completion_tokens"]
        s["cache_errors"] = self.cache.errors if self.cache is not None else 0
        price = price_for(self.cfg.model, self.cfg.prices)
        s["priced"] = price is not None
        s["cost_usd"] = (
            round((s["prompt_tokens"] * price.get("input", 0.0)
                   + s["completion_tokens"] * price.get("output", 0.0)) / 1e6, 6)
            if price else 0.0
        )
        s["model"] = self.cfg.model
        return s

    # -- the underlying openai client (one per event loop: httpx pools are bound to their loop) --
    def _api_key(self) -> str:
        key = os.environ.get(self.cfg.api_key_env, "")
        if not key:
            if self.cfg.api_key_env not in _WARNED_NO_KEY:
                _WARNED_NO_KEY.add(self.cfg.api_key_env)
                log.warning(
                    "env var %s is not set; sending the placeholder key 'EMPTY' (fine for local "
                    "vLLM/Ollama servers; export %s for hosted APIs)",
                    self.cfg.api_key_env, self.cfg.api_key_env,
                )
            key = "EMPTY"
        return key

    def _client(self) -> tuple[Any, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._openai is None or self._sem is None:
            import openai  # lazy: importing fincprg.llm stays cheap

            async def count_retries(request: Any) -> None:
                if int(request.headers.get("x-stainless-retry-count", "0") or 0) > 0:
                    self._add("retries")

            self._openai = openai.AsyncOpenAI(
                base_url=self.cfg.base_url,
                api_key=self._api_key(),
                max_retries=self.cfg.max_retries,
                timeout=self.cfg.timeout,
                http_client=openai.DefaultAsyncHttpxClient(
                    verify=_ssl_context(), event_hooks={"request": [count_retries]}),
            )
            self._sem = asyncio.Semaphore(self.cfg.concurrency)
            self._loop = loop
        return self._openai, self._sem

    async def aclose(self) -> None:
        """Close the HTTP connections of the current event loop's client."""
        if self._openai is not None and self._loop is asyncio.get_running_loop():
            await self._openai.close()
        self._openai, self._sem, self._loop = None, None, None

    def close(self) -> None:
        """Close the cache database (the HTTP client is closed at the end of each ``chat_many``)."""
        if self.cache is not None:
            self.cache.close()

    # -- one call ---------------------------------------------------------------------------------
    def _params(self, json_mode: bool) -> dict[str, Any]:
        return {"temperature": self.cfg.temperature, "max_tokens": self.cfg.max_tokens, "json_mode": json_mode}

    async def achat(self, messages: Messages, *, json_mode: bool | None = None,
                    accept: Callable[[LLMResult], bool] | None = None) -> LLMResult:
        """Send one chat request (or answer it from the cache). Never raises for API errors.

        Args:
            messages: OpenAI chat messages (``[{"role": ..., "content": ...}, ...]``).
            json_mode: ask for ``response_format={"type": "json_object"}``; default ``cfg.json_mode``.
            accept: the caller's validation; an answer it refuses is returned but not cached, and a
                cached answer it refuses is asked again.
        """
        json_mode = self.cfg.json_mode if json_mode is None else json_mode
        key = cache_key(self.cfg.model, messages, self._params(json_mode))
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                cached = _restored(hit)
                if _accepts(accept, cached):
                    self._add("cache_hits")
                    return cached
                self._add("stale_cache")  # cached by an older fincprg before answers were validated
        import openai

        client, sem = self._client()
        async with sem:
            if self._auth_error is not None:  # an earlier answer refused the key: do not send this one
                raise type(self._auth_error)(str(self._auth_error))  # a fresh one: a shared one piles up tracebacks
            try:
                resp = await self._send(client, messages, json_mode)
            except BudgetExceeded:
                raise  # not sent: chat_many stops the batch once the requests in flight are back
            except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
                self._add("failures")
                if self._auth_error is None:
                    self._auth_error = auth_error(self.cfg, _describe(e), getattr(e, "status_code", None))
                raise LLMAuthError(str(self._auth_error)) from None
            except openai.APIConnectionError as e:  # timeouts included
                return self._failed(_describe(e), connection=True)
            except openai.APIError as e:
                self._answered = True  # an HTTP status is an answer: the server is there
                return self._failed(_describe(e))
            except NotACompletion as e:  # an HTML page or an error object with status 200
                self._answered = True
                return self._failed(str(e))
            except Exception as e:  # noqa: BLE001 - one bad item must not sink a batch of thousands
                why = redact(f"{type(e).__name__}: {e}") or type(e).__name__
                log.debug("LLM request failed: %s", why)  # no exc_info: a traceback's locals may hold the key
                return self._failed(why)
        self._answered = self._succeeded = True
        return self._keep(resp, key, accept)

    def _keep(self, resp: Completion, key: str, accept: Callable[[LLMResult], bool] | None) -> LLMResult:
        """Count a completion's tokens and cache it when the caller accepts it; an empty one is a failure."""
        usage, text, finish = resp.usage, resp.text, resp.finish_reason
        self._add("prompt_tokens", usage.get("prompt_tokens", 0))
        self._add("completion_tokens", usage.get("completion_tokens", 0))
        if text is None:
            self._add("failures")
            return LLMResult(None, f"empty answer (finish_reason={finish})", False, usage, finish, resp.model)
        result = LLMResult(text, None, False, usage, finish, resp.model)
        if not _accepts(accept, result):
            self._add("rejected")
        elif self.cache is not None:
            self.cache.put(key, _cached(result))
        return result

    def _failed(self, why: str, *, connection: bool = False) -> LLMResult:
        """Count a failed request; the UNREACHABLE_AFTER-th in a row before any success stops the batch."""
        self._add("failures")
        if connection:
            self._note_unreachable(why)
        with self._lock:
            self._last_failure = why
            if self._succeeded:
                return LLMResult(None, why)
            self._failed_in_row += 1
            stop = self._failed_in_row >= UNREACHABLE_AFTER and self._auth_error is None
            if stop:
                self._auth_error = no_answer_error(self.cfg, why, self._failed_in_row)
        if stop:
            raise type(self._auth_error)(str(self._auth_error)) from None  # type: ignore[arg-type]
        return LLMResult(None, why)

    def check_answered(self) -> None:
        """Raise :class:`LLMNoAnswerError` when this client sent requests and none came back as a completion
        (and nothing came from the cache): the end of a stage too small for the early stop in :meth:`_failed`."""
        with self._lock:
            sent, hits = self._stats["requests"], self._stats["cache_hits"]
            nothing = sent > 0 and not hits and not self._succeeded and self._last_failure
        if nothing:
            raise no_answer_error(self.cfg, self._last_failure, int(sent))

    def _note_unreachable(self, detail: str) -> None:
        """Stop sending once UNREACHABLE_AFTER requests in a row failed to connect and none was ever answered."""
        if self._answered:
            return
        self._unreachable += 1
        if self._unreachable >= UNREACHABLE_AFTER and self._auth_error is None:
            self._auth_error = unreachable_error(self.cfg, detail, self._unreachable)
            raise type(self._auth_error)(str(self._auth_error)) from None

    def remember(self, messages: Messages, result: LLMResult, *, json_mode: bool | None = None) -> None:
        """Cache ``result`` (an accepted answer) as the answer to ``messages`` too.

        A re-ask's conversation holds the rejected first answer, so its cache key cannot be computed
        before that answer comes; storing the re-ask's answer under the first question as well lets
        a rebuild or a resume serve the item without a request.
        """
        if self.cache is None or not result.ok:
            return
        self.cache.put(self.cache_key_for(messages, json_mode=json_mode), _cached(result))
        self._add("reask_cached")

    def cache_key_for(self, messages: Messages, *, json_mode: bool | None = None) -> str:
        """The cache key ``achat`` would use for ``messages`` (``fincprg estimate`` counts cached answers)."""
        return cache_key(self.cfg.model, messages, self._params(self.cfg.json_mode if json_mode is None else json_mode))

    async def _send(self, client: Any, messages: Messages, json_mode: bool) -> Completion:
        """Count and send one request, within the build's budget (raises BudgetExceeded before sending)."""
        price = price_for(self.cfg.model, self.cfg.prices)
        ticket = self.budget.admit(messages, price) if self.budget is not None else None
        if self.limiter is not None:
            # tokens as a provider counts them against the limit: the prompt (a CJK character is
            # about one token) plus the completion it may use
            await self.limiter.wait(message_chars(messages) + (self.cfg.max_tokens or 0))
        self._add("requests")
        usage: dict[str, int] = {}
        try:
            resp = read_completion(await self._create(client, messages, json_mode))
            usage = resp.usage
            return resp
        finally:
            if ticket is not None:
                self.budget.settle(ticket, usage, price)  # type: ignore[union-attr]

    async def _create(self, client: Any, messages: Messages, json_mode: bool) -> Any:
        # client.post() is the SDK's documented way to call an endpoint with a raw body; it goes
        # through the same request/retry/error machinery as chat.completions.create() but skips
        # the typed-params transform (~2 ms of CPU per request, a no-op for plain role/content dicts),
        # which matters when one process drives hundreds of requests per second. The raw response comes back
        # (a 2xx one: other statuses raise as usual) and read_completion checks it is a completion at all.
        import httpx2
        import openai

        body: dict[str, Any] = {"model": self.cfg.model, "messages": messages,
                                "temperature": self.cfg.temperature}
        if self.cfg.max_tokens is not None:
            body["max_tokens"] = self.cfg.max_tokens
        if json_mode and self._json_mode_supported:
            try:
                return await client.post("/chat/completions", cast_to=httpx2.Response,
                                         body={**body, "response_format": {"type": "json_object"}})
            except openai.BadRequestError as e:
                if "response_format" not in str(e).lower():
                    raise
                if self._json_mode_supported:
                    self._json_mode_supported = False
                    self._add("json_mode_fallbacks")
                    log.warning("server %s rejected response_format (JSON mode); continuing without it "
                                "(the prompt still asks for JSON)", self.cfg.base_url)
        return await client.post("/chat/completions", cast_to=httpx2.Response, body=body)

    # -- many calls -------------------------------------------------------------------------------
    async def achat_many(self, batch: list[Messages], *, json_mode: bool | None = None,
                         desc: str = "llm", progress: bool = True,
                         accept: Callable[[int, LLMResult], bool] | None = None) -> list[LLMResult]:
        """Run ``achat`` over ``batch`` with at most ``cfg.concurrency`` requests in flight.

        ``accept(i, result)`` validates the answer to ``batch[i]`` (see :meth:`achat`).

        Raises:
            BudgetExceeded: the build's budget refused a request; raised once every request in flight
                has its answer (cached), so a resumed build pays for none of them twice.
        """
        from tqdm.auto import tqdm

        stopped: list[BudgetExceeded] = []

        async def one(i: int, m: Messages) -> tuple[int, LLMResult]:
            check = None if accept is None else functools.partial(accept, i)
            try:
                return i, await self.achat(m, json_mode=json_mode, accept=check)
            except BudgetExceeded as e:  # the others still finish, so no answer paid for is lost
                stopped.append(e)
                return i, LLMResult(None, str(e))

        out: list[LLMResult | None] = [None] * len(batch)
        tasks = [asyncio.ensure_future(one(i, m)) for i, m in enumerate(batch)]
        bar = tqdm(total=len(batch), desc=desc, unit="req", disable=None if progress else True)
        try:
            for fut in asyncio.as_completed(tasks):
                i, res = await fut
                out[i] = res
                bar.update(1)
        finally:
            bar.close()
            for t in tasks:
                t.cancel()
        if stopped:
            raise stopped[0]
        return [r if r is not None else LLMResult(None, "not run") for r in out]

    def chat_many(self, batch: list[Messages], *, json_mode: bool | None = None,
                  desc: str = "llm", progress: bool = True,
                  accept: Callable[[int, LLMResult], bool] | None = None) -> list[LLMResult]:
        """Sync wrapper of :meth:`achat_many` for pipeline stages; one result per input, in order.

        Works from plain code (runs its own event loop) and from inside a running loop (e.g. a
        notebook), where it runs the loop in a worker thread.
        """
        if not batch:
            return []

        async def run() -> list[LLMResult]:
            try:
                return await self.achat_many(batch, json_mode=json_mode, desc=desc, progress=progress,
                                             accept=accept)
            finally:
                await self.aclose()

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(run())
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as ex:
            return ex.submit(asyncio.run, run()).result()


# The one client kind today; no config key picks among LLM_CLIENTS yet (see fincprg/registry.py).
LLM_CLIENTS.register("openai", LLMClient, config=LLMConfig,
                     description="an OpenAI-compatible chat-completions server at llm.base_url (OpenAI, vLLM, "
                                 "Ollama...), with cache, retries, budget and rate limits")
