"""bench_faults section ``llm-hardening``: the LLM client's secrets, auth errors, --retry-failed, re-ask cache, cache disk.

Every case runs the real CLI (``bench_faults.cli_build``) on datasets/sample with ``generate.backend=llm``
against the local test server (``tests.llm_server``) in this process, so requests can be counted:

- **auth**: every request is refused with 401 (or 403) and the error message quotes the API key verbatim.
  Pass: a non-zero exit that names the server and the env var, at most ``llm.concurrency`` requests sent
  (the ones in flight when the first refusal came back), 0 files under OUT and 0 terminal lines holding the key.
- **retry-failed**: 30 % of first attempts fail (HTTP 500 with ``llm.max_retries=0``, or prose that is
  re-asked), healing after one attempt; then ``--retry-failed``. Pass: requests sent by the retry == the
  passages that had failed (a passage recovered by its re-ask is not asked again).
- **re-ask cache**: every first answer is prose, every re-ask is answered; then ``--force``. Pass: the
  rebuild sends 0 requests and writes the same queries.
- **read-only cache**: ``run.cache_dir`` is a folder the build may not write (empty, or holding a filled
  cache). Pass: no traceback, a non-zero exit before any request, naming the folder and the fix.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from eval._faults_common import BASE, ROOT, SAMPLE, cli_build, dataset_hash
from fincprg import layout as L
from tests.llm_faults import FaultInjector, RejectFirstAnswer, auth_failure
from tests.llm_server import LocalLLMServer

SECRET = "sk-bench-7c1e0f93d5a24b68-do-not-leak"
CONCURRENCY = 4


def _sets(server: LocalLLMServer, *extra: str) -> list[str]:
    return [*BASE, "generate.backend=llm", f"llm.base_url={server.base_url}", "llm.model=local-test-model",
            f"llm.concurrency={CONCURRENCY}", *extra]


def _build(out: Path, sets: list[str], *extra: str) -> subprocess.CompletedProcess:
    return cli_build(out, sets, env={"OPENAI_API_KEY": SECRET}, extra=tuple(extra))


def _files_with(root: Path, needle: str) -> list[str]:
    """Files under ``root`` (any kind, the cache included) whose bytes hold ``needle``."""
    raw = needle.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and raw in p.read_bytes())


def _body(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages"), ensure_ascii=False, sort_keys=True)


def _first_question(request: dict[str, Any]) -> str:
    """The conversation up to its first answer: the passage's own question, re-ask or not."""
    msgs = request.get("messages") or []
    cut = next((i for i, m in enumerate(msgs) if m.get("role") == "assistant"), len(msgs))
    return json.dumps(msgs[:cut], ensure_ascii=False, sort_keys=True)


def _counts(out: Path) -> dict[str, Any]:
    return (L.Build(out).manifest(L.GENERATE) or {}).get("counts", {})


def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def auth(work: Path) -> list[dict[str, Any]]:
    rows = []
    for status in (401, 403):
        server = LocalLLMServer()
        server.set_responder(auth_failure(status, echo_key=True))
        try:
            out = work / f"auth-{status}"
            r = _build(out, _sets(server))
            said = r.stdout + r.stderr
            rows.append({"status": status, "rc": r.returncode, "requests": len(server.requests),
                         "leaked_files": _files_with(out, SECRET), "leaked_terminal": said.count(SECRET),
                         "names_env": "OPENAI_API_KEY" in r.stderr, "names_server": server.base_url in r.stderr,
                         "traceback": "Traceback" in r.stderr, "error": r.stderr.strip().splitlines()[-1:]})
        finally:
            server.close()
        print(rows[-1], flush=True)
    return rows


def retry_failed(work: Path) -> dict[str, Any]:
    server = LocalLLMServer()
    faults = FaultInjector(rate=0.3, kinds=("500", "not_json"), seed=1, heal_after=1)
    server.set_responder(faults)
    try:
        out = work / "retry"
        sets = _sets(server, "llm.max_retries=0")
        first = _build(out, sets)
        before = _counts(out)
        # passages re-asked in the first build: those whose re-ask succeeded must not be asked by the retry
        reasked = len({_first_question(q) for q in server.requests if _first_question(q) != _body(q)})
        server.reset()
        again = _build(out, sets, "--retry-failed")
        after = _counts(out)
        row = {"rc": [first.returncode, again.returncode], "failed": before.get("retryable_failures"),
               "reasked": reasked, "resent": len(server.requests),
               "left": after.get("retryable_failures"), "recovered": after.get("recovered"),
               "faults": dict(faults.counts), "traceback": "Traceback" in first.stderr + again.stderr}
    finally:
        server.close()
    print(row, flush=True)
    return row


