"""Export and import: byte-for-byte copies, edits applied, exact values in every format,
atomic writes that keep the pending edits when they fail."""

from __future__ import annotations

import csv
import errno
import gzip
import io
import json
import math
import os
import shutil
import zipfile
import zlib
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest
from conftest import DATA, INTACT_GOLDEN, damaged_expectations, expected_lines
from PIL import Image

import codec
from browser_app import export as E
from browser_app.edits import Journal
from browser_app.errors import ExportError
from browser_app.export import registry, tfrecord
from browser_app.export.base import ExportFormat
from browser_app.export.exporter import Exporter
from browser_app.export.staging import PieceRun
from codec import example as ex
from codec import images


def _payloads(path: str | Path) -> list[bytes]:
    with codec.TFRecordFile(str(path)) as f:
        return list(f)


def _stream(name: str) -> bytes:
    """The uncompressed TFRecord stream of a golden file."""
    raw = (DATA / name).read_bytes()
    if name.endswith(".gz"):
        return gzip.decompress(raw)
    if name.endswith(".zlib"):
        return zlib.decompress(raw)
    return raw


def _copy(tmp_path: Path, name: str) -> Path:
    p = tmp_path / name
    shutil.copyfile(DATA / name, p)
    return p


def _listing(folder: Path) -> list[str]:
    """The outputs in ``folder``, without the index maps beside them (test_export_mapping
    checks those)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(E.INDEX_MAP_SUFFIX))


# -- TFRecord ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", INTACT_GOLDEN)
def test_untouched_export_is_identical(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out.tfrecord"
    report = E.export_tfrecord(str(DATA / name), out)
    assert report.ok and report.verified
    assert report.copied == report.records == len(_payloads(DATA / name))
    assert out.read_bytes() == _stream(name)  # byte for byte, framing included


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_compressed_export_decompresses_to_the_same_stream(
    compression: str, tmp_path: Path
) -> None:
    plain = tmp_path / "plain.tfrecord"
    packed = tmp_path / "packed.tfrecord"
    E.export_tfrecord(str(DATA / "edge_values.tfrecord"), plain)
    report = E.export_tfrecord(str(DATA / "edge_values.tfrecord"), packed, compression=compression)
    assert report.verified
    unpack = gzip.decompress if compression == "gzip" else zlib.decompress
    assert unpack(packed.read_bytes()) == plain.read_bytes()


def test_compression_from_the_destination_name(tmp_path: Path) -> None:
    out = tmp_path / "out.tfrecord.gz"
    E.export_tfrecord(str(DATA / "basic.tfrecord"), out)
    assert gzip.decompress(out.read_bytes()) == (DATA / "basic.tfrecord").read_bytes()


def test_edits_are_applied_and_everything_else_is_copied(tmp_path: Path) -> None:
    src = _copy(tmp_path, "basic.tfrecord")
    original = _payloads(src)
    with Journal(str(src)) as j:
        j.set_value(3, "feature1", 0, str(2**62 + 1))
        j.set_value(3, "feature3", 0, "0.1")
        j.add_feature(3, "blob", "bytes", "hex:00ff\ntext")
        j.delete_record(10)
        new = j.duplicate_record(20)
        j.set_value(new, "feature2", 0, "copy")
        out = tmp_path / "out.tfrecord"
        report = E.export_tfrecord(j, out)
    assert (report.records, report.copied, report.edited, report.added, report.deleted) == (
        64,
        62,
        1,
        1,
        1,
    )
    got = _payloads(out)
    expected_order = [*range(10), *range(11, 21), "new", *range(21, 64)]
    assert len(got) == len(expected_order)
    for payload, ref in zip(got, expected_order):
        if ref == 3:
            rec = ex.decode(payload)
            assert rec.features["feature1"].values == [2**62 + 1]
            assert rec.features["feature3"].values == [float(np.float32(0.1))]
            assert rec.features["blob"] == ex.Feature("bytes", [b"\x00\xff", b"text"])
            assert rec.features["feature2"] == ex.decode(original[3]).features["feature2"]
        elif ref == "new":
            rec = ex.decode(payload)
            assert rec.features["feature2"].values == [b"copy"]
            assert rec.features["feature1"] == ex.decode(original[20]).features["feature1"]
        else:
            assert payload == original[ref]  # untouched: the same bytes
    assert src.read_bytes() == (DATA / "basic.tfrecord").read_bytes()  # source untouched


def test_selection_with_new_records(tmp_path: Path) -> None:
    src = _copy(tmp_path, "basic.tfrecord")
    original = _payloads(src)
    with Journal(str(src)) as j:
        new = j.duplicate_record(5)
        j.delete_record(6)
        out = tmp_path / "sel.tfrecord"
        report = E.export_tfrecord(j, out, selection=[7, 5, 6, 40])
        assert report.records == 4 and report.deleted == 1 and report.added == 1
        assert _payloads(out) == [original[5], original[5], original[7], original[40]]
        E.export_tfrecord(j, out, selection=range(5, 8), include_added=False)
        assert _payloads(out) == [original[5], original[7]]
        E.export_tfrecord(j, out, selection=[new])
        assert _payloads(out) == [original[5]]
    with pytest.raises(ExportError, match="out of range"):
        E.export_tfrecord(str(src), out, selection=[64])


def test_shards_follow_tensorflow_names(tmp_path: Path) -> None:
    out = tmp_path / "train.tfrecord.gz"
    report = E.export_tfrecord(str(DATA / "basic.tfrecord"), out, shards=3)
    names = [f"train-{k:05d}-of-00003.tfrecord.gz" for k in range(3)]
    assert [os.path.basename(p) for p in report.outputs] == names
    assert _listing(tmp_path) == names
    parts = [_payloads(tmp_path / n) for n in names]
    assert [len(p) for p in parts] == [21, 21, 22]
    assert [p for part in parts for p in part] == _payloads(DATA / "basic.tfrecord")
    assert E.shard_names("a/b.tfrecord", 2) == [
        "a/b-00000-of-00002.tfrecord",
        "a/b-00001-of-00002.tfrecord",
    ]


def test_more_shards_than_records(tmp_path: Path) -> None:
    out = tmp_path / "few.tfrecord"
    E.export_tfrecord(str(DATA / "raw_records.tfrecord"), out, shards=5)
    counts = [len(_payloads(tmp_path / f"few-0000{k}-of-00005.tfrecord")) for k in range(5)]
    assert sum(counts) == 3 and max(counts) == 1


@pytest.mark.parametrize("name", sorted(damaged_expectations()))
def test_damaged_records_are_skipped_and_reported(name: str, tmp_path: Path) -> None:
    facts = damaged_expectations()[name]
    out = tmp_path / "out.tfrecord"
    report = E.export_tfrecord(str(DATA / name), out)
    assert sorted(p.offset or 0 for p in report.skipped) == sorted(
        p["offset"] for p in facts["problems"]
    )
    assert report.records == len(facts["readable_offsets"])
    with codec.TFRecordFile(str(DATA / name)) as f:
        by_offset = {info.offset: info.data for info in f.records()}
    assert _payloads(out) == [by_offset[o] for o in facts["readable_offsets"]]


def test_the_source_is_never_the_destination(tmp_path: Path) -> None:
    src = _copy(tmp_path, "basic.tfrecord")
    before = src.read_bytes()
    with pytest.raises(ExportError, match="source file"):
        E.export_tfrecord(str(src), src)
    with pytest.raises(ExportError, match="source file"):
        E.export_jsonl(str(src), src)
    assert src.read_bytes() == before
    assert _listing(tmp_path) == ["basic.tfrecord"]


def test_replace_source_keeps_a_backup(tmp_path: Path) -> None:
    src = _copy(tmp_path, "basic.tfrecord.gz")
    original = src.read_bytes()
    with Journal(str(src)) as j:
        j.set_value(0, "feature1", 0, "9")
        j.delete_record(1)
        report = E.export_tfrecord(j, replace_source=True)
        assert j.pending == 0  # the edits are in the file now
    assert report.backup == f"{src}.bak"
    assert Path(report.backup).read_bytes() == original
    got = _payloads(src)
    assert src.read_bytes()[:2] == b"\x1f\x8b"  # still GZIP, as the source was
    assert len(got) == 63 and ex.decode(got[0]).features["feature1"].values == [9]
    # A second replacement keeps the first backup and makes a timestamped one.
    with Journal(str(src)) as j:
        assert j.pending == 0
        j.delete_record(0)
        second = E.export_tfrecord(j, replace_source=True)
    assert second.backup is not None and report.backup is not None
    assert second.backup != report.backup and second.backup.endswith(".bak")
    assert Path(report.backup).read_bytes() == original
    assert len(_payloads(src)) == 62


def test_replace_source_needs_one_file() -> None:
    paths = sorted(str(p) for p in (DATA / "shards").glob("*.tfrecord"))
    with pytest.raises(ExportError, match="one-file source"):
        E.export_tfrecord(paths, replace_source=True)


# -- failures leave nothing behind and keep the edits --------------------------------------


def _edited_journal(tmp_path: Path) -> tuple[Journal, Path]:
    src = _copy(tmp_path, "basic.tfrecord")
    j = Journal(str(src))
    j.set_value(0, "feature1", 0, "4")
    j.delete_record(2)
    j.duplicate_record(5)
    return j, src


@pytest.mark.parametrize("fmt", ["tfrecord", "jsonl", "csv", "parquet", "json", "zip"])
def test_a_full_disk_leaves_no_partial_file_and_keeps_the_edits(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    j, _src = _edited_journal(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "existing.txt").write_text("keep me")
    dst = out_dir / f"data.{fmt}"
    before = [(c.id, c.op) for c in j.changes()]

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(codec.WriteError, match="No space left"):
        E.export(j, dst)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert _listing(out_dir) == ["existing.txt"]
    assert [(c.id, c.op) for c in j.changes()] == before
    j.close()
    with Journal(str(_src)) as again:  # and on disk too
        assert [(c.id, c.op) for c in again.changes()] == before


def test_replace_source_on_a_full_disk_keeps_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    j, src = _edited_journal(tmp_path)
    original = src.read_bytes()
    real_fsync = os.fsync
    monkeypatch.setattr(
        os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space"))
    )
    with pytest.raises(codec.WriteError):
        E.export_tfrecord(j, replace_source=True)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert src.read_bytes() == original
    assert _listing(tmp_path) == ["basic.tfrecord"]  # no backup, no temporary file
    assert j.pending == 3
    j.close()


def test_an_unwritable_destination(tmp_path: Path) -> None:
    j, _src = _edited_journal(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for dst in (blocker / "out.tfrecord", tmp_path / "missing" / "out.csv"):
        with pytest.raises(codec.WriteError, match="cannot write here"):
            E.export(j, dst)
    assert j.pending == 3
    j.close()


def test_a_failed_verification_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tfrecord.encode_record

    def flaky(payload: bytes) -> bytes:
        framed = bytearray(real(payload))
        framed[-1] ^= 1  # a data CRC the verification pass must catch
        return bytes(framed)

    monkeypatch.setattr(tfrecord, "encode_record", flaky)
    out = tmp_path / "out.tfrecord"
    with pytest.raises(ExportError, match="verification"):
        E.export_tfrecord(str(DATA / "basic.tfrecord"), out)
    assert _listing(tmp_path) == []


def test_progress_reports_write_and_verify(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    E.export_tfrecord(
        str(DATA / "basic.tfrecord"),
        tmp_path / "o.tfrecord",
        progress=lambda s, d, t: seen.append((s, d, t)),
    )
    # Two outputs are verified: the file and its index map.
    assert ("write", 64, 64) in seen and seen[-1] == ("verify", 2, 2)


# -- JSON Lines ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", INTACT_GOLDEN)
def test_jsonl_round_trip_is_identical(name: str, tmp_path: Path) -> None:
    lines = tmp_path / "out.jsonl"
    E.export_jsonl(str(DATA / name), lines)
    written = [json.loads(x) for x in lines.read_text(encoding="utf-8").splitlines()]
    expected = expected_lines(name)
    assert [(w["index"], w["kind"], w["record"]) for w in written] == [
        (e["index"], e["kind"], e["record"]) for e in expected
    ]
    back = tmp_path / "back.tfrecord"
    report = E.import_jsonl(lines, back)
    assert report.verified and report.records == len(expected)
    assert back.read_bytes() == _stream(name)


def test_jsonl_of_edited_records(tmp_path: Path) -> None:
    j, _src = _edited_journal(tmp_path)
    lines = tmp_path / "e.jsonl"
    E.export_jsonl(j, lines)
    back = tmp_path / "back.tfrecord"
    E.import_jsonl(lines, back)
    tf = tmp_path / "direct.tfrecord"
    E.export_tfrecord(j, tf)
    assert back.read_bytes() == tf.read_bytes()
    first = json.loads(lines.read_text().splitlines()[0])
    assert first["record"]["features"]["feature"]["feature1"] == {"int64List": {"value": ["4"]}}
    j.close()


def test_import_compressed(tmp_path: Path) -> None:
    lines = tmp_path / "b.jsonl"
    E.export_jsonl(str(DATA / "basic.tfrecord"), lines)
    out = tmp_path / "b.tfrecord.gz"
    E.import_jsonl(lines, out)
    assert gzip.decompress(out.read_bytes()) == (DATA / "basic.tfrecord").read_bytes()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2: not JSON"),
        ('{"kind": "example"}', 'line 2: expected an object with a "record"'),
        ('{"kind": "nope", "record": {}}', "line 2: unknown kind"),
        ('{"kind": "example", "record": {"features": 5}}', "line 2:"),
        ('{"kind": "raw", "record": "@@"}', "line 2: raw record: invalid base64"),
    ],
)
def test_import_names_the_bad_line(line: str, message: str, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"index": 0, "kind": "raw", "record": "AA=="}\n' + line + "\n")
    with pytest.raises(E.ImportFormatError, match=message):
        E.import_jsonl(src, tmp_path / "out.tfrecord")
    assert _listing(tmp_path) == ["in.jsonl"]


# -- flat tables --------------------------------------------------------------------------------


def _csv_rows(path: Path) -> list[dict[str, str]]:
    limit = csv.field_size_limit(1 << 30)
    try:
        with open(path, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    finally:
        csv.field_size_limit(limit)


def test_csv_keeps_every_value_exact(tmp_path: Path) -> None:
    out = tmp_path / "edge.csv"
    report = E.export_table(str(DATA / "edge_values.tfrecord"), out)
    assert report.verified and report.records == 8
    rows = _csv_rows(out)
    assert rows[0]["min"] == "-9223372036854775808"
    assert rows[0]["max"] == "9223372036854775807"
    assert json.loads(rows[0]["beyond_js"]) == [9007199254740993, -9007199254740993]
    assert rows[1]["nan"] == "nan"
    assert json.loads(rows[1]["inf"]) == ["Infinity", "-Infinity"]
    assert rows[1]["negzero"] == "-0.0"
    assert rows[1]["big"] == "3.4028235e+38"
    assert rows[2]["empty_string"] == "base64:"  # an empty value, not a missing one
    assert rows[3]["empty_string"] == ""  # missing
    assert rows[2]["empty_int"] == "[]"
    assert rows[4]["html"].startswith("<script>")
    assert rows[4]["ключ/ü"] == "значение ✓"
    assert rows[4]["binary"].startswith("base64:")
    binary = ex.decode(_payloads(DATA / "edge_values.tfrecord")[4]).features["binary"]
    assert codec_parse(rows[4]["binary"]) == binary.values[0]


def codec_parse(text: str) -> bytes:
    from browser_app.edits import parse_value

    value = parse_value("bytes", text)
    assert isinstance(value, bytes)
    return value


def test_csv_floats_read_back_as_the_same_float32(tmp_path: Path) -> None:
    out = tmp_path / "basic.csv"
    E.export_table(str(DATA / "basic.tfrecord"), out)
    rows = _csv_rows(out)
    recs = [ex.decode(p) for p in _payloads(DATA / "basic.tfrecord")]
    for row, rec in zip(rows, recs):
        assert np.float32(row["feature3"]) == np.float32(rec.features["feature3"].values[0])
        assert row["feature2"] == rec.features["feature2"].values[0].decode()


def test_json_integers_beyond_2_53_are_strings(tmp_path: Path) -> None:
    out = tmp_path / "edge.json"
    E.export_table(str(DATA / "edge_values.tfrecord"), out)
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert rows[0]["zero"] == 0
    assert rows[0]["max"] == "9223372036854775807"
    assert rows[0]["beyond_js"] == ["9007199254740993", "-9007199254740993"]
    assert rows[1]["nan"] == "NaN" and rows[1]["inf"] == ["Infinity", "-Infinity"]
    assert rows[1]["negzero"] == 0.0 and math.copysign(1, rows[1]["negzero"]) == -1
    assert rows[4]["binary"] == {
        "$base64": __import__("base64")
        .b64encode(
            ex.decode(_payloads(DATA / "edge_values.tfrecord")[4]).features["binary"].values[0]
        )
        .decode()
    }
    assert rows[3]["min"] is None
    all_strings = tmp_path / "s.json"
    E.export_table(str(DATA / "edge_values.tfrecord"), all_strings, int64_as_string=True)
    assert json.loads(all_strings.read_text())[0]["zero"] == "0"


def test_parquet_types_and_exact_values(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "edge.parquet"
    E.export_table(str(DATA / "edge_values.tfrecord"), out)
    table = pq.read_table(out)
    schema = table.schema
    assert schema.field("min").type == pa.int64()
    assert schema.field("beyond_js").type == pa.list_(pa.int64())
    assert schema.field("tiny").type == pa.float32()
    assert schema.field("binary").type == pa.binary()
    assert schema.field("html").type == pa.string()
    col = table.to_pydict()
    assert col["min"][0] == -(2**63) and col["max"][0] == 2**63 - 1
    assert col["beyond_js"][0] == [2**53 + 1, -(2**53 + 1)]
    assert col["tiny"][1] == float(np.float32(1e-45))
    assert math.isnan(col["nan"][1])
    long_ints = ex.decode(_payloads(DATA / "edge_values.tfrecord")[5]).features["long_ints"]
    assert col["long_ints"][5] == long_ints.values and len(long_ints.values) == 5000


def test_drifting_types_get_a_column_each(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "drift.parquet"
    E.export_table(str(DATA / "drift.tfrecord"), out)
    table = pq.read_table(out).to_pydict()
    assert {"label:int64", "label:float"} <= set(table)
    recs = [ex.decode(p) for p in _payloads(DATA / "drift.tfrecord")]
    for i, rec in enumerate(recs):
        label = rec.features["label"]
        col = "label:int64" if label.type == "int64" else "label:float"
        assert table[col][i] == label.values[0]
        other = "label:float" if col == "label:int64" else "label:int64"
        assert table[other][i] is None


def test_sequence_examples_as_nested_lists(tmp_path: Path) -> None:
    import pandas as pd

    out = tmp_path / "seq.parquet"
    E.export_table(str(DATA / "sequence.tfrecord"), out)
    df = pd.read_parquet(out)
    rec = ex.decode(_payloads(DATA / "sequence.tfrecord")[1])
    assert [list(s) for s in df["frame_id"][1]] == [s.values for s in rec.feature_lists["frame_id"]]
    assert df["video_id"][1] == rec.features["video_id"].values[0].decode()


def test_edited_values_in_tables(tmp_path: Path) -> None:
    j, _src = _edited_journal(tmp_path)
    out = tmp_path / "t.csv"
    report = E.export_table(j, out)
    rows = _csv_rows(out)
    assert report.records == 64 and len(rows) == 64
    assert rows[0]["feature1"] == "4"
    assert [r["_index"] for r in rows[:3]] == ["0", "1", "2"]  # positions after the edits
    j.close()


def test_raw_records_in_tables(tmp_path: Path) -> None:
    out = tmp_path / "raw.csv"
    E.export_table(str(DATA / "raw_records.tfrecord"), out)
    rows = _csv_rows(out)
    raw = _payloads(DATA / "raw_records.tfrecord")
    assert [codec_parse(r["_raw"]) for r in rows] == raw


# -- images -------------------------------------------------------------------------------------


def test_images_to_a_folder_and_a_zip(tmp_path: Path) -> None:
    folder = tmp_path / "pics"
    report = E.export_images(str(DATA / "detection.tfrecord"), folder)
    assert report.images == 5 and report.ok
    names = _listing(folder)
    assert names[0] == "00000000_image-encoded_0.jpg"
    first = ex.decode(_payloads(DATA / "detection.tfrecord")[0])
    assert (folder / names[0]).read_bytes() == first.features["image/encoded"].values[0]
    archive = tmp_path / "pics.zip"
    E.export_images(str(DATA / "detection.tfrecord"), archive, selection=[1, 3])
    with zipfile.ZipFile(archive) as z:
        assert z.namelist() == ["00000001_image-encoded_0.jpg", "00000003_image-encoded_0.jpg"]


def test_raw_pixels_become_png(tmp_path: Path) -> None:
    folder = tmp_path / "raw"
    E.export_images(str(DATA / "raw_pixels.tfrecord"), folder)
    names = _listing(folder)
    assert names and all(n.endswith(".png") for n in names)
    rec = ex.decode(_payloads(DATA / "raw_pixels.tfrecord")[0])
    img = Image.open(io.BytesIO((folder / names[0]).read_bytes()))
    assert img.size == (rec.features["width"].values[0], rec.features["height"].values[0])


def test_images_into_an_existing_folder(tmp_path: Path) -> None:
    folder = tmp_path / "existing"
    folder.mkdir()
    E.export_images(str(DATA / "images_png.tfrecord"), folder)
    assert len(_listing(folder)) == 4 and all(n.endswith(".png") for n in _listing(folder))


# -- names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("x.tfrecord", ("tfrecord", None)),
        ("x.tfrecord.gz", ("tfrecord", "gzip")),
        ("train-00000-of-00010", ("tfrecord", None)),
        ("x.jsonl", ("jsonl", None)),
        ("x.csv", ("csv", None)),
        ("x.parquet", ("parquet", None)),
        ("x.json", ("json", None)),
        ("x.zip", ("images", None)),
        ("folder", (None, None)),
    ],
)
def test_format_for_path(name: str, expected: tuple) -> None:
    assert E.format_for_path(name) == expected


# -- the registry -------------------------------------------------------------------------------


def test_every_format_has_one_exporter() -> None:
    assert E.FORMATS == ("tfrecord", "jsonl", "json", "csv", "parquet", "images", "coco")
    assert get_args(ExportFormat) == E.FORMATS
    for name, cls in E.EXPORTERS.items():
        assert cls.name == name and cls.label and cls.suffix
        for ext in cls.extensions:  # every name the exporter claims leads to it
            assert E.format_for_path(f"out{ext}") == (name, None)
            assert E.format_for_path(f"out{ext}.gz") == (name, "gzip")
    with pytest.raises(ExportError, match="unknown export format 'xml'"):
        E.exporter_for("xml")


def test_export_dispatches_through_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, int, bool]] = []

    class Recording(Exporter):
        name = "csv"
        label = "recorded"
        suffix = ".csv"
        extensions = (".csv",)

        def __init__(self, dst: str, *, flag: bool = False) -> None:
            super().__init__(dst)
            self.flag = flag

        def write(self, job: PieceRun) -> None:
            calls.append((self.dst, job.plan.total, self.flag))
            job.report.outputs = [self.dst]

    monkeypatch.setitem(registry.EXPORTERS, "csv", Recording)
    dst = tmp_path / "t.csv"
    report = E.export(
        str(DATA / "basic.tfrecord"), dst, flag=True, selection=[1, 2], index_map=False
    )
    # The format's option to it; the selection to the plan; index_map to the run.
    assert calls == [(str(dst), 2, True)]
    assert report.format == "csv" and report.outputs == [str(dst)] and not report.verified
    assert _listing(tmp_path) == []  # it wrote nothing, and nothing was staged


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("a.tfrecord", "tfrecord"),
        ("a.jsonl", "jsonl"),
        ("a.csv", "csv"),
        ("a.json", "json"),
        ("a.parquet", "parquet"),
        ("a.zip", "images"),
        ("pictures", "images"),  # no known extension: a folder of pictures
    ],
)
def test_export_picks_the_format_by_name(name: str, fmt: str, tmp_path: Path) -> None:
    report = E.export(str(DATA / "images_png.tfrecord"), tmp_path / name)
    assert report.format == fmt and report.verified and report.records == 4
    assert report.outputs == [str(tmp_path / name)] and (tmp_path / name).exists()


@pytest.mark.parametrize(
    ("label", "fmt", "compression", "expected"),
    [
        ("train.tfrecord", "tfrecord", "none", "exports/train-edited.tfrecord"),
        ("data/train.tfrecord.gz", "tfrecord", "gzip", "exports/train-edited.tfrecord.gz"),
        ("train.tfrecord.zlib", "tfrecord", "zlib", "exports/train-edited.tfrecord.zlib"),
        ("train.tfrecord.gz", "csv", "gzip", "exports/train-edited.csv"),  # tables: no suffix
        ("shards/train-*-of-00004", "parquet", "none", "exports/train-all-of-00004-edited.parquet"),
        ("train@4", "jsonl", "none", "exports/train-4-edited.jsonl"),
        ("datasets/voc:train", "tfrecord", "none", "exports/voc-train-edited.tfrecord"),
        ("folder/", "json", "none", "exports/folder-edited.json"),
        ("basic.TFRECORD", "images", "none", "exports/basic-edited-pictures.zip"),
        (".tfrecord", "tfrecord", "none", "exports/export-edited.tfrecord"),
    ],
)
def test_default_destination(label: str, fmt: str, compression: str, expected: str) -> None:
    assert E.default_destination(label, fmt, compression) == expected


def test_default_destination_of_an_unknown_format() -> None:
    with pytest.raises(ExportError, match="unknown export format"):
        E.default_destination("a.tfrecord", "xml")


# -- the writer's count, pictures that cannot be converted -------------------------------------


def test_the_writer_counts_every_record_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: list[codec.TFRecordWriter] = []

    class Kept(codec.TFRecordWriter):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            writers.append(self)

    monkeypatch.setattr(codec, "TFRecordWriter", Kept)
    j, _src = _edited_journal(tmp_path)
    report = E.export_tfrecord(j, tmp_path / "out.tfrecord", shards=3)
    j.close()
    assert report.records == 64
    assert [w.records for w in writers] == [len(_payloads(p)) for p in report.outputs]
    assert sum(w.records for w in writers) == report.records
    lines = tmp_path / "all.jsonl"
    E.export_jsonl(str(DATA / "edge_values.tfrecord"), lines)
    writers.clear()
    back = E.import_jsonl(lines, tmp_path / "back.tfrecord")
    assert [w.records for w in writers] == [back.records] == [8]


def test_pictures_that_cannot_be_converted_are_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: images.ImageRef) -> bytes:
        raise codec.ImageError("raw pixels: cannot be shown")

    monkeypatch.setattr(images.ImageRef, "display_bytes", broken)
    report = E.export_images(str(DATA / "raw_pixels.tfrecord"), tmp_path / "pics.zip")
    assert report.skipped == []  # no damage
    assert report.images == 0 and len(report.unconverted) == report.records == 8
    first = report.unconverted[0]
    assert (first.record, first.index) == (0, 0)
    assert first.describe() == f"record 0: {first.feature}[0]: raw pixels: cannot be shown"
    assert not report.ok and report.left_out() == [p.describe() for p in report.unconverted]
    assert "8 damaged records or regions skipped" in report.summary()


def test_a_file_a_dataset_or_paths(tmp_path: Path) -> None:
    path = str(DATA / "shards" / "part-00000-of-00003.tfrecord")
    expected = Path(path).read_bytes()
    with codec.TFRecordFile(path) as f:
        E.export_tfrecord(f, tmp_path / "file.tfrecord")
        assert f.read(0)  # the caller's file stays open
    with codec.TFRecordDataset([path]) as ds:
        E.export_tfrecord(ds, tmp_path / "dataset.tfrecord")
        assert ds.read(0)  # and so does the caller's dataset
    E.export_tfrecord([path], tmp_path / "paths.tfrecord")
    for name in ("file", "dataset", "paths"):
        assert (tmp_path / f"{name}.tfrecord").read_bytes() == expected


# -- issue: answers that are never silently wrong ---------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TRICKY = ["a", "a:int64", "a:float", "a:bytes", "_index", "_raw", "a~2", "", "é/ü", "x,y", 'q"t']


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(
        st.dictionaries(
            st.sampled_from(_TRICKY),
            st.sampled_from(["int64", "float", "bytes"]),
            max_size=6,
        ),
        min_size=1,
        max_size=8,
    ),
    fmt=st.sampled_from(["csv", "parquet", "json"]),
)
def test_flat_exports_have_unique_titles_and_every_value(tmp_path: Path, rows, fmt) -> None:
    import pandas as pd
    import pyarrow.parquet as pq

    payloads = []
    expected: dict[str, int] = {}  # (name) -> number of values written under that name
    for k, row in enumerate(rows):
        feats: dict[str, tuple[str, list[Any]]] = {}
        for name, t in row.items():
            value: Any = {"int64": k, "float": k + 0.5, "bytes": f"v{k}".encode()}[t]
            feats[name] = (t, [value])
            expected[name] = expected.get(name, 0) + 1
        payloads.append(ex.encode_example(feats))
    src = tmp_path / f"src-{fmt}.tfrecord"
    codec.write_records(src, payloads)
    dst = tmp_path / f"out.{fmt}"
    report = E.export_table(str(src), dst, format=fmt)
    assert report.verified and report.records == len(rows)
    if fmt == "parquet":
        table = pq.read_table(dst)
        titles = table.column_names
        frame = pd.read_parquet(dst)
        counts = [table.column(i).length() - table.column(i).null_count for i in range(len(titles))]
        assert list(frame.columns) == titles
    elif fmt == "csv":
        with open(dst, newline="", encoding="utf-8") as f:
            all_rows = list(csv.reader(f))
        titles = all_rows[0]
        counts = [sum(1 for r in all_rows[1:] if r[i] != "") for i in range(len(titles))]
        frame = pd.read_csv(dst, keep_default_na=False, dtype=str)
        assert list(frame.columns) == titles  # pandas renames duplicates: there are none
    else:
        with open(dst, encoding="utf-8") as f:
            doc = json.load(f)
        titles = list(doc[0]) if doc else []
        counts = [sum(1 for r in doc if r[t] is not None) for t in titles]
        assert all(list(r) == titles for r in doc)
    assert len(titles) == len(set(titles))
    assert titles[0] == "_index"
    assert counts[0] == len(rows)
    # Every value written is in the file, under exactly one title.
    assert sum(counts[1:]) == sum(expected.values())


def test_title_rules_are_documented_and_deterministic() -> None:
    from browser_app.export.table import Columns

    cols = Columns()
    cols.see(ex.decode(ex.encode_example({"a": ("int64", [1]), "a:int64": ("bytes", [b"x"])})))
    cols.see(ex.decode(ex.encode_example({"a": ("float", [1.0]), "_index": ("int64", [3])})))
    titles = [c.title for c in cols.finish()]
    # The first column to claim a title keeps it; a feature named like the index column
    # gets its type.
    assert titles == ["_index", "a:int64", "a:int64~2", "a:float", "_index:int64"]
    empty = Columns()
    empty.see(ex.decode(ex.encode_example({"": ("int64", [1])})))
    assert [c.title for c in empty.finish()] == ["_index", "(no name)"]


@pytest.mark.parametrize("fmt", ["tfrecord", "jsonl", "csv", "parquet", "json", "images"])
@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_outputs_get_a_normal_files_permissions(tmp_path: Path, fmt: str, umask: int) -> None:
    src = DATA / "images_png.tfrecord"
    old = os.umask(umask)
    try:
        suffix = {"images": "-pictures.zip", "tfrecord": ".tfrecord"}.get(fmt, f".{fmt}")
        dst = tmp_path / f"out{suffix}"
        E.export(str(src), dst, format=fmt)
    finally:
        os.umask(old)
    assert dst.stat().st_mode & 0o777 == 0o666 & ~umask


def test_jsonl_counts_what_json_cannot_give_back_and_import_never_says_byte_for_byte(
    tmp_path: Path,
) -> None:
    import struct

    odd_nan = struct.unpack("<f", struct.pack("<I", 0xFFC00001))[0]
    payloads = [
        ex.encode_example({"x": ("float", [1.5])}),
        ex.encode_example({"x": ("float", [odd_nan])}),
    ]
    src = tmp_path / "nan.tfrecord"
    codec.write_records(src, payloads)
    rep = E.export_jsonl(str(src), tmp_path / "nan.jsonl")
    assert rep.inexact == {"a NaN's sign or payload (JSON has one NaN)": 1}
    assert "1 record not exactly as in the source" in rep.summary()
    back = E.import_jsonl(tmp_path / "nan.jsonl", tmp_path / "back.tfrecord")
    assert back.reencoded == 2 and back.copied == 0 and not back.inexact
    assert "byte for byte" not in back.summary()
    assert "2 encoded from their JSON form" in back.summary()
    got = list(codec.TFRecordFile(tmp_path / "back.tfrecord"))
    assert got[0] == payloads[0] and got[1] != payloads[1]
    # Hand-written JSON in another form (an int64 as a number) is normalised, and said so.
    line = {
        "kind": "example",
        "record": {"features": {"feature": {"n": {"int64List": {"value": [7]}}}}},
    }
    (tmp_path / "hand.jsonl").write_text(json.dumps(line) + "\n")
    rep = E.import_jsonl(tmp_path / "hand.jsonl", tmp_path / "hand.tfrecord")
    assert rep.inexact == {"JSON not in the exported form, its values normalised": 1}


@pytest.mark.parametrize(
    ("name", "options", "count"),
    [
        ("o.tfrecord", {"shards": 4}, 4),
        ("o.tfrecord.gz", {"shards": 2, "compression": "gzip"}, 2),
        ("o.tfrecord", {"shards": 1}, 1),
        ("o.csv", {"neutralize_formulas": True}, 1),
        ("pictures", {"format": "images"}, 1),
    ],
)
def test_output_paths_are_the_files_an_export_writes(
    name: str, options: dict[str, Any], count: int, tmp_path: Path
) -> None:
    dst = tmp_path / name
    paths = E.output_paths(dst, **options)
    assert len(paths) == count
    report = E.export(str(DATA / "images_png.tfrecord"), dst, **options)
    assert report.outputs == paths
    assert report.index_map == E.index_map_path(dst)
    written = [*paths, report.index_map]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        os.path.basename(p) for p in written
    )


def test_output_paths_check_the_options() -> None:
    with pytest.raises(ExportError, match="at least 1"):
        E.output_paths("o.tfrecord", shards=0)
    with pytest.raises(ExportError, match="unknown export format"):
        E.output_paths("o.x", format="nope")
