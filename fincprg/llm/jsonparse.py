"""Tolerant JSON parsing for LLM answers: code fences, surrounding prose, small syntax slips.

:func:`parse_json_detailed` also says whether the value had to be repaired and whether the answer
was cut off before its JSON closed (``max_tokens``, a dropped connection): a repaired truncated
answer looks complete, but its last string may end mid-word (``"销售费用率为18.6``), so callers must
not use that string as if the model had finished it.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_FENCE_RE = re.compile(r"```[ \t]*(?:json|JSON|jsonc|javascript)?[ \t]*\r?\n?(.*?)```", re.S)
_OPENERS = {"{": "}", "[": "]"}
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
# json and json_repair recurse once per nesting level: a hostile or degenerate answer of 100k "["
# must be a parse error, not a RecursionError that escapes the caller's error handling
_DECODE_ERRORS = (ValueError, RecursionError)
# answers (query trees, intents, verdicts) nest a few levels; deeper text is refused before the
# repair path, whose cost grows with depth (json_repair takes minutes on 100k nested brackets)
MAX_DEPTH = 64


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


def _whole_characters(value: Any) -> Any:
    """``value`` with escaped surrogate pairs joined ("\\ud83d\\ude00" -> one character; json_repair
    leaves them apart) and lone surrogates replaced by U+FFFD: a lone surrogate cannot be written as
    UTF-8, so one odd answer would otherwise fail the stage when its records are saved."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_whole_characters(v) for v in value]
    if isinstance(value, dict):
        return {_whole_characters(k): _whole_characters(v) for k, v in value.items()}
    return value


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


def _string_states(text: str) -> Iterator[tuple[str, bool]]:
    """Each character with whether it lies inside a JSON string literal (an opening quote is inside, a closing
    one outside): the one scanner the bracket counters below share."""
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        yield ch, in_str


def _cut_off(span: str) -> tuple[bool, bool]:
    """(truncated, inside a string) for a JSON span that failed strict decoding.

    The span is cut off when its first value never closes and the text does not end on a closing
    bracket (an answer broken in the middle, e.g. a missing quote, still ends with ``}``).
    """
    depth, in_str = 0, False
    for ch, in_str in _string_states(span):
        if in_str:
            continue
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth <= 0:
                return False, False
    tail = span.rstrip().removesuffix("```").rstrip()
    if depth > 0 and not tail.endswith(("}", "]")):
        return True, in_str
    return False, False


_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")
_PARTIAL_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?$")


def _complete(span: str) -> tuple[Any, bool] | None:
    """Close a JSON text that was cut off mid-way, keeping every finished string exactly as written.

    Walks the text as a JSON tokenizer; at the end closes an open string (its cut-off escape
    dropped), drops a dangling comma, key or partial literal, and closes the open brackets. Returns
    ``(value, cut inside a string)``, or None when the text is not a clean prefix of JSON (then
    ``json_repair`` has a go). json_repair alone may alter finished strings of a cut-off answer.
    """
    frames: list[list[Any]] = []  # [closer, expecting, position of the last comma]
    i, n = 0, len(span)
    str_start = -1
    while i < n:
        ch = span[i]
        if ch in " \t\r\n":
            i += 1
            continue
        if not frames and i > 0:
            return None  # the value closed: not a cut-off prefix
        top = frames[-1] if frames else None
        want = top[1] if top else "value"
        if ch == '"':
            if want not in ("key", "value"):
                return None
            j, str_start = i + 1, i
            while j < n and span[j] != '"':
                j += 2 if span[j] == "\\" else 1
            if j >= n:
                break  # cut inside this string
            str_start = -1
            if top:
                top[1] = "colon" if want == "key" else "comma"
            i = j + 1
        elif ch in "{[":
            if want != "value":
                return None
            if top:
                top[1] = "comma"  # what the parent expects once this child closes
            frames.append(["}" if ch == "{" else "]", "key" if ch == "{" else "value", -1])
            i += 1
        elif ch in "}]:,":
            if not _punctuation(ch, frames, i):
                return None
            i += 1
        else:
            m = _LITERAL.match(span, i)
            if want != "value" or not m or m.end() == n:
                if want == "value" and span[i] in "-0123456789tfn":
                    break  # a literal cut at the end: dropped below
                return None
            if top:
                top[1] = "comma"
            i = m.end()
    return _close(span, i, str_start, frames) if frames else None


def _punctuation(ch: str, frames: list[list[Any]], i: int) -> bool:
    """Apply the closing bracket, colon or comma at ``i`` to the open ``frames``; False where clean JSON has none."""
    top = frames[-1] if frames else None
    want = top[1] if top else "value"
    if ch in "}]":
        empty = want == ("key" if ch == "}" else "value") and top is not None and top[2] < 0
        if not top or ch != top[0] or not (want == "comma" or empty):
            return False  # a mismatched bracket or a trailing comma: not clean JSON
        frames.pop()
    elif ch == ":":
        if not top or want != "colon":
            return False
        top[1] = "value"
    else:
        if not top or want != "comma":
            return False
        top[1], top[2] = ("key" if top[0] == "}" else "value"), i
    return True


def _close(span: str, i: int, str_start: int, frames: list[list[Any]]) -> tuple[Any, bool] | None:
    """Close the prefix ``span[:i]`` that :func:`_complete` walked (``str_start``: where a cut-off string opened,
    else -1): finish that string, drop a dangling comma, fill a missing value, close the brackets, decode."""
    text, cut_string = span[:i], str_start >= 0
    if cut_string:
        body = _PARTIAL_ESCAPE.sub("", span[str_start + 1:])
        text = span[:str_start] + '"' + body + '"'
        top = frames[-1]
        top[1] = "colon" if top[1] == "key" else "comma"
    top = frames[-1]
    if top[1] == "colon":
        text += ": null"
    elif top[1] in ("key", "value") and top[2] >= 0 and not text[top[2] + 1:].strip():
        text = text[:top[2]]  # a dangling comma
    elif top[1] == "value" and top[0] == "}":
        text += "null"  # "key": <cut>
    text += "".join(f[0] for f in reversed(frames))
    try:
        value = json.loads(text)
    except _DECODE_ERRORS:
        return None
    return value, cut_string


def _depth(text: str) -> int:
    """The deepest bracket nesting outside strings."""
    depth = deepest = 0
    for ch, in_str in _string_states(text):
        if in_str:
            continue
        if ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]":
            depth = max(0, depth - 1)
    return deepest


def _embedded_json_value(text: str) -> ParsedJSON:
    """The JSON object/array embedded in prose.

    Takes the longest strictly-decodable value (so ``"see [1]: {...}"`` gives the object). If an
    opener before it failed to decode, that is usually a broken outer object around a valid inner
    list, so the repaired outer value wins when it is larger.
    """
    if _depth(text) > MAX_DEPTH:
        raise JSONParseError(f"the answer nests brackets more than {MAX_DEPTH} levels deep")
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
        closed = _complete(span.rstrip().removesuffix("```").rstrip())
        if closed is not None and isinstance(closed[0], (dict, list)) and closed[0] not in ({}, []):
            return ParsedJSON(closed[0], repaired=True, truncated=True, cut_string=closed[1])
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
    parsed = _parse(text)
    if _SURROGATE_HINT.search(text):
        return ParsedJSON(_whole_characters(parsed.value), parsed.repaired, parsed.truncated, parsed.cut_string)
    return parsed


def _parse(text: str) -> ParsedJSON:
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
