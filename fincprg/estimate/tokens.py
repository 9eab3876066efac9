"""Counting the tokens of chat messages without a server: the model's tokenizer, or a stated ratio.

``estimate.tokenizer`` names the tokenizer: a HuggingFace ``tokenizer.json`` (or a folder holding
one; read with the ``tokenizers`` package, no torch) or ``tiktoken:<encoding>`` (needs the
``tiktoken`` package). Without one, a text of c characters counts ``ceil(c / estimate.chars_per_token)``
tokens. Each message adds 4 tokens and each request 3 (OpenAI's documented chat overhead).
``fincprg estimate --probe N`` then corrects these counts by what the server itself reported.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from fincprg.errors import ConfigError, MissingDependencyError

PER_MESSAGE, PER_REQUEST = 4, 3


class TokenCounter:
    """Counts tokens of texts and chat messages (see the module docstring)."""

    def __init__(self, tokenizer: str | None = None, chars_per_token: float = 1.2):
        self.chars_per_token = chars_per_token
        self._encode: Any = None
        if tokenizer is None:
            self.name = f"{chars_per_token:g} characters per token (estimate.chars_per_token)"
        elif tokenizer.startswith("tiktoken:"):
            try:
                import tiktoken
            except ImportError:
                raise MissingDependencyError("tiktoken", f"estimate.tokenizer={tokenizer}",
                                             alternative="a tokenizer.json path or estimate.chars_per_token") from None
            enc = tiktoken.get_encoding(tokenizer.split(":", 1)[1])
            self._encode = lambda t: len(enc.encode(t, disallowed_special=()))
            self.name = tokenizer
        else:
            path = Path(tokenizer)
            path = path / "tokenizer.json" if path.is_dir() else path
            if not path.is_file():
                raise ConfigError(f"estimate.tokenizer: {tokenizer!r} is neither a tokenizer.json nor a folder holding "
                                  "one, nor tiktoken:<encoding>; or leave it unset to count by estimate.chars_per_token")
            from tokenizers import Tokenizer

            tok = Tokenizer.from_file(str(path))
            self._encode = lambda t: len(tok.encode(t, add_special_tokens=False).ids)
            self.name = f"tokenizer {path}"

    def text(self, text: str) -> int:
        if self._encode is not None:
            return self._encode(text)
        return math.ceil(len(text) / self.chars_per_token)

    def messages(self, messages: list[dict[str, Any]]) -> int:
        return PER_REQUEST + sum(PER_MESSAGE + self.text(str(m.get("content") or "")) for m in messages)
