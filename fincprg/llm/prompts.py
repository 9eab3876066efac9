"""Versioned prompt templates (``prompts/<name>.<language>.j2``), shipped inside the wheel.

A template file starts with a YAML front matter block giving its ``id`` and ``version`` and holds
Jinja2 blocks: ``system`` and ``user`` (required) and optionally ``reask`` (the follow-up message
sent with a validation error)::

    ---
    id: hierarchical_query
    version: 1
    language: zh
    ---
    {% block system %}...{% endblock %}
    {% block user %}...{{ sentences | to_json }}...{% endblock %}

Bump ``version`` whenever the wording changes: the id and version go into each query's provenance.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from fincprg.errors import ConfigError

_REPO_PROMPTS = Path(__file__).resolve().parents[2] / "prompts"


def _to_json(value: Any) -> str:
    # jinja's own tojson escapes CJK to \uXXXX and <>& to HTML entities: wrong for prompts.
    return json.dumps(value, ensure_ascii=False)


@lru_cache(maxsize=1)
def _env() -> Any:
    import jinja2

    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False,
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["to_json"] = _to_json
    return env


@lru_cache(maxsize=64)
def _compile(source: str) -> Any:
    # Compiling a template costs ~10 ms; a build renders one per passage.
    return _env().from_string(source)


@dataclass(frozen=True)
class Prompt:
    """A loaded template: ``render(**vars)`` gives the chat messages (system + user)."""

    name: str
    language: str
    id: str
    version: int
    source: str  # the template body (after the front matter)
    path: str

    def _block(self, block: str, variables: dict[str, Any]) -> str:
        tmpl = _compile(self.source)
        if block not in tmpl.blocks:
            raise ConfigError(f"prompt {self.path} has no {{% block {block} %}}; add one")
        ctx = tmpl.new_context(dict(variables))
        return "".join(tmpl.blocks[block](ctx)).strip()

    def has(self, block: str) -> bool:
        return block in _compile(self.source).blocks

    def render(self, **variables: Any) -> list[dict[str, str]]:
        """Render the ``system`` and ``user`` blocks into OpenAI chat messages."""
        return [
            {"role": "system", "content": self._block("system", variables)},
            {"role": "user", "content": self._block("user", variables)},
        ]

    def render_block(self, block: str, **variables: Any) -> str:
        """Render one named block (e.g. ``reask``) to text."""
        return self._block(block, variables)


def _read_template(name: str, language: str) -> tuple[str, str]:
    filename = f"{name}.{language}.j2"
    try:
        packaged = resources.files("fincprg").joinpath("prompts", filename)
        if packaged.is_file():
            return packaged.read_text(encoding="utf-8"), f"fincprg/prompts/{filename}"
    except (FileNotFoundError, ModuleNotFoundError, NotADirectoryError):
        pass
    local = _REPO_PROMPTS / filename
    if local.is_file():
        return local.read_text(encoding="utf-8"), f"prompts/{filename}"
    have = sorted(p.name for p in _REPO_PROMPTS.glob("*.j2")) if _REPO_PROMPTS.is_dir() else []
    raise ConfigError(
        f"prompt {filename!r} not found (looked in the installed package and {_REPO_PROMPTS}); "
        f"available: {', '.join(have) or 'none'}. Check generate.prompt / generate.language."
    )


@lru_cache(maxsize=64)
def load_prompt(name: str, language: str = "zh") -> Prompt:
    """Load ``prompts/<name>.<language>.j2`` from the installed package, else the repo's prompts/.

    Args:
        name: template name, e.g. ``"hierarchical_query"``.
        language: ``"zh"`` or ``"en"``.

    Raises:
        ConfigError: the template is missing or its front matter lacks ``id``/``version``.
    """
    text, where = _read_template(name, language)
    if not text.startswith("---"):
        raise ConfigError(f"prompt {where} must start with a '---' front matter block holding id and version")
    _, front, body = text.split("---", 2)
    meta = yaml.safe_load(front) or {}
    if "id" not in meta or "version" not in meta:
        raise ConfigError(f"prompt {where}: front matter needs 'id' and 'version' (got {sorted(meta)})")
    return Prompt(name=name, language=language, id=str(meta["id"]), version=int(meta["version"]),
                  source=body.lstrip("\n"), path=where)
