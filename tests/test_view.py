"""browser_app.view: pure functions from codec values (and pending edits) to rows, captions,
picture bytes and schema tables."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA, damaged_expectations
from PIL import Image, ImageColor

import codec
from browser_app import view as V
from browser_app.edits.model import ADDED, DELETED, EDITED, EditedSlot
from browser_app.sample_data import write_sample
from codec import example as ex
from codec.dataset import DAMAGED, INTACT, SKIPPED
from codec.tensor import serialize_tensor


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("sample")
    write_sample(folder)
    return folder


def open_ds(path: Path | str) -> codec.TFRecordDataset:
    return codec.TFRecordDataset([str(path)], use_cache=False)


# -- pages of slots: damage in place ----------------------------------------------------------


def test_damaged_record_in_place_matches_golden():
    expected = damaged_expectations()["corrupt_data_crc.tfrecord"]
    with open_ds(DATA / "corrupt_data_crc.tfrecord") as ds:
        slots = ds.page(0, 100)
    bad = [s for s in slots if s.status == DAMAGED]
    assert [s.offset for s in bad] == [p["offset"] for p in expected["problems"]]
    assert bad[0].problem is not None and bad[0].problem.kind == "data_crc"
    intact = [s.offset for s in slots if s.status == INTACT]
    assert intact == expected["readable_offsets"]
    assert [s.index for s in slots] == list(range(len(slots)))


def test_skipped_region_sits_between_its_neighbours():
    with open_ds(DATA / "garbage_between.tfrecord") as ds:
        slots = ds.page(5, 15)
    kinds = [(s.index, s.status) for s in slots]
    gap = kinds.index((None, SKIPPED))
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
    assert len(slots) == 1 and slots[0].status == SKIPPED
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
        view = V.page_view(ds.page(0, 25))
    cols = dict(view.columns)
    assert cols["#"] == "int" and cols["picture"] == "image"
    assert cols["height"] == "int" and cols["caption"] == "text" and cols["image_raw"] == "text"
    assert view.damaged == 1 and view.skipped == 1
    rows = {r["#"]: r for r in view.rows if r["#"] is not None}
    assert rows[0]["height"] == 96 and rows[0]["caption"] == "picture 0 of the damaged sample"
    assert rows[0]["image_raw"].startswith("<JPEG")
    assert rows[0]["picture"].startswith("data:image/jpeg;base64,")
    assert rows[5]["status"].startswith("✗ damaged") and rows[5].get("picture") is None
    assert rows[7]["picture"] == V.BROKEN_PICTURE  # a cut-off JPEG
    gap = view.rows[view.status.index(SKIPPED)]
    assert gap["#"] is None and "22 bytes skipped (length crc)" in gap["status"]


def test_list_features_show_length_and_values(sample):
    with open_ds(sample / "detection.tfrecord") as ds:
        view = V.page_view(ds.page(0, 50))
    texts = [r["image/object/class/text"] for r in view.rows]
    many = next(t for t in texts if t.startswith("[3]"))
    assert many.count(",") == 2
    assert all(isinstance(r["image/height"], int) for r in view.rows)


def test_raw_and_mixed_kinds(sample):
    with open_ds(sample / "raw.tfrecord") as ds:
        view = V.page_view(ds.page(0, 10))
    cols = dict(view.columns)
    assert "preview" in cols and "kind" in cols
    assert view.rows[1]["preview"].startswith("id,label,score")


def test_sequence_columns_count_steps(sample):
    with open_ds(sample / "sequence.tfrecord") as ds:
        view = V.page_view(ds.page(0, 3))
    assert view.rows[0]["⋮frame_score"].endswith("steps")


def test_thumbnail_uses_draft_mode_and_stays_small(sample):
    with open_ds(sample / "detection.tfrecord") as ds:
        rec = ex.decode(ds.read(0))
    t = V.thumbnail(rec, 48, boxes=False)
    assert t is not None
    img = Image.open(io.BytesIO(t.data))
    assert t.mime == "image/jpeg" and max(img.size) <= 48
    assert (t.width, t.height) == (160, 112)  # the full size, for the boxes
    assert t.bad_boxes == 0


# -- pictures ----------------------------------------------------------------------------


def test_encoded_pictures_go_out_as_stored(sample):
    with open_ds(sample / "detection.tfrecord") as ds:
        for i in (0, 2):  # a JPEG and a PNG
            rec = ex.decode(ds.read(i))
            stored = rec.features["image/encoded"].values[0]
            (pic,) = V.record_pictures(rec, boxes=False)
            assert pic.data == stored
            assert pic.format == ("JPEG" if stored[:2] == b"\xff\xd8" else "PNG")
            (boxed,) = V.record_pictures(rec, boxes=True)
            assert boxed.format == "PNG" and boxed.boxes == len(
                rec.features["image/object/bbox/xmin"].values
            )
            assert Image.open(io.BytesIO(boxed.data)).size == (pic.width, pic.height)


def test_raw_pixels_and_tensors_are_drawn_losslessly(sample):
    with open_ds(sample / "raw_pixels.tfrecord") as ds:
        rec = ex.decode(ds.read(1))
    (pic,) = V.record_pictures(rec)
    img = Image.open(io.BytesIO(pic.data))
    h, w = (rec.features[k].values[0] for k in ("height", "width"))
    assert pic.format == "PNG" and img.size == (w, h)
    assert np.asarray(img).tobytes() == rec.features["image_raw"].values[0]
    arr = (np.arange(4 * 5 * 3) % 256).astype(np.uint8).reshape(4, 5, 3)
    rec = ex.decode(ex.encode_example({"t": ("bytes", [serialize_tensor(arr)])}))
    (pic,) = V.record_pictures(rec)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(pic.data))), arr)


def test_decode_failure_and_size_mismatch_are_messages(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        cut = ex.decode(ds.read(7))
        lying = ex.decode(ds.read(10))
    (pic,) = V.record_pictures(cut)
    assert pic.data is None and "Cannot show this picture" in (pic.error or "")
    (pic,) = V.record_pictures(lying)
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
    (pic,) = V.record_pictures(short)
    assert pic.data is None and "48 bytes" in (pic.error or "")


# -- values ------------------------------------------------------------------------------


def test_value_views():
    assert V.value_view(b"hello").kind == "text"
    assert V.value_view(b"\x00\x01\xff" * 10).summary == "<30 bytes>"
    v = V.value_view(serialize_tensor(np.zeros((2, 3), np.float32)))
    assert v.kind == "tensor" and v.summary == "<tensor float32 2×3>"
    assert V.value_view(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).summary.startswith("<PNG")


def test_hex_dump():
    dump = V.hex_dump(bytes(range(40)), limit=32)
    lines = dump.splitlines()
    assert lines[0].startswith("00000000  00 01 02 03 04 05 06 07  08 09")
    assert lines[1].startswith("00000010  10 11")
    assert lines[-1] == "… 8 more bytes"
    assert V.hex_dump(b"AB")[-4:] == "|AB|"


def test_values_preview_folds_long_lists():
    f = ex.Feature("float", [float(i) for i in range(10_000)])
    text = V.values_preview(f, 3)
    assert text == "0.0, 1.0, 2.0, … (+9,997)"
    assert len(V.all_values(f)) == 10_000


def test_tensor_view():
    t = V.tensor_view(serialize_tensor(np.arange(6, dtype=np.int64).reshape(2, 3)))
    assert (t.dtype, t.shape) == ("int64", (2, 3)) and "[[0, 1, 2]" in t.values
    assert t.picture is None
    img = V.tensor_view(serialize_tensor(np.zeros((8, 8, 3), np.uint8)))
    assert img.picture is not None and img.picture[:4] == b"\x89PNG"
    words = V.tensor_view(serialize_tensor(np.array([b"a", b"bc"], dtype=object)))
    assert words.dtype == "string" and "'bc'" in words.values
    assert V.tensor_view(b"\x08\x01garbage").error


def test_sequence_table():
    rec = ex.decode(
        ex.encode_sequence_example(
            {"id": ("bytes", [b"x"])},
            {"a": [("int64", [1]), ("int64", [2, 3])], "b": [("float", [0.5])]},
        )
    )
    cols, rows = V.sequence_table(rec)
    assert cols == ["step", "a", "b"]
    assert rows == [{"step": 0, "a": "1", "b": "0.5"}, {"step": 1, "a": "[2] 2, 3", "b": None}]


def test_feature_summary_and_report(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        summary = V.feature_summary(ds, 200)
        report = V.report_dict(ds.files[0].verify())
    assert summary["records"] == 11 and summary["damaged"] == 1
    assert summary["kinds"] == {"example": 11}
    by_name = {e["name"]: e for e in summary["features"]}
    assert by_name["height"]["type"] == "int64" and by_name["image_raw"]["content"] == "image/jpeg"
    assert report["damaged"] == 1 and report["skipped_bytes"] == 22
    assert [p["kind"] for p in report["problems"]] == ["data_crc", "length_crc"]


def test_type_drift_is_flagged():
    with open_ds(DATA / "drift.tfrecord") as ds:
        summary = V.feature_summary(ds)
    label = next(e for e in summary["features"] if e["name"] == "label")
    assert label["drift"] and set(label["types"]) == {"int64", "float"}


def test_gallery_items(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        items = V.gallery_items(ds.page(0, 12), size=64)
    assert len(items) == 12  # the skipped region is not a tile
    by = {it.index: it for it in items}
    assert by[5].status == DAMAGED and "byte" in by[5].caption
    assert by[7].data is None and by[7].error
    assert by[0].data is not None and by[0].caption.startswith("#0")


# -- pending edits on the page table and the gallery ---------------------------------------


def _edited_page(ds: codec.TFRecordDataset) -> list[EditedSlot]:
    """Records 0..11 of the damaged sample with pending edits: #0 edited (caption changed,
    two changes), #2 and the damaged #5 deleted, a new record n1 after #3."""
    out: list[EditedSlot] = []
    for s in ds.page(0, 12):
        if s.index is None:
            out.append(EditedSlot(s))
        elif s.index == 0:
            assert s.payload is not None
            rec = ex.decode(s.payload)
            feats = {n: (f.type, f.values) for n, f in rec.features.items()}
            feats["caption"] = ("bytes", [b"edited caption"])
            payload = ex.encode_example(feats)
            edited = codec.Slot(s.index, s.path, s.offset, len(payload), payload, None, s.local)
            out.append(EditedSlot(edited, EDITED, 0, 2))
        elif s.index in (2, 5):
            out.append(EditedSlot(s, DELETED, s.index, 1))
        else:
            out.append(EditedSlot(s, "", s.index))
        if s.index == 3:
            assert s.payload is not None
            new = codec.Slot(3, s.path, None, len(s.payload), s.payload)
            out.append(EditedSlot(new, ADDED, "n1", 1))
    return out


