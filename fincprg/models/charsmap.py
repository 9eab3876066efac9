"""Compile a per-character normalisation table into SentencePiece's ``precompiled_charsmap`` bytes.

That blob is what ``tokenizers.normalizers.Precompiled`` (and SentencePiece itself) read: a u32
byte length, a darts-clone double-array trie over the UTF-8 of each source string, then the
NUL-terminated replacement strings the trie's values point into. The tokenizers library can read
the format but not write it, so the units are laid out here (the layout, from darts-clone's
``DoubleArrayUnit``: bit 31 marks a value unit, bit 8 "has a value child", bits 0-7 the label,
bits 10-30 the XOR offset to the children).
"""
from __future__ import annotations

import struct
from collections import deque
from collections.abc import Mapping

_MAX_OFFSET = 1 << 21  # larger offsets need darts' shifted encoding (low 8 bits zero); tables here stay far below


def _trie(keys: Mapping[bytes, int]) -> dict[int, dict]:
    """A byte trie: node -> {label: child}; the value of a key sits under label 0 as an int."""
    root: dict = {}
    for key, value in keys.items():
        if not key or 0 in key:
            raise ValueError(f"charsmap key {key!r} is empty or holds a NUL byte")
        node = root
        for b in key:
            node = node.setdefault(b, {})
        node[0] = value
    return root


def _next_free(used: bytearray, start: int) -> int:
    """The first free unit at or after ``start`` (past the end: all free there)."""
    at = used.find(0, start)
    return at if at >= 0 else max(start, len(used))


def double_array(keys: Mapping[bytes, int]) -> list[int]:
    """The darts-clone units of a trie mapping each byte string to a value (< 2**31)."""
    units = [0] * 256
    used = bytearray(256)
    used[0] = 1  # the root
    bases: set[int] = set()
    free = 1  # no unit below this one is free
    queue: deque[tuple[int, dict]] = deque([(0, _trie(keys))])
    while queue:
        pos, node = queue.popleft()
        first, *others = labels = sorted(node)
        # first fit: every child slot base^label free, and no other node with this base (so a lookup
        # from one node can never land on another node's child that carries the same label). The
        # candidates are the free units for the first child, found by bytearray.find (C speed):
        # trying every base in turn took seconds for a real table.
        free = _next_free(used, free)
        slot = free
        while True:
            base = slot ^ first
            if base not in bases and not any(base ^ lb < len(used) and used[base ^ lb] for lb in others):
                break
            slot = _next_free(used, slot + 1)
        bases.add(base)
        top = (base | 255) + 1  # a lookup may probe any base^byte: keep the whole 256-block in range
        if top > len(units):
            units.extend([0] * (top - len(units)))
            used.extend(bytes(top - len(used)))
        offset = pos ^ base
        if offset >= _MAX_OFFSET:
            raise ValueError("charsmap too large for the simple offset encoding")
        units[pos] |= offset << 10
        for lb in labels:
            child = base ^ lb
            used[child] = 1
            if lb == 0:
                value = node[0]
                if not 0 <= value < 1 << 31:
                    raise ValueError(f"charsmap value {value} out of range")
                units[child] = value | (1 << 31)
                units[pos] |= 1 << 8  # has_leaf: the value unit is at pos's base ^ 0
            else:
                units[child] = lb
                queue.append((child, node[lb]))
    return units


def precompiled_charsmap(table: Mapping[str, str]) -> bytes:
    """The ``precompiled_charsmap`` bytes for ``source -> replacement`` (replacement may be empty: delete)."""
    blob = bytearray()
    at: dict[str, int] = {}
    keys: dict[bytes, int] = {}
    for src, dst in table.items():
        if dst not in at:
            at[dst] = len(blob)
            blob += dst.encode("utf-8") + b"\0"
        keys[src.encode("utf-8")] = at[dst]
    units = double_array(keys)
    trie = struct.pack(f"<{len(units)}I", *units)
    return struct.pack("<I", len(trie)) + trie + bytes(blob)
