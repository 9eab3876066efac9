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


def _repair(text: str) -> Any:
    import json_repair  # only needed for broken answers

    try:
        value = json_repair.loads(text)
    except Exception:  # json_repair rarely raises, but an answer must never crash the caller
        return None
    return value if isinstance(value, (dict, list)) and value not in ({}, []) else None


def _embedded_json_value(text: str) -> Any:
    """The JSON object/array embedded in prose.

    Takes the longest strictly-decodable value (so ``"see [1]: {...}"`` gives the object). If an
    opener before it failed to decode, that is usually a broken outer object around a valid inner
    list, so the repaired outer value wins when it is larger.
    """
    dec = json.JSONDecoder()
    best: tuple[int, int, Any] | None = None  # start, end, value
    first_failed: int | None = None
    i = 0
    while i < len(text):
        if text[i] in _OPENERS:
            try:
                value, end = dec.raw_decode(text, i)
            except ValueError:
                if first_failed is None:
                    first_failed = i
            else:
                if best is None or end - i > best[1] - best[0]:
                    best = (i, end, value)
                i = end  # skip values nested inside this one
                continue
        i += 1
    if first_failed is not None and (best is None or first_failed < best[0]):
        repaired = _repair(text[first_failed:])
        if repaired is not None and (
            best is None or len(json.dumps(repaired, ensure_ascii=False)) > best[1] - best[0]
        ):
            return repaired
    if best is not None:
        return best[2]
    raise JSONParseError("no JSON object or array found")


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
            return _embedded_json_value(c)
        except JSONParseError:
            continue
    raise JSONParseError(f"no JSON object or array could be recovered from: {text[:120]!r}")
