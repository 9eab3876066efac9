"""The one place that picks devices and precision and loads models (embedders, rerankers, classifiers).

Every stage and command (topics, mine, export, eval, train) loads through here, so a model id means
the same thing everywhere: a local folder or a hub id, ``HF_HUB_OFFLINE`` honoured, loaded once per
process, and one error type (:class:`ModelLoadError`) whose message names the config key to fix.
torch and the model libraries are imported inside the functions only.
"""
from fincprg.models.device import cuda_available, resolve_device, train_precision, use_half
from fincprg.models.encoders import TextEncoder, prompt_name, prompt_text
from fincprg.models.load import (
    ModelLoadError,
    load_cross_encoder,
    load_flag_embedder,
    load_flag_reranker,
    load_sentence_transformer,
    load_sequence_classifier,
)
from fincprg.models.rerankers import BGE_THRESHOLD, CrossEncoderBackend, FlagRerankerBackend, Reranker

__all__ = [
    "BGE_THRESHOLD", "CrossEncoderBackend", "FlagRerankerBackend", "ModelLoadError", "Reranker", "TextEncoder",
    "cuda_available", "load_cross_encoder", "load_flag_embedder", "load_flag_reranker",
    "load_sentence_transformer", "load_sequence_classifier", "prompt_name", "prompt_text", "resolve_device",
    "train_precision", "use_half",
]
