"""Presenters: pure functions from codec values to rows, captions and picture bytes."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, damaged_expectations
from PIL import Image

import codec
from browser_app import presenters as P
from browser_app.sample_data import write_sample
from codec import example as ex
from codec.tensor import serialize_tensor


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sample")
    write_sample(folder)
    return folder


def open_ds(path: Path | str) -> codec.TFRecordDataset:
    return codec.TFRecordDataset([str(path)], use_cache=False)


# -- read_page: damage in place ----------------------------------------------------------


def test_damaged_record_in_place_matches_golden():
    expected = damaged_expectations()["corrupt_data_crc.tfrecord"]
    with open_ds(DATA / "corrupt_data_crc.tfrecord") as ds:
        slots = ds.page(0, 100)
    bad = [s for s in slots if s.status == P.STATUS_DAMAGED]
    assert [s.offset for s in bad] == [p["offset"] for p in expected["problems"]]
    assert bad[0].problem is not None and bad[0].problem.kind == "data_crc"
    intact = [s.offset for s in slots if s.status == P.STATUS_INTACT]
    assert intact == expected["readable_offsets"]
    assert [s.index for s in slots] == list(range(len(slots)))


def test_skipped_region_sits_between_its_neighbours():
    with open_ds(DATA / "garbage_between.tfrecord") as ds:
        slots = ds.page(5, 15)
    kinds = [(s.index, s.status) for s in slots]
    gap = kinds.index((None, P.STATUS_SKIPPED))
    assert kinds[gap - 1][0] == 9 and kinds[gap + 1][0] == 10
    assert slots[gap].offset == 999 and slots[gap].length == 37
    # A page that does not reach the gap does not show it.
    with open_ds(DATA / "garbage_between.tfrecord") as ds:
        assert all(s.index is not None for s in ds.page(0, 9))


def test_truncated_tail_after_the_last_record():
    with open_ds(DATA / "truncated_mid_record.tfrecord") as ds:
        slots = ds.page(60, 70)
    assert [s.index for s in slots] == [60, 61, 62, None]
    assert slots[-1].problem is not None and slots[-1].problem.kind == "truncated"
    assert slots[-1].offset == 6312


def test_not_a_tfrecord_file_and_empty_file(tmp_path):
    text = tmp_path / "notes.tfrecord"
    text.write_text("just some text\n" * 10)
    with open_ds(text) as ds:
        slots = ds.page(0, 25)
    assert len(slots) == 1 and slots[0].status == P.STATUS_SKIPPED
    assert slots[0].offset == 0
    empty = tmp_path / "empty.tfrecord"
    empty.write_bytes(b"")
    with open_ds(empty) as ds:
        assert ds.page(0, 25) == []


def test_page_across_shards_has_global_numbers():
    shards = sorted(str(p) for p in (DATA / "shards").glob("*.tfrecord"))
    with codec.TFRecordDataset(shards, use_cache=False) as ds:
        n0 = len(ds.files[0])
        slots = ds.page(n0 - 2, n0 + 2)
        assert [s.index for s in slots] == list(range(n0 - 2, n0 + 2))
        assert slots[1].path != slots[2].path
        assert ds.record_at(ds.files[1].path, 0) == n0


# -- the page table ----------------------------------------------------------------------


def test_page_view_columns_and_types(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        view = P.page_view(ds.page(0, 25))
    cols = dict(view.columns)
    assert cols["#"] == "int" and cols["picture"] == "image"
    assert cols["height"] == "int" and cols["caption"] == "text" and cols["image_raw"] == "text"
    assert view.damaged == 1 and view.skipped == 1
    rows = {r["#"]: r for r in view.rows if r["#"] is not None}
    assert rows[0]["height"] == 96 and rows[0]["caption"] == "picture 0 of the damaged sample"
    assert rows[0]["image_raw"].startswith("<JPEG")
    assert rows[0]["picture"].startswith("data:image/jpeg;base64,")
    assert rows[5]["status"].startswith("✗ damaged") and rows[5].get("picture") is None
    assert rows[7]["picture"] == P.BROKEN_PICTURE  # a cut-off JPEG
    gap = view.rows[view.status.index(P.STATUS_SKIPPED)]
    assert gap["#"] is None and "22 bytes skipped (length crc)" in gap["status"]


def test_list_features_show_length_and_values(sample):
    with open_ds(sample / "detection.tfrecord") as ds:
        view = P.page_view(ds.page(0, 50))
    texts = [r["image/object/class/text"] for r in view.rows]
    many = next(t for t in texts if t.startswith("[3]"))
    assert many.count(",") == 2
    assert all(isinstance(r["image/height"], int) for r in view.rows)


def test_raw_and_mixed_kinds(sample):
    with open_ds(sample / "raw.tfrecord") as ds:
        view = P.page_view(ds.page(0, 10))
    cols = dict(view.columns)
    assert "preview" in cols and "kind" in cols
    assert view.rows[1]["preview"].startswith("id,label,score")


def test_sequence_columns_count_steps(sample):
    with open_ds(sample / "sequence.tfrecord") as ds:
        view = P.page_view(ds.page(0, 3))
    assert view.rows[0]["⋮frame_score"].endswith("steps")


def test_thumbnail_uses_draft_mode_and_stays_small(sample):
    with open_ds(sample / "detection.tfrecord") as ds:
        rec = ex.decode(ds.read(0))
    data, mime, w, h = P.thumbnail(rec, 48, boxes=False)
    img = Image.open(io.BytesIO(data))
    assert mime == "image/jpeg" and max(img.size) <= 48
    assert (w, h) == (160, 112)  # the full size, for the boxes


# -- pictures ----------------------------------------------------------------------------


def test_encoded_pictures_go_out_as_stored(sample):
    with open_ds(sample / "detection.tfrecord") as ds:
        for i in (0, 2):  # a JPEG and a PNG
            rec = ex.decode(ds.read(i))
            stored = rec.features["image/encoded"].values[0]
            (pic,) = P.record_pictures(rec, boxes=False)
            assert pic.data == stored
            assert pic.format == ("JPEG" if stored[:2] == b"\xff\xd8" else "PNG")
            (boxed,) = P.record_pictures(rec, boxes=True)
            assert boxed.format == "PNG" and boxed.boxes == len(
                rec.features["image/object/bbox/xmin"].values
            )
            assert Image.open(io.BytesIO(boxed.data)).size == (pic.width, pic.height)


def test_raw_pixels_and_tensors_are_drawn_losslessly(sample):
    with open_ds(sample / "raw_pixels.tfrecord") as ds:
        rec = ex.decode(ds.read(1))
    (pic,) = P.record_pictures(rec)
    img = Image.open(io.BytesIO(pic.data))
    h, w = (rec.features[k].values[0] for k in ("height", "width"))
    assert pic.format == "PNG" and img.size == (w, h)
    assert np.asarray(img).tobytes() == rec.features["image_raw"].values[0]
    arr = (np.arange(4 * 5 * 3) % 256).astype(np.uint8).reshape(4, 5, 3)
    rec = ex.decode(ex.encode_example({"t": ("bytes", [serialize_tensor(arr)])}))
    (pic,) = P.record_pictures(rec)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(pic.data))), arr)


def test_decode_failure_and_size_mismatch_are_messages(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        cut = ex.decode(ds.read(7))
        lying = ex.decode(ds.read(10))
    (pic,) = P.record_pictures(cut)
    assert pic.data is None and "Cannot show this picture" in (pic.error or "")
    (pic,) = P.record_pictures(lying)
    assert pic.data is not None and "Size mismatch" in (pic.note or "")
    short = ex.decode(
        ex.encode_example(
            {
                "height": ("int64", [4]),
                "width": ("int64", [4]),
                "depth": ("int64", [3]),
                "image_raw": ("bytes", [b"\x01" * 40]),
            }
        )
    )
    (pic,) = P.record_pictures(short)
    assert pic.data is None and "48 bytes" in (pic.error or "")


# -- values ------------------------------------------------------------------------------


def test_value_views():
    assert P.value_view(b"hello").kind == "text"
    assert P.value_view(b"\x00\x01\xff" * 10).summary == "<30 bytes>"
    v = P.value_view(serialize_tensor(np.zeros((2, 3), np.float32)))
    assert v.kind == "tensor" and v.summary == "<tensor float32 2×3>"
    assert P.value_view(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).summary.startswith("<PNG")


def test_hex_dump():
    dump = P.hex_dump(bytes(range(40)), limit=32)
    lines = dump.splitlines()
    assert lines[0].startswith("00000000  00 01 02 03 04 05 06 07  08 09")
    assert lines[1].startswith("00000010  10 11")
    assert lines[-1] == "… 8 more bytes"
    assert P.hex_dump(b"AB")[-4:] == "|AB|"


def test_values_preview_folds_long_lists():
    f = ex.Feature("float", [float(i) for i in range(10_000)])
    text = P.values_preview(f, 3)
    assert text == "0.0, 1.0, 2.0, … (+9,997)"
    assert len(P.all_values(f)) == 10_000


def test_tensor_view():
    t = P.tensor_view(serialize_tensor(np.arange(6, dtype=np.int64).reshape(2, 3)))
    assert (t.dtype, t.shape) == ("int64", (2, 3)) and "[[0, 1, 2]" in t.values
    assert t.picture is None
    img = P.tensor_view(serialize_tensor(np.zeros((8, 8, 3), np.uint8)))
    assert img.picture is not None and img.picture[:4] == b"\x89PNG"
    words = P.tensor_view(serialize_tensor(np.array([b"a", b"bc"], dtype=object)))
    assert words.dtype == "string" and "'bc'" in words.values
    assert P.tensor_view(b"\x08\x01garbage").error


def test_sequence_table():
    rec = ex.decode(
        ex.encode_sequence_example(
            {"id": ("bytes", [b"x"])},
            {"a": [("int64", [1]), ("int64", [2, 3])], "b": [("float", [0.5])]},
        )
    )
    cols, rows = P.sequence_table(rec)
    assert cols == ["step", "a", "b"]
    assert rows == [{"step": 0, "a": "1", "b": "0.5"}, {"step": 1, "a": "[2] 2, 3", "b": None}]


def test_feature_summary_and_report(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        summary = P.feature_summary(ds, 200)
        report = P.report_dict(ds.files[0].verify())
    assert summary["records"] == 11 and summary["damaged"] == 1
    assert summary["kinds"] == {"example": 11}
    by_name = {e["name"]: e for e in summary["features"]}
    assert by_name["height"]["type"] == "int64" and by_name["image_raw"]["content"] == "image/jpeg"
    assert report["damaged"] == 1 and report["skipped_bytes"] == 22
    assert [p["kind"] for p in report["problems"]] == ["data_crc", "length_crc"]


def test_type_drift_is_flagged():
    with open_ds(DATA / "drift.tfrecord") as ds:
        summary = P.feature_summary(ds)
    label = next(e for e in summary["features"] if e["name"] == "label")
    assert label["drift"] and set(label["types"]) == {"int64", "float"}


def test_gallery_items(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        items = P.gallery_items(ds.page(0, 12), size=64)
    assert len(items) == 12  # the skipped region is not a tile
    by = {it.index: it for it in items}
    assert by[5].status == P.STATUS_DAMAGED and "byte" in by[5].caption
    assert by[7].data is None and by[7].error
    assert by[0].data is not None and by[0].caption.startswith("#0")


def test_format_bytes():
    assert P.format_bytes(5) == "5 bytes"
    assert P.format_bytes(2048) == "2.0 KiB"
    assert P.format_bytes(3 << 30) == "3.0 GiB"


def test_presenters_do_not_import_streamlit():
    code = "import sys, browser_app.presenters; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
