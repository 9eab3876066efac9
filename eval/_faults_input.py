"""Fault cases for ingest (issue 21, section ``input-hardening`` of eval/bench_faults.py).

Each case writes a small corpus of sample reports with one kind of fault, runs the real CLI
(``fincprg build --upto ingest``) in a subprocess and accounts for every input record: kept in
``ingest/reports.jsonl``, or rejected in ``ingest/rejected.jsonl`` by its own ``file:line``, by a rejection
of its whole file (``file:1``, reason unreadable/undecodable) or of its folder (``folder/``). A record
none of these covers is lost. The last case puts every fault in one folder and runs the whole build.

As root, chmod cannot make a file unreadable: those cases run the CLI through ``setpriv`` without the
capabilities that override file permissions (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so the
permission check is the kernel's own, as for any user.
"""
from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fincprg import layout as L

_NO_DAC = ("setpriv", "--bounding-set=-dac_override,-dac_read_search",
           "--inh-caps=-dac_override,-dac_read_search", "--")
_IDS = itertools.count()
_WHOLE = ("unreadable", "undecodable")  # reasons that a rejection at file:1 stands for every record of the file


def _prefix() -> tuple[str, ...] | None:
    """How to run the CLI so that chmod binds it; None when it cannot be (root without setpriv)."""
    if os.geteuid() != 0:
        return ()
    return _NO_DAC if shutil.which("setpriv") else None


def _bench() -> Any:
    """What the sections share (eval/_faults_common.py)."""
    from eval import _faults_common

    return _faults_common


@functools.cache
def _rows() -> list[dict[str, Any]]:
    sample = _bench().SAMPLE / "reports.jsonl"
    return [json.loads(x) for x in sample.read_text(encoding="utf-8").splitlines() if x.strip()]


def _row(i: int, **kw: Any) -> dict[str, Any]:
    return {**_rows()[i % len(_rows())], "id": f"x{next(_IDS)}", **kw}  # ids unique over all cases


