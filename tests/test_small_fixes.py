"""Fixes with a test each: the file picker follows the open dataset, a deleted record shows
one banner with one Undo, the app's own cache under the root is never taken for data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_support import start_app
from test_app_edit import button, harness, no_crash, root  # noqa: F401  (root: a fixture)

import codec
from browser_app.edits import Journal
from browser_app.paths import expand_inside, list_tfrecords
from browser_app.sample_data import write_sample


def test_the_file_box_follows_a_switch_through_recent(monkeypatch, root):  # noqa: F811
    at = start_app(monkeypatch, root, timeout=30)
    pick = "tfb:w:pick"
    at.sidebar.selectbox(key=pick).set_value("detection.tfrecord").run()
    assert at.sidebar.selectbox(key=pick).value == "detection.tfrecord"
    # A folder is not one of the box's entries: the box then shows none, not the old file.
    at.sidebar.text_input(key="tfb:w:path").input("tabular").run()
    no_crash(at)
    assert at.session_state["tfb:source"] == "tabular"
    assert at.sidebar.selectbox(key=pick).value is None
    at.sidebar.selectbox(key=pick).set_value("raw.tfrecord").run()
    for spec, shown in [
        ("detection.tfrecord", "detection.tfrecord"),
        ("tabular", None),
        ("raw.tfrecord", "raw.tfrecord"),
    ]:
        at.sidebar.button(key=f"tfb:w:recent:{spec}").click().run()
        no_crash(at)
        assert at.session_state["tfb:source"] == spec
        assert at.sidebar.selectbox(key=pick).value == shown, spec


def test_deleting_a_record_shows_one_banner_with_one_undo(monkeypatch, root):  # noqa: F811
    at = harness(monkeypatch, root, "detection.tfrecord", 5)
    button(at, "Delete record").click().run()
    no_crash(at)
    banners = [
        e.value
        for e in [*at.main.warning, *at.main.success, *at.main.info]
        if "deleted" in str(e.value)
    ]
    assert len(banners) == 1, banners
    undos = [b.label for b in at.main.button if b.label.startswith("Undo")]
    assert undos == ["Undo the deletion"], undos
    button(at, "Undo the deletion").click().run()
    no_crash(at)
    assert not [b for b in at.main.button if b.label.startswith("Undo")]


# -- the app's own cache under the root ------------------------------------------------------


def test_the_cache_under_the_root_is_never_listed_as_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "root"
    write_sample(data)
    cache = data / "cache"
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(cache))
    # Fill the cache as the app does: an inflated copy, saved indexes, a journal, an upload.
    with codec.TFRecordDataset(str(data / "raw_pixels.tfrecord.gz")) as ds:
        assert len(ds) > 0
    with Journal(str(data / "detection.tfrecord")) as j:
        j.delete_record(0)
    (cache / "uploads" / "s1").mkdir(parents=True)
    shutil.copy(data / "raw.tfrecord", cache / "uploads" / "s1" / "mine.tfrecord")
    own = [p for p in cache.rglob("*") if p.is_file() and codec.looks_like_tfrecord(p.name)]
    assert len(own) >= 2, own  # the inflated copy and the upload look like TFRecord files

    listed = [e.rel for e in list_tfrecords(data)[0]]
    assert listed and not [r for r in listed if r.startswith("cache/")], listed
    # Every TFRecord file outside the cache, and the dataset folder with its splits.
    folder = "tfds/planted/1.0.0"
    entries = {r for r in listed if r == folder or r.startswith(folder + ":")}
    assert entries == {folder, f"{folder}:train", f"{folder}:test"}
    assert sorted(r for r in listed if r not in entries) == sorted(
        p.relative_to(data).as_posix()
        for p in data.rglob("*")
        if p.is_file() and codec.looks_like_tfrecord(p.name) and cache not in p.parents
    )
    for spec in (".", "*/*.tfrecord", "**"):
        try:
            found = expand_inside(data, spec)
        except FileNotFoundError:
            continue
        assert not [f for f in found if str(cache) in f], (spec, found)
    # A path into the cache, given on purpose, still opens.
    assert expand_inside(data, "cache/uploads/s1/mine.tfrecord")
