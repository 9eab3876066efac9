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
import threading
from pathlib import Path
from typing import Any


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of what determines an answer."""
    payload = {"model": model, "messages": messages, "params": params}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A tiny key -> JSON store in ``<cache_dir>/llm/responses.sqlite3``."""

    def __init__(self, cache_dir: Path) -> None:
        folder = Path(cache_dir) / "llm"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "responses.sqlite3"
        self._lock = threading.Lock()
        # check_same_thread=False: chat_many may run its event loop in a worker thread.
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        blob = json.dumps(value, ensure_ascii=False)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)", (key, blob))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
