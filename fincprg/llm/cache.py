"""On-disk LLM response cache: one SQLite file, keyed by the hash of model + messages + parameters.

SQLite (WAL) is used instead of one-file-per-answer because a build may cache hundreds of thousands
of answers, and a killed run must never leave a half-written entry (each insert is a transaction).
Only what the server answered is stored (text, usage, finish reason, model) - never request
headers, so the API key cannot end up here.
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import logging
import threading
from pathlib import Path
from typing import Any

from fincprg.errors import FincprgError

log = logging.getLogger(__name__)


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of what determines an answer."""
    payload = {"model": model, "messages": messages, "params": params}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CacheError(FincprgError):
    """The LLM response cache cannot be opened or written; the message names the file and the fix."""


_FIX = ("the cache folder must be writable and its disk not full: free some space, choose another folder with "
        "--set run.cache_dir=DIR (default OUT/.cache), or turn the cache off with --set llm.cache=false (a "
        "killed or --retry-failed build then asks every answer again)")


class ResponseCache:
    """A tiny key -> JSON store in ``<cache_dir>/llm/responses.sqlite3``.

    Opening checks that the file can be written (a probe insert, rolled back) and raises
    :class:`CacheError` when not (read-only folder, no permission, full disk), before any request is
    paid for. A read or write that fails later (the disk filled up meanwhile) is a warning, once, and
    the cache is off for the rest of the run: the answers in hand are still used, but a re-run asks
    the ones that could not be saved again. ``errors`` counts those failures.
    """

    def __init__(self, cache_dir: Path) -> None:
        folder = Path(cache_dir) / "llm"
        self.path = folder / "responses.sqlite3"
        self._lock = threading.Lock()
        self.errors = 0
        self._broken = False
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # check_same_thread=False: chat_many may run its event loop in a worker thread.
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self._db.execute("BEGIN IMMEDIATE")  # a read-only file or folder fails here or at the insert
            try:
                self._db.execute("INSERT OR REPLACE INTO responses (key, value) VALUES ('', '{}')")
            finally:
                self._db.execute("ROLLBACK")
        except (sqlite3.Error, OSError) as e:
            db = getattr(self, "_db", None)
            if db is not None:
                db.close()
            raise CacheError(f"cannot use the LLM response cache {self.path}: {_reason(e)}; {_FIX}") from None

    def _failed(self, what: str, e: Exception) -> None:
        self.errors += 1
        if not self._broken:
            self._broken = True
            log.warning("the LLM response cache %s cannot be %s (%s); continuing without it: answers are still "
                        "used, but a re-run asks again the ones not saved. %s", self.path, what, _reason(e), _FIX)

    def get(self, key: str) -> dict[str, Any] | None:
        if self._broken:
            return None
        try:
            with self._lock:
                row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
            return json.loads(row[0]) if row else None
        except (sqlite3.Error, ValueError) as e:  # ValueError: a damaged value
            self._failed("read", e)
            return None

    def put(self, key: str, value: dict[str, Any]) -> None:
        if self._broken:
            self.errors += 1
            return
        blob = json.dumps(value, ensure_ascii=False)
        try:
            with self._lock:
                self._db.execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, blob))
        except sqlite3.Error as e:
            self._failed("written", e)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            try:
                self._db.close()
            except sqlite3.Error:  # closing checkpoints the WAL, which a full disk may refuse
                pass


def _reason(e: Exception) -> str:
    if isinstance(e, OSError) and e.strerror:
        return f"{e.strerror}" + (f": {e.filename}" if e.filename else "")
    return f"{type(e).__name__}: {e}"
