"""Decode corpus bytes into lines: by byte-order mark, by UTF-8/GBK majority, or with the codec named in
``ingest.encoding`` (any text codec Python knows).

Lines come back one by one, with ``None`` for a line that does not decode, so one corrupt byte rejects one
line instead of the file. UTF-16/UTF-32 cannot be split on the byte ``\\n`` (it is two or four bytes there),
so such files are decoded whole and an undecodable stretch marks the lines it falls in.
"""
from __future__ import annotations

import codecs

from fincprg.io import text_codec  # noqa: F401 - re-exported: ingest names codecs with it

# UTF-32 LE's mark begins with UTF-16 LE's (FF FE), so the longer marks are tried first.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_PROBE = "\n{}[]:,\"aZ09 "
_BAD = "\udc00"  # marks undecodable bytes: a strict decoder never yields a lone surrogate itself
codecs.register_error("fincprg-mark", lambda e: (_BAD, e.end))  # type: ignore[arg-type]


class Undecodable(ValueError):
    """The whole file cannot be decoded (the message says why and what to set)."""


def ascii_compatible(codec: str) -> bool:
    """Whether ASCII (JSON/CSV syntax, the line break) is the same bytes in ``codec``: then lines split on b"\\n"."""
    try:
        return _PROBE.encode("ascii").decode(codec) == _PROBE
    except (UnicodeError, LookupError):
        return False


def bom(data: bytes) -> str | None:
    """The Unicode encoding a byte-order mark at the start of ``data`` names, if any."""
    return next((enc for mark, enc in _BOMS if data.startswith(mark)), None)


def _utf8(b: bytes) -> str | None:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _gbk(b: bytes) -> tuple[str, str] | None:
    # GB18030 is a superset of GBK; report "gbk" when plain GBK suffices (the usual case).
    for enc in ("gbk", "gb18030"):
        try:
            return b.decode(enc), enc
        except UnicodeDecodeError:
            continue
    return None


def _per_line(raw_lines: list[bytes], codec: str) -> list[str | None]:
    out: list[str | None] = []
    for b in raw_lines:
        try:
            out.append(b.decode(codec))
        except UnicodeDecodeError:
            out.append(None)
    return out


def _whole(data: bytes, codec: str) -> list[str | None]:
    """Decode a file whose line break is not the byte ``\\n``; a line holding undecodable bytes is None."""
    text = data.decode(codec, "fincprg-mark")
    return [None if _BAD in ln else ln for ln in text.split("\n")]


def _utf8_share(b: bytes) -> float:
    """The share of a line's non-ASCII bytes that form valid UTF-8 characters."""
    high = sum(x >= 0x80 for x in b)
    return sum(x >= 0x80 for x in b.decode("utf-8", "ignore").encode("utf-8")) / high if high else 1.0


def _with_gbk_lines(raw_lines: list[bytes], decoded: list[str | None]) -> tuple[list[str | None], str]:
    """A UTF-8 file's lines, where a line that is GBK/GB18030 text is read as that: files joined from exports of
    both encodings exist. A UTF-8 line with a corrupt stretch stays undecodable (None): most of its non-ASCII
    bytes still form UTF-8 characters, where in GBK Chinese about a third do by chance. The encoding names the
    mix ("utf-8+gbk") so that the manifest shows it."""
    out, extra = list(decoded), set()
    for i, (b, u) in enumerate(zip(raw_lines, decoded)):
        if u is None and _utf8_share(b) < 0.6 and (g := _gbk(b)) is not None:
            out[i], _ = g
            extra.add(g[1])
    return out, "+".join(["utf-8", *sorted(extra)])


def decode_lines(data: bytes, forced: str = "auto") -> tuple[list[str | None], str]:
    """Decode a file line by line; undecodable lines come back as ``None``. Returns the lines and the encoding.

    ``auto``: a UTF-8/16/32 byte-order mark decides; otherwise the encoding is chosen by majority over
    the non-ASCII lines (UTF-8 unless most of them only decode as GBK/GB18030). Any other value is a
    Python codec name (checked by the config), used for every line.

    Raises:
        Undecodable: ``auto`` found many NUL bytes and no byte-order mark (UTF-16/32 without a mark).
    """
    lines, enc = _decode(data, forced)
    if lines and lines[0] is not None and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]  # a mark that the codec keeps (utf-8, utf-16-le named explicitly)
    return lines, enc


def _decode(data: bytes, forced: str) -> tuple[list[str | None], str]:
    marked = bom(data)
    if forced != "auto":
        codec = "gb18030" if forced == "gbk" else forced  # GB18030 reads every GBK file, and more
        if not ascii_compatible(codec):
            return _whole(data, codec), forced
        return _per_line(data.split(b"\n"), codec), forced
    if marked in ("utf-16", "utf-32"):
        return _whole(data, marked), marked  # the codec reads the mark and its byte order
    if marked == "utf-8":
        data = data[len(codecs.BOM_UTF8):]  # before the vote, so a GBK majority does not read it as 锘
    elif data.count(0) > max(1, len(data) // 10):
        # NUL is valid UTF-8, so without this a UTF-16 file would "decode" into lines of NULs
        raise Undecodable(f"{data.count(0)} of its {len(data)} bytes are NUL and it has no byte-order mark: it "
                          "looks like UTF-16 or UTF-32; set ingest.encoding to its codec (e.g. utf-16-le, "
                          "utf-16-be) or re-save it as UTF-8")
    raw_lines = data.split(b"\n")
    utf8_votes = gbk_votes = 0
    decoded_u: list[str | None] = []
    for b in raw_lines:
        u = _utf8(b)
        decoded_u.append(u)
        if b.isascii():
            continue
        if u is not None:
            utf8_votes += 1
        elif _gbk(b) is not None:
            gbk_votes += 1
    if gbk_votes <= utf8_votes:
        return _with_gbk_lines(raw_lines, decoded_u)
    out: list[str | None] = []
    used = "gbk"
    for b in raw_lines:
        g = _gbk(b)
        if g and g[1] == "gb18030":
            used = "gb18030"
        out.append(g[0] if g else None)
    return out, used
