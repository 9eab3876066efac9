"""Corpus readers: JSONL, CSV, a JSON array, or a directory of .txt/.md/.pdf reports.

Every reader yields :class:`Raw` (one input record with its ``file:line`` source) or
:class:`~fincprg.records.Rejection` (something that could not even be parsed). Nothing is
skipped without a record, except blank lines. A bad record never stops the others: JSON nested
too deep, an oversized CSV field, an unreadable file or folder and a broken symlink each become one
Rejection. Decoding is in :mod:`fincprg.ingest.decode`, listing a folder in :mod:`fincprg.ingest.walk`, reading a
PDF by its layout in :mod:`fincprg.ingest.pdf`.
"""
from __future__ import annotations

import csv
import io
import json
import logging
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fincprg.errors import InputError
from fincprg.ingest.decode import Undecodable, decode_lines
from fincprg.ingest.pdf import PdfProblem, read_report
from fincprg.ingest.walk import Problem, walk
from fincprg.records import Rejection

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md")
PDF_SUFFIXES = (".pdf",)
DOC_SUFFIXES = TEXT_SUFFIXES + PDF_SUFFIXES  # one report per file
TABLE_SUFFIXES = (".jsonl", ".csv", ".json")
# A directory may carry a dataset card; it is documentation, not a report.
_DOC_NAMES = {"readme.md", "readme.txt", "license", "license.txt", "license.md"}
_MAX_TITLE_CHARS = 80


@dataclass(frozen=True)
class Raw:
    """One input record before mapping: its fields and where it came from."""

    source: str  # "file:line"
    fields: dict[str, Any]


@dataclass
class ReadStats:
    """What the readers saw: files per encoding (e.g. {"utf-8": 3, "gbk": 1})."""

    encodings: Counter[str] = field(default_factory=Counter)
    files: int = 0


def _too_deep(path: Path, line: int) -> Rejection:
    return Rejection(source=f"{path}:{line}", reason="malformed_json",
                     detail=f"{path}:{line}: JSON nested too deeply to read (thousands of levels); "
                            "flatten the record or remove it")


def _undecodable(path: Path, line: int, enc: str, forced: str) -> Rejection:
    if forced != "auto":
        why = f"bytes are not valid {enc} (ingest.encoding); set ingest.encoding to the file's codec, or to auto"
    elif enc.startswith("utf-16") or enc.startswith("utf-32"):
        why = f"bytes are not valid {enc}, although the file starts with a {enc.upper()} byte-order mark"
    else:
        why = ("bytes are neither valid UTF-8 nor GBK/GB18030; re-save the file as UTF-8 (e.g. `iconv -f "
               "<encoding> -t utf-8`) or set ingest.encoding to its codec (e.g. big5, utf-16-le)")
    return Rejection(source=f"{path}:{line}", reason="undecodable", detail=f"{path}:{line}: {why}")


def _decode(path: Path, stats: ReadStats, encoding: str) -> tuple[list[str | None], str]:
    """The file's lines (None where one is undecodable) and the codec that read them, counted in ``stats``."""
    lines, enc = decode_lines(path.read_bytes(), encoding)
    stats.encodings[enc] += 1
    return lines, enc


def read_jsonl(path: Path, stats: ReadStats, encoding: str = "auto") -> Iterator[Raw | Rejection]:
    """One JSON object per line; blank lines are ignored."""
    lines, enc = _decode(path, stats, encoding)
    for i, line in enumerate(lines, 1):
        if line is None:
            yield _undecodable(path, i, enc, encoding)
            continue
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            yield Rejection(source=f"{path}:{i}", reason="malformed_json",
                            detail=f"{path}:{i}: not valid JSON ({e.msg} at column {e.colno}); "
                                   "each line must be one complete JSON object")
            continue
        except RecursionError:
            yield _too_deep(path, i)
            continue
        if not isinstance(obj, dict):
            yield Rejection(source=f"{path}:{i}", reason="bad_row",
                            detail=f"{path}:{i}: expected a JSON object, got {type(obj).__name__}; "
                                   "write one {{\"title\": ..., \"text\": ...}} object per line")
            continue
        yield Raw(f"{path}:{i}", obj)


