"""Fault cases ``fs-hardening`` of eval/bench_faults.py: the file system, determinism and the review server.

Every case runs the real CLI in a subprocess on datasets/sample with the plotly pages on (the default
``topics.viz=bertopic``: two ~5 MB pages, the largest files of a build):

- **determinism**: two clean builds with different ``PYTHONHASHSEED``; every file under OUT is compared byte for
  byte, manifests included (wall and clock times go to ``--timings FILE``, outside OUT).
- **topics, disk full**: writes over 2 MB fail (``RLIMIT_FSIZE``: EFBIG, as a full disk gives ENOSPC), so the
  plotly page fails while the small files before it are written; then the same command with the limit gone.
- **export, disk full**: an existing build re-exported with another ``export.test_fraction`` while writes over
  500 kB fail (``train/flagembedding.jsonl`` is about 1 MB, written after the corpus, queries and qrels, each under 100 kB).
- **export, read-only OUT**: the same re-export with ``chmod a-w OUT`` (as root the child drops
  CAP_DAC_OVERRIDE, see tests/fs_limits.py); then the same command with OUT writable again.
- **review server**: ``fincprg audit OUT --review`` gets a POST with two different Content-Length headers and
  one from a foreign Origin; a same-origin POST is the control.

Each fault counts: exit code (must be non-zero), tracebacks, whether the previous dataset survived byte for
byte, leftovers, lost records and whether the resumed build equals a clean build of its config.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fincprg import layout as L  # noqa: E402
from tests.fs_limits import file_size_limit, permissions_bind, without_root_override  # noqa: E402

SETS_A = ["topics.viz=bertopic"]
SETS_B = [*SETS_A, "export.test_fraction=0.3"]  # re-runs only the export
DATASET = L.STAGE_DIRS[L.EXPORT]


def tree(out: Path, *, skip: tuple[str, ...] = (L.AUDIT_DIR,)) -> dict[str, bytes]:
    """Every file under OUT, byte for byte; ``skip``: top folders not made by a build."""
    files = {}
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out)
        if not p.is_file() or rel.parts[0] in skip:
            continue
        files[rel.as_posix()] = p.read_bytes()
    return files


def differing(a: Path, b: Path) -> list[str]:
    ta, tb = tree(a), tree(b)
    return sorted(n for n in ta.keys() | tb.keys() if ta.get(n) != tb.get(n))


def records(out: Path) -> int:
    """Lines of the dataset's record files (corpus, queries, qrels, training examples)."""
    ds = out / DATASET
    return sum(len(p.read_bytes().splitlines()) for p in ds.rglob("*") if p.suffix in (".jsonl", ".tsv"))


def leftovers(out: Path) -> list[str]:
    """Half-written things a failed run left: staging folders beside the dataset and temp files."""
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                  if p.name.startswith(f".{DATASET}.") or p.name.endswith(".tmp"))


def _error_line(stderr: str) -> str:
    lines = [x for x in stderr.splitlines() if x.startswith("error:")]
    return lines[-1][:300] if lines else ""


def _fault_row(name: str, fault: str, faulted: subprocess.CompletedProcess, resumed: subprocess.CompletedProcess,
               out: Path, clean: Path, *, before: dict[str, bytes] | None, after: dict[str, bytes] | None,
               left: list[str]) -> dict[str, Any]:
    diff = differing(out, clean)
    return {"case": name, "fault": fault, "faulted_rc": faulted.returncode, "error": _error_line(faulted.stderr).replace(str(out), "OUT"),
            "tracebacks": sum("Traceback" in r.stderr for r in (faulted, resumed)),
            "previous_kept": None if before is None else before == after, "leftovers": left,
            "resumed_rc": resumed.returncode, "lost": max(0, records(clean) - records(out)),
            "identical": not diff, "differing": diff[:5]}


def _run_readonly(out: Path, sets: list[str]) -> subprocess.CompletedProcess:
    """``cli_build``'s command and environment, in a child that obeys file permissions even as root."""
    cmd = [sys.executable, "-m", "fincprg", "build", str(ROOT / "datasets" / "sample"), "-o", str(out), "-q"]
    for s in sets:
        cmd += ["--set", s]
    env = {**{k: v for k, v in os.environ.items() if k != "FINCPRG_KILL_AFTER"},
           "OPENAI_API_KEY": "bench-key", "HF_HUB_OFFLINE": "1"}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
                          preexec_fn=without_root_override)


