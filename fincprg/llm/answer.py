"""Read a server's answer as a chat completion, or say plainly why it is not one; describe a failed request.

An OpenAI-compatible URL may answer with something else: a proxy's HTML error page with status 200 (a
captive portal, a misrouted ``llm.base_url``), an ``{"error": ...}`` body with 200, or a truncated JSON
body. The ``openai`` package hands such a body back as a ``str`` (or a model missing its fields), so
:class:`fincprg.llm.LLMClient` asks for the raw HTTP response and reads it here: anything that is not a
completion becomes :class:`NotACompletion`, whose message gives the status, the content type and the first
bytes of the body, redacted, and the client records it as one failed item.

Every text taken from an answer (its content and model name) goes through :func:`fincprg.llm.redact.redact`
too: a server may echo the request's key into its output, and an answer is kept in the cache, the queries,
the dataset card and the terminal.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from fincprg.llm.redact import redact

# bytes of a body quoted in a failure: enough to recognise a page ("<title>502 Bad Gateway"), not a whole page
_SHOWN = 160


class NotACompletion(Exception):
    """An HTTP 2xx answer that is not a chat completion; the message is redacted and short."""


@dataclass(frozen=True)
class Completion:
    """What fincprg keeps of a chat completion: the first choice's text and finish reason, model, usage."""

    text: str | None
    finish_reason: str | None
    model: str | None
    usage: dict[str, int] = field(default_factory=dict)


def read_completion(response: Any) -> Completion:
    """The completion in ``response`` (an ``httpx`` response with a 2xx status), key-like text masked.

    Raises:
        NotACompletion: the body is not JSON, or not an object with a ``choices`` list of messages.
    """
    ctype = (response.headers.get("content-type") or "none").split(";")[0].strip()
    body = response.content or b""

    def refuse(why: str) -> NotACompletion:
        head = " ".join(body[: _SHOWN * 4].decode("utf-8", "replace").split())[:_SHOWN]
        return NotACompletion(redact(f"not a chat completion: HTTP {response.status_code}, content-type {ctype}, "
                                     f"{why}; the body starts {head!r}") or "not a chat completion")

    try:
        data = json.loads(body)
    except ValueError:
        raise refuse("not JSON") from None
    if not isinstance(data, dict):
        raise refuse(f"a JSON {type(data).__name__}, not an object")
    if "choices" not in data and isinstance(data.get("error"), dict | str):
        raise refuse("an error object")
    choices = data.get("choices")
    if not isinstance(choices, list):
        raise refuse("no 'choices' list")
    first = choices[0] if choices else {}
    message = first.get("message") if isinstance(first, dict) else None
    if choices and not isinstance(message, dict):
        raise refuse("its first choice has no message")
    text = (message or {}).get("content")
    if text is not None and not isinstance(text, str):
        raise refuse("its message content is not text")
    finish = first.get("finish_reason") if isinstance(first, dict) else None
    model = data.get("model")
    return Completion(redact(text), finish if isinstance(finish, str) else None,
                      redact(model) if isinstance(model, str) else None, usage(data.get("usage")))


def usage(u: Any) -> dict[str, int]:
    """Token counts of a completion's ``usage`` object (missing or odd values count 0)."""
    if not isinstance(u, dict):
        return {}

    def count(k: str) -> int:
        v = u.get(k)
        return int(v) if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 else 0

    out = {k: count(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    if not out["total_tokens"]:
        out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
    return out


def describe(e: Exception) -> str:
    """One redacted line for a failed request: the exception kind, the HTTP status and the server's message.

    An error page that is not JSON (a gateway's HTML) is quoted by its content type and first bytes, not whole.
    """
    status = getattr(e, "status_code", None)
    msg = getattr(e, "message", None) or str(e)
    response = getattr(e, "response", None)
    ctype = ""
    if status and response is not None:
        ctype = (response.headers.get("content-type") or "").split(";")[0].strip()
        if ctype and not ctype.endswith("json"):  # openai's message is then only "Error code: 502"
            try:
                head = " ".join(response.text[: _SHOWN * 4].split())[:_SHOWN]
            except Exception:  # noqa: BLE001 - a body not read (streamed) or not decodable: the status says enough
                head = ""
            msg = " ".join(str(msg).split())[:_SHOWN] + (f"; the body starts {head!r}" if head else "")
    head = type(e).__name__ + (f" (HTTP {status}" + (f", {ctype}" if ctype and not ctype.endswith("json") else "")
                               + ")" if status else "")
    return (redact(f"{head}: {msg}") or head)[:500]  # redacted before the cut, so no key is half-kept