def _decode_whole(path: Path, stats: ReadStats, encoding: str) -> tuple[list[str], Rejection | None]:
    """Decode a file that is one record (JSON array, .txt report): any undecodable line rejects it all."""
    lines, enc = _decode(path, stats, encoding)
    bad = next((i for i, ln in enumerate(lines, 1) if ln is None), None)
    if bad is not None:
        return [], _undecodable(path, bad, enc, encoding)
    return lines, None


def read_json(path: Path, stats: ReadStats, encoding: str = "auto") -> Iterator[Raw | Rejection]:
    """A JSON array of objects; the source is ``file:N`` with N the 1-based item number."""
    lines, rejected = _decode_whole(path, stats, encoding)
    if rejected is not None:
        yield rejected
        return
    try:
        data = json.loads("\n".join(ln or "" for ln in lines))
    except json.JSONDecodeError as e:
        yield Rejection(source=f"{path}:{e.lineno}", reason="malformed_json",
                        detail=f"{path}:{e.lineno}: not valid JSON ({e.msg}); a .json corpus must be one "
                               "array of objects (or use .jsonl, one object per line)")
        return
    except RecursionError:
        yield _too_deep(path, 1)
        return
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        yield Rejection(source=f"{path}:1", reason="bad_row",
                        detail=f"{path}: expected a JSON array of report objects")
        return
    for i, obj in enumerate(data, 1):
        if isinstance(obj, dict):
            yield Raw(f"{path}:{i}", obj)
        else:
            yield Rejection(source=f"{path}:{i}", reason="bad_row",
                            detail=f"{path}: item {i} is a {type(obj).__name__}, expected an object")


def read_csv(path: Path, stats: ReadStats, encoding: str = "auto") -> Iterator[Raw | Rejection]:
    """A CSV with a header row; the source line is the physical line where the row starts."""
    lines, enc = _decode(path, stats, encoding)
    for i, ln in enumerate(lines, 1):
        if ln is None:
            yield _undecodable(path, i, enc, encoding)
    # Undecodable lines become empty lines so csv line numbers stay true to the file.
    text = "\n".join(ln if ln is not None else "" for ln in lines)
    # the default limit (131072 characters) would abort the whole file at one long report body
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as e:  # the reader goes on with the next line
            yield Rejection(source=f"{path}:{start}", reason="bad_row",
                            detail=f"{path}:{start}: not a valid CSV row ({e}); fix the quoting")
            start = reader.line_num + 1
            continue
        if header is None:
            if not any(c.strip() for c in row):
                start = reader.line_num + 1
                continue
            header = [c.strip() for c in row]
            start = reader.line_num + 1
            continue
        line, start = start, reader.line_num + 1
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            yield Rejection(source=f"{path}:{line}", reason="bad_row",
                            detail=f"{path}:{line}: {len(row)} columns but the header has {len(header)}; "
                                   "quote fields that contain commas or line breaks")
            continue
        yield Raw(f"{path}:{line}", dict(zip(header, row, strict=True)))


def read_text_file(path: Path, stats: ReadStats, encoding: str = "auto",
                   report_id: str | None = None) -> Iterator[Raw | Rejection]:
    """One report per file: title = first non-empty line (or the file name when it is too long).

    The id is ``report_id`` (see :func:`text_ids`), else the file name without its suffix."""
    lines, rejected = _decode_whole(path, stats, encoding)
    if rejected is not None:
        yield rejected
        return
    strs = [ln.rstrip("\r") for ln in lines if ln is not None]
    first = next((k for k, ln in enumerate(strs) if ln.strip()), None)
    fields: dict[str, Any] = {"id": report_id or path.stem}
    if first is not None and (nxt := _title_after_masthead(strs, first)) is not None:
        # 「证券研究报告｜行业周报」 then the title: the masthead says the kind, the next line is the title
        fields["masthead"] = strs[first].strip()
        first = nxt
    title_line = strs[first].strip().lstrip("#").strip() if first is not None else ""
    if title_line and len(title_line) <= _MAX_TITLE_CHARS:
        title, body = title_line, "\n".join(strs[first + 1:])  # type: ignore[operator]
    else:
        title, body = path.stem, "\n".join(strs)
    yield Raw(f"{path}:1", {**fields, "title": title, "text": body.strip()})


