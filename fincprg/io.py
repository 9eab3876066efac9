"""Crash-safe file I/O: whole fsynced JSONL lines, and temp-file + rename for everything else.

Ground floor: imports nothing of fincprg but :mod:`fincprg.errors`, so every floor above (layout, the stages,
the engine, the tools) can use it.
"""
from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from pydantic import BaseModel

from fincprg.errors import InputError

M = TypeVar("M", bound=BaseModel)


def text_codec(name: str) -> str:
    """The canonical name of a text codec (``UTF8`` -> ``utf-8``); ValueError for an unknown or non-text one.

    Here, not in :mod:`fincprg.ingest.decode`, because the config validates ``ingest.encoding`` with it and
    the config sits below the stages."""
    try:
        "a".encode(name)  # LookupError for unknown names and for bytes-to-bytes codecs (base64, rot13)
        return codecs.lookup(name).name
    except LookupError:
        raise ValueError(f"{name!r} is not a text encoding Python knows; use auto, or a codec name such as "
                         "utf-8, gbk, gb18030, big5, utf-16 or utf-16-le") from None


def record_line(obj: BaseModel | dict[str, Any]) -> str:
    if isinstance(obj, BaseModel):
        return obj.model_dump_json()
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)


@contextlib.contextmanager
def atomic_writer(path: Path) -> Iterator[Callable[[str], Any]]:
    """Write text to ``path`` piece by piece through a temp file, renamed over it only when the block
    succeeds: a failure, a full disk or a kill leaves the old file (or none), never a half-written one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    f = open(tmp, "w", encoding="utf-8")  # noqa: SIM115 - closed below, where a failed close must not hide why

    def write(text: str) -> int:
        try:
            return f.write(text)
        except OSError as e:
            _raise_named(e, path)

    try:
        yield write
        try:
            f.flush()
            os.fsync(f.fileno())
            f.close()
        except OSError as e:
            _raise_named(e, path)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            f.close()  # flushing the rest fails again on a full disk; the first error is the one to report
        tmp.unlink(missing_ok=True)  # a full disk must not leave a half-written temp file behind
        raise


def _raise_named(e: OSError, path: Path) -> NoReturn:
    """A write error names no file ("No space left on device"); the user needs to know which one."""
    if e.filename or not e.errno:
        raise e
    raise OSError(e.errno, e.strerror, str(path)) from e


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_writer(path) as write:
        write(text)


def _beside(dest: Path, tag: str) -> Path:
    return dest.with_name(f".{dest.name}.{tag}")


def staging_dir(dest: Path) -> Path:
    """A fresh, empty folder beside ``dest`` to write its replacement into (then :func:`swap_in`).

    A ``dest`` that a kill between the two renames of :func:`swap_in` left aside is put back first, and
    the leftovers of a failed or killed earlier attempt are removed (they may fill a disk).
    """
    recover_staging(dest)
    new = _beside(dest, "new")
    new.mkdir(parents=True)
    return new


def recover_staging(dest: Path) -> None:
    """Undo what a kill left beside ``dest``: a ``dest`` moved aside between the two renames of :func:`swap_in`
    is put back, and a half-written replacement or an old copy not yet deleted is removed (they may fill a disk).

    The runner calls it for every staged stage at the start of a build, also when the stage is then skipped."""
    new, old = _beside(dest, "new"), _beside(dest, "old")
    if old.is_dir() and not dest.exists():
        os.replace(old, dest)
    for d in (new, old):
        if d.exists():
            shutil.rmtree(d)


def swap_in(new: Path, dest: Path) -> None:
    """Replace folder ``dest`` by the complete folder ``new`` (same file system, so both moves are renames):
    the old ``dest`` moves aside, ``new`` takes its place, and only then is the old one deleted. A failed
    rename puts the old one back; there is never a moment when a half-written ``dest`` exists."""
    old = _beside(dest, "old")
    if dest.exists():
        os.replace(dest, old)
    try:
        os.replace(new, dest)
    except BaseException:
        if old.exists() and not dest.exists():
            os.replace(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)


def discard_staging(dest: Path) -> None:
    """Remove what a failed attempt wrote beside ``dest`` (``dest`` itself is untouched)."""
    shutil.rmtree(_beside(dest, "new"), ignore_errors=True)


def count_lines(path: Path) -> int:
    """Non-empty lines of a JSONL file (its records), without parsing them."""
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip())


def batch_lines(result: dict[str, Iterable[BaseModel | dict[str, Any]]]) -> dict[str, list[str]]:
    """A batch function's records as JSONL lines per output file (what both engines append)."""
    return {name: [record_line(r) for r in recs] for name, recs in result.items()}


def atomic_write_json(path: Path, obj: Any, *, compact: bool = False) -> None:
    """JSON, keys sorted; ``compact`` for large data files (no indent: json's C encoder, ~10x faster)."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=None if compact else 2, sort_keys=True,
                                       default=str) + "\n")


def atomic_write_jsonl(path: Path, records: Iterable[BaseModel | dict[str, Any]]) -> int:
    """Write records as JSONL atomically, streaming (records may be a generator); returns how many."""
    n = 0
    with atomic_writer(path) as write:
        for r in records:
            write(record_line(r) + "\n")
            n += 1
    return n


def read_jsonl(path: Path, model: type[M] | None = None) -> Iterator[Any]:
    """Yield records (validated into ``model`` when given) from a JSONL file written by a stage."""
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line) if model else json.loads(line)
            except Exception as e:  # noqa: BLE001 - re-raised with location
                raise InputError(f"{path}:{i}: cannot read record: {e}") from e


class JsonlAppender:
    """Appends whole lines; ``commit()`` flushes and fsyncs, returning the committed byte offset."""

    def __init__(self, path: Path, truncate_to: int | None = None):
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = "r+b" if path.exists() else "w+b"
        self._f = open(path, mode)  # noqa: SIM115 - closed in close()
        if truncate_to is not None:
            self._f.truncate(truncate_to)
        self._f.seek(0, os.SEEK_END)
        self.path = path

    def write(self, obj: BaseModel | dict[str, Any]) -> None:
        self.write_line(record_line(obj))

    def write_line(self, line: str) -> None:
        """Append one already serialised record (see :func:`record_line`)."""
        self._f.write((line + "\n").encode("utf-8"))

    def commit(self) -> int:
        try:
            self._f.flush()
            os.fsync(self._f.fileno())
        except OSError as e:
            _raise_named(e, self.path)
        return self._f.tell()

    def close(self) -> None:
        self._f.close()


def hash_files(paths: Iterable[Path], root: Path | None = None) -> str:
    """Content hash of files (names relative to ``root`` included, so renames count)."""
    h = hashlib.sha256()
    update_hash(h, paths, root)
    return h.hexdigest()[:16]


def update_hash(h: Any, paths: Iterable[Path], root: Path | None = None, *, unreadable_ok: bool = False) -> None:
    """Feed :func:`hash_files`'s bytes for ``paths`` into ``h``. ``unreadable_ok``: a file that cannot be
    read is hashed by its name and error instead of raising (the corpus hash: ingest rejects that file)."""
    for p in sorted(paths):
        name = str(p.relative_to(root)) if root else p.name
        h.update(name.encode("utf-8", "surrogateescape"))  # a file name that is not UTF-8 must not crash
        h.update(b"\0")
        try:
            with open(p, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        except OSError as e:
            if not unreadable_ok:
                raise
            h.update(f"unreadable: {e.strerror or e}".encode("utf-8", "backslashreplace"))
        h.update(b"\0")
