"""The Streamlit app through AppTest (no browser), and the launcher's command line.

Each test runs the real router script in-process with ``sys.argv`` set as the launcher sets
it, on a root folder holding the sample dataset plus files a person might open by mistake.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
from pathlib import Path

import pytest
from app_support import gallery_tiles, go_to_record, no_crash, start_app, table_pictures
from streamlit.testing.v1 import AppTest
from test_app_edit import media  # noqa: F401  (a fixture)

from browser_app.cli import launch, run
from browser_app.sample_data import write_sample

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("app")
    root = base / "root"
    write_sample(root)
    (root / "notes.tfrecord").write_text("this is a text file, not records\n" * 20)
    (root / "empty.tfrecord").write_bytes(b"")
    (root / "folder.tfrecord").mkdir()
    (root / "nothing_here").mkdir()
    shutil.copy(DATA / "truncated_mid_record.tfrecord", root / "truncated.tfrecord")
    shutil.copy(DATA / "corrupt_length_value.tfrecord", root / "huge_length.tfrecord")
    outside = base / "outside.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", outside)
    os.symlink(outside, root / "escape.tfrecord")
    return root


def app(monkeypatch: pytest.MonkeyPatch, root: Path, *paths: str, **params: str) -> AppTest:
    """A fresh app opening ``paths`` (inside ``root``) with the given URL query parameters."""
    return start_app(monkeypatch, root, *[str(root / p) for p in paths], params=params, timeout=30)


def texts(elements) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(str(e.value) for e in elements)


def table(at: AppTest):  # type: ignore[no-untyped-def]
    return at.main.dataframe[0].value


# -- records page ------------------------------------------------------------------------


def test_opens_first_path_with_thumbnails(monkeypatch, root, media):  # noqa: F811
    at = app(monkeypatch, root, "detection.tfrecord")
    no_crash(at)
    df = table(at)
    assert len(df) == 25
    assert list(df["#"][:3]) == [0, 1, 2]
    # Each row's thumbnail is served by URL (not inline in the page's message): a JPEG.
    assert not df["picture"].str.startswith("data:").any()
    assert all((p or b"")[:3] == b"\xff\xd8\xff" for p in table_pictures(at, media))
    assert (df["status"] == "✓ intact").all()
    assert at.query_params["file"] == "detection.tfrecord"
    assert "Record 0" in texts(at.main.markdown)
    # The picture is shown next to the features; boxes are on by default.
    assert at.main.image and "box" in at.main.image[0].proto.imgs[0].caption


def test_paging_and_jump_update_the_url(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord")
    at.button(key="tfb:w:records:next").click().run()
    no_crash(at)
    assert table(at)["#"].iloc[0] == 25
    assert at.query_params["record"] == "25"
    at.button(key="tfb:w:records:last").click().run()
    assert list(table(at)["#"]) == list(range(50, 60))
    go_to_record(at).set_value(42).run()
    no_crash(at)
    assert table(at)["#"].iloc[0] == 25
    assert "Record 42" in texts(at.main.markdown)
    assert at.query_params["record"] == "42"
    at.selectbox(key="tfb:w:page_size").set_value(10).run()
    assert list(table(at)["#"]) == list(range(40, 50))
    assert at.query_params["size"] == "10"
    at.button(key="tfb:w:records:first").click().run()
    assert table(at)["#"].iloc[0] == 0


def test_deep_link_reopens_a_damaged_record(monkeypatch, root):
    at = app(monkeypatch, root, file="damaged.tfrecord", record="5")
    no_crash(at)
    df = table(at)
    row = df[df["#"] == 5].iloc[0]
    assert "damaged" in row["status"]
    assert int(row["offset"]) > 0
    # The skipped region (junk between records 8 and 9) is in place, by offset.
    gap = df[df["status"].str.contains("skipped")]
    assert len(gap) == 1 and gap.index[0] == df.index[df["#"] == 9][0] - 1
    errors = texts(at.main.error)
    assert "Record 5 is damaged" in errors and "header at byte" in errors
    # Records before the junk are intact; records after it were found by searching past
    # it, and say so.
    numbers = df["#"]
    before = df[numbers.notna() & (numbers != 5) & (numbers < 9)]
    after = df[numbers.notna() & (numbers >= 9)]
    assert (before["status"] == "✓ intact").all()
    assert len(after) and after["status"].str.startswith("◌ recovered").all()
    assert "recovered records on this page" in texts(at.main.caption)


def test_deep_link_past_the_end_shows_the_last_record(monkeypatch, root):
    at = app(monkeypatch, root, file="sequence.tfrecord", record="999")
    no_crash(at)
    assert "does not exist" in texts(at.main.warning)
    assert "Record 7" in texts(at.main.markdown)


def test_bad_record_number_in_link_is_ignored(monkeypatch, root):
    at = app(monkeypatch, root, file="sequence.tfrecord", record="abc")
    no_crash(at)
    assert "not a number" in texts(at.main.warning)
    assert "Record 0" in texts(at.main.markdown)


def test_selecting_a_row_shows_that_record(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord")
    key = at.main.dataframe[0].key
    assert key
    at.session_state[key] = {"selection": {"rows": [3], "columns": [], "cells": []}}
    at.run()
    no_crash(at)
    assert "Record 3" in texts(at.main.markdown)
    assert at.query_params["record"] == "3"


def test_selecting_a_skipped_region_explains_it(monkeypatch, root):
    at = app(monkeypatch, root, "damaged.tfrecord")
    df = table(at)
    gap = int(df.index[df["status"].str.contains("skipped")][0])
    at.session_state[at.main.dataframe[0].key] = {
        "selection": {"rows": [gap], "columns": [], "cells": []}
    }
    at.run()
    no_crash(at)
    assert "Skipped region at byte" in texts(at.main.markdown)
    assert "could not be read as records" in texts(at.main.warning)


def test_sequence_example_detail(monkeypatch, root):
    at = app(monkeypatch, root, "sequence.tfrecord")
    no_crash(at)
    frames = [d.value for d in at.main.dataframe]
    steps = next(f for f in frames if "step" in f.columns)
    assert {"frame_id", "frame_score", "tokens"} <= set(steps.columns)
    assert "Context" in texts(at.main.markdown)


def test_raw_record_detail_has_hex_and_text(monkeypatch, root):
    at = app(monkeypatch, root, file="raw.tfrecord", record="1")
    no_crash(at)
    code = texts(at.main.code)
    assert "00000000  69 64 2c 6c" in code  # "id,l" in hex
    assert "id,label,score" in code


def test_tensor_detail_shows_dtype_shape_and_picture(monkeypatch, root):
    at = app(monkeypatch, root, "tensors.tfrecord")
    no_crash(at)
    captions = texts(at.main.caption)
    assert "uint8" in captions and "48×64×3" in captions
    assert len(at.main.image) >= 1


def test_picture_problems_are_messages(monkeypatch, root):
    at = app(monkeypatch, root, file="damaged.tfrecord", record="7")
    no_crash(at)
    assert "Cannot show this picture" in texts(at.main.error)
    at = app(monkeypatch, root, file="damaged.tfrecord", record="10")
    no_crash(at)
    assert "Size mismatch" in texts(at.main.warning)


def test_boxes_switch(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord")
    assert "box" in at.main.image[0].proto.imgs[0].caption
    at.toggle(key="tfb:w:boxes:detail").set_value(False).run()
    no_crash(at)
    assert "box" not in at.main.image[0].proto.imgs[0].caption


def test_shards_open_as_one_dataset(monkeypatch, root):
    at = app(monkeypatch, root, file="tabular/train-*-of-00003.tfrecord")
    no_crash(at)
    assert "120 records" in texts(at.main.caption)
    assert "3 files" in texts(at.main.caption)


def test_gzip_is_detected(monkeypatch, root):
    at = app(monkeypatch, root, file="raw_pixels.tfrecord.gz")
    no_crash(at)
    assert "gzip" in texts(at.main.caption)
    assert len(table(at)) == 10


# -- bad input: clear messages, never a traceback ----------------------------------------


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("../outside.tfrecord", "Refused"),
        ("/etc/passwd", "outside the root"),
        ("escape.tfrecord", "symlink leads outside"),
        ("detection.tfrecod", "Not found"),
        ("nothing_here", "holds no TFRecord files"),
        ("missing-*-of-00009.tfrecord", "no file matches"),
    ],
)
def test_refused_or_missing_paths(monkeypatch, root, typed, message):
    at = app(monkeypatch, root, "detection.tfrecord")
    at.text_input(key="tfb:w:path").input(typed).run()
    no_crash(at)
    shown = texts(at.error) + texts(at.warning)
    assert message in shown
    # The file that was open stays open.
    assert at.query_params["file"] == "detection.tfrecord"


def test_link_to_a_path_outside_the_root_is_refused(monkeypatch, root):
    at = app(monkeypatch, root, file="../outside.tfrecord", record="0")
    no_crash(at)
    assert "Refused" in texts(at.error)
    assert "file" not in at.query_params


def test_not_a_tfrecord_file(monkeypatch, root):
    at = app(monkeypatch, root, file="notes.tfrecord")
    no_crash(at)
    assert "does not look like a TFRecord file" in texts(at.main.error)


def test_empty_file(monkeypatch, root):
    at = app(monkeypatch, root, file="empty.tfrecord")
    no_crash(at)
    assert "empty" in texts(at.main.warning)


def test_folder_named_like_a_file(monkeypatch, root):
    at = app(monkeypatch, root, file="folder.tfrecord")
    no_crash(at)
    assert "holds no TFRecord files" in texts(at.error)


def test_truncated_file_shows_records_and_the_cut(monkeypatch, root):
    at = app(monkeypatch, root, file="truncated.tfrecord", record="999")
    no_crash(at)
    df = table(at)
    assert df["status"].str.contains("skipped").iloc[-1]
    assert (df["status"].iloc[:-1] == "✓ intact").all()


def test_huge_length_field(monkeypatch, root):
    at = app(monkeypatch, root, file="huge_length.tfrecord")
    no_crash(at)
    df = table(at)
    status = df["status"]
    gap = int(status.str.contains("skipped").to_numpy().argmax())
    assert status.iloc[gap].startswith("⚠")
    # Intact up to the bad header; what follows the skipped bytes was found by searching.
    assert (status.iloc[:gap] == "✓ intact").all()
    assert status.iloc[gap + 1 :].str.startswith("◌ recovered").all()
    assert len(status) - 1 >= 20


def test_upload_is_opened_from_a_temporary_file(monkeypatch, root):
    at = app(monkeypatch, root)
    assert "Open a TFRecord file" in texts(at.main.info)
    data = (DATA / "basic.tfrecord.gz").read_bytes()
    at.file_uploader(key="tfb:w:upload").set_value(
        ("basic.tfrecord.gz", data, "application/octet-stream")
    ).run()
    no_crash(at)
    assert "basic.tfrecord.gz" in texts(at.main.caption)
    assert len(table(at)) == 25
    assert "file" not in at.query_params  # uploads never go into a URL


def test_recent_files(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord")
    at.text_input(key="tfb:w:path").input("sequence.tfrecord").run()
    assert at.query_params["file"] == "sequence.tfrecord"
    at.button(key="tfb:w:recent:detection.tfrecord").click().run()
    no_crash(at)
    assert at.query_params["file"] == "detection.tfrecord"


def test_search_lists_files_and_shard_sets(monkeypatch, root):
    at = app(monkeypatch, root, "detection.tfrecord")
    at.text_input(key="tfb:w:search").input("train").run()
    options = at.selectbox(key="tfb:w:pick").options
    # The shard set of the tabular files, its shards, and the planted TFDS folder's split.
    assert next(o for o in options if o.startswith("tabular/")).startswith(
        "tabular/train-*-of-00003.tfrecord"
    )
    assert len([o for o in options if o.startswith("tabular/")]) == 4
    assert any(o.startswith("tfds/planted/1.0.0:train") for o in options)
    at.selectbox(key="tfb:w:pick").set_value("tabular/train-*-of-00003.tfrecord").run()
    no_crash(at)
    assert at.query_params["file"] == "tabular/train-*-of-00003.tfrecord"


# -- other pages -------------------------------------------------------------------------


def test_overview_of_a_damaged_file(monkeypatch, root):
    at = app(monkeypatch, root, file="damaged.tfrecord")
    at.switch_page("ui/pages/overview.py").run()
    no_crash(at)
    metrics = {m.label: m.value for m in at.main.metric}
    assert metrics["Records"] == "12"
    assert metrics["Damaged records"] == "1"
    assert metrics["Skipped bytes"] == "22"
    assert metrics["Kind"] == "Example"
    errors = texts(at.main.error)
    assert "1 damaged record and 1 unreadable region" in errors
    features = at.main.dataframe[-1].value
    assert list(features["feature"]) == [
        "image_raw",
        "height",
        "width",
        "depth",
        "label",
        "caption",
    ]
    # "Record 5" jumps to the damaged record on the Records page.
    at.button(key="tfb:w:problem:0").click().run()
    no_crash(at)
    assert at.query_params["record"] == "5"
    assert "Record 5 is damaged" in texts(at.main.error)


def test_overview_of_an_intact_file(monkeypatch, root):
    at = app(monkeypatch, root, file="detection.tfrecord")
    at.switch_page("ui/pages/overview.py").run()
    no_crash(at)
    assert "Every CRC checks out: 60 intact records" in texts(at.main.success)
    types = dict(zip(at.main.dataframe[-1].value["feature"], at.main.dataframe[-1].value["type"]))
    assert types["image/object/bbox/xmin"] == "float"
    assert types["image/object/class/label"] == "int64"


def test_gallery(monkeypatch, root):
    at = app(monkeypatch, root, file="damaged.tfrecord")
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    tiles = gallery_tiles(at)
    assert [t["record"] for t in tiles] == list(range(12))
    without = {t["record"]: t for t in tiles if t["src"] is None}
    assert len(without) == 2  # 12 records: one damaged, one undecodable; 10 pictures
    (damaged,) = [t for t in without.values() if t.get("damaged")]
    assert damaged["record"] == 5
    assert "damaged" in damaged["why"] or "data CRC" in damaged["why"]
    assert all(t["why"] for t in without.values())
    # A click on a tile opens the record it names (the element sends that action: see
    # tests/test_gallery_tiles.py for what Python does with it).
    assert tiles[3]["caption"].startswith("#3") and tiles[3]["record"] == 3


def test_gallery_without_pictures(monkeypatch, root):
    at = app(monkeypatch, root, file="sequence.tfrecord")
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    assert "No pictures" in texts(at.main.info)


def test_no_source(monkeypatch, root):
    at = app(monkeypatch, root)
    no_crash(at)
    assert "Open a TFRecord file" in texts(at.main.info)
    for page in ("ui/pages/overview.py", "ui/pages/gallery.py"):
        at.switch_page(page).run()
        no_crash(at)


# -- the launcher ------------------------------------------------------------------------


def test_server_command_has_safe_defaults(tmp_path):
    cmd = launch.server_command("127.0.0.1", 8600, str(tmp_path), [str(tmp_path / "a.tfrecord")])
    text = " ".join(cmd)
    assert cmd[1:5] == ["-m", "browser_app.cli.serve", "streamlit", "run"]  # see cli/serve.py
    for flag in (
        "--server.headless true",
        "--server.address 127.0.0.1",
        "--server.port 8600",
        "--browser.gatherUsageStats false",
        "--server.fileWatcherType none",
        "--server.allowedHosts localhost",
        "--client.showErrorDetails none",
    ):
        assert flag in text
    assert cmd[cmd.index("--") :] == ["--", "--root", str(tmp_path), str(tmp_path / "a.tfrecord")]


def test_pick_port_skips_a_busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        assert not launch.port_is_free("127.0.0.1", busy)
        assert launch.pick_port("127.0.0.1", busy) != busy


def test_default_root(tmp_path, monkeypatch):
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert launch.default_root([]) == str(tmp_path.resolve())
    assert launch.default_root(["a/b/x.tfrecord"]) == str(tmp_path.resolve())
    other = tmp_path.parent
    monkeypatch.chdir(tmp_path / "a")
    assert launch.default_root([str(other / "x.tfrecord")]) == str(other.resolve())


def _args(**kw: object) -> argparse.Namespace:
    base = {"paths": [], "root": None, "host": "127.0.0.1", "port": 8501, "no_browser": True}
    base.update(kw)
    return argparse.Namespace(**base)


def test_launch_refuses_a_path_outside_the_root(tmp_path, capsys):
    (tmp_path / "root").mkdir()
    target = tmp_path / "x.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", target)
    code = run(launch.launch, _args(paths=[str(target)], root=str(tmp_path / "root")))
    assert code == 2
    assert "outside the root" in capsys.readouterr().err


def test_launch_reports_a_missing_file(tmp_path, capsys):
    code = run(launch.launch, _args(paths=[str(tmp_path / "nope.tfrecord")], root=str(tmp_path)))
    assert code == 2
    assert "no such file" in capsys.readouterr().err


def test_launch_refuses_a_root_that_is_not_a_folder(tmp_path, capsys):
    code = run(launch.launch, _args(paths=[], root=str(tmp_path / "missing")))
    assert code == 2
    assert "not a folder" in capsys.readouterr().err


def test_many_records_index_in_steps(monkeypatch, tmp_path):
    # More records than one header-scan step: the first page appears before the index is
    # complete, and the count fills in.
    import codec

    with codec.TFRecordWriter(tmp_path / "many.tfrecord") as w:
        w.write_framed(codec.encode_record(b"") * 300_000)
    at = app(monkeypatch, tmp_path, "many.tfrecord")
    no_crash(at)
    assert list(table(at)["#"][:2]) == [0, 1]
    for _ in range(5):
        if "300,000 records" in texts(at.main.caption):
            break
        at.run()
    assert "300,000 records" in texts(at.main.caption)
    at.button(key="tfb:w:records:last").click().run()
    assert table(at)["#"].iloc[-1] == 299_999
