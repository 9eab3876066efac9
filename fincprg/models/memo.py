"""The per-process memo of encoded rows (:data:`MEMO`), apart from the encoders so that the model loaders can
clear it without importing them."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np


class EncodeMemo:
    """Encoded rows by key, the least recently used dropped beyond ``max_rows``; optionally on disk.

    One per process (:data:`MEMO`). ``persist(path)`` loads an ``.npz`` written by :meth:`save` and
    makes :meth:`save` write there; without it the memo lives and dies with the process.
    """

    def __init__(self, max_rows: int = 1 << 18):  # 2^18 rows of 384 floats: ~400 MB at most
        self.max_rows = max_rows
        self.path: Path | None = None
        self._rows: OrderedDict[str, np.ndarray] = OrderedDict()
        self.hits = self.misses = 0

    def rows(self, keys: list[str], texts: Sequence[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """One row per key: memoised ones looked up, the rest from ``encode(their texts)`` (each once)."""
        if not keys:
            return encode([])
        got: dict[str, np.ndarray] = {}
        for k in keys:
            if k in self._rows:
                self._rows.move_to_end(k)
                got[k] = self._rows[k]
        todo = {k: t for k, t in zip(keys, texts) if k not in got}
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        if todo:
            got.update(zip(todo, encode(list(todo.values()))))
            self._rows.update((k, got[k]) for k in todo)
            while len(self._rows) > self.max_rows:
                self._rows.popitem(last=False)
        return np.stack([got[k] for k in keys])  # a fresh array: callers may write into it

    def persist(self, path: Path) -> None:
        """Load the rows saved at ``path`` (if any) and save there from now on."""
        self.path = Path(path)
        if self.path.exists():
            with np.load(self.path) as z:  # keys<dim>/rows<dim> pairs: models of different widths side by side
                for name in (f for f in z.files if f.startswith("keys")):
                    self._rows.update(zip(z[name].tolist(), z["rows" + name[4:]]))

    def save(self) -> None:
        if self.path is None or not self._rows:
            return
        by_dim: dict[int, list[str]] = {}
        for k, v in self._rows.items():
            by_dim.setdefault(v.shape[0], []).append(k)
        arrays = {}
        for d, ks in by_dim.items():
            arrays[f"keys{d}"], arrays[f"rows{d}"] = np.array(ks), np.stack([self._rows[k] for k in ks])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, **arrays)
        tmp.replace(self.path)

    def clear(self) -> None:
        """Forget every row and the file (the file itself stays)."""
        self._rows.clear()
        self.path, self.hits, self.misses = None, 0, 0


MEMO = EncodeMemo()
