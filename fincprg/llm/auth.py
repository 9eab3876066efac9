"""The errors that stop a build: the LLM server refuses the API key (HTTP 401) or the request (403), or it
never answers at all (connection refused, DNS, timeouts on every request sent).

Every later request would be refused too, so :class:`fincprg.llm.LLMClient` sends none after the first
refusal and raises :class:`LLMAuthError` instead of recording one failure per item; the message says
which server, which env var (``llm.api_key_env``) and what to do.
"""
from __future__ import annotations

import os

from fincprg.config import LLMConfig
from fincprg.errors import BackendError
from fincprg.llm.redact import redact


class LLMAuthError(BackendError):
    """The server refused the API key (HTTP 401) or the permission (403): no later request is sent."""


def auth_error(cfg: LLMConfig, detail: str, status: int | None) -> LLMAuthError:
    """The build-stopping error; ``detail`` is the server's answer, already redacted."""
    env = cfg.api_key_env
    key = (f"the key is read from the environment variable {env} (config key llm.api_key_env), "
           + ("which is set" if os.environ.get(env) else "which is not set, so the placeholder key 'EMPTY' was sent"))
    if status == 403:
        what = "refused the request (no permission)"
        fix = f"use a key (in {env}) that may call model {cfg.model!r} on this server, or change llm.model"
    else:
        what = "refused the API key"
        fix = f"export a valid key for this server in {env}, or set llm.api_key_env to the variable that holds it"
    return LLMAuthError(
        f"the LLM server {redact(cfg.base_url)} {what} ({detail}); {key}. Fix: {fix}, then run the same command again "
        "(finished stages and the answers already received are kept). No further request was sent.")


class LLMUnreachableError(LLMAuthError):
    """Every request so far failed to connect and none was ever answered: the server is down or the URL wrong.

    A subclass of :class:`LLMAuthError` so that every place that stops a build on a refused key stops on it too.
    """


# consecutive connection failures, with no answer ever received, after which no more requests are sent (each has
# already been retried llm.max_retries times by the client); one answer means the server exists and later
# connection errors are per-item failures, re-asked with --retry-failed
UNREACHABLE_AFTER = 8


def unreachable_error(cfg: LLMConfig, detail: str, failed: int) -> LLMUnreachableError:
    return LLMUnreachableError(
        f"the LLM server {redact(cfg.base_url)} could not be reached: {failed} requests in a row failed to connect "
        f"and none was ever answered (last: {detail}). Fix: start the server or correct llm.base_url (and "
        "llm.timeout for a slow server), then run the same command again (finished stages and the answers already "
        "received are kept). No further request was sent.")


class LLMNoAnswerError(LLMAuthError):
    """The server answered, but not one request ever succeeded (500, 429, an HTML page on every request).

    A subclass of :class:`LLMAuthError` so that every place that stops a build on a refused key stops on it too:
    a build that goes on would export nothing and exit 0.
    """


def no_answer_error(cfg: LLMConfig, detail: str, failed: int) -> LLMNoAnswerError:
    return LLMNoAnswerError(
        f"the LLM server {redact(cfg.base_url)} answered none of {failed} requests with a chat completion "
        f"(last: {detail}). Fix: check llm.base_url and llm.model (an HTML page means a proxy or a wrong URL), "
        "wait for the server (HTTP 429/5xx) or lower llm.concurrency, then run the same command again (finished "
        "stages and the answers already received are kept; `--retry-failed` re-asks failed items). "
        "No further request was sent.")
