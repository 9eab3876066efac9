"""Neural retrievers: dense bi-encoders (sentence-transformers or FlagEmbedding) and cross-encoder reranking.

torch and the model libraries are imported inside ``fit``/``search`` only.
"""
from __future__ import annotations

import logging
from importlib import import_module
from typing import TYPE_CHECKING

import numpy as np

from fincprg.errors import BackendError, MissingDependencyError
from fincprg.evaluate.retrievers.base import PoolReranker, Results, Retriever, doc_text, progress, ranked, top_k

if TYPE_CHECKING:
    from fincprg.mine.rerankers import Reranker

log = logging.getLogger(__name__)

FAISS_MIN_DOCS = 50_000  # above this, an exact faiss inner-product index replaces the numpy matmul

# Loaded models, shared by retrievers in one process (dense and hybrid:...:dense load the same weights once).
_MODELS: dict[tuple[str, str, str, bool], object] = {}


def device_and_fp16(device: str | None, fp16: bool) -> tuple[str, bool]:
    """The device to load on (``cuda`` when available, as mining does) and whether to use half precision.

    fp16 only on GPU: on CPU half precision is slow and lossy (GUIDE pitfalls).
    """
    from fincprg.mine.rerankers import resolve_device

    resolved = resolve_device(device)
    return resolved, bool(fp16 and resolved.startswith("cuda"))


def _load_error(model: str, e: Exception) -> BackendError:
    return BackendError(
        f"cannot load model {model!r}: {e}. Pass a local folder, or a hub id with network access "
        "(unset HF_HUB_OFFLINE); offline runs need the model on disk.")


class Dense:
    """Bi-encoder retrieval: normalised embeddings, cosine similarity.

    Args:
        model: local folder or hub id.
        backend: ``sentence-transformers`` or ``flag`` (FlagEmbedding ``FlagModel``).
        query_prefix: text put before each query (e.g. BGE's 为这个句子生成表示以用于检索相关文章：).
        faiss_min_docs: corpora at least this large are searched with a faiss ``IndexFlatIP``.
        device: ``cpu``, ``cuda``, ``cuda:1``...; default ``cuda`` when available, else ``cpu``.
        fp16: half precision, used on GPU only.
    """

    def __init__(self, model: str, backend: str = "sentence-transformers", batch_size: int = 32,
                 query_prefix: str = "", faiss_min_docs: int = FAISS_MIN_DOCS, device: str | None = None,
                 fp16: bool = True, show_progress: bool = True, name: str | None = None):
        self.model_id, self.backend, self.batch_size = model, backend, batch_size
        self.query_prefix, self.faiss_min_docs, self.device, self.fp16 = query_prefix, faiss_min_docs, device, fp16
        self.show_progress = show_progress
        self.name = name or f"dense:{model}"
        self._model = None
        self._index = None

    def _load(self):
        if self._model is not None:
            return self._model
        device, half = device_and_fp16(self.device, self.fp16)
        key = (self.backend, self.model_id, device, half)
        if key in _MODELS:
            self._model = _MODELS[key]
            return self._model
        try:
            if self.backend == "flag":
                try:
                    from FlagEmbedding import FlagModel
                except ImportError as e:
                    raise MissingDependencyError("FlagEmbedding", "dense-flag retrieval") from e
                self._model = FlagModel(self.model_id, use_fp16=half, devices=device)
            else:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as e:
                    raise MissingDependencyError("sentence-transformers", "dense retrieval") from e
                self._model = SentenceTransformer(self.model_id, device=device)
                if half:
                    self._model.half()
        except (MissingDependencyError, BackendError):
            raise
        except Exception as e:  # noqa: BLE001 - hub/IO errors come in many types
            raise _load_error(self.model_id, e) from e
        log.info("dense: %s on %s%s", self.model_id, device, " (fp16)" if half else "")
        _MODELS[key] = self._model
        return self._model

    def encode(self, texts: list[str]) -> np.ndarray:
        m = self._load()
        if self.backend == "flag":
            v = m.encode(texts, batch_size=self.batch_size)
        else:
            v = m.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                         show_progress_bar=self.show_progress and len(texts) >= 200, convert_to_numpy=True)
        v = np.asarray(v, dtype=np.float32)
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n == 0, 1, n)

    def fit(self, corpus: dict[str, dict]) -> None:
        self.ids = list(corpus)
        self._docs = self.encode([doc_text(corpus[d]) for d in self.ids])
        self._index = None
        if len(self.ids) >= self.faiss_min_docs:
            try:
                import faiss
            except ImportError as e:
                raise MissingDependencyError("faiss-cpu", f"dense search over {len(self.ids)} documents") from e
            self._index = faiss.IndexFlatIP(self._docs.shape[1])
            self._index.add(self._docs)
            log.info("dense: faiss IndexFlatIP over %d docs", len(self.ids))

    def search(self, queries: dict[str, str], k: int) -> Results:
        qids = list(queries)
        qv = self.encode([self.query_prefix + queries[q] for q in qids])
        if self._index is not None:
            sims, idx = self._index.search(qv, min(k, len(self.ids)))
            return {q: {self.ids[j]: float(s) for s, j in zip(sims[i], idx[i]) if j >= 0} for i, q in enumerate(qids)}
        sims = qv @ self._docs.T
        return {q: top_k(self.ids, sims[i], k) for i, q in enumerate(qids)}


