"""Chart geometry for the report's inline SVG (no plotting library needed).

Functions return plain numbers and labels; the template draws them, so every label still goes
through autoescaping.
"""
from __future__ import annotations

import math
from typing import Any

W, H = 620, 220
ML, MR, MT, MB = 56, 14, 12, 36  # margins: left (y labels), right, top, bottom (x labels)


def histogram(counts: list[int], threshold: float | None, lo: float = 0.0, hi: float = 1.0) -> dict[str, Any]:
    """Bars for ``counts`` over equal bins on [lo, hi], log10(1 + n) scale, plus the threshold line."""
    pw, ph = W - ML - MR, H - MT - MB
    top = max(counts) if counts else 0
    decades = max(1, math.ceil(math.log10(1 + top))) if top else 1
    n = max(1, len(counts))
    bw = pw / n

    def y(v: float) -> float:
        return MT + ph - ph * math.log10(1 + v) / decades

    bars = [{"x": round(ML + i * bw, 2), "y": round(y(c), 2), "w": round(max(bw - 0.6, 0.4), 2),
             "h": round(MT + ph - y(c), 2), "n": c, "lo": round(lo + (hi - lo) * i / n, 4)}
            for i, c in enumerate(counts) if c > 0]
    xticks = [{"x": round(ML + pw * k / 5, 2), "label": f"{lo + (hi - lo) * k / 5:.2f}"} for k in range(6)]
    # ticks at log10(1 + n) = d, labelled 10^d (1 + n ~ n), with 0 at the axis
    yticks = [{"y": round(MT + ph - ph * d / decades, 2), "label": f"{10 ** d:,}" if d else "0"}
              for d in range(decades + 1)]
    line = None
    if threshold is not None and lo <= threshold <= hi:
        line = {"x": round(ML + pw * (threshold - lo) / (hi - lo), 2), "label": f"threshold {threshold:g}"}
    return {"w": W, "h": H, "ml": ML, "mt": MT, "pw": pw, "ph": ph, "bars": bars, "xticks": xticks,
            "yticks": yticks, "threshold": line, "total": sum(counts)}


def fp_fn_bars(intervals: list[dict[str, Any]]) -> dict[str, Any]:
    """Grouped bars (FP, FN counts) per audit interval, lowest interval on the left (paper Fig. 5)."""
    rows = sorted(intervals, key=lambda r: r["lo"])
    pw, ph = W - ML - MR, H - MT - MB
    top = max([r["judged"] for r in rows] + [1])
    gw = pw / max(1, len(rows))
    bw = gw * 0.36
    groups = []
    for i, r in enumerate(rows):
        x0 = ML + i * gw + gw * 0.14
        bars = []
        for j, (kind, v) in enumerate((("fp", r["fp"]), ("fn", r["fn"]))):
            h = ph * v / top
            bars.append({"kind": kind, "x": round(x0 + j * bw, 2), "y": round(MT + ph - h, 2), "w": round(bw, 2),
                         "h": round(h, 2), "n": v})
        groups.append({"label": r["interval"], "cx": round(ML + (i + 0.5) * gw, 2), "bars": bars,
                       "judged": r["judged"]})
    step = max(1, math.ceil(top / 5))
    yticks = [{"y": round(MT + ph - ph * v / top, 2), "label": str(v)} for v in range(0, top + 1, step)]
    return {"w": W, "h": H, "ml": ML, "mt": MT, "pw": pw, "ph": ph, "groups": groups, "yticks": yticks}
