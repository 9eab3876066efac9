"""CFBenchmark's 1,775 untitled report bodies, split once by a fixed hash of the body id (issue 38).

- **held-out** (sha1 of the id mod 4 = 0, about a quarter): only readings draw from it (``bench_quality.py
  --cfb N``), and bench_train never builds it (its ``cfb_summary`` benchmark is the analysts' summaries of
  these bodies). No rule is written from a held-out body: a rule developer reads the learn part only;
- **learn** (the rest): what the rules may be written and tuned from (``bench_cfb.py --part learn`` builds it).

The split depends on the id alone, so it is the same in every checkout, for every subset (the first 300
bodies fall into both parts) and if bodies are added. A reading of the held-out part is the figure README's
limits record for untitled bodies, beside AlphaFin's.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CFB_REPORTS = DATA / "reports" / "cfbenchmark_reports.jsonl"
BUCKETS = 4
PARTS = ("all", "learn", "held-out")


def held_out(body_id: str) -> bool:
    """Whether a body belongs to the held-out part (sha1 of its id mod :data:`BUCKETS` = 0)."""
    return int(hashlib.sha1(body_id.encode("utf-8")).hexdigest(), 16) % BUCKETS == 0


def part_of(body_id: str) -> str:
    return "held-out" if held_out(body_id) else "learn"


def read_bodies(path: Path = CFB_REPORTS, part: str = "all", first: int | None = None) -> list[dict[str, str]]:
    """``{id, text}`` rows of the file in its order: the first ``first`` of the whole file (None: all), then those
    of ``part`` (``all``, ``learn`` or ``held-out``)."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = [{"id": r["id"], "text": r["text"]} for r in rows[:first]]
    return [r for r in rows if part == "all" or part_of(r["id"]) == part]


def write_bodies(rows: list[dict[str, str]], out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return out


def reading_corpus(n: int, out: Path, path: Path = CFB_REPORTS) -> Path:
    """The input of a reading's CFBenchmark build: the first ``n`` bodies of the held-out part, as ``{id, text}``."""
    return write_bodies(read_bodies(path, "held-out")[:n], out)
