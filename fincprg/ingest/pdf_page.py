"""The page model PDF reading fills and layout cleaning marks: line segments with their boxes, per page."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Seg:
    """A run of characters on one text line with no wide gap inside (a table cell, a sidebar entry, a line
    of body text). Coordinates in points from the page's top-left. ``rule`` names why it was removed."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    page: int
    line: int = 0  # the index of its text line on the page: segments of one line share it
    rule: str | None = None

    @property
    def mid(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass
class Page:
    """One page's segments (in reading order: top to bottom, left to right), size and table boxes."""

    number: int  # 0-based
    width: float
    height: float
    segs: list[Seg] = field(default_factory=list)
    tables: list[tuple[float, float, float, float]] = field(default_factory=list)  # x0, top, x1, bottom
    images: int = 0
    rotated_chars: int = 0  # characters not set level (diagonal watermarks, vertical axis labels), dropped
    unmapped_chars: int = 0  # glyphs whose font maps them to no character (pdfminer's "(cid:N)"), dropped
    failed: bool = False  # the parser could not read the page