def _title_after_masthead(strs: list[str], first: int) -> int | None:
    """The line of the title when the first line is a masthead (:func:`~fincprg.finance.reportkind.is_masthead`)
    and one of the next two lines reads as a report title (it names a company with its code, or a kind word
    before its colon); else None (the first line stays the title)."""
    from fincprg.finance.reportkind import is_masthead, title_kind

    if not is_masthead(strs[first]):
        return None
    nxt = [k for k in range(first + 1, min(len(strs), first + 4)) if strs[k].strip()][:2]
    return next((k for k in nxt if len(strs[k].strip()) <= _MAX_TITLE_CHARS and not is_masthead(strs[k])
                 and title_kind(strs[k]) is not None), None)


def read_pdf(path: Path, stats: ReadStats, encoding: str = "auto", report_id: str | None = None,
             pdf_rules: tuple[str, ...] | None = None) -> Iterator[Raw | Rejection]:
    """One report per PDF, read by layout (:mod:`fincprg.ingest.pdf`): the title from the first page's largest
    line, the body without page furniture (``pdf_rules``: the
    rules that remove it, those ingest.pdf_disable leaves on; None: all).
    ``encoding`` is unused (a PDF names its own); the id is ``report_id`` else the file name without .pdf. The
    Raw's ``_layout`` field counts what was removed per rule, its ``_layout_removed`` lists the removed segments
    (the stage writes them to layout_removed.jsonl)."""
    stats.encodings["pdf"] += 1
    rid = report_id or path.stem
    try:
        doc = read_report(path, None if pdf_rules is None else frozenset(pdf_rules))
    except PdfProblem as e:
        yield Rejection(source=f"{path}:1", report_id=rid, reason=e.reason, detail=f"{path}: {e}")
        return
    fields: dict[str, Any] = {"id": rid, "title": doc.title or path.stem, "text": doc.body,
                              "_layout": doc.summary(), "_layout_removed": doc.removed}
    if doc.date:
        fields["date"] = doc.date
    yield Raw(f"{path}:1", fields)


# ingest.format -> (file suffixes, reader): the one table the suffix lists and readers derive from.
FORMATS: dict[str, tuple[tuple[str, ...], Callable[[Path, ReadStats, str], Iterator[Raw | Rejection]]]] = {
    "jsonl": ((".jsonl",), read_jsonl),
    "csv": ((".csv",), read_csv),
    "json": ((".json",), read_json),
    "txt": (TEXT_SUFFIXES, read_text_file),
    "pdf": (PDF_SUFFIXES, read_pdf),
}
_READERS = {suffix: reader for suffixes, reader in FORMATS.values() for suffix in suffixes}
_MISSING_CORPUS = ("corpus {} does not exist; pass a .jsonl/.csv/.json file or a directory of .txt/.md/.pdf "
                   "files")


def require_corpus(corpus: Path) -> None:
    """Raise :class:`InputError` (the one "corpus does not exist" message) when ``corpus`` is missing."""
    if not corpus.exists():
        raise InputError(_MISSING_CORPUS.format(corpus))
    if not corpus.is_file() and not corpus.is_dir():
        raise InputError(f"corpus {corpus} is not a regular file or a folder (a pipe or device?); copy the data "
                         "into a .jsonl/.csv/.json file")


def _problem(p: Problem) -> Rejection:
    return Rejection(source=f"{p.path}/" if p.folder else f"{p.path}:1", reason=p.reason, detail=f"{p.path}: {p.why}")


