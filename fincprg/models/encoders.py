"""A bi-encoder behind one small class: sentence-transformers or FlagEmbedding ``FlagModel``.

Query/passage prompts: a sentence-transformers model may name its own prompts in its
config_sentence_transformers.json (e5: ``query: `` and ``passage: ``). Callers say which role a text
plays (``role="query"`` or ``"passage"``) and the model's prompt for that role is used; a model
without prompts gets the texts as they are, so nothing changes for it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fincprg.models.load import load_flag_embedder, load_sentence_transformer


# the prompt names a role may be stored under, first match wins (sentence-transformers'
# encode_document looks for "document", "passage", "corpus"; e5 models name theirs "passage")
ROLE_PROMPTS = {"query": ("query",), "passage": ("passage", "document", "corpus")}


def prompt_name(model: Any, role: str | None) -> str | None:
    """The name of ``model``'s non-empty prompt for ``role`` (``query``/``passage``), or None."""
    if role is None:
        return None
    if role not in ROLE_PROMPTS:
        raise ValueError(f"role {role!r} is not one of {', '.join(ROLE_PROMPTS)}")
    prompts = getattr(model, "prompts", None) or {}
    return next((n for n in ROLE_PROMPTS[role] if prompts.get(n)), None)


def prompt_text(model: Any, role: str) -> str:
    """The prompt string ``model`` puts before a ``role`` text ("" when it has none)."""
    name = prompt_name(model, role)
    return model.prompts[name] if name else ""


class TextEncoder:
    """Encodes texts into unit-norm float32 rows.

    Args:
        model: local folder or hub id.
        where: the config key or option that named the model (for the error message).
        backend: ``sentence-transformers`` or ``flag``.
        device: ``cpu``, ``cuda``, ``cuda:1``...; default ``cuda`` when available.
        fp16: half precision, GPU only.
    """

    def __init__(self, model: str, *, where: str, backend: str = "sentence-transformers", batch_size: int = 32,
                 device: str | None = None, fp16: bool = False, alternative: str | None = None):
        self.model_id, self.where, self.backend, self.batch_size = model, where, backend, batch_size
        self.device, self.fp16, self.alternative = device, fp16, alternative

    def model(self):  # noqa: ANN201 - the library's own type
        load = load_flag_embedder if self.backend == "flag" else load_sentence_transformer
        return load(self.model_id, where=self.where, device=self.device, fp16=self.fp16,
                    alternative=self.alternative)

    def encode(self, texts: Sequence[str], show_progress: bool = False, role: str | None = None) -> np.ndarray:
        """Unit-norm rows; ``role`` (``query``/``passage``) picks the model's own prompt when it has one."""
        m = self.model()
        if not texts:
            dim = m.get_sentence_embedding_dimension() if self.backend != "flag" else 0
            return np.zeros((0, dim or 0), dtype=np.float32)
        if self.backend == "flag":
            v = m.encode(list(texts), batch_size=self.batch_size)
        else:
            v = m.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                         show_progress_bar=show_progress, convert_to_numpy=True, prompt_name=prompt_name(m, role))
        v = np.asarray(v, dtype=np.float32).reshape(len(texts), -1)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n == 0, 1, n)
