"""Parse report dates from the ISO and Chinese forms found in research-report metadata."""
from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any

# Optional time part after the date: "T09:30", " 00:00:00", "09:30:00.123+08:00", "10时30分".
_TIME = r"(?:[T\s]+\d{1,2}[:：时]\d{1,2}(?:[:：分]\d{1,2}(?:\.\d+)?秒?)?(?:Z|[+-]\d{2}:?\d{2})?分?)?"
_FORMS: tuple[tuple[re.Pattern[str], bool], ...] = (
    # 2024-03-01, 2024/3/1, 2024.03.01, 2024年3月1日 (+ time); True = day present
    (re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*[日号]?" + _TIME), True),
    # 20240301 (+ time)
    (re.compile(r"(\d{4})(\d{2})(\d{2})" + _TIME), True),
    # 2024年03月, 2024-03, 2024/3 -> first day of the month
    (re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*月?"), False),
)


_USE = " (use 2024-03-01, 2024/3/1, 20240301 or 2024年3月1日)"
_NUMBER = " (a date given as a number must be yyyymmdd, e.g. 20240301)"


def parse_date(value: Any) -> dt.date | None:
    """Parse a date; ``None``/"" give ``None``.

    Accepts ``date``/``datetime`` objects, ISO forms (2024-03-01, 2024/3/1, 20240301, with or
    without a time), datetime strings ("2022-04-10 00:00:00") and Chinese forms (2024年3月1日,
    2024年03月 -> the 1st of the month).

    A number is read only as yyyymmdd (20240301 or 20240301.0).

    Raises:
        ValueError: the value is not empty and matches none of the forms, or names an impossible day; any
            object, array, boolean or number that is not yyyymmdd (NaN, Infinity, 1e308).
    """
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, (dict, list, tuple, bool)):
        kind = {dict: "an object", bool: "a boolean"}.get(type(value), "an array")
        raise ValueError(f"{kind} ({str(value)[:40]}) is not a date{_USE}")
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):  # NaN, Infinity, 1e999, 2024.5
            raise ValueError(f"the number {value!r} is not a date{_NUMBER}")
        value = int(value)
    if isinstance(value, int):
        if not 10_000_000 <= value <= 99_999_999:  # 1e308 would be a 309-digit "date"
            raise ValueError(f"the number {str(value)[:20]}{'...' if value >= 10**20 else ''} is not a date{_NUMBER}")
        value = str(value)
    s = str(value).strip()
    if not s:
        return None
    if len(s) > 64:  # no date form is longer; keep the message (and the regex work) short
        raise ValueError(f"{s[:40]!r}... ({len(s)} characters) is not a date")
    for pattern, has_day in _FORMS:
        m = pattern.fullmatch(s)
        if m:
            y, mo = int(m.group(1)), int(m.group(2))
            d = int(m.group(3)) if has_day else 1
            try:
                return dt.date(y, mo, d)
            except ValueError as e:
                raise ValueError(f"{s!r} is not a real calendar date ({e})") from None
    raise ValueError(f"{s!r} is not a date form fincprg reads{_USE}")
