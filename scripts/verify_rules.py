"""Print verify's rule table (Markdown) from the registry (fincprg/verify/registry.py; fincprg/verify/rules.py
loads every rule).

README.md's verify section (between <!-- verify-rules:start --> and <!-- verify-rules:end -->) is this script's
output; tests/unit/test_readme.py checks it, so the README cannot drift from the registry.
"""
from __future__ import annotations

from fincprg.verify.listing import markdown

if __name__ == "__main__":
    print(markdown())
