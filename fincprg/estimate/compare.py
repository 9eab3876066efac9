"""The build summary's "estimate vs actual": ``OUT/estimate.json`` (written by ``fincprg estimate -o OUT``)
next to what the LLM stages recorded in their manifests."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fincprg import layout as L

FIELDS = ("requests", "prompt_tokens", "completion_tokens", "cost_usd")


def comparison(out: Path) -> list[dict[str, Any]]:
    """One row per LLM stage of the estimate: estimated (requests still to send) vs actual (sent), per field.

    Empty when OUT has no estimate. ``actual`` is None for a stage without a manifest yet; ``resumed`` marks a
    stage whose manifest counts only the run that finished it.
    """
    build = L.Build(out)
    est = L.load_json(out / L.ESTIMATE)
    if not est:
        return []
    rows = []
    for stage, e in (est.get("stages") or {}).items():
        m = build.manifest(stage) or {}
        llm = (m.get("counts") or {}).get("llm")
        expected = {"requests": e.get("to_send", 0), "prompt_tokens": e.get("to_send_prompt_tokens", 0),
                    "completion_tokens": e.get("to_send_completion_tokens", 0),
                    "cost_usd": e.get("to_send_cost_usd", 0.0)}
        actual = {k: llm.get(k, 0) for k in FIELDS} if llm else None
        rows.append({"stage": stage, "estimate": expected, "actual": actual,
                     "error": {k: _err(expected[k], actual[k]) for k in FIELDS} if actual else None})
    return rows


def _err(expected: float, actual: float) -> float | None:
    if not actual:
        return 0.0 if not expected else None  # nothing expected and nothing sent: exact
    return round((expected - actual) / actual, 4)


def print_comparison(out: Path, echo: Callable[[str], Any]) -> None:
    """Print the comparison under the build summary (nothing when OUT has no estimate.json)."""
    rows = comparison(out)
    if not rows:
        return
    echo(f"\nestimate ({L.ESTIMATE}) vs actual (requests sent by the run that finished each stage):")
    for r in rows:
        if r["actual"] is None:
            echo(f"  {r['stage']:<9} not run yet")
            continue
        parts = []
        for k in FIELDS:
            e, a, err = r["estimate"][k], r["actual"][k], r["error"][k]
            fmt = "{:.4f}" if k == "cost_usd" else "{:,}"
            parts.append(f"{k} {fmt.format(e)} vs {fmt.format(a)}" + (f" ({err:+.1%})" if err is not None else ""))
        echo(f"  {r['stage']:<9} " + "; ".join(parts))
