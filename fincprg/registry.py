"""One registry per model kind: the backends a config key, a SPEC or a CLI option may name.

Every place that chooses a backend by name (config validation, the mine/negatives/eval scorers, the Ray
placement, the dataset card, ``fincprg eval --help``) looks the name up here, so a new backend is one
module plus one ``register`` call, and a user adds their own from Python without editing fincprg::

    import fincprg

    class Toy:
        name, default_threshold = "toy", 0.5
        def score(self, pairs): return [float(a[:2] == b[:2]) for a, b in pairs]

    fincprg.register_pair_scorer("toy", lambda **kw: Toy(), threshold=0.5, description="same first two chars")
    fincprg.build("datasets/sample", "runs/toy", overrides=["mine.reranker.backend=toy"])

The built-in entries register themselves in their backend's module (e.g. :mod:`fincprg.mine.lexical`),
which the registry imports on its first lookup, the way a plugin entry point is found. This module is on
the ground floor: it imports nothing of fincprg at module level, so config.py can validate against it.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from fincprg.errors import ConfigError


@dataclass(frozen=True)
class Entry:
    """One backend of a kind.

    ``factory`` builds it; its keyword arguments depend on the kind (see each registry's ``call``). ``config``
    is the pydantic section its settings come from (None: it reads none). ``threshold`` is the default
    decision threshold of a scorer (None for kinds without one). ``gpu``: it wants a GPU when one is there
    (the Ray engine places it on GPU actors). ``needs_model``: it loads a model named by the section's
    ``model`` key. ``usage`` is how a SPEC names it, with its arguments (default: the name).
    """

    name: str
    factory: Callable[..., Any]
    description: str
    config: type | None = None
    threshold: float | None = None
    gpu: bool = False
    needs_model: bool = False
    usage: str | None = None

    @property
    def spec(self) -> str:
        return self.usage or self.name


class Registry:
    """The named backends of one kind, in registration order (built-ins first)."""

    def __init__(self, kind: str, option: str, builtins: tuple[str, ...] = (), api: str = ""):
        self.kind = kind  # "pair scorer", "retriever"...
        self.option = option  # the config key or option that names one, for error messages
        self.api = api  # the public function that registers one
        self._builtins = builtins  # modules whose import registers the built-in entries
        self._loaded = False
        self._entries: dict[str, Entry] = {}

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True  # first: a built-in module that looks itself up must not recurse
            for module in self._builtins:
                importlib.import_module(module)

    def register(self, name: str, factory: Callable[..., Any], *, description: str, config: type | None = None,
                 threshold: float | None = None, gpu: bool = False, needs_model: bool = False,
                 usage: str | None = None, replace: bool = False) -> Entry:
        """Add a backend under ``name``; ``replace=True`` swaps out an existing one (else that is an error)."""
        if not name or any(c in name for c in ":+,= "):
            raise ConfigError(f"{self.kind} name {name!r}: use letters, digits, '-' or '_' (':+,= ' separate "
                              "SPEC arguments)")
        if not callable(factory):
            raise ConfigError(f"{self.kind} {name!r}: the factory must be callable, got {type(factory).__name__}")
        self._load()  # a user's entry must not be overwritten by the built-ins loading later
        if name in self._entries and not replace:
            raise ConfigError(f"{self.kind} {name!r} is registered already ({self._entries[name].description}); "
                              "pass replace=True to swap it out")
        entry = Entry(name, factory, " ".join(description.split()), config, threshold, gpu, needs_model, usage)
        self._entries[name] = entry
        return entry

    def unregister(self, name: str) -> None:
        self._load()
        self._entries.pop(name, None)

    def _ordered(self) -> list[Entry]:
        """Built-ins in the order of their modules in ``builtins`` (not in the order imports happened to run
        them: a module importing another mid-way would reorder the listing), then the user's, as registered."""
        self._load()
        rank = {m: i for i, m in enumerate(self._builtins)}
        entries = list(self._entries.values())
        return sorted(entries, key=lambda e: (rank.get(getattr(e.factory, "__module__", ""), len(rank)),
                                              entries.index(e)))

    def names(self) -> list[str]:
        return [e.name for e in self._ordered()]

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._ordered())

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._entries

    def listing(self) -> str:
        """``name: description`` per entry, one a line (for error messages)."""
        return "\n".join(f"  {e.spec}: {e.description}" for e in self)

    def unknown(self, name: str, extra: tuple[str, ...] = (), where: str | None = None) -> str:
        """The message for a name that is not registered: every registered one, and how to add one."""
        also = f" (or {', '.join(extra)})" if extra else ""
        at = f" for {where}" if where else ""
        how = f"\n  (or register your own: fincprg.{self.api}(name, factory, ...))" if self.api else ""
        return f"unknown {self.kind} {name!r}{at}; registered{also}:\n{self.listing()}{how}"

    def get(self, name: str) -> Entry:
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise ConfigError(self.unknown(name, where=self.option)) from None

    def check(self, name: str, extra: tuple[str, ...] = ()) -> str:
        """``name`` if it is registered (or one of ``extra``, e.g. "none"); else a ValueError listing them
        (a pydantic validator turns it into ``mine.reranker.backend: ...``)."""
        if name in extra or name in self:
            return name
        raise ValueError(self.unknown(name, extra))


