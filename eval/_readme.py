"""Shared by the eval scripts: each owns one marked section of eval/README.md and the commit it measured, and
builds through the CLI a user runs."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "eval" / "README.md"


def commit() -> str:
    """The short commit the figures were measured at (``+dirty`` when the tree had changes)."""
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_section(name: str, body: str, readme: Path = README) -> None:
    """Replace (or append) the ``<!-- name:start -->`` … ``<!-- name:end -->`` section with ``body``."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = readme.read_text(encoding="utf-8") if readme.exists() else "# fincprg benchmarks and experiments\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    readme.write_text(text, encoding="utf-8")


def record(work: Path, result: dict, render: object, also: list[Path], section: str, *, no_readme: bool) -> int:
    """Save WORK/result.json, print the section ``render(result, earlier results)`` and, unless ``no_readme``,
    write it into eval/README.md; the common tail of the benchmarks (0: their exit code)."""
    import json

    (work / "result.json").write_text(json.dumps(result, indent=2, ensure_ascii=False, default=str), "utf-8")
    text = render(result, [json.loads(p.read_text("utf-8")) for p in also])  # type: ignore[operator]
    print(text)
    if not no_readme:
        write_section(section, text)
        print("updated eval/README.md")
    return 0


def finish(work: Path, result: dict, text: str, section: str, *, write: bool) -> int:
    """Save WORK/result.json, print the section and, with ``write``, put it into eval/README.md (0: the exit code)."""
    import json

    (work / "result.json").write_text(json.dumps(result, indent=2, ensure_ascii=False), "utf-8")
    print(text)
    if write:
        write_section(section, text)
        print("updated eval/README.md")
    return 0


def fincprg_build(src: Path, out: Path, *args: str, sets: tuple[str, ...] | list[str] = (), code: Path = ROOT) -> float:
    """``fincprg build SRC -o OUT -q ARGS --set S…`` in a subprocess with ``code`` first on the path (so a script can
    build another revision, and the build's tokenizer state stays out of the caller); the seconds it took."""
    cmd = [sys.executable, "-m", "fincprg", "build", str(src), "-o", str(out), "-q", *args]
    for s in sets:
        cmd += ["--set", s]
    env = {**os.environ, "PYTHONPATH": str(code), "HF_HUB_OFFLINE": "1"}
    t = time.perf_counter()
    subprocess.run(cmd, cwd=code, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t