def corpus_files(corpus: Path, fmt: str = "auto") -> tuple[list[Path], list[Rejection]]:
    """The files a corpus path stands for, in a stable order, and a Rejection for each folder or
    file entry that could not be listed or read (see :mod:`fincprg.ingest.walk`).

    A directory is read as JSONL/CSV/JSON tables when it holds any (a README.md beside them
    is documentation), else as one report per .txt/.md/.pdf file.
    """
    require_corpus(corpus)
    if corpus.is_file():
        return [corpus], []
    found = walk(corpus)
    want = FORMATS[fmt][0] if fmt in FORMATS else None
    if want is None:
        tables = [p for p in found.files if p.suffix.lower() in TABLE_SUFFIXES]
        want = TABLE_SUFFIXES if tables else DOC_SUFFIXES
    chosen = [p for p in found.files if p.suffix.lower() in want
              and not (want != TABLE_SUFFIXES and p.name.lower() in _DOC_NAMES)]
    # a broken entry may have been a report: one with a corpus suffix, or none (a link to a lost folder)
    maybe = want if fmt in FORMATS else TABLE_SUFFIXES + DOC_SUFFIXES
    problems = [_problem(p) for p in found.problems
                if p.folder or (p.path.suffix.lower() in (*maybe, "") and p.path.name.lower() not in _DOC_NAMES)]
    if not chosen and not problems:
        raise InputError(f"{corpus} holds no .jsonl/.csv/.json or .txt/.md/.pdf files; put reports there or pass a "
                         "file")
    return chosen, problems


def text_ids(corpus: Path, files: list[Path]) -> dict[Path, str]:
    """Report ids for .txt/.md/.pdf reports: the path under the corpus folder without its suffix.

    Files directly in the folder keep their bare name (``a.txt`` -> ``a``, as before); in sub-folders
    the relative path tells same-named files apart (``y2024/q1/r0``); two files that differ only in
    their suffix (``r0.md``, ``r0.txt``) keep it (``r0.md``).
    """
    if corpus.is_file():
        return {corpus: corpus.stem}
    rel = {p: p.relative_to(corpus) for p in files}
    base = {p: r.with_suffix("").as_posix() for p, r in rel.items()}
    n = Counter(base.values())
    return {p: b if n[b] == 1 else rel[p].as_posix() for p, b in base.items()}


def _read_file(path: Path, reader: Callable[..., Iterator[Raw | Rejection]], **kw: Any) -> Iterator[Raw | Rejection]:
    """One file's records; a file that cannot be read (or a reader that fails) becomes one Rejection
    and the corpus goes on with the next file."""
    try:
        yield from reader(path, **kw)
    except Undecodable as e:
        yield Rejection(source=f"{path}:1", reason="undecodable", detail=f"{path}: {e}")
    except OSError as e:
        yield Rejection(source=f"{path}:1", reason="unreadable",
                        detail=f"{path}: cannot read the file ({e.strerror or e}); check its permissions or "
                               "remove it from the corpus")
    except Exception as e:  # noqa: BLE001 - one file must not sink the corpus
        log.debug("reader failed on %s", path, exc_info=True)
        yield Rejection(source=f"{path}:1", reason="unreadable",
                        detail=f"{path}: the rest of this file could not be read ({type(e).__name__}: {e}); "
                               "fix or remove it")


def iter_corpus(corpus: Path, fmt: str, encoding: str, stats: ReadStats,
                pdf_rules: tuple[str, ...] | None = None) -> Iterator[Raw | Rejection]:
    """Every record of a corpus path (a file or a directory); ``pdf_rules`` as :func:`read_pdf` takes them."""
    files, problems = corpus_files(corpus, fmt)
    yield from problems
    ids = text_ids(corpus, [p for p in files if fmt in ("txt", "pdf") or p.suffix.lower() in DOC_SUFFIXES])
    for path in files:
        stats.files += 1
        if fmt == "auto":
            reader = _READERS.get(path.suffix.lower())
            if reader is None:
                raise InputError(f"{path}: cannot tell the format from the extension; set ingest.format "
                                 "(jsonl, csv, json, txt or pdf)")
        else:
            reader = FORMATS[fmt][1]
        extra: dict[str, Any] = {"report_id": ids[path]} if reader in (read_text_file, read_pdf) else {}
        if reader is read_pdf:
            extra["pdf_rules"] = pdf_rules
        yield from _read_file(path, reader, stats=stats, encoding=encoding, **extra)
