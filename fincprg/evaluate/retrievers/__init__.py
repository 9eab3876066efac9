"""Retrievers behind one interface (``fit(corpus)`` / ``search(queries, k)``), built from SPEC strings.

SPEC grammar (what ``fincprg eval --retriever`` accepts): ``NAME[:ARG]``, one
:data:`fincprg.registry.RETRIEVERS` entry per NAME (registered in :mod:`fincprg.evaluate.retriever_specs`;
``fincprg.register_retriever`` adds one); :func:`fincprg.evaluate.retriever_specs.spec_help` lists them.
"""
from __future__ import annotations

from fincprg.evaluate.retriever_specs import OFFLINE_DEFAULT, build, spec_help
from fincprg.evaluate.retrievers.base import Results, Retriever, UsesQueryMeta, tokenize

__all__ = ["Results", "Retriever", "UsesQueryMeta", "build_retriever", "default_specs", "tokenize", "spec_help"]


def default_specs(has_report_queries: bool = True) -> list[str]:
    """The offline baselines; ``bm25-report`` only when queries carry a report_id (else it equals bm25)."""
    return [s for s in OFFLINE_DEFAULT if has_report_queries or s != "bm25-report"]


def build_retriever(spec: str, *, show_progress: bool = True) -> Retriever:
    """Build a retriever from a SPEC string: the registered entry named by its head, given the rest.

    Raises:
        ConfigError: unknown name or a malformed argument; the message shows the grammar.
    """
    return build(spec, show_progress=show_progress)
