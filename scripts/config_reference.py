"""Print the configuration reference table (Markdown) from the pydantic models in fincprg/config.py.

README.md's "Configuration reference" is this script's output; tests/unit/test_readme.py checks
that every key is documented there, so the README cannot drift from the code.
"""
from __future__ import annotations

import json

from fincprg.config import PipelineConfig, Section
from fincprg.registry import KINDS


def rows(model: type[Section] = PipelineConfig, prefix: str = ""):
    for name, field in model.model_fields.items():
        default = field.get_default(call_default_factory=True)
        path = prefix + name
        if isinstance(default, Section):
            yield from rows(type(default), path + ".")
            continue
        shown = json.dumps(default.isoformat() if hasattr(default, "isoformat") else default, ensure_ascii=False)
        if len(shown) > 60:
            shown = shown[:57] + "…"
        kind = str(field.annotation).replace("typing.", "").replace("<class '", "").replace("'>", "")
        kind = kind.replace("datetime.date", "date").replace("Literal", "one of ").replace("|", "\\|")
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        if "registry" in extra:  # a backend name: whatever its registry holds (fincprg/registry.py)
            reg = KINDS[extra["registry"]]
            kind = f"one of {list(extra.get('also') or []) + reg.names()} or your own registered {reg.kind}"
        yield path, kind, shown, (field.description or "")


def main() -> None:
    print("| key | type | default |")
    print("|---|---|---|")
    for path, kind, shown, _ in rows():
        print(f"| `{path}` | {kind} | `{shown}` |")


if __name__ == "__main__":
    main()
