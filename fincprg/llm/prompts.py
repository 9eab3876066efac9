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

A user's own template (``generate.prompt_file``, ``topics.intents.prompt_file``) has the same blocks;
its front matter is optional. :func:`stage_prompt` loads it and checks, with jinja2's
``meta.find_undeclared_variables``, that it uses only the variables the stage passes and the ones it
must use. Its id carries the sha256 of its content (``my_prompt@sha256:…``), so query provenance
says exactly which text asked for each query.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
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
    sha256: str = ""  # of the whole file; set for users' own templates (prompt_file)

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


def _looks_like_file(name: str) -> bool:
    return name.endswith(".j2") or "/" in name or "\\" in name


def load_prompt(name: str, language: str = "zh") -> Prompt:
    """Load ``prompts/<name>.<language>.j2`` from the installed package, else the repo's prompts/;
    a ``name`` that is a path to a ``.j2`` file loads that file (:func:`load_prompt_file`).

    Args:
        name: template name, e.g. ``"hierarchical_query"``, or a template file's path.
        language: ``"zh"`` or ``"en"`` (bundled templates only).

    Raises:
        ConfigError: the template is missing or its front matter lacks ``id``/``version``.
    """
    if _looks_like_file(name):
        return load_prompt_file(name, language)
    return _load_bundled(name, language)


@lru_cache(maxsize=64)
def _load_bundled(name: str, language: str) -> Prompt:
    text, where = _read_template(name, language)
    if not text.startswith("---"):
        raise ConfigError(f"prompt {where} must start with a '---' front matter block holding id and version")
    _, front, body = text.split("---", 2)
    meta = yaml.safe_load(front) or {}
    if "id" not in meta or "version" not in meta:
        raise ConfigError(f"prompt {where}: front matter needs 'id' and 'version' (got {sorted(meta)})")
    return Prompt(name=name, language=language, id=str(meta["id"]), version=int(meta["version"]),
                  source=body.lstrip("\n"), path=where)


def load_prompt_file(path: str | Path, language: str = "zh") -> Prompt:
    """A user's own template file (never cached: an edited file is read again).

    The front matter (``id``, ``version``) is optional; the id defaults to the file's stem, the version
    to 0, and the id gets ``@sha256:<12 hex>`` of the file's bytes appended.
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise ConfigError(f"prompt file {str(path)!r} cannot be read ({e.strerror or e}); give a path relative to "
                          "the working folder, or an absolute one") from None
    digest = hashlib.sha256(raw).hexdigest()
    text = raw.decode("utf-8-sig")
    meta: dict[str, Any] = {}
    body = text
    if text.startswith("---"):
        try:
            _, front, body = text.split("---", 2)
            meta = yaml.safe_load(front) or {}
        except (ValueError, yaml.YAMLError) as e:
            raise ConfigError(f"prompt file {p}: its '---' front matter is not valid YAML ({e})") from None
        if not isinstance(meta, dict):
            raise ConfigError(f"prompt file {p}: the front matter must be a mapping (id: ..., version: ...)")
    try:
        version = int(meta.get("version", 0))
    except (TypeError, ValueError):
        raise ConfigError(f"prompt file {p}: front matter 'version' must be an integer") from None
    return Prompt(name=p.stem, language=str(meta.get("language", language)),
                  id=f"{meta.get('id') or p.stem}@sha256:{digest[:12]}", version=version,
                  source=body.lstrip("\n"), path=str(p), sha256=digest)


def check_variables(prompt: Prompt, *, allowed: Iterable[str], required: Iterable[str] = (),
                    blocks: Iterable[str] = ("system", "user"), key: str = "prompt_file") -> Prompt:
    """Check a template against what the stage passes; returns it unchanged.

    Raises:
        ConfigError: a syntax error (with its line), a missing block, a variable the stage does not pass
            (it would fail on the first passage), or none of ``required`` used (the model would never
            see the passage).
    """
    import jinja2
    from jinja2 import meta

    try:
        ast = _env().parse(prompt.source)
    except jinja2.TemplateSyntaxError as e:
        raise ConfigError(f"{key}: {prompt.path} line {e.lineno}: {e.message}") from None
    names = meta.find_undeclared_variables(ast)
    allowed, required = set(allowed), set(required)
    unknown = sorted(names - allowed)
    if unknown:
        raise ConfigError(f"{key}: {prompt.path} uses {', '.join('{{ ' + u + ' }}' for u in unknown)}, which the "
                          f"stage does not pass; it passes: {', '.join(sorted(allowed))}")
    if required and not required & names:
        raise ConfigError(f"{key}: {prompt.path} never uses {' or '.join('{{ ' + u + ' }}' for u in sorted(required))}"
                          "; without it the model cannot see what to write about")
    have = set(_compile(prompt.source).blocks)
    missing = [b for b in blocks if b not in have]
    if missing:
        raise ConfigError(f"{key}: {prompt.path} has no {', '.join('{% block ' + b + ' %}' for b in missing)}; "
                          "a template needs a system and a user block (see prompts/*.j2)")
    return prompt


def stage_prompt(section: Any, *, allowed: Iterable[str], required: Iterable[str] = (), key: str) -> Prompt:
    """The prompt a stage uses: ``section.prompt_file`` (checked with :func:`check_variables`) when set, else
    the bundled ``section.prompt`` in ``section.language`` (default zh)."""
    language = getattr(section, "language", "zh")
    if getattr(section, "prompt_file", None):
        return check_variables(load_prompt_file(section.prompt_file, language), allowed=allowed,
                               required=required, key=key)
    return load_prompt(section.prompt, language)
