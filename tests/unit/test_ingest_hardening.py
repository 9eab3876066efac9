"""Ingest hardening (issue 21): every folder, link, field and encoding ingest cannot use is read or
recorded as a rejection with its reason; nothing vanishes and nothing aborts the build."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.errors import ConfigError
from tests.unit.test_ingest import TEXT, good, jl, run_ingest

ROOT = Path(__file__).resolve().parents[2]
# Tests run as root, whom chmod does not stop: the CLI runs without the capabilities that override file
# permissions (setpriv), so a chmod 000 file or folder really is unreadable to it.
_NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search",
           "--inh-caps=-dac_override,-dac_read_search", "--"]


def _unprivileged() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: chmod cannot make a file unreadable here")
    return _NO_DAC


def _reasons(rejected) -> list[tuple[str, str]]:
    return sorted((r.reason, Path(r.source.rstrip("/").rsplit(":", 1)[0]).name) for r in rejected)


# -- the corpus folder: unreadable entries, symlinks ------------------------------------------------------------

def test_cli_build_goes_on_past_an_unreadable_file_and_folder(tmp_path):
    """The corpus hash read every file first, so one unreadable file aborted the whole build."""
    corpus = tmp_path / "c"
    (corpus / "locked").mkdir(parents=True)
    (corpus / "a.jsonl").write_text(jl(good(1)), encoding="utf-8")
    (corpus / "b.jsonl").write_text(jl(good(2)), encoding="utf-8")
    (corpus / "locked" / "c.jsonl").write_text(jl(good(3)), encoding="utf-8")
    (corpus / "b.jsonl").chmod(0)
    (corpus / "locked").chmod(0)
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
        r = subprocess.run([*_unprivileged(), sys.executable, "-m", "fincprg", "build", str(corpus), "-o",
                            str(tmp_path / "out"), "--upto", "ingest", "-q"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=300)
    finally:
        (corpus / "b.jsonl").chmod(0o644)
        (corpus / "locked").chmod(0o755)
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    out = tmp_path / "out" / "ingest"
    assert [json.loads(x)["id"] for x in (out / "reports.jsonl").read_text().splitlines()] == ["r1"]
    rejected = [json.loads(x) for x in (out / "rejected.jsonl").read_text().splitlines()]
    assert sorted((x["reason"], x["source"]) for x in rejected) == [
        ("unreadable", f"{corpus}/b.jsonl:1"), ("unreadable", f"{corpus}/locked/")]
    assert all("Permission denied" in x["detail"] for x in rejected)


def test_unreadable_sub_folder_is_one_rejection(tmp_path, monkeypatch):
    import fincprg.ingest.walk as walk_mod

    d = tmp_path / "corpus"
    (d / "sub").mkdir(parents=True)
    (d / "a.jsonl").write_text(jl(good(1)), encoding="utf-8")
    (d / "sub" / "b.jsonl").write_text(jl(good(2)), encoding="utf-8")
    real = os.scandir

    def scandir(path):
        if Path(path).name == "sub":  # as root, chmod cannot deny the listing
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(walk_mod.os, "scandir", scandir)
    counts, reports, rejected = run_ingest(d, tmp_path / "out")
    assert [r.id for r in reports] == ["r1"]
    assert [(r.reason, r.source) for r in rejected] == [("unreadable", f"{d / 'sub'}/")]
    assert "cannot list this folder" in rejected[0].detail and counts["rejected_by_reason"] == {"unreadable": 1}


def test_broken_symlinks_and_pipes_are_rejections_not_silence(tmp_path):
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.jsonl").write_text(jl(good(1)), encoding="utf-8")
    (d / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (d / "self.jsonl").symlink_to("self.jsonl")
    (d / "lost_folder").symlink_to(tmp_path / "no-such-folder")
    (d / "picture.png").symlink_to(tmp_path / "nowhere.png")  # not a report: not a rejection either
    (d / ".#a.jsonl").symlink_to("root@host.123")  # an editor's lock file: hidden
    os.mkfifo(d / "pipe.jsonl")  # reading it would block the build
    _, reports, rejected = run_ingest(d, tmp_path / "out")
    assert [r.id for r in reports] == ["r1"]
    assert _reasons(rejected) == [("unreadable", "gone.jsonl"), ("unreadable", "lost_folder"),
                                  ("unreadable", "pipe.jsonl"), ("unreadable", "self.jsonl")]
    why = {Path(r.source.rsplit(":", 1)[0]).name: r.detail for r in rejected}
    assert "dangling symlink" in why["gone.jsonl"] and "symlink loop" in why["self.jsonl"]
    assert "not a regular file" in why["pipe.jsonl"]


def test_folder_symlinks_are_followed_once_and_loops_are_cut(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.jsonl").write_text(jl(good(2)), encoding="utf-8")
    d = tmp_path / "corpus"
    (d / "sub").mkdir(parents=True)
    (d / "a.jsonl").write_text(jl(good(1)), encoding="utf-8")
    (d / "linked").symlink_to(elsewhere)  # rglob skipped it: r2 vanished
    (d / "sub" / "up").symlink_to("..")  # a loop back to the corpus folder
    (d / "again").symlink_to(d / "sub")  # a second view of a folder already read
    counts, reports, rejected = run_ingest(d, tmp_path / "out")
    assert sorted(r.id for r in reports) == ["r1", "r2"]
    assert reports[[r.id for r in reports].index("r2")].source == f"{d / 'linked' / 'x.jsonl'}:1"
    assert _reasons(rejected) == [("symlink_loop", "again"), ("symlink_loop", "up")]
    assert counts["files"] == 2  # each real file read once: no duplicate_id rejections


def test_corpus_hash_of_a_readable_corpus_is_unchanged(tmp_path):
    """The tolerant corpus hash hashes the same bytes as before, so an existing OUT does not re-run ingest."""
    from fincprg.io import hash_files
    from fincprg.ingest.walk import corpus_hash

    from tests.conftest import SAMPLE

    assert corpus_hash(SAMPLE) == hash_files([p for p in SAMPLE.rglob("*") if p.is_file()
                                              and not p.name.startswith(".")], SAMPLE)
    f = SAMPLE / "reports.jsonl"
    assert corpus_hash(f) == hash_files([f], SAMPLE)


# -- fields: objects, control characters -------------------------------------------------------------------------

@pytest.mark.parametrize("field,value", [("text", {"a": 1}), ("text", ["第一段", "第二段"]), ("title", {"zh": "标题"}),
                                         ("title", True), ("company", ["星河科技"]), ("id", {"n": 1})])
def test_object_valued_text_fields_are_rejected_not_stored_as_repr(tmp_path, field, value):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1), good(2, **{field: value})), encoding="utf-8")
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1"]
    assert [(r.reason, r.source) for r in rejected] == [("bad_field", f"{f}:2")]
    assert f"field {field!r} is " in rejected[0].detail and "not text" in rejected[0].detail


def test_control_characters_are_taken_out_and_counted(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1, title="星河\x00科技\x1b[31m：报告\x07", text="第一页。\x0c第二页\x00。\n" + TEXT),
                    good(2)), encoding="utf-8")
    counts, reports, rejected = run_ingest(f, tmp_path / "out")
    assert not rejected
    assert reports[0].title == "星河科技[31m：报告"
    assert reports[0].text == "第一页。\n第二页。\n" + TEXT  # a form feed is a page break, not nothing
    assert reports[0].meta["_control_chars_removed"] == 5 and "_control_chars_removed" not in reports[1].meta
    assert counts["control_chars_removed"] == 1


def test_an_id_with_a_control_character_is_rejected(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_text(jl(good(1), good(2, id="r\x002")), encoding="utf-8")
    _, reports, rejected = run_ingest(f, tmp_path / "out")
    assert [r.id for r in reports] == ["r1"] and [r.reason for r in rejected] == ["bad_id"]


# -- encodings ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32", "utf-8-sig"])
def test_auto_reads_unicode_files_by_their_byte_order_mark(tmp_path, codec):
    data = jl(good(1), good(2)).replace("\n", "\r\n")
    bom = {"utf-16-be": "\ufeff"}.get(codec, "")  # utf-16/utf-32/utf-8-sig write their mark themselves
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.jsonl").write_bytes((bom + data).encode(codec))
    (d / "b.csv").write_bytes((bom + f"title,text\r\n江城银行：息差企稳,{TEXT}\r\n").encode(codec))
    counts, reports, rejected = run_ingest(d, tmp_path / "out")
    assert not rejected
    assert [r.title for r in reports] == [good(1)["title"], good(2)["title"], "江城银行：息差企稳"]
    assert reports[0].text == TEXT
    want = {"utf-16": "utf-16", "utf-16-be": "utf-16", "utf-32": "utf-32", "utf-8-sig": "utf-8"}[codec]
    assert counts["encodings"] == {want: 2}


def test_utf16_text_report_is_read(tmp_path):
    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.txt").write_bytes(f"远航汽车（601234）：销量高增\n{TEXT}".encode("utf-16"))
    _, reports, rejected = run_ingest(d, tmp_path / "out")
    assert not rejected and reports[0].title == "远航汽车（601234）：销量高增" and reports[0].text == TEXT


def test_utf16_without_a_mark_is_one_clear_rejection_and_the_named_codec_reads_it(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_bytes(jl(good(1), good(2)).encode("utf-16-le"))
    with pytest.raises(Exception, match="looks like UTF-16"):
        run_ingest(f, tmp_path / "auto")  # the only file: no report survives, and the error says why
    _, reports, rejected = run_ingest(f, tmp_path / "named", ["ingest.encoding=utf-16-le"])
    assert not rejected and [r.id for r in reports] == ["r1", "r2"]


def test_any_python_codec_can_be_named(tmp_path):
    f = tmp_path / "c.csv"
    f.write_bytes(f"title,text\n台積電：先進製程,{TEXT}\n".encode("big5", "replace"))
    counts, reports, rejected = run_ingest(f, tmp_path / "out", ["ingest.encoding=BIG5"])
    assert not rejected and reports[0].title == "台積電：先進製程" and counts["encodings"] == {"big5": 1}


def test_a_bad_byte_under_a_named_codec_rejects_its_line_and_says_which_codec(tmp_path):
    f = tmp_path / "c.jsonl"
    f.write_bytes(jl(good(1)).encode("utf-16-le") + "\n".encode("utf-16-le") + b"\x00\xdc"
                  + "\n".encode("utf-16-le") + jl(good(3)).encode("utf-16-le"))  # a lone low surrogate
    _, reports, rejected = run_ingest(f, tmp_path / "out", ["ingest.encoding=utf-16-le"])
    assert [r.id for r in reports] == ["r1", "r3"]
    assert [(r.reason, r.source) for r in rejected] == [("undecodable", f"{f}:3")]
    assert "not valid utf-16-le (ingest.encoding)" in rejected[0].detail


@pytest.mark.parametrize("name", ["klingon", "base64", "rot13"])
def test_unknown_or_non_text_codecs_are_refused_by_the_config(name):
    with pytest.raises(ConfigError, match="not a text encoding"):
        load_config(overrides=[f"ingest.encoding={name}"])
    assert load_config(overrides=["ingest.encoding=UTF8"]).ingest.encoding == "utf-8"
