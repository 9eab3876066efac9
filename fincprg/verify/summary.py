"""The verify stage's lines in the build summary: yield per level, top drop reasons with an example each."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# LEVELS stays importable from here: verify/stage.py reads it
from fincprg.manifest_counts import LEVELS, ordered_levels, ordered_reasons

__all__ = ["LEVELS", "summary_lines"]


def summary_lines(counts: Mapping[str, Any], top: int = 5) -> list[str]:
    """``sentence: kept 1751/2084 (84.0%)`` per level, then the ``top`` reasons with one example each."""
    lines = [f"{level}: kept {c['kept']}/{c['generated']} ({c['yield']:.1%})" for level, c in ordered_levels(counts)]
    reasons = ordered_reasons(counts)
    if reasons:
        lines.append("dropped: " + ", ".join(f"{r} {n}" for r, n in reasons))
        for reason, _ in reasons[:top]:
            ex = ((counts.get("examples") or {}).get(reason) or [{}])[0]
            if ex:
                lines.append(f"  {reason}: 「{ex['text']}」 ({ex['level']}; {ex['detail']})")
    if counts.get("passages_without_subject"):
        lines.append(f"passages without a subject (their queries dropped): {counts['passages_without_subject']}")
    judge = counts.get("judge")
    if judge:
        lines.append(f"LLM judge: asked {judge['asked']}, not answerable {judge['not_answerable']}, "
                     f"no valid answer {judge['judge_failures']}")
    return lines
