"""Tolerant JSON parsing for LLM answers: code fences, surrounding prose, small syntax slips."""
from __future__ import annotations

import json
import re
from typing import Any

_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON|jsonc|javascript)?[ \t]*\r?\n?(.*?)```", re.S)
_OPENERS = {"{": "}", "[": "]"}


class JSONParseError(ValueError):
    """The text holds no JSON object or array, even after repair."""


def _candidates(text: str) -> list[str]:
    """Substrings worth trying, most specific first."""
    out: list[str] = []
    fenced = _FENCE_RE.findall(text)
    out.extend(f.strip() for f in fenced if f.strip())
    # An unterminated fence (answer cut off by max_tokens): take everything after the opening fence.
    if not fenced and "```" in text:
        tail = re.sub(r"^[ \t]*(?:json|JSON)?[ \t]*\r?\n?", "", text.split("```", 1)[1])
        out.append(tail.strip())
    out.append(text.strip())
    return out


def _first_json_value(text: str) -> Any:
    """Decode the first complete JSON object/array that starts somewhere in ``text``."""
    dec = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in _OPENERS:
            try:
                value, _ = dec.raw_decode(text, i)
            except ValueError:
                continue
            if isinstance(value, (dict, list)):
                return value
    raise JSONParseError("no complete JSON object or array found")


def parse_json(text: str | None) -> Any:
    """Parse the JSON object or array in an LLM answer.

    Tries, in order: each fenced block / the whole text as strict JSON; the first complete JSON
    value embedded in surrounding prose; then ``json_repair`` on the span from the first ``{`` or
    ``[`` (fixes missing quotes, trailing commas, single quotes, truncation).

    Args:
        text: the raw assistant message.

    Returns:
        The decoded ``dict`` or ``list``.

    Raises:
        JSONParseError: nothing JSON-like could be recovered.
    """
    if text is None or not text.strip():
        raise JSONParseError("empty answer")
    cands = _candidates(text)
    for c in cands:
        try:
            value = json.loads(c)
        except ValueError:
            continue
        if isinstance(value, (dict, list)):
            return value
    for c in cands:
        try:
            return _first_json_value(c)
        except JSONParseError:
            continue
    import json_repair  # light, but only needed for broken answers

    for c in cands:
        starts = [i for i in (c.find("{"), c.find("[")) if i >= 0]
        if not starts:
            continue
        span = c[min(starts):]
        try:
            value = json_repair.loads(span)
        except Exception:  # json_repair raises rarely, but an answer must never crash the caller
            continue
        if isinstance(value, (dict, list)) and value not in ({}, []):
            return value
    raise JSONParseError(f"no JSON object or array could be recovered from: {text[:120]!r}")
