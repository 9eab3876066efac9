"""File-system faults at the unit level (issue 21): a failed HTML write fails the topics stage instead of
falling back to the simple pages, plotly pages have stable element ids, and a folder swap keeps the old
folder on every failure."""
from __future__ import annotations

import errno
import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from fincprg import layout as L
from fincprg import io as pio
from fincprg.records import Topic
from fincprg.topics import viz

go = pytest.importorskip("plotly.graph_objects")


def _nodes() -> dict[str, Topic]:
    return {"t0": Topic(id="t0", children=("t1", "t2"), size=6),
            "t1": Topic(id="t1", parent_id="t0", keywords=("营收", "增长"), size=3, is_leaf=True),
            "t2": Topic(id="t2", parent_id="t0", keywords=("银行", "息差"), size=3, is_leaf=True)}


class _Model:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def visualize_barchart(self, **_kw):
        return go.Figure(go.Bar(x=[1, 2, 3], y=["营收", "增长", "银行"], orientation="h"))

    def visualize_hierarchy(self, **_kw):
        if self.fail:
            raise ValueError("cannot draw a dendrogram of this tree")
        return go.Figure(go.Scatter(x=[0, 1, 2], y=[0, 1, 0]))


def _tree(fail: bool = False) -> SimpleNamespace:
    return SimpleNamespace(model=_Model(fail), n_topics=3, hierarchy=None, root="t0")


def test_failed_page_write_fails_the_stage_instead_of_falling_back(tmp_path, monkeypatch):
    """A disk that fills up on the ~5 MB plotly page (the small fallback page would still fit)."""
    real = viz.atomic_write_text

    def full_disk(path, text):
        if len(text) > 100_000:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, text)

    monkeypatch.setattr(viz, "atomic_write_text", full_disk)
    with pytest.raises(OSError) as e:
        viz.write_html(tmp_path, _tree(), _nodes(), "bertopic")
    assert e.value.errno == errno.ENOSPC
    assert not (tmp_path / L.HIERARCHY_HTML).exists()  # no fallback page that a resume would keep


def test_a_figure_that_cannot_be_drawn_still_falls_back(tmp_path):
    assert viz.write_html(tmp_path, _tree(fail=True), _nodes(), "bertopic") == "simple"
    assert "plotly" not in (tmp_path / L.TOPICS_HTML).read_text(encoding="utf-8")
    assert "t1 (3" in (tmp_path / L.HIERARCHY_HTML).read_text(encoding="utf-8")


def test_plotly_pages_are_byte_identical_across_writes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        assert viz.write_html(d, _tree(), _nodes(), "bertopic") == "bertopic"
    for name in (L.TOPICS_HTML, L.HIERARCHY_HTML):
        page = (a / name).read_bytes()
        assert page == (b / name).read_bytes()
        assert not re.search(rb'id="[0-9a-f]{8}-[0-9a-f]{4}-', page)  # no random UUID element id
    ids = {re.search(r'<div id="([^"]+)" class="plotly-graph-div"', (a / n).read_text()).group(1)
           for n in (L.TOPICS_HTML, L.HIERARCHY_HTML)}
    assert len(ids) == 2  # derived from each figure: two figures, two ids


def _folder(path, text):
    path.mkdir(parents=True, exist_ok=True)
    (path / "f.txt").write_text(text)
    return path


def test_swap_in_replaces_the_folder_and_leaves_nothing_beside_it(tmp_path):
    dest = _folder(tmp_path / "dataset", "old")
    new = pio.staging_dir(dest)
    (new / "f.txt").write_text("new")
    pio.swap_in(new, dest)
    assert (dest / "f.txt").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset"]


def test_swap_in_puts_the_old_folder_back_when_the_rename_fails(tmp_path, monkeypatch):
    dest = _folder(tmp_path / "dataset", "old")
    new = pio.staging_dir(dest)
    (new / "f.txt").write_text("new")
    real, calls = os.replace, []

    def second_fails(src, dst):
        calls.append(src)
        if len(calls) == 2:
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(src))
        real(src, dst)

    monkeypatch.setattr(pio.os, "replace", second_fails)
    with pytest.raises(OSError):
        pio.swap_in(new, dest)
    assert (dest / "f.txt").read_text() == "old"


def test_staging_dir_restores_a_folder_a_kill_left_aside(tmp_path):
    """Killed between the two renames: the old folder is aside, none in place; the next attempt puts it back."""
    aside = _folder(tmp_path / ".dataset.old", "old")
    _folder(tmp_path / ".dataset.new", "half")
    dest = tmp_path / "dataset"
    new = pio.staging_dir(dest)
    assert (dest / "f.txt").read_text() == "old" and not aside.exists()
    assert new.is_dir() and not any(new.iterdir())  # the half-written attempt is gone


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux) to fail a write with ENOSPC")
def test_a_full_disk_error_names_the_file(tmp_path):
    """A failed write() or flush() names no file; the error the user sees must say which one."""
    target = tmp_path / "passages.jsonl"
    (tmp_path / f".{target.name}.tmp").symlink_to("/dev/full")  # the temp file's writes go to a full device
    with pytest.raises(OSError) as e:
        pio.atomic_write_text(target, "长" * 10_000)
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(target)
    assert not (tmp_path / f".{target.name}.tmp").exists() and not target.exists()

    appender = pio.JsonlAppender(Path("/dev/full"))
    appender.write({"id": "p1"})
    with pytest.raises(OSError) as e:
        appender.commit()
    assert e.value.errno == errno.ENOSPC and e.value.filename == "/dev/full"
    with pytest.raises(OSError):  # the buffered line cannot be flushed; the file is closed all the same
        appender.close()


def test_a_write_past_the_file_size_limit_names_the_file_and_leaves_nothing(tmp_path):
    """EFBIG half-way (as ENOSPC on a disk that fills up): some lines were written, more are buffered, and
    closing the file fails again; the error raised is the first one, with the file's name."""
    from tests.fs_limits import file_size_limit

    target = tmp_path / "corpus.jsonl"
    with pytest.raises(OSError) as e, file_size_limit(100_000):
        pio.atomic_write_jsonl(target, ({"id": i, "text": "营业收入同比增长" * 40} for i in range(1000)))
    assert e.value.errno == errno.EFBIG and e.value.filename == str(target)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
