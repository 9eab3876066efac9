"""Merging the fine-tuned weights with the base model's (``fincprg train --merge-base``).

LM-Cocktail (FlagEmbedding) averages a fine-tuned model with its base so that it keeps the base's
general ability while it gains the domain; this is its two-model case, a linear interpolation of
every floating-point weight: ``alpha × fine-tuned + (1 - alpha) × base``. A weight whose shape differs
(the rows ``--add-cjk`` added) keeps the fine-tuned value. ``auto`` scores a grid of alphas on the dev
split (human-written titles, :mod:`fincprg.train.dev`) and keeps the best; a tie goes to the smaller alpha
(closer to the base, the safer model). Without titles there is nothing human-written to choose by, and
generated queries never choose (they reward the drift that lowers human queries): ``auto`` then merges at
:data:`FIXED_ALPHA` and the record says so.
"""
from __future__ import annotations

import logging
from typing import Any, Callable

from fincprg.errors import ConfigError

log = logging.getLogger(__name__)

GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
FIXED_ALPHA = 0.5  # auto without a dev split: on issue 37's runs 0.5 kept the base's score (-0.0002, +0.0018)


def parse_alpha(text: str | None) -> float | str | None:
    """``--merge-base`` as given: None (no merge), ``auto``, or a weight in [0, 1]."""
    if text is None or text == "":
        return None
    if text == "auto":
        return "auto"
    try:
        alpha = float(text)
    except ValueError:
        raise ConfigError(f"--merge-base {text!r}: give the fine-tuned model's weight in [0, 1] (e.g. 0.5) "
                          "or auto (picked on the dev split)") from None
    if not 0.0 <= alpha <= 1.0:
        raise ConfigError(f"--merge-base {text}: the weight must be in [0, 1]")
    return alpha


def interpolate(base: dict[str, Any], tuned: dict[str, Any], alpha: float) -> dict[str, Any]:
    """A state dict ``alpha × tuned + (1 - alpha) × base`` (tensors of a torch state dict)."""
    out = {}
    for k, t in tuned.items():
        b = base.get(k)
        if b is None or b.shape != t.shape or not t.is_floating_point():
            out[k] = t
        else:
            out[k] = (alpha * t.float() + (1.0 - alpha) * b.float()).to(t.dtype)
    return out


def merge(st: Any, base_state: dict[str, Any], alpha: float | str,
          dev_score: Callable[[Any], float] | None) -> dict[str, Any]:
    """Merge ``st`` (fine-tuned, changed in place) with ``base_state``; returns what was chosen and why.

    Args:
        alpha: a weight, or ``auto`` (needs ``dev_score``: the dev split's nDCG@10 of a model).
    """
    tuned = {k: v.detach().clone() for k, v in st.state_dict().items()}
    scores: dict[str, float] = {}
    if alpha == "auto" and dev_score is None:
        log.warning("train: --merge-base auto: no human-written dev queries (titles); merged at the fixed %g",
                    FIXED_ALPHA)
        st.load_state_dict(interpolate(base_state, tuned, FIXED_ALPHA))
        return {"alpha": FIXED_ALPHA, "asked": alpha, "dev_ndcg@10": scores,
                "chosen_by": "fixed weight: no titled dev reports"}
    if alpha == "auto":
        for a in GRID:
            st.load_state_dict(interpolate(base_state, tuned, a))
            scores[f"{a:g}"] = round(dev_score(st), 6)
            log.info("train: merge alpha %g: dev nDCG@10 %.4f", a, scores[f"{a:g}"])
        chosen = max(GRID, key=lambda a: (scores[f"{a:g}"], -a))
    else:
        chosen = float(alpha)
    st.load_state_dict(interpolate(base_state, tuned, chosen))
    if alpha != "auto" and dev_score is not None:
        scores[f"{chosen:g}"] = round(dev_score(st), 6)
    by = "dev titles (human-written)" if alpha == "auto" else "fixed weight: --merge-base"
    return {"alpha": chosen, "asked": alpha, "dev_ndcg@10": scores, "chosen_by": by}
