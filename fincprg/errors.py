"""One error hierarchy. Every message says what is wrong, where, and how to fix it."""
from __future__ import annotations


class FincprgError(Exception):
    """Base class for every error fincprg raises on purpose."""


class ConfigError(FincprgError):
    """A config key is unknown or has an invalid value; the message names its dotted path."""


class InputError(FincprgError):
    """Input data cannot be read; the message names the file, line and field."""


class BackendError(FincprgError):
    """A model backend (LLM server, classifier, reranker...) failed."""


class MissingDependencyError(FincprgError):
    """An optional dependency is needed for the configured backend."""

    def __init__(self, package: str, feature: str, *, alternative: str | None = None):
        msg = (f"{feature} needs the Python package '{package}'. Install it with "
               f"`pip install {package}` (or `make install`, which installs every extra)")
        super().__init__(msg + (f", or use {alternative}." if alternative else "."))
        self.package = package


class BuildLockedError(FincprgError):
    """Another build is writing the same output folder."""
