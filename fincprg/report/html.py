"""Jinja2 environment for fincprg's HTML pages (report, audit review).

Autoescaping is on for every template: document text, query text and topic keywords are data
and must never become markup. The only ``Markup`` values are fincprg's own static script/SVG code.
"""
from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from importlib import resources
from typing import Any


@lru_cache(maxsize=1)
def environment() -> Any:
    """The shared environment, loading templates shipped in ``fincprg/report/templates/``."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("fincprg.report", "templates"),
        autoescape=True,  # every template, whatever its extension (.html.j2 is not in the default list)
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def static_text(name: str) -> str:
    """A static file shipped next to the templates (e.g. review.js)."""
    return resources.files("fincprg.report").joinpath("templates", name).read_text(encoding="utf-8")


def csp_hash(script: str) -> str:
    """The CSP source expression allowing exactly this inline script."""
    return "sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