def reask_cache(work: Path) -> dict[str, Any]:
    server = LocalLLMServer()
    server.set_responder(RejectFirstAnswer())
    try:
        out = work / "reask"
        sets = _sets(server)
        first = _build(out, sets)
        queries = L.Build(out).path(L.GENERATE, L.QUERIES)
        want, want_ds, sent = _sha(queries), dataset_hash(out), len(server.requests)
        server.reset()
        again = _build(out, sets, "--force")
        row = {"rc": [first.returncode, again.returncode], "passages": _counts(out).get("passages"),
               "first_requests": sent, "rebuild_requests": len(server.requests),
               "same_queries": _sha(queries) == want, "same_dataset": dataset_hash(out) == want_ds,
               "traceback": "Traceback" in first.stderr + again.stderr}
    finally:
        server.close()
    print(row, flush=True)
    return row


def _build_unprivileged(out: Path, sets: list[str]) -> subprocess.CompletedProcess:
    """``cli_build``'s command, without root's power to write into read-only folders (CAP_DAC_OVERRIDE):
    as root it runs under ``setpriv`` with that capability dropped, so file modes bind it like any user."""
    cmd = [sys.executable, "-m", "fincprg", "build", str(SAMPLE), "-o", str(out), "-q"]
    for s in sets:
        cmd += ["--set", s]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            raise RuntimeError("running as root: the read-only cache case needs setpriv (util-linux) to drop "
                               "CAP_DAC_OVERRIDE, or run the benchmark as a normal user")
        cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", *cmd]
    env = {**{k: v for k, v in os.environ.items() if k != "FINCPRG_KILL_AFTER"},
           "OPENAI_API_KEY": SECRET, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def read_only_cache(work: Path) -> list[dict[str, Any]]:
    rows = []
    server = LocalLLMServer()
    try:
        sets = _sets(server)
        filled = work / "filled"  # a real cache from a finished build, then made read-only
        assert _build(filled, sets).returncode == 0
        for name in ("empty", "filled"):
            cache = work / f"ro-{name}"
            if name == "filled":
                shutil.copytree(filled / L.CACHE_DIR, cache)
            else:
                (cache / "llm").mkdir(parents=True)
            for p in [cache, *cache.rglob("*")]:
                p.chmod(0o555 if p.is_dir() else 0o444)
            server.reset()
            r = _build_unprivileged(work / f"out-{name}", [*sets, f"run.cache_dir={cache}"])
            rows.append({"cache": name, "rc": r.returncode, "requests": len(server.requests),
                         "traceback": "Traceback" in r.stderr, "names_folder": str(cache) in r.stderr,
                         "error": r.stderr.strip().splitlines()[-1:]})
            print(rows[-1], flush=True)
            for p in [cache, *cache.rglob("*")]:  # so the temporary folder can be removed
                p.chmod(0o755 if p.is_dir() else 0o644)
    finally:
        server.close()
    return rows


def run(work: Path) -> dict[str, Any]:
    return {"auth": auth(work / "auth"), "retry_failed": retry_failed(work / "retry"),
            "reask_cache": reask_cache(work / "reask"), "read_only_cache": read_only_cache(_mk(work / "ro"))}


def _mk(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


def render(result: dict[str, Any]) -> str:
    md = ["### LLM secrets, auth, --retry-failed and the cache (`eval/_faults_llm.py`)", "",
          f"`generate.backend=llm`, `llm.concurrency={CONCURRENCY}`, against the local test server.", "",
          "| case | exit codes | requests | key on disk / on the terminal | tracebacks | pass |",
          "|---|---|---|---|---:|---|"]
    for a in result["auth"]:
        ok = (a["rc"] not in (0, None) and a["requests"] <= CONCURRENCY and not a["leaked_files"]
              and not a["leaked_terminal"] and a["names_env"] and not a["traceback"])
        md.append(f"| every request HTTP {a['status']}, message echoing the key | {a['rc']} | {a['requests']} sent "
                  f"(limit {CONCURRENCY}) | {len(a['leaked_files'])} files / {a['leaked_terminal']} | "
                  f"{int(a['traceback'])} | {'yes' if ok else '**no**'} |")
    r = result["retry_failed"]
    ok = r["resent"] == r["failed"] and not r["left"] and not r["traceback"]
    md.append(f"| 30 % first attempts fail (500 / prose), then `--retry-failed` | {r['rc']} | {r['resent']} re-sent "
              f"for {r['failed']} failed passages (the first build re-asked {r['reasked']} passages); "
              f"{r['left']} left | - | {int(r['traceback'])} | {'yes' if ok else '**no**'} |")
    c = result["reask_cache"]
    ok = c["rebuild_requests"] == 0 and c["same_queries"] and c["same_dataset"] and not c["traceback"]
    md.append(f"| every passage recovered by its re-ask, then `--force` | {c['rc']} | {c['first_requests']} first, "
              f"{c['rebuild_requests']} on the rebuild; same queries: {'yes' if c['same_queries'] else 'no'} | - | "
              f"{int(c['traceback'])} | {'yes' if ok else '**no**'} |")
    for ro in result["read_only_cache"]:
        ok = ro["rc"] not in (0, None) and not ro["traceback"] and ro["requests"] == 0 and ro["names_folder"]
        md.append(f"| `run.cache_dir` read-only ({ro['cache']}) | {ro['rc']} | {ro['requests']} sent | - | "
                  f"{int(ro['traceback'])} | {'yes' if ok else '**no**'} |")
    return "\n".join([*md, ""])
