"""fincprg: build Chinese financial passage-retrieval datasets from research reports (FinCPRG method).

Importing this package is light: torch, transformers and bertopic load only inside the
backends that need them.
"""
from __future__ import annotations

from fincprg.config import PipelineConfig, bundled_pipeline, load_config  # noqa: E402
from fincprg.records import Passage, Qrel, Query, Report, Sentence, Topic  # noqa: E402
from fincprg.registry import (  # noqa: E402 - your own backends, by name (see fincprg/registry.py)
    register_classifier,
    register_embedder,
    register_llm_client,
    register_pair_scorer,
    register_retriever,
)
from fincprg.version import __version__  # noqa: E402, F401 - re-exported

__all__ = ["build", "load_config", "PipelineConfig", "Report", "Passage", "Sentence", "Query", "Qrel", "Topic",
           "register_pair_scorer", "register_embedder", "register_classifier", "register_retriever",
           "register_llm_client"]


def build(corpus, out, config=None, overrides=None, **kwargs):
    """Run the whole pipeline: ``build("datasets/sample", "runs/demo")``; ``config=None`` means the
    shipped pipelines/offline.yaml. See ``fincprg build --help``."""
    from pathlib import Path

    from fincprg.pipeline.runner import run_pipeline

    if isinstance(config, PipelineConfig):
        cfg = config
    else:
        cfg = load_config(config if config is not None else bundled_pipeline("offline"), overrides)
    return run_pipeline(Path(corpus), Path(out), cfg, **kwargs)
