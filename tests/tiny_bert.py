"""A tiny random BERT saved to a folder, for tests that need a real HuggingFace model without a download.

One layer, hidden size 32, ``initializer_range=1.0`` so distinct inputs get clearly distinct embeddings
and scores; builds and runs in well under a second on CPU.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
DIGIT_PIECES = tuple(f"##{i}" for i in range(10))  # BERT's basic tokenizer splits "2023" into 2 ##0 ##2 ##3


def tiny_bert(folder: Path, tokens: Iterable[str], *, classifier: bool = False, positions: int = 512) -> str:
    """Save the model and its tokenizer under ``folder``; the vocabulary is :data:`SPECIALS` then ``tokens``
    in order (whitespace dropped: the tokenizer never emits it; repeats kept once). ``classifier`` gives a
    one-logit sequence classifier (a cross-encoder) instead of a bare encoder. Returns the folder as a str."""
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizer

    vocab = dict.fromkeys([*SPECIALS, *(t for t in tokens if not t.isspace())])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizer.from_pretrained(str(folder))  # BertTokenizerFast(vocab_file=) ignores the file
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=64, initializer_range=1.0, max_position_embeddings=positions,
                     **({"num_labels": 1} if classifier else {}))
    (BertForSequenceClassification if classifier else BertModel)(cfg).save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return str(folder)
