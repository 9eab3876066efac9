"""A bi-encoder behind one small class: sentence-transformers or FlagEmbedding ``FlagModel``."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fincprg.models.load import load_flag_embedder, load_sentence_transformer


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

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        m = self.model()
        if not texts:
            dim = m.get_sentence_embedding_dimension() if self.backend != "flag" else 0
            return np.zeros((0, dim or 0), dtype=np.float32)
        if self.backend == "flag":
            v = m.encode(list(texts), batch_size=self.batch_size)
        else:
            v = m.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                         show_progress_bar=show_progress, convert_to_numpy=True)
        v = np.asarray(v, dtype=np.float32).reshape(len(texts), -1)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n == 0, 1, n)
