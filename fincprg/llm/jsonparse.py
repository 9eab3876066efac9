"""Tolerant JSON parsing for LLM answers: code fences, surrounding prose, small syntax slips.

:func:`parse_json_detailed` also says whether the value had to be repaired and whether the answer
was cut off before its JSON closed (``max_tokens``, a dropped connection): a repaired truncated
answer looks complete, but its last string may end mid-word (``"销售费用率为18.6``), so callers must
not use that string as if the model had finished it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON|jsonc|javascript)?[ \t]*\r?\n?(.*?)```", re.S)
_OPENERS = {"{": "}", "[": "]"}
# json and json_repair recurse once per nesting level: a hostile or degenerate answer of 100k "["
# must be a parse error, not a RecursionError that escapes the caller's error handling
_DECODE_ERRORS = (ValueError, RecursionError)


class JSONParseError(ValueError):
    """The text holds no JSON object or array, even after repair."""


@dataclass(frozen=True)
class ParsedJSON:
    """A decoded answer and how much it could be trusted.

    Attributes:
        value: the decoded ``dict`` or ``list``.
        repaired: strict JSON failed; ``json_repair`` filled the gaps.
        truncated: the JSON text ends before its brackets close (the answer was cut off).
        cut_string: ``truncated`` inside a string: the last string value is incomplete.
    """

    value: Any
    repaired: bool = False
    truncated: bool = False
    cut_string: bool = False


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


def _cut_off(span: str) -> tuple[bool, bool]:
    """(truncated, inside a string) for a JSON span that failed strict decoding.

    The span is cut off when its first value never closes and the text does not end on a closing
    bracket (an answer broken in the middle, e.g. a missing quote, still ends with ``}``).
    """
    depth, in_str, esc = 0, False, False
    for ch in span:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return False, False
    tail = span.rstrip().removesuffix("```").rstrip()
    if depth > 0 and not tail.endswith(("}", "]")):
        return True, in_str
    return False, False


def _embedded_json_value(text: str) -> ParsedJSON:
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
            except _DECODE_ERRORS:
                if first_failed is None:
                    first_failed = i
            else:
                if best is None or end - i > best[1] - best[0]:
                    best = (i, end, value)
                i = end  # skip values nested inside this one
                continue
        i += 1
    if first_failed is not None and (best is None or first_failed < best[0]):
        span = text[first_failed:]
        repaired = _repair(span)
        if repaired is not None and (
            best is None or len(json.dumps(repaired, ensure_ascii=False)) > best[1] - best[0]
        ):
            truncated, cut = _cut_off(span)
            return ParsedJSON(repaired, repaired=True, truncated=truncated, cut_string=cut)
    if best is not None:
        return ParsedJSON(best[2])
    raise JSONParseError("no JSON object or array found")


def parse_json_detailed(text: str | None) -> ParsedJSON:
    """Parse the JSON object or array in an LLM answer, saying whether it was repaired or cut off.

    Tries, in order: each fenced block / the whole text as strict JSON; the first complete JSON
    value embedded in surrounding prose; then ``json_repair`` on the span from the first ``{`` or
    ``[`` (fixes missing quotes, trailing commas, single quotes, truncation).

    Args:
        text: the raw assistant message.

    Returns:
        A :class:`ParsedJSON` whose ``value`` is the decoded ``dict`` or ``list``.

    Raises:
        JSONParseError: nothing JSON-like could be recovered (never another exception).
    """
    if text is None or not text.strip():
        raise JSONParseError("empty answer")
    cands = _candidates(text)
    for c in cands:
        try:
            value = json.loads(c)
        except _DECODE_ERRORS:
            continue
        if isinstance(value, (dict, list)):
            return ParsedJSON(value)
    for c in cands:
        try:
            return _embedded_json_value(c)
        except JSONParseError:
            continue
    raise JSONParseError(f"no JSON object or array could be recovered from: {text[:120]!r}")


def parse_json(text: str | None) -> Any:
    """The decoded ``dict`` or ``list`` of :func:`parse_json_detailed` (same rules, same errors)."""
    return parse_json_detailed(text).value