def test_page_view_over_edited_slots(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        plain = V.page_view(ds.page(0, 12))
        view = V.page_view(_edited_page(ds))
    assert len(view.rows) == len(plain.rows) + 1
    rows = view.rows
    assert rows[0]["status"] == "✎ edited (2 changes)" and rows[0]["caption"] == "edited caption"
    assert view.status[0] == EDITED and view.records[0] == 0
    assert rows[1] == plain.rows[1] and view.status[1] == INTACT
    assert rows[2]["status"] == "– deleted (pending)" and view.status[2] == DELETED
    assert rows[2]["#"] == 2 and rows[2]["caption"] == plain.rows[2]["caption"]
    new = 4  # right after its anchor, record 3
    assert rows[new]["status"] == "+ new record n1" and view.status[new] == ADDED
    assert rows[new]["#"] is None and rows[new]["offset"] is None
    assert view.records[new] == 3 and rows[new]["caption"] == plain.rows[3]["caption"]
    assert view.records[: new + 2] == [0, 1, 2, 3, 3, 4]
    damaged = view.records.index(5)
    assert rows[damaged]["status"] == "– deleted (pending)" and view.status[damaged] == DELETED
    # Counts describe the slots: the deleted damaged record is still a damaged one.
    assert (view.damaged, view.skipped) == (plain.damaged, plain.skipped) == (1, 1)
    assert SKIPPED in view.status


def test_untouched_edited_slots_show_as_plain_slots(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        slots = ds.page(0, 12)
    plain = V.page_view(slots)
    wrapped = V.page_view([EditedSlot(s, "", s.index) for s in slots])
    assert (plain.rows, plain.records, plain.status) == (
        wrapped.rows,
        wrapped.records,
        wrapped.status,
    )
    assert V.gallery_items(slots, size=48) == V.gallery_items(
        [EditedSlot(s, "", s.index) for s in slots], size=48
    )


def test_gallery_items_over_edited_slots(sample):
    with open_ds(sample / "damaged.tfrecord") as ds:
        plain = {t.index: t for t in V.gallery_items(ds.page(0, 12), size=48)}
        tiles = V.gallery_items(_edited_page(ds), size=48)
    assert len(tiles) == 13  # twelve records and the new one; no tile for the skipped region
    assert tiles[0].index == 0 and tiles[0].caption == f"{plain[0].caption} · ✎"
    assert tiles[1] == plain[1]
    assert tiles[2].caption == f"{plain[2].caption} · deleted" and tiles[2].index == 2
    new = tiles[4]
    label = plain[3].caption.split(" · ", 1)[1]
    assert new.index is None and new.caption == f"new n1 · {label}"
    assert new.data == plain[3].data
    damaged = next(t for t in tiles if t.index == 5)
    assert damaged.status == DAMAGED and damaged.caption.endswith("· deleted")
    assert damaged.caption.startswith("#5 · damaged at byte")


def test_new_record_without_label_is_captioned_by_its_id():
    payload = ex.encode_example({"x": ("int64", [1])})
    slot = codec.Slot(3, "f.tfrecord", None, len(payload), payload)
    (tile,) = V.gallery_items([EditedSlot(slot, ADDED, "n2", 1)])
    assert (tile.index, tile.caption) == (None, "new n2")
    assert V.status_text(EditedSlot(slot, EDITED, 3, 1)) == "✎ edited (1 change)"
    assert V.status_text(slot) == "✓ intact"


# -- thumbnails ------------------------------------------------------------------------------


def test_thumbnail_boxes_keep_their_class_colour_and_tiny_ones_have_no_caption():
    from codec import layers

    img = Image.new("RGB", (60, 60), "black")
    box = codec.images.PixelBox(10, 20, 40, 50, text="cat", label=1, index=0)
    boxes = [layers.Layer(layers.BOXES, "image/object/", 1, size=(60, 60), shapes=[box])]

    def drawn(img: Image.Image, scale: float, captions: bool) -> Image.Image:
        return layers.draw_layers(img, boxes, scale=(scale, scale), captions=captions)

    plain = drawn(img, 1.0, captions=False)
    tiny = drawn(img, 1.0, captions=True)
    colour = ImageColor.getrgb(codec.detection.class_color(("cat", 1)))
    assert plain.getpixel((10, 35)) == colour and tiny.getpixel((10, 35)) == colour
    assert tiny.tobytes() == plain.tobytes()  # 60 px: no room for a caption
    big = Image.new("RGB", (300, 300), "black")
    captioned = drawn(big, 5.0, captions=True)
    assert captioned.getpixel((50, 97)) == colour  # the caption band, above the box


# -- the Schema page's table and drift lines -------------------------------------------------


def _schema(path: Path) -> dict:
    from codec.schema import infer_schema

    with open_ds(path) as ds:
        return infer_schema(ds).to_json(top=20)


def test_schema_rows():
    doc = _schema(DATA / "drift.tfrecord")
    rows = {r["feature"]: r for r in V.schema_rows(doc)}
    assert list(rows) == ["id", "label", "tags", "weight"]
    assert rows["label"]["types"] == "float 2, int64 38" and rows["label"]["kind"] == "feature"
    assert rows["weight"]["present"] == "35 / 40" and rows["weight"]["steps"] == ""
    assert rows["id"]["distinct"] == "40" and rows["id"]["min"] == ""  # bytes: no range
    assert (rows["label"]["min"], rows["label"]["max"], rows["label"]["NaN/Inf"]) == (
        "0",
        "3",
        "0 / 0",
    )
    assert rows["tags"]["values"] == "0 / 1.5 / 3" and rows["tags"]["top values"].startswith(
        "t0 (30)"
    )
    assert all(isinstance(v, str) for r in rows.values() for v in r.values())
    seq = V.schema_rows(_schema(DATA / "sequence.tfrecord"))
    lists = [r for r in seq if r["kind"] == "feature list"]
    assert lists and all(r["steps"].count(" / ") == 2 for r in lists)


def test_finding_lines_and_record_links():
    doc = _schema(DATA / "drift.tfrecord")
    lines = V.finding_lines(doc, lambda n: f"<{n}>")
    assert lines[0].startswith("**label** is int64 in most records") and "<7>, <23>" in lines[0]
    assert any(line.startswith("**weight** is missing from 5 records: <") for line in lines)
    assert V.record_links([1, 2, 3], 10, str, shown=2) == "1, 2 … and 8 more"
    assert V.record_links([1, 2], 2, str) == "1, 2"
    assert V.finding_lines(_schema(DATA / "basic.tfrecord"), str) == []


def test_view_imports_neither_streamlit_nor_pandas():
    code = (
        "import sys, browser_app.view; print('streamlit' in sys.modules, 'pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# -- the pages' plain data ------------------------------------------------------------------


def test_kind_label_and_usual_types(sample):
    assert V.kind_label({}) == "—"
    assert V.kind_label({"example": 3}) == "Example"
    assert V.kind_label({"raw": 1, "sequence_example": 4}) == "SequenceExample (4) / raw bytes (1)"
    with open_ds(sample / "sequence.tfrecord") as ds:
        feats, lists = V.usual_types(V.feature_summary(ds))
    assert feats["label"] == "int64"
    assert lists == {"frame_id": "int64", "frame_score": "float", "tokens": "bytes"}
    summary = {"features": [{"name": "x", "section": "features", "types": {"none": 2}}]}
    assert V.usual_types(summary) == ({}, {})


def test_problem_dict_is_the_reports_form():
    path = DATA / "garbage_between.tfrecord"
    with open_ds(path) as ds:
        len(ds)  # indexes every file
        problems = [V.problem_dict(p) for p in ds.problems]
    report = V.report_dict(codec.verify_paths([str(path)])[0])
    assert set(problems[0]) == {"kind", "offset", "end", "message", "path"}
    assert report["problems"][0]["offset"] == problems[0]["offset"]


def test_part_preview_and_diff_rows():
    steps = [ex.Feature("int64", [i]) for i in range(8)]
    assert V.part_preview(None) == "—"
    assert V.part_preview([]) == "(no steps)"
    assert V.part_preview(ex.Feature("int64", [1, 2, 3])) == "int64 [3] 1, 2, 3"
    assert V.part_preview(steps).startswith("8 steps: 0; 1; 2; 3; 4; 5; … 2 more steps")
    from browser_app.edits import FeatureDiff

    rows = V.diff_rows(
        [FeatureDiff("a", None, ex.Feature("float", [0.5])), FeatureDiff("s", steps, None)]
    )
    assert rows[0] == {"feature": "a", "before": "—", "after": "float [1] 0.5"}
    assert rows[1]["feature"] == "s (feature list)" and rows[1]["after"] == "—"


def test_match_rows():
    with open_ds(DATA / "corrupt_data_crc.tfrecord") as ds:
        rows = V.match_rows(ds, [4, 5], max_columns=2)
    assert rows[0]["#"] == 4 and rows[0]["status"] == "example" and len(rows[0]) == 4
    assert rows[1]["#"] == 5 and str(rows[1]["status"]).startswith("damaged: ")


def test_file_options_group_shard_sets():
    from browser_app.paths import RootEntry

    entries = [RootEntry(f"t/train-0000{k}-of-00003.tfrecord", 1000, 0.0) for k in range(3)]
    entries.append(RootEntry("a.tfrecord", 10, 0.0))
    options = V.file_options(entries)
    assert options[0] == (
        "t/train-*-of-00003.tfrecord",
        "t/train-*-of-00003.tfrecord  ·  3 of 3 shards, 2.9 KiB",
    )
    assert [spec for spec, _ in options[1:]] == [e.rel for e in entries]
    assert options[-1][1] == "a.tfrecord  ·  10 bytes"


def test_export_outcome_names_paths_relative_to_the_root(tmp_path):
    from browser_app.export import ExportReport, UnconvertedPicture

    out = [str(tmp_path / "exports" / f"x-0000{k}-of-00002.tfrecord") for k in range(2)]
    report = ExportReport("tfrecord", outputs=out, records=3, copied=3, verified=True)
    done = V.export_outcome(report, str(tmp_path), "x.tfrecord")
    assert done.shown == ("exports/x-00000-of-00002.tfrecord", "exports/x-00001-of-00002.tfrecord")
    assert str(tmp_path) not in done.summary and "2 files" in done.summary
    assert done.ok and done.reopen_spec == "exports/x-*-of-00002.tfrecord"
    pictures = ExportReport("images", outputs=[str(tmp_path / "p.zip")], verified=True)
    pictures.unconverted.append(UnconvertedPicture(0, "image", 0, "cannot decode"))
    done = V.export_outcome(pictures, str(tmp_path), "x.tfrecord")
    assert not done.ok and done.reopen_spec is None
    assert done.left_out == ("record 0: image[0]: cannot decode",)
