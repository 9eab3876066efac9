"""README.md stays true to the code: every config key is in its reference, every command is named."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _block_and_generated(marker: str, script: str) -> tuple[str, str]:
    """README's ``<!-- marker:start/end -->`` block and what ``scripts/<script>`` prints now."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split(f"<!-- {marker}:start -->")[1].split(f"<!-- {marker}:end -->")[0].strip()
    generated = subprocess.run([sys.executable, str(ROOT / "scripts" / script)],
                               capture_output=True, text=True, check=True, cwd=ROOT).stdout.strip()
    return block, generated


def test_config_reference_in_readme_is_the_generated_one():
    block, generated = _block_and_generated("config", "config_reference.py")
    assert block == generated, "README config reference is stale: paste `python scripts/config_reference.py`"


def test_readme_names_every_cli_command():
    from fincprg.cli import app

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    names = {c.name or c.callback.__name__ for c in app.registered_commands}
    assert names >= {"build", "stages", "demo", "eval", "audit", "report", "doctor"}
    missing = [n for n in names if f"fincprg {n}" not in readme]
    assert not missing, f"README does not mention: {missing}"


def test_verify_rules_in_readme_are_the_registry():
    block, generated = _block_and_generated("verify-rules", "verify_rules.py")
    assert block == generated, "README's verify rules are stale: paste `python scripts/verify_rules.py`"
