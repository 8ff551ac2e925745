"""Folders and ``**`` globs open every file whose first record header checks, whatever its
name (TensorBoard logs, tf.data.Dataset.save folders, TFX splits), and say what they left out
and why; folders of TFRecord-named files open as they always did."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import pytest

import codec
from browser_app.generators import events as gen
from codec import expand
from codec.expand import Expanded, expand_paths, why_not_tfrecord
from codec.framing import encode_record
from codec.writer import write_records


def rel(paths: list[str], root: Path) -> list[str]:
    return [Path(p).relative_to(root).as_posix() for p in paths]


def reasons(result: Expanded, root: Path) -> dict[str, str]:
    return {Path(p).relative_to(root).as_posix(): why for p, why in result.skipped}


def test_a_tensorboard_log_folder(tmp_path):
    logs = tmp_path / "logs"
    gen.write_tensorboard(logs, steps=3)
    (logs / "README.md").write_text("how these logs were made\n")
    found = expand_paths(str(logs))
    assert rel(found, logs) == [
        "events.out.tfevents.1717168117.trainer-0",
        "train/events.out.tfevents.1717171717.trainer-0.4242.0.v2",
        "validation/events.out.tfevents.1717171717.trainer-0.4242.1.v2",
    ]
    assert reasons(found, logs) == {
        "README.md": "not TFRecord framing: the first record's length check fails"
    }
    with codec.TFRecordDataset(str(logs)) as ds:
        assert len(ds) > 20 and not ds.problems


def test_a_saved_dataset_folder(tmp_path):
    folder = gen.write_saved_dataset(tmp_path / "saved", count=5, shards=2)
    found = expand_paths(str(folder))
    assert rel(found, folder) == [
        f"{gen._RUN_ID}/00000000.shard/00000000.snapshot",
        f"{gen._RUN_ID}/00000001.shard/00000000.snapshot",
    ]
    why = reasons(found, folder)
    assert set(why) == {"dataset_spec.pb", "snapshot.metadata"}
    assert all(w.startswith("not TFRecord framing") for w in why.values())
    gz = gen.write_saved_dataset(tmp_path / "gz", count=2, shards=1, compression="gzip")
    assert len(expand_paths(str(gz))) == 1


def tfx_split(folder: Path, name: str, records: int) -> None:
    folder.mkdir(parents=True)
    write_records(folder / name, [b"%d" % i for i in range(records)], "gzip")


def test_a_tfx_parent_folder_and_compressed_files_found_by_content(tmp_path):
    out = tmp_path / "CsvExampleGen" / "examples" / "7"
    tfx_split(out / "Split-train", "data_tfrecord-00000-of-00001.gz", 4)
    tfx_split(out / "Split-eval", "data_tfrecord-00000-of-00001.gz", 2)
    found = expand_paths(str(out))
    assert rel(found, out) == [
        "Split-eval/data_tfrecord-00000-of-00001.gz",
        "Split-train/data_tfrecord-00000-of-00001.gz",
    ]
    with codec.TFRecordDataset(str(out)) as ds:
        assert len(ds) == 6
    odd = tmp_path / "odd"
    odd.mkdir()
    write_records(odd / "part.bin.gz", [b"x"], "gzip")
    (odd / "part.z").write_bytes(zlib.compress(encode_record(b"y")))
    (odd / "notes.gz").write_bytes(gzip.compress(b"plain text, not records\n" * 10))
    (odd / "broken.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"\xff" * 40)
    (odd / "tiny.gz").write_bytes(gzip.compress(b"abc"))
    found = expand_paths(str(odd))
    assert rel(found, odd) == ["part.bin.gz", "part.z"]
    why = reasons(found, odd)
    assert why["notes.gz"] == "GZIP, but not TFRecord framing inside: the first length check fails"
    assert why["broken.gz"].startswith("GZIP that does not inflate")
    assert why["tiny.gz"] == "GZIP whose start inflates to fewer bytes than a record header"


def test_a_recursive_glob(tmp_path):
    logs = tmp_path / "logs"
    gen.write_tensorboard(logs, steps=2)
    (logs / "train" / "notes.json").write_text("{}")
    by_name = expand_paths(str(logs / "**" / "events.out.tfevents.*"))
    assert len(by_name) == 3 and by_name.skipped == []
    everything = expand_paths(str(logs / "**"))
    assert everything == by_name
    assert reasons(everything, logs) == {
        "train/notes.json": "not TFRecord framing: 2 bytes, shorter than a record header"
    }
    with pytest.raises(FileNotFoundError, match="no file matches this pattern"):
        expand_paths(str(logs / "**" / "*.nothing"))
    with pytest.raises(FileNotFoundError, match=r"no file it matches is TFRecord \(1 file looked"):
        expand_paths(str(logs / "**" / "*.json"))


def test_todays_folders_and_globs_are_unchanged(tmp_path):
    # A folder with TFRecord-named files opens those, not its other files nor subfolders.
    for k in range(2):
        write_records(tmp_path / f"train-{k:05d}-of-00002", [b"a"])
    write_records(tmp_path / "stray.bin", [b"b"])  # TFRecord framing, but not named so
    (tmp_path / "sub").mkdir()
    write_records(tmp_path / "sub" / "x.tfrecord", [b"c"])
    found = expand_paths(str(tmp_path))
    assert rel(found, tmp_path) == ["train-00000-of-00002", "train-00001-of-00002"]
    assert found.skipped == []
    assert found == [str(tmp_path / f"train-{k:05d}-of-00002") for k in range(2)]  # a list
    # A glob without ** takes whatever it matches, as before.
    (tmp_path / "train-notes.txt").write_text("x")
    assert len(expand_paths(str(tmp_path / "train-*"))) == 3
    # A TFRecord-named file is taken by its name, even empty or not records (the reader says).
    named = tmp_path / "named"
    named.mkdir()
    (named / "empty.tfrecord").write_bytes(b"")
    (named / "text.tfrecord").write_text("not records")
    assert len(expand_paths(str(named))) == 2


def test_text_indexes_stay_left_out(tmp_path):
    folder = tmp_path / "shard"
    folder.mkdir()
    data = folder / "00000000.snapshot"
    write_records(data, [b"a", b"b"])
    with codec.TFRecordFile(data) as f:
        f.write_text_index(folder / "00000000.snapshot.idx")
    (folder / "orphan.idx").write_text("0 13\n")
    found = expand_paths(str(folder))
    assert rel(found, folder) == ["00000000.snapshot"]
    why = reasons(found, folder)
    assert why["00000000.snapshot.idx"] == "the text index of 00000000.snapshot"
    assert why["orphan.idx"].startswith("not TFRecord framing")


def test_a_folder_of_nothing_says_what_it_looked_at(tmp_path):
    (tmp_path / "a.json").write_text('{"x": 1}')
    (tmp_path / "b.txt").write_text("")
    (tmp_path / ".hidden").write_bytes(encode_record(b"x"))  # hidden files are not looked at
    with pytest.raises(FileNotFoundError) as info:
        expand_paths(str(tmp_path))
    message = str(info.value)
    assert message.startswith(f"{tmp_path}: the folder holds no TFRecord files (2 files looked at")
    assert "a.json: not TFRecord framing" in message and "b.txt: empty" in message
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError) as info:
        expand_paths(str(empty))
    assert str(info.value) == f"{empty}: the folder holds no TFRecord files"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_is_never_opened(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    write_records(tmp_path / "data.bin", [b"x"])
    found = expand_paths(str(tmp_path))  # would block forever if the pipe were opened
    assert rel(found, tmp_path) == ["data.bin"]
    assert reasons(found, tmp_path) == {"pipe": "not a regular file"}
    assert why_not_tfrecord(str(tmp_path / "pipe")) == "not a regular file"


def test_depth_and_entries_are_bounded(tmp_path, monkeypatch):
    deep = tmp_path
    for k in range(6):
        deep = deep / f"d{k}"
    deep.mkdir(parents=True)
    write_records(deep / "x.bin", [b"x"])
    with pytest.raises(FileNotFoundError):
        expand_paths(str(tmp_path))  # six levels down: past MAX_DEPTH
    monkeypatch.setattr(expand, "MAX_DEPTH", 6)
    assert len(expand_paths(str(tmp_path))) == 1
    monkeypatch.setattr(expand, "MAX_VISITS", 3)
    with pytest.raises(FileNotFoundError, match="stopped after looking at 3 entries"):
        expand_paths(str(tmp_path))


def test_why_not_tfrecord(tmp_path):
    good = tmp_path / "good"
    write_records(good, [b"payload"])
    assert why_not_tfrecord(str(good)) is None
    assert why_not_tfrecord(str(tmp_path / "missing")).startswith("cannot be read")
    assert why_not_tfrecord(str(tmp_path)) == "not a regular file"
    short = tmp_path / "short"
    short.write_bytes(b"\x01\x02")
    assert why_not_tfrecord(str(short)).endswith("2 bytes, shorter than a record header")
    # A first record of 35,615 bytes starts 1f 8b like GZIP, yet is plain framing.
    odd = tmp_path / "odd"
    write_records(odd, [bytes(35615)])
    assert odd.read_bytes()[:2] == b"\x1f\x8b" and why_not_tfrecord(str(odd)) is None
