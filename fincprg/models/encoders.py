"""A bi-encoder behind one small class: sentence-transformers or FlagEmbedding ``FlagModel``.

Query/passage prompts: a sentence-transformers model may name its own prompts in its
config_sentence_transformers.json (e5: ``query: `` and ``passage: ``). Callers say which role a text
plays (``role="query"`` or ``"passage"``) and the model's prompt for that role is used; a model
without prompts gets the texts as they are, so nothing changes for it. FlagEmbedding's ``FlagModel``
knows only a query instruction and CLS pooling, so for a local sentence-transformers folder the same
prompts are put before the texts here and its pooling mode is passed on (see ``load_flag_embedder``).

Encodings are memoised per text (:data:`MEMO`, keyed by model, backend, device, precision, role and
text): ``fincprg eval -r dense:M -r hybrid:0.75:dense:M`` encodes the corpus once, not once per
retriever, and a list that repeats some texts encodes only the new ones. A script that encodes the
same corpus again on a later run keeps the memo on disk (``MEMO.persist(path)``, ``MEMO.save()``).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from fincprg.models.load import load_flag_embedder, load_sentence_transformer
from fincprg.models.memo import MEMO


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


def folder_prompts(model: str) -> dict[str, str]:
    """The prompts a local sentence-transformers folder declares ({} for a hub id or a folder without)."""
    cfg = Path(model) / "config_sentence_transformers.json"
    if not cfg.is_file():
        return {}
    try:
        return {k: v for k, v in (json.loads(cfg.read_text(encoding="utf-8")).get("prompts") or {}).items() if v}
    except (OSError, ValueError):
        return {}


def role_prompt(prompts: dict[str, str], role: str | None) -> str:
    """The prompt for ``role`` from a prompts dict, by the names :data:`ROLE_PROMPTS` allows."""
    return next((prompts[n] for n in ROLE_PROMPTS.get(role or "", ()) if prompts.get(n)), "")


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
        head = f"{self.model_id}\0{self.backend}\0{self.device}\0{self.fp16}\0{role}\0"
        keys = [hashlib.sha1((head + t).encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        return MEMO.rows(keys, texts, lambda todo: self._encode(todo, show_progress, role))

    def _encode(self, texts: Sequence[str], show_progress: bool, role: str | None) -> np.ndarray:
        m = self.model()
        if not texts:
            dim = m.get_sentence_embedding_dimension() if self.backend != "flag" else 0
            return np.zeros((0, dim or 0), dtype=np.float32)
        if self.backend == "flag":
            prompt = role_prompt(folder_prompts(self.model_id), role)
            v = m.encode([prompt + t for t in texts], batch_size=self.batch_size)
        else:
            v = m.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                         show_progress_bar=show_progress, convert_to_numpy=True, prompt_name=prompt_name(m, role))
        v = np.asarray(v, dtype=np.float32).reshape(len(texts), -1)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n == 0, 1, n)