def _jsonl(path: Path, rows: list[dict[str, Any]], codec: str = "utf-8", bom: str = "") -> list[tuple[Path, int]]:
    """Write rows as JSONL; the (file, line) of each record, as the CLI will name it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((bom + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)).encode(codec))
    return [(path, i) for i in range(1, len(rows) + 1)]


def _raw_jsonl(path: Path, lines: list[str]) -> list[tuple[Path, int]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return [(path, i) for i in range(1, len(lines) + 1)]


# -- the cases: each builds its corpus under `c` and returns the records it holds (and a note) --------------------

def _unreadable_file(c: Path, outside: Path) -> tuple[list, Callable[[], None]]:
    recs = _jsonl(c / "a.jsonl", [_row(0), _row(1)]) + _jsonl(c / "b.jsonl", [_row(2), _row(3)])
    (c / "b.jsonl").chmod(0)
    return recs, lambda: (c / "b.jsonl").chmod(0o644)


def _unreadable_folder(c: Path, outside: Path) -> tuple[list, Callable[[], None]]:
    recs = _jsonl(c / "a.jsonl", [_row(0)]) + _jsonl(c / "locked" / "b.jsonl", [_row(1), _row(2)])
    (c / "locked").chmod(0)
    return recs, lambda: (c / "locked").chmod(0o755)


def _folder_loop(c: Path, outside: Path) -> list:
    recs = _jsonl(c / "a.jsonl", [_row(0)]) + _jsonl(c / "sub" / "b.jsonl", [_row(1)])
    (c / "sub" / "up").symlink_to("..")
    return recs


def _file_loop(c: Path, outside: Path) -> list:
    (c / "self.jsonl").symlink_to("self.jsonl")
    return _jsonl(c / "a.jsonl", [_row(0)])


def _dangling(c: Path, outside: Path) -> list:
    (c / "gone.jsonl").symlink_to(outside / "moved-away.jsonl")
    return _jsonl(c / "a.jsonl", [_row(0)])


def _linked_folder(c: Path, outside: Path) -> list:
    _jsonl(outside / "elsewhere" / "b.jsonl", [_row(1)])
    (c / "linked").symlink_to(outside / "elsewhere")
    return _jsonl(c / "a.jsonl", [_row(0)]) + [(c / "linked" / "b.jsonl", 1)]


def _pipe(c: Path, outside: Path) -> list:
    os.mkfifo(c / "pipe.jsonl")
    return _jsonl(c / "a.jsonl", [_row(0)])


_BAD_DATES = ["Infinity", "NaN", "1e308", '"2024-13-45"', '{"y": 2024}']


def _dates(c: Path, outside: Path) -> list:
    lines = [json.dumps(_row(0), ensure_ascii=False)]
    lines += [json.dumps(_row(i + 1, date="@"), ensure_ascii=False).replace('"@"', d) for i, d in enumerate(_BAD_DATES)]
    return _raw_jsonl(c / "a.jsonl", lines)


def _objects(c: Path, outside: Path) -> list:
    return _jsonl(c / "a.jsonl", [_row(0), _row(1, text={"body": "正文"}), _row(2, title={"zh": "标题"}),
                                  _row(3, text=["第一段", "第二段"])])


def _controls(c: Path, outside: Path) -> list:
    r = _row(1)
    return _jsonl(c / "a.jsonl", [_row(0), {**r, "title": "\x00" + r["title"] + "\x1b[0m\x07",
                                             "text": r["text"].replace("。", "。\x07", 1) + "\x00"}])


def _utf16(c: Path, outside: Path) -> list:
    return (_jsonl(c / "le.jsonl", [_row(0)], "utf-16-le", "\ufeff") + _jsonl(c / "be.jsonl", [_row(1)], "utf-16")
            + _jsonl(c / "u32.jsonl", [_row(2)], "utf-32") + _jsonl(c / "nobom.jsonl", [_row(3)], "utf-16-le"))


def _utf16_named(c: Path, outside: Path) -> list:
    return _jsonl(c / "nobom.jsonl", [_row(0), _row(1)], "utf-16-le")


CASES: dict[str, tuple[Callable[[Path, Path], Any], list[str], bool]] = {
    # name -> (corpus builder, --set overrides, needs file permissions to bind)
    "unreadable file": (_unreadable_file, [], True),
    "unreadable sub-folder": (_unreadable_folder, [], True),
    "folder symlink loop": (_folder_loop, [], False),
    "file symlink loop": (_file_loop, [], False),
    "dangling *.jsonl symlink": (_dangling, [], False),
    "folder symlink": (_linked_folder, [], False),
    "pipe named *.jsonl": (_pipe, [], False),
    "bad dates (default: kept, no date)": (_dates, [], False),
    "bad dates, on_bad_date: reject": (_dates, ["ingest.on_bad_date=reject"], False),
    "object-valued text/title": (_objects, [], False),
    "NUL/ESC/BEL in title and text": (_controls, [], False),
    "UTF-16/32 by BOM, UTF-16 without": (_utf16, [], False),
    "UTF-16 without BOM, encoding utf-16-le": (_utf16_named, ["ingest.encoding=utf-16-le"], False),
}


def _read(out: Path, name: str) -> list[dict[str, Any]]:
    f = L.Build(out).path(L.INGEST, name)
    return [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x] if f.is_file() else []


def account(records: list[tuple[Path, int]], out: Path) -> dict[str, Any]:
    """Each input record is kept (a report names its file:line), rejected (a rejection names its line, its
    whole file or its folder) or lost; ``stray`` counts reports that match no input record (read twice)."""
    kept, rejected = _read(out, L.REPORTS), _read(out, L.REJECTED)
    kept_src = {x["source"] for x in kept}
    rej_src = {x["source"] for x in rejected}
    whole = {x["source"][:-2] for x in rejected if x["reason"] in _WHOLE and x["source"].endswith(":1")}
    folders = [x["source"] for x in rejected if x["source"].endswith("/")]
    n_kept = n_rejected = 0
    lost = []
    for p, i in records:
        src = f"{p}:{i}"
        if src in kept_src:
            n_kept += 1
        elif src in rej_src or str(p) in whole or any(str(p).startswith(d) for d in folders):
            n_rejected += 1
        else:
            lost.append(src)
    wanted = {f"{p}:{i}" for p, i in records}
    return {"kept": n_kept, "rejected": n_rejected, "lost": lost, "kept_rows": kept,
            "stray": sum(x["source"] not in wanted for x in kept), "rejection_lines": len(rejected),
            "reasons": sorted({x["reason"] for x in rejected})}


def _case(work: Path, name: str, build: Callable[[Path, Path], Any], sets: list[str], perms: bool) -> dict[str, Any]:
    prefix = _prefix() if perms else ()
    if prefix is None:
        return {"case": name, "skipped": "root without setpriv: chmod cannot deny root"}
    c = work / "corpus"
    c.mkdir(parents=True)
    made = build(c, work / "outside")
    records, restore = made if isinstance(made, tuple) else (made, None)
    out = work / "out"
    r = _bench().cli_build(out, sets, corpus=c, extra=("--upto", "ingest"), prefix=prefix)
    acc = account(records, out)
    row = {"case": name, "rc": r.returncode, "traceback": "Traceback" in r.stderr, "in": len(records),
           "kept": acc["kept"], "rejected": acc["rejected"], "lost": len(acc["lost"]), "stray": acc["stray"],
           "rejection_lines": acc["rejection_lines"], "reasons": acc["reasons"]}
    counts = (L.Build(out).manifest(L.INGEST) or {}).get("counts", {})
    row["dates_unparsed"] = counts.get("dates_unparsed")
    row["control_chars_removed"] = counts.get("control_chars_removed")
    row["controls_left"] = sum(any(ch in x.get("title", "") + x.get("text", "") for ch in "\x00\x07\x1b")
                               for x in acc["kept_rows"])
    if restore is not None:  # fix the fault and re-run: the output must equal a clean build of the fixed corpus
        restore()
        again = _bench().cli_build(out, sets, corpus=c, extra=("--upto", "ingest"), prefix=prefix)
        clean = _bench().cli_build(work / "clean", sets, corpus=c, extra=("--upto", "ingest"))
        same = all(L.Build(out).path(L.INGEST, f).read_bytes() == L.Build(work / "clean").path(L.INGEST, f).read_bytes()
                   for f in (L.REPORTS, L.REJECTED))
        row["after_fix"] = {"rc": again.returncode, "identical_to_clean": same, "kept": len(_read(out, L.REPORTS)),
                            "traceback": "Traceback" in again.stderr + clean.stderr}
    print(row, flush=True)
    return row


def _all_at_once(work: Path) -> dict[str, Any]:
    """Every fault in one corpus folder, through the whole build (not only ingest)."""
    c = work / "corpus"
    c.mkdir(parents=True)
    records, restores = [], []
    for name, (build, sets, perms) in CASES.items():
        if sets or (perms and _prefix() is None):
            continue
        n = len(list(c.iterdir()))
        (c / f"case{n}").mkdir()
        made = build(c / f"case{n}", work / "outside" / f"case{n}")
        recs, restore = made if isinstance(made, tuple) else (made, None)
        records += recs
        if restore:
            restores.append(restore)
    r = _bench().cli_build(work / "out", list(_bench().BASE), corpus=c, prefix=_prefix() or ())
    for restore in restores:
        restore()
    acc = account(records, work / "out")
    exported = (L.Build(work / "out").manifest(L.EXPORT) or {}).get("output_hash") is not None
    row = {"rc": r.returncode, "traceback": "Traceback" in r.stderr, "in": len(records), "kept": acc["kept"],
           "rejected": acc["rejected"], "lost": len(acc["lost"]), "stray": acc["stray"], "exported": exported,
           "rejection_lines": acc["rejection_lines"]}
    print(row, flush=True)
    return row


def run(work: Path) -> dict[str, Any]:
    rows = []
    for i, (name, (build, sets, perms)) in enumerate(CASES.items()):
        w = work / f"case{i}"
        w.mkdir()
        rows.append(_case(w, name, build, sets, perms))
    (work / "all").mkdir()
    return {"rows": rows, "all": _all_at_once(work / "all"), "root": os.geteuid() == 0}


def render(result: dict[str, Any]) -> str:
    rows = [r for r in result["rows"] if "skipped" not in r]
    a = result["all"]
    md = ["### Bad corpus folders, fields and encodings (ingest)", "",
          f"{len(rows)} cases, each a small corpus of sample reports with one fault, through `fincprg build --upto "
          f"ingest`: tracebacks {sum(r['traceback'] for r in rows)}, non-zero exits {sum(r['rc'] != 0 for r in rows)}, "
          f"records lost {sum(r['lost'] for r in rows)} of {sum(r['in'] for r in rows)}, reports read twice "
          f"{sum(r['stray'] for r in rows)}. A record is kept when a report names its `file:line`, rejected when a "
          "rejection names its line, its whole file or its folder, else lost. All faults in one folder through the "
          f"whole build: exit {a['rc']}, tracebacks {int(a['traceback'])}, {a['in']} records in = {a['kept']} kept + "
          f"{a['rejected']} rejected + {a['lost']} lost ({a['rejection_lines']} rejection lines, some for a file or a "
          f"folder link), reports read twice {a['stray']}, dataset exported: {'yes' if a['exported'] else '**no**'}.",
          ""]
    if result.get("root"):
        md += ["Run as root: the permission cases run the CLI through `setpriv` without CAP_DAC_OVERRIDE and "
               "CAP_DAC_READ_SEARCH, so chmod 000 binds it as it binds a user.", ""]
    md += ["| case | exit | records in | kept | rejected | lost | rejection reasons, counts | after the fix |",
           "|---|---:|---:|---:|---:|---:|---|---|"]
    for r in result["rows"]:
        if "skipped" in r:
            md.append(f"| {r['case']} | skipped: {r['skipped']} | | | | | | |")
            continue
        fix = r.get("after_fix")
        fixed = "" if fix is None else (f"exit {fix['rc']}, {fix['kept']} kept, " + (
            "same as a clean build" if fix["identical_to_clean"] else "**differs from a clean build**"))
        extra = []
        if r["dates_unparsed"]:
            extra.append(f"dates_unparsed {r['dates_unparsed']}")
        if r["control_chars_removed"] or r["controls_left"]:
            extra.append(f"control_chars_removed {r['control_chars_removed'] or 0}, NUL/BEL/ESC left in kept "
                         f"reports {r['controls_left']}")
        reasons = "; ".join([", ".join(f"`{x}`" for x in r["reasons"]), *extra]).strip("; ")
        md.append(f"| {r['case']} | {r['rc']} | {r['in']} | {r['kept']} | {r['rejected']} | "
                  f"{'**' + str(r['lost']) + '**' if r['lost'] else 0} | {reasons} | {fixed} |")
    return "\n".join([*md, ""])

