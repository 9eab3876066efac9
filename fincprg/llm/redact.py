"""Keep secrets out of every error text: failure records, manifests, log lines, exception messages.

A server may quote the API key in an error (``Incorrect API key provided: sk-...``), and an exception
raised inside an HTTP library may carry the ``Authorization`` header. Every error text the LLM layer
produces goes through :func:`redact` before it is stored, logged or raised. It removes the keys the
clients of this process were given (:func:`register_secret`, done by every :class:`LLMClient`) and
anything shaped like a key whatever its value: ``Bearer <token>``, ``sk-...``, Google ``AIza...`` keys,
``api_key=...`` / ``"token": "..."`` pairs and the password of a URL (``https://user:pass@host``).
"""
from __future__ import annotations

import re
import threading

MASK = "[REDACTED]"
# shorter values are not keys (the placeholder "EMPTY", test values); masking them would garble text
_MIN_SECRET = 8
_SECRETS: set[str] = set()
_LOCK = threading.Lock()
_PATTERNS = (
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=*-]{6,}"), rf"\1 {MASK}"),
    (re.compile(r"\bsk-[A-Za-z0-9_*.-]{6,}"), MASK),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{20,}"), MASK),
    (re.compile(r"(://[^/\s:@]+:)[^@\s/]+@"), rf"\1{MASK}@"),  # a password in a URL: https://user:pass@host
    (re.compile(r"""(?i)((?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|x-api-key)["']?\s*[:=]\s*["']?)"""
                r"""[^\s"',}]{6,}"""), rf"\1{MASK}"),
)


def register_secret(value: str | None) -> None:
    """Mask ``value`` (an API key) in every text :func:`redact` sees from now on, in this process."""
    if value and len(value) >= _MIN_SECRET:
        with _LOCK:
            _SECRETS.add(value)


def redact(text: str | None, *, patterns: bool = True) -> str | None:
    """``text`` with every registered key and (``patterns``) every key-shaped token masked.

    ``patterns=False`` masks the registered keys only. A model's answers are masked with the patterns too
    (:mod:`fincprg.llm.answer`): a server may echo a key into its output, and a query is never a key.
    """
    if not text:
        return text
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)  # a key holding another is masked whole
    for s in secrets:
        if s in text:
            text = text.replace(s, MASK)
    if patterns:
        for rx, repl in _PATTERNS:
            text = rx.sub(repl, text)
    return text