# The kinds. Built-in entries live next to their backends (the modules named here).
PAIR_SCORERS = Registry(
    "pair scorer", "mine.reranker.backend / export.negatives.reranker.backend / eval rerank specs",
    ("fincprg.mine.lexical", "fincprg.models.rerankers"), api="register_pair_scorer")
EMBEDDERS = Registry("embedder", "topics.embedder.backend / mine.prefilter.embedder.backend",
                     ("fincprg.models.embedders",), api="register_embedder")
CLASSIFIERS = Registry("industry classifier", "topics.classifier.backend", ("fincprg.topics.classify",),
                       api="register_classifier")
RETRIEVERS = Registry("retriever", "fincprg eval --retriever", ("fincprg.evaluate.retriever_specs",),
                      api="register_retriever")
# One entry (fincprg.llm.LLMClient). No config key chooses among them yet: an `llm.backend` key would change the
# recorded config, and so the signature, of every stage that declares the llm section.
LLM_CLIENTS = Registry("LLM client", "the LLM client (llm section)", ("fincprg.llm.client",),
                       api="register_llm_client")

KINDS: dict[str, Registry] = {"pair_scorer": PAIR_SCORERS, "embedder": EMBEDDERS, "classifier": CLASSIFIERS,
                              "retriever": RETRIEVERS, "llm_client": LLM_CLIENTS}


def register_pair_scorer(name: str, factory: Callable[..., Any], **kw: Any) -> Entry:
    """A scorer of (query, query) pairs for ``mine.reranker.backend`` (and export/eval reranking).

    ``factory(model=, batch_size=, fp16=, device=, where=, alternative=, facts=, workers=)`` returns an object
    with ``score(pairs) -> list[float]`` in [0, 1] (and ``name``, ``default_threshold``); accept ``**kw``
    for the arguments you do not use. ``threshold`` is the default of ``mine.reranker.threshold``.
    """
    return PAIR_SCORERS.register(name, factory, **kw)


def register_embedder(name: str, factory: Callable[..., Any], **kw: Any) -> Entry:
    """An embedder for ``topics.embedder.backend`` / ``mine.prefilter.embedder.backend``:
    ``factory(cfg, texts=, seed=, device=, classifier=, where=)`` returns an object with ``embed(texts)``."""
    return EMBEDDERS.register(name, factory, **kw)


def register_classifier(name: str, factory: Callable[..., Any], **kw: Any) -> Entry:
    """An industry classifier for ``topics.classifier.backend``: ``factory(cfg, companies=)`` returns an
    object with ``classify(texts) -> list[str | None]`` (CITIC industry names)."""
    return CLASSIFIERS.register(name, factory, **kw)


def register_retriever(name: str, factory: Callable[..., Any], **kw: Any) -> Entry:
    """A retriever for ``fincprg eval --retriever NAME[:ARG]``: ``factory(spec=, arg=, show_progress=)`` returns
    an object with ``fit(corpus)`` and ``search(queries, k)``; pass ``usage`` to show its arguments."""
    return RETRIEVERS.register(name, factory, **kw)


def register_llm_client(name: str, factory: Callable[..., Any], **kw: Any) -> Entry:
    """An LLM client: ``factory(cfg, cache_dir, limiter=)`` returns an object with ``LLMClient``'s methods."""
    return LLM_CLIENTS.register(name, factory, **kw)
