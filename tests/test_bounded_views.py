"""Every size read from a file is bounded before it costs: pictures that declare billions of
pixels, tensors that declare exabytes, records with 20,000 features or one giant value. The
app shows a bounded preview with the rest as a download, never a page error."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from app_support import gallery_tiles, no_crash, start_app
from hostile_inputs import (
    GIANT_PICTURES,
    HUGE_TENSORS,
    big_value,
    float_tensor,
    many_features,
    tensor_record,
)
from streamlit.testing.v1 import AppTest

import codec
from browser_app import view as V
from browser_app.ui.widgets import detail
from codec import example as ex
from codec import images as im


def _picture_record(data: bytes) -> bytes:
    return ex.encode_example({"image/encoded": ("bytes", [data]), "label": ("int64", [1])})


@pytest.mark.parametrize("name", sorted(GIANT_PICTURES))
def test_giant_pictures_cost_nothing_and_say_so(name: str) -> None:
    rec = ex.decode(_picture_record(GIANT_PICTURES[name]))
    tracemalloc.start()
    pics = V.record_pictures(rec)
    with pytest.raises(codec.ImageError):
        V.thumbnail(rec, 72)
    slot = codec.Slot(0, "x", 0, 10, _picture_record(GIANT_PICTURES[name]), None, 0)
    (tile,) = V.gallery_items([slot])
    table = V.page_view([slot])
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 32 << 20, f"{name}: {peak:,} bytes"
    assert pics and pics[0].error and pics[0].data is None
    assert tile.data is None and tile.error
    assert table.has_images  # the table shows the broken-picture mark


@pytest.mark.parametrize("name", sorted(HUGE_TENSORS))
def test_a_tensor_declaring_exabytes_is_described_not_decoded(name: str) -> None:
    tracemalloc.start()
    t = V.tensor_view(HUGE_TENSORS[name], max_bytes=16 << 20)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 << 20
    assert t.values == "" and t.error and t.decoded_bytes and t.decoded_bytes > 16 << 20
    assert t.shape  # the header is shown


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bounded")
    codec.write_records(str(root / "features.tfrecord"), [many_features(20_000)])
    codec.write_records(str(root / "big.tfrecord"), [big_value(3 << 20)])
    codec.write_records(
        str(root / "tensors.tfrecord"),
        [tensor_record(t) for t in (*HUGE_TENSORS.values(), float_tensor(5_000_000))],
    )
    codec.write_records(
        str(root / "giants.tfrecord"), [_picture_record(d) for d in GIANT_PICTURES.values()]
    )
    return root


def _app(monkeypatch: pytest.MonkeyPatch, root: Path, file: str, record: int = 0) -> AppTest:
    return start_app(monkeypatch, root, params={"file": file, "record": str(record)})


def test_twenty_thousand_features_are_paged(monkeypatch, root) -> None:
    at = _app(monkeypatch, root, "features.tfrecord")
    no_crash(at)
    expanders = [e for e in at.main.expander if "bytes, 1 value" in e.label]
    assert 0 < len(expanders) <= detail.FEATURES_PER_PAGE
    assert "20,000 features have more values than the table shows" in " ".join(
        c.value for c in at.main.caption
    )
    pager = at.get("pagination")
    assert pager  # the rest is a page away


def test_a_giant_value_is_previewed_and_the_record_has_no_json_view(monkeypatch, root) -> None:
    at = _app(monkeypatch, root, "big.tfrecord")
    no_crash(at)
    (text,) = [c for c in at.main.code if c.value.startswith("lorem")]
    assert len(text.value) == detail.TEXT_SHOWN
    captions = " ".join(c.value for c in at.main.caption)
    assert "more characters" in captions
    assert f"The first {detail.NUMBERS_SHOWN:,} of" in captions
    infos = " ".join(i.value for i in at.main.info)
    assert "its JSON is not drawn here" in infos
    assert not at.main.json


@pytest.mark.parametrize("record", range(len(HUGE_TENSORS)))
def test_a_huge_tensor_shows_its_header_and_why(monkeypatch, root, record) -> None:
    at = _app(monkeypatch, root, "tensors.tfrecord", record)
    no_crash(at)
    said = " ".join(w.value for w in at.main.warning) + " ".join(i.value for i in at.main.info)
    assert "Decoded, this tensor" in said
    assert "serialized tensor" in " ".join(c.value for c in at.main.caption)


def test_a_large_tensor_decodes_in_full_on_request(monkeypatch, root) -> None:
    at = _app(monkeypatch, root, "tensors.tfrecord", len(HUGE_TENSORS))
    no_crash(at)
    assert "more than the 16.0 MiB a preview decodes" in " ".join(i.value for i in at.main.info)
    (button,) = [b for b in at.main.button if b.label == "Decode it in full"]
    button.click().run()
    no_crash(at)
    assert any(
        c.value.startswith("[0.000000e+00") or c.value.startswith("[0.") for c in at.main.code
    )


@pytest.mark.parametrize("page", ["records", "gallery"])
def test_giant_pictures_are_tiles_with_a_message(monkeypatch, root, page) -> None:
    at = _app(monkeypatch, root, "giants.tfrecord")
    if page == "gallery":
        at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    if page == "gallery":  # a tile each, without picture, that says why
        tiles = gallery_tiles(at)
        assert [t["record"] for t in tiles] == list(range(len(GIANT_PICTURES)))
        assert all(t["src"] is None and "too large to decode" in t["why"] for t in tiles), tiles
        return
    said = " ".join(x.value for x in [*at.main.warning, *at.main.error])
    assert "too large to decode" in said or "pixels" in said


def test_decode_image_refuses_a_headerless_giant_before_loading() -> None:
    with pytest.raises(codec.ImageError, match="pixels"):
        im.decode_image(GIANT_PICTURES["webp 16384×16384"])