def _http(port: int, head: str, body: bytes) -> tuple[int, str]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(head.encode() + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    status_line, _, rest = data.decode("utf-8", "replace").partition("\r\n")
    return int(status_line.split()[1]), rest.partition("\r\n\r\n")[2]


def review_server(out: Path) -> dict[str, Any]:
    """``fincprg audit OUT --review`` in a subprocess, sent a smuggling-shaped and a cross-origin POST."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "fincprg", "audit", str(out), "--review", "--port", "0"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        for line in proc.stdout:  # the server prints its address once the audit is written
            if line.startswith("review at http://"):
                port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
                break
        assert port, "the review server did not start"
        key = json.loads((out / L.AUDIT_DIR / L.JUDGEMENTS).read_text(encoding="utf-8").splitlines()[0])["key"]
        body = json.dumps({"key": key, "decision": "confirm", "score": 3}).encode()

        def post(extra: str, length: str | None = None) -> tuple[int, str]:
            head = (f"POST /decisions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {length or len(body)}\r\n{extra}Connection: close\r\n\r\n")
            return _http(port, head, body)

        rows = [("two different Content-Length headers", 400, post("Content-Length: 5\r\n")),
                ("Origin: http://evil.example", 403, post("Origin: http://evil.example\r\n")),
                ("Origin: null (a sandboxed or file page)", 403, post("Origin: null\r\n")),
                ("same-origin POST (control)", 200, post(f"Origin: http://127.0.0.1:{port}\r\n"))]
        decisions = out / L.AUDIT_DIR / L.DECISIONS
        saved = len(decisions.read_text(encoding="utf-8").splitlines()) if decisions.is_file() else 0
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: how a user stops it
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    return {"rows": [{"request": r, "want": want, "status": got[0], "error": got[1][:160]} for r, want, got in rows],
            "saved": saved, "tracebacks": int("Traceback" in err)}


def run(work: Path) -> dict[str, Any]:
    from eval._faults_common import cli_build

    ref, again = work / "clean-a", work / "clean-a-again"
    for out, seed in ((ref, "1"), (again, "2")):
        r = cli_build(out, SETS_A, env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr[-2000:]
    determinism = {"files": len(tree(ref)), "differing": differing(ref, again)}
    shutil.rmtree(again)
    clean_b = work / "clean-b"
    assert cli_build(clean_b, SETS_B).returncode == 0
    rows = []

    out = work / "topics-full"
    with file_size_limit(2_000_000):
        faulted = cli_build(out, SETS_A)
    left = leftovers(out)
    rows.append(_fault_row("topics: disk full on the plotly page", "writes over 2 MB fail (EFBIG)", faulted,
                           cli_build(out, SETS_A), out, ref, before=None, after=None, left=left))

    out = work / "export-full"
    shutil.copytree(ref, out, ignore=shutil.ignore_patterns(L.AUDIT_DIR))
    before = tree(out)
    with file_size_limit(500_000):
        faulted = cli_build(out, SETS_B)
    after, left = tree(out), leftovers(out)
    rows.append(_fault_row("export: disk full half-way", "re-export, writes over 500 kB fail (EFBIG)", faulted,
                           cli_build(out, SETS_B), out, clean_b, before=before, after=after, left=left))

    readonly = None
    if permissions_bind():
        out = work / "export-readonly"
        shutil.copytree(ref, out, ignore=shutil.ignore_patterns(L.AUDIT_DIR))
        before = tree(out)
        out.chmod(0o555)
        try:
            faulted = _run_readonly(out, SETS_B)
        finally:
            out.chmod(0o755)
        after, left = tree(out), leftovers(out)
        rows.append(_fault_row("export: read-only OUT", "re-export into `chmod a-w` OUT", faulted,
                               cli_build(out, SETS_B), out, clean_b, before=before, after=after, left=left))
    else:
        readonly = "skipped: a read-only folder does not refuse writes here (root without CAP_SETPCAP)"
    for r in rows:
        print(r, flush=True)
    review = review_server(ref)
    print(review, flush=True)
    return {"determinism": determinism, "rows": rows, "readonly_note": readonly, "review": review,
            "root": os.geteuid() == 0}


def render(result: dict[str, Any]) -> str:
    d, rows, rv = result["determinism"], result["rows"], result["review"]
    yes = {True: "yes", False: "**no**", None: "–"}
    md = ["### File system, determinism and the review server (`eval/_faults_fs.py`)", "",
          f"Two clean builds (plots on, `PYTHONHASHSEED` 1 and 2): {len(d['differing'])} of {d['files']} files "
          f"under OUT differ" + (f" (**{', '.join(d['differing'][:5])}**)" if d["differing"] else "")
          + "; every file is compared byte for byte, manifests included.", "",
          "A full disk is simulated with `RLIMIT_FSIZE` (a write past the limit fails with EFBIG, as one on a full "
          "disk fails with ENOSPC), a read-only OUT with `chmod a-w`"
          + (" (the build runs as root, so its child drops CAP_DAC_OVERRIDE first)" if result["root"] else "")
          + ". After each fault the same command runs again with the fault gone.", "",
          "| case | fault | exit | error line | tracebacks | previous dataset kept | leftovers | resumed exit "
          "| lost records | equals a clean build |", "|---|---|---:|---|---:|---|---|---:|---:|---|"]
    md += [f"| {r['case']} | {r['fault']} | {r['faulted_rc']} | `{r['error'].replace('|', '/')}` | {r['tracebacks']} "
           f"| {yes[r['previous_kept']]} | {', '.join(r['leftovers']) or 'none'} | {r['resumed_rc']} | {r['lost']} "
           f"| {yes[r['identical']]}{' (' + ', '.join(r['differing']) + ')' if r['differing'] else ''} |"
           for r in rows]
    if result["readonly_note"]:
        md += ["", f"Read-only OUT: {result['readonly_note']}."]
    md += ["", f"Review server (`fincprg audit OUT --review`): decisions saved {rv['saved']} (the control's only); "
               f"tracebacks {rv['tracebacks']}.", "", "| request | expected | status |", "|---|---:|---:|"]
    md += [f"| {r['request']} | {r['want']} | " + (str(r["status"]) if r["status"] == r["want"] else f"**{r['status']}**")
           + " |" for r in rv["rows"]]
    return "\n".join([*md, ""])
