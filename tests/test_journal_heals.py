"""The edit journal heals: a last line cut by a crash is set aside and appends start on a
clean line; a damaged journal is offered for setting aside in the app without a restart;
and a source whose records were rewritten in place (mtime restored) is noticed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from app_support import start_app
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from streamlit.testing.v1 import AppTest

import codec
from browser_app.edits import Journal, journal_path
from browser_app.errors import JournalError, JournalMismatchError
from codec.framing import encode_record


def _lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    data = path.read_bytes()
    assert data.endswith(b"\n")
    return [json.loads(x) for x in data.splitlines()]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(cut=hs.integers(min_value=1, max_value=400), edits=hs.integers(1, 4))
def test_a_cut_last_line_is_set_aside_and_the_next_edit_lands_clean(
    tmp_path_factory: pytest.TempPathFactory, cut: int, edits: int
) -> None:
    tmp = tmp_path_factory.mktemp("torn")
    src = tmp / "basic.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", src)
    with Journal([str(src)], cache_dir=tmp) as j:
        for k in range(edits):
            j.set_values(k, "feature0", str(100 + k))
        path = j._file.path
    whole = path.read_bytes()
    last = whole[: len(whole) - 1].rfind(b"\n") + 1
    # A crash while the last line was written: some of its bytes, never its newline.
    keep = last + min(cut, len(whole) - last - 1)
    path.write_bytes(whole[:keep])
    with Journal([str(src)], cache_dir=tmp) as j:
        torn = j.torn
        assert torn is not None and torn.read_bytes() == whole[last:keep]  # kept as it was
        assert j.pending == edits - 1  # the cut change is not applied
        j.set_mark(0, "passed", "after the crash")
    lines = _lines(path)  # every line is whole JSON again
    assert lines[-1]["type"] == "mark" and lines[-1]["comment"] == "after the crash"
    with Journal([str(src)], cache_dir=tmp) as j:
        assert j.pending == edits - 1 and j.torn is None
        assert j.marks()[0].comment == "after the crash"


def test_a_line_cut_while_the_journal_is_open_is_healed_on_the_next_write(tmp_path) -> None:
    src = tmp_path / "basic.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", src)
    with Journal([str(src)], cache_dir=tmp_path) as j:
        j.set_values(0, "feature0", "7")
        with open(j._file.path, "ab") as f:  # another process crashed mid-line
            f.write(b'{"type":"change","id":9')
        j.set_values(1, "feature0", "8")
        assert j.torn is not None and j.pending == 2
    assert [x.get("type") for x in _lines(j._file.path)] == ["header", "change", "change"]


def test_a_damaged_line_in_the_middle_names_its_byte(tmp_path) -> None:
    src = tmp_path / "basic.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", src)
    with Journal([str(src)], cache_dir=tmp_path) as j:
        j.set_values(0, "feature0", "7")
        j.set_values(1, "feature0", "8")
        path = j._file.path
    data = path.read_bytes()
    second = data.index(b"\n") + 1
    path.write_bytes(data[:second] + b"garbage\n" + data[second:])
    with pytest.raises(JournalError, match=f"line at byte {second:,} is not JSON"):
        Journal([str(src)], cache_dir=tmp_path)


# -- a source rewritten in place ----------------------------------------------------------


def _swap_two_records(path: Path, a: int, b: int) -> None:
    """Swap records ``a`` and ``b`` (same length) in place, then put the mtime back."""
    st_before = os.stat(path)
    with codec.TFRecordFile(str(path), use_cache=False) as f:
        ra, rb = f[a], f[b]
        (oa, _), (ob, _) = f.span(a), f.span(b)
    assert len(ra) == len(rb)
    with open(path, "r+b") as out:
        out.seek(oa)
        out.write(encode_record(rb))
        out.seek(ob)
        out.write(encode_record(ra))
    os.utime(path, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))


def _same_length_pair(path: Path) -> tuple[int, int]:
    with codec.TFRecordFile(str(path), use_cache=False) as f:
        seen: dict[int, int] = {}
        for i in range(f.indexed if f.index_complete else len(f)):
            n = f.span(i)[1]
            if n in seen and f[seen[n]] != f[i]:
                return seen[n], i
            seen.setdefault(n, i)
    raise AssertionError("no two different records of one length")


def test_records_swapped_in_the_middle_with_the_mtime_restored_are_noticed(tmp_path) -> None:
    src = tmp_path / "basic.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", src)
    a, b = _same_length_pair(src)
    with Journal([str(src)], cache_dir=tmp_path) as j:
        j.set_values(a, "feature0", "12345")
    size, mtime = os.stat(src).st_size, os.stat(src).st_mtime_ns
    _swap_two_records(src, a, b)
    assert (os.stat(src).st_size, os.stat(src).st_mtime_ns) == (size, mtime)
    with pytest.raises(JournalMismatchError) as caught:
        Journal([str(src)], cache_dir=tmp_path)
    assert caught.value.changes  # said in words


def test_a_touch_without_changes_is_not_a_mismatch(tmp_path) -> None:
    src = tmp_path / "basic.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", src)
    with Journal([str(src)], cache_dir=tmp_path) as j:
        j.set_values(0, "feature0", "1")
    os.chmod(src, 0o644)  # moves the inode change time, not the records
    with Journal([str(src)], cache_dir=tmp_path) as j:
        assert j.pending == 1


# -- in the app ------------------------------------------------------------------------------


@pytest.fixture
def app_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(DATA / "basic.tfrecord", root / "basic.tfrecord")
    cache = tmp_path / "cache"
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(cache))
    return root, cache


def _app(monkeypatch: pytest.MonkeyPatch, root: Path) -> AppTest:
    return start_app(monkeypatch, root, params={"file": "basic.tfrecord", "record": "1"})


def _mark_passed(at: AppTest) -> None:
    (button,) = [b for b in at.main.button if b.label == "Passed"]
    button.click().run()


def test_a_torn_line_then_a_review_mark_in_the_app(monkeypatch, app_root) -> None:
    root, cache = app_root
    with Journal([str(root / "basic.tfrecord")], cache_dir=cache) as j:
        j.set_values(0, "feature0", "77")
        path = journal_path(j.paths, cache)
    with open(path, "ab") as f:
        f.write(b'{"type":"change","id":2,"rec')  # the crash
    at = _app(monkeypatch, root)
    assert not at.exception
    notice = [w.value for w in at.sidebar.warning if "One change could not be read" in w.value]
    assert notice, [w.value for w in at.sidebar.warning]
    _mark_passed(at)
    assert not at.exception and not at.main.error
    lines = _lines(path)
    assert [x["type"] for x in lines] == ["header", "change", "mark"]
    # The notice goes once it is acknowledged.
    next(b for b in at.sidebar.button if b.label == "OK").click().run()
    assert not [w for w in at.sidebar.warning if "One change could not be read" in w.value]


def test_a_journal_damaged_while_open_is_set_aside_without_a_restart(monkeypatch, app_root):
    root, cache = app_root
    at = _app(monkeypatch, root)
    _mark_passed(at)  # the journal exists and is open in the app
    path = journal_path([os.path.realpath(root / "basic.tfrecord")], cache)
    with open(path, "ab") as f:
        f.write(b"not json at all\n")  # another writer broke it
    _mark_passed(at)  # the write meets the damage
    assert not at.exception
    at.run()
    errors = [e.value for e in at.sidebar.error]
    assert any("cannot be read" in e and "not JSON" in e for e in errors), errors
    (fix,) = [b for b in at.sidebar.button if b.label == "Set the damaged journal aside"]
    fix.click().run()
    assert not at.exception and not at.sidebar.error
    kept = [p for p in path.parent.iterdir() if ".damaged-" in p.name]
    assert len(kept) == 1 and b"not json at all" in kept[0].read_bytes()
    _mark_passed(at)  # editing works again, in a fresh journal
    assert [x["type"] for x in _lines(path)] == ["header", "mark"]
