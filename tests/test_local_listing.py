"""A local spec's files are listed once, not at every run of the page, and listed again as
soon as the folder they come from changes: a file added, removed or renamed there is seen at
the next run."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import streamlit as st

import codec
from browser_app import paths
from browser_app.errors import PathRefused
from browser_app.ui.services import readers


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    st.cache_data.clear()


def _shards(folder: Path, n: int, named: bool = True) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        name = f"data-{i:05d}.tfrecord" if named else f"part-{i:05d}"
        codec.write_records(folder / name, [b"x" * 10] * 2)


def _bump(folder: Path) -> None:
    """Make sure a change to ``folder`` shows in its mtime (coarse clocks)."""
    later = time.time() + 2
    os.utime(folder, (later, later))


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = readers.expand_inside

    def expand(root, spec, **kw):  # type: ignore[no-untyped-def]
        calls.append(spec)
        return real(root, spec, **kw)

    monkeypatch.setattr(readers, "expand_inside", expand)
    return calls


@pytest.mark.parametrize("spec", ["shards", "shards/*.tfrecord", "shards/data-*", "shards@3"])
def test_a_spec_is_listed_once_until_its_folder_changes(tmp_path, counted, spec) -> None:
    if spec == "shards@3":
        folder = tmp_path / "shards"
        folder.mkdir()
        for i in range(3):
            codec.write_records(folder.parent / f"shards-{i:05d}-of-00003", [b"x"])
        folder.rmdir()
        folder = tmp_path
    else:
        folder = tmp_path / "shards"
        _shards(folder, 3)
    first, _notes, _skipped = readers.local_files(str(tmp_path), spec)
    again, _notes, _skipped = readers.local_files(str(tmp_path), spec)
    assert again == first and len(first) == 3
    assert counted == [spec]  # the second run took the list kept
    if spec == "shards@3":
        return
    codec.write_records(folder / "data-00099.tfrecord", [b"y"])
    _bump(folder)
    grown, _notes, _skipped = readers.local_files(str(tmp_path), spec)
    assert len(grown) == 4 and str(folder / "data-00099.tfrecord") in grown
    assert counted == [spec, spec]


def test_a_folder_found_by_content_keeps_its_notes_and_skipped_files(tmp_path, counted) -> None:
    folder = tmp_path / "export"
    _shards(folder, 2, named=False)
    (folder / "README.md").write_text("not records\n")
    for _ in range(2):
        files, notes, skipped = readers.local_files(str(tmp_path), "export")
        assert [os.path.basename(f) for f in files] == ["part-00000", "part-00001"]
        assert [name for name, _why in skipped] == ["export/README.md"]
        assert any("README.md" in n for n in notes)
    assert counted == ["export"]


def test_a_refused_spec_is_refused_every_time(tmp_path, counted) -> None:
    outside = tmp_path / "outside"
    _shards(outside, 1)
    root = tmp_path / "root"
    root.mkdir()
    for _ in range(2):
        with pytest.raises(PathRefused):
            readers.local_files(str(root), "../outside")
    assert counted == ["../outside", "../outside"]  # an error is never kept


def test_the_stamp_is_the_folder_the_files_are_listed_from(tmp_path) -> None:
    _shards(tmp_path / "a", 1)
    folder = str(tmp_path / "a")
    assert paths.spec_stamp(tmp_path, "a")[0] == folder  # type: ignore[index]
    assert paths.spec_stamp(tmp_path, "a/data-00000.tfrecord")[0] == folder  # type: ignore[index]
    assert paths.spec_stamp(tmp_path, "a/*.tfrecord")[0] == folder  # type: ignore[index]
    before = paths.spec_stamp(tmp_path, "a")
    (tmp_path / "a" / "data-00000.tfrecord").rename(tmp_path / "a" / "renamed.tfrecord")
    _bump(tmp_path / "a")
    assert paths.spec_stamp(tmp_path, "a") != before
    assert paths.spec_stamp(tmp_path, "missing/x.tfrecord") is None
    assert paths.spec_stamp("http://127.0.0.1:1/data", "x.tfrecord") is None