class CrossEncoderRerank(PoolReranker):
    """Rerank the top ``pool`` candidates of a first-stage retriever with a cross-encoder.

    The model is loaded by mining's backends (:mod:`fincprg.mine.rerankers`): sentence-transformers
    ``CrossEncoder`` with a sigmoid, or FlagEmbedding ``FlagReranker`` with ``normalize=True``; both on
    ``cuda`` when available (fp16 there), else CPU. Scores are in [0, 1].
    """

    def __init__(self, model: str, first_stage: Retriever, pool: int = 100, backend: str = "sentence-transformers",
                 batch_size: int = 32, device: str | None = None, fp16: bool = True, show_progress: bool = True,
                 name: str | None = None):
        self.model_id, self.first_stage, self.pool, self.backend = model, first_stage, pool, backend
        self.batch_size, self.device, self.fp16, self.show_progress = batch_size, device, fp16, show_progress
        self.name = name or f"rerank:{model}"
        self.last_pool: Results = {}
        self._model: Reranker | None = None

    def _load(self) -> Reranker:
        if self._model is not None:
            return self._model
        flag = self.backend == "flag"
        package = "FlagEmbedding" if flag else "sentence-transformers"
        try:  # checked here so the message names eval's spec, not mining's config key
            import_module("FlagEmbedding" if flag else "sentence_transformers")
        except ImportError as e:
            raise MissingDependencyError(package, "cross-encoder reranking") from e
        from fincprg.mine.rerankers import CrossEncoderBackend, FlagRerankerBackend

        cls = FlagRerankerBackend if flag else CrossEncoderBackend
        try:
            self._model = cls(self.model_id, batch_size=self.batch_size, fp16=self.fp16, device=self.device)
        except Exception as e:  # noqa: BLE001 - hub/IO errors come in many types
            raise _load_error(self.model_id, e.__cause__ if isinstance(e, BackendError) and e.__cause__ else e) from e
        return self._model

    def search(self, queries: dict[str, str], k: int) -> Results:
        self.first_pool(queries, self.pool)
        model = self._load()
        out: Results = {}
        for q in progress(queries, len(queries), f"rerank {self.model_id}", self.show_progress):
            cands = ranked(self.last_pool.get(q, {}))
            if not cands:
                out[q] = {}
                continue
            s = np.asarray(model.score([(queries[q], doc_text(self.corpus[d])) for d in cands]), dtype=np.float32)
            out[q] = top_k(cands, s, k)
        return out
