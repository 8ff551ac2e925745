"""Class names in the app (AppTest, issue 26): names files found beside the data name the
labels in gallery captions, the records table, the class facets and the Schema page; a names
file bound in the sidebar does the same for a feature, filters take ``label == "cat"``, a box
class list's names become the label map; bad files get a message and change nothing."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from app_support import gallery_tiles, start_app
from streamlit.testing.v1 import AppTest

import codec
from browser_app.generators.tfds import SHAPES, write_image_classification
from browser_app.sample_data import write_detection_checks
from codec import example as ex
from codec.names import MAX_NAMES_BYTES

SHARD = "shapes/3.0.1/shapes-train.tfrecord-00000-of-00002"
SHORT = b"circle\nsquare\ntriangle\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TFDS dataset (``label.labels.txt`` beside its shards), and the same shard alone in
    ``bare/`` (no names beside it)."""
    base = tmp_path_factory.mktemp("names_app")
    write_image_classification(base)
    (base / "bare").mkdir()
    shutil.copy(base / SHARD, base / "bare" / "shard.tfrecord")
    (base / "od").mkdir()
    write_detection_checks(base / "od" / "od.tfrecord", 40)
    return base


def _labels(root: Path, rel: str) -> list[int]:
    with codec.TFRecordDataset(str(root / rel)) as ds:
        return [int(ex.decode(ds.read(i)).features["label"].values[0]) for i in range(len(ds))]


def _app(monkeypatch: pytest.MonkeyPatch, root: Path, rel: str, page: str | None = None) -> AppTest:
    at = start_app(monkeypatch, root, params={"file": rel, "size": "25"}, timeout=120)
    if page:
        at.switch_page(f"ui/pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


TILE = re.compile(r"#(\d+) · ([^·\n]+)")


def _captions(at: AppTest) -> dict[int, str]:
    """Gallery tiles by record: the label in the caption (every tile of the page has one)."""
    out = {}
    tiles = gallery_tiles(at)
    assert tiles, "no tiles"
    for t in tiles:
        m = TILE.fullmatch(t["caption"])
        assert m and int(m.group(1)) == t["record"], t
        out[t["record"]] = m.group(2).strip()
    return out


def _class_pills(at: AppTest) -> list[str]:
    groups = [p for p in at.sidebar.button_group if p.label == "Class"]
    return list(groups[0].options) if groups else []


def _uploader(at: AppTest):  # type: ignore[no-untyped-def]
    return next(u for u in at.sidebar.file_uploader if u.label == "Names file")


def _sidebar_text(at: AppTest) -> str:
    return " ".join(c.value for c in at.sidebar.caption) + " ".join(
        e.value for e in at.sidebar.error
    )


def test_names_beside_the_data_name_captions_table_and_facets(monkeypatch, root) -> None:
    labels = _labels(root, SHARD)
    at = _app(monkeypatch, root, SHARD, "gallery")
    captions = _captions(at)
    assert captions and all(captions[i] == SHAPES[labels[i]] for i in captions), captions
    pills = _class_pills(at)
    for v in set(labels):
        count = labels.count(v)
        assert f"{SHAPES[v]} ({v}) · {count}" in pills, pills
    assert "label.labels.txt" in _sidebar_text(at)  # the sidebar says where they come from
    at.switch_page("ui/pages/records.py").run()
    assert not at.exception
    df = at.main.dataframe[0].value
    assert df["label"].tolist()[:5] == [f"{v} ({SHAPES[v]})" for v in labels[:5]]
    # A facet click narrows by the names-free key: the link means the same without names.
    groups = [p for p in at.sidebar.button_group if p.label == "Class"]
    groups[0].set_value(f"label = {labels[0]}").run()
    assert not at.exception
    facet = at.query_params.get("facet")
    assert facet == f"class:label = {labels[0]}" or facet == [f"class:label = {labels[0]}"]
    rows = at.main.dataframe[0].value["#"].tolist()
    assert rows == [i for i, v in enumerate(labels) if v == labels[0]]


def test_binding_a_names_file_in_the_sidebar(monkeypatch, root) -> None:
    rel = "bare/shard.tfrecord"
    labels = _labels(root, rel)
    at = _app(monkeypatch, root, rel, "gallery")
    assert all(c.isdigit() for c in _captions(at).values())  # no names yet: numbers
    assert at.sidebar.selectbox(key=at.sidebar.selectbox[-1].key).value == "label"
    _uploader(at).set_value(("short.txt", SHORT, "text/plain")).run()
    assert not at.exception, [e.value for e in at.exception]
    captions = _captions(at)
    short = ["circle", "square", "triangle"]
    for i, text in captions.items():
        v = labels[i]
        assert text == (short[v] if v < 3 else str(v))  # past the file: the number
    pills = _class_pills(at)
    assert any(p.startswith("circle (0) · ") for p in pills) or 0 not in labels
    assert any(p.startswith(f"label = {max(labels)} · ") for p in pills)
    assert "short.txt" in _sidebar_text(at) and "uploaded" in _sidebar_text(at)
    # The filter page takes a class name, says an unknown one in words, and hands the
    # matches to the gallery spelled as labels (the same records where no name is bound).
    at.switch_page("ui/pages/filter.py").run()
    at.text_input(key="tfb:w:filter:expr").input('label == "square"').run()
    assert not at.exception
    want = [i for i, v in enumerate(labels) if v == 1]
    assert f"{len(want)} matching record" in " ".join(m.value for m in at.main.markdown)
    at.button(key="tfb:w:filter:select").click().run()
    assert not at.exception
    sel = at.query_params.get("sel")
    assert sel in ("filter:label == 1", ["filter:label == 1"]), sel
    at.text_input(key="tfb:w:filter:expr").input('label == "squaer"').run()
    errors = " ".join(e.value for e in at.main.error)
    assert "names a class its names file does not hold" in errors
    assert "did you mean" in errors and "square" in errors
    # Forgotten: numbers again.
    forget = next(b for b in at.sidebar.button if b.key.startswith("tfb:w:names:forget:"))
    forget.click().run()
    at.switch_page("ui/pages/gallery.py").run()
    assert all(c.isdigit() for c in _captions(at).values())


def test_bad_names_files_are_refused_in_words(monkeypatch, root) -> None:
    rel = "bare/shard.tfrecord"
    at = _app(monkeypatch, root, rel, "gallery")
    before = _captions(at)
    _uploader(at).set_value(("classes.csv", b"number,word\n0,cat\n", "text/csv")).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "classes.csv cannot be used" in errors and "needs an index column" in errors
    assert _captions(at) == before
    big = b"x\n" * (MAX_NAMES_BYTES // 2 + 1)  # past the cap: refused before it is read
    _uploader(at).set_value(("huge.txt", big, "text/plain")).run()
    assert not at.exception
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "huge.txt cannot be used" in errors and "too large" in errors
    assert _captions(at) == before


def test_a_huge_names_file_beside_the_data_is_left_out(monkeypatch, root, tmp_path) -> None:
    folder = tmp_path / "huge"
    folder.mkdir()
    shutil.copy(root / "bare" / "shard.tfrecord", folder / "shard.tfrecord")
    with open(folder / "label.labels.txt", "wb") as fh:
        fh.truncate(100 << 20)  # sparse: 100 MB that nothing reads
    at = _app(monkeypatch, tmp_path, "huge/shard.tfrecord", "gallery")
    assert all(c.isdigit() for c in _captions(at).values())  # the data opens all the same
    text = " ".join(c.value for c in at.sidebar.caption)
    assert "Left out" in text and "too large" in text


def test_schema_page_names_top_values_and_short_files(monkeypatch, root) -> None:
    rel = "bare/shard.tfrecord"
    at = _app(monkeypatch, root, rel, "schema")
    _uploader(at).set_value(("short.txt", SHORT, "text/plain")).run()
    assert not at.exception
    df = at.main.dataframe[0].value
    top = df.loc[df["feature"] == "label", "top values"].iloc[0]
    assert '"circle"' in top or '"square"' in top, top
    warnings = " ".join(w.value for w in at.main.warning)
    assert "short.txt does not name" in warnings


def test_names_bound_to_a_box_class_list_become_the_label_map(monkeypatch, root) -> None:
    at = _app(monkeypatch, root, "od/od.tfrecord", "schema")
    at.sidebar.selectbox(key=at.sidebar.selectbox[-1].key).set_value(
        "image/object/class/label"
    ).run()
    _uploader(at).set_value(
        ("names.pbtxt", b"item { id: 1 name: 'cat' }\nitem { id: 2 name: 'dog' }\n", "text/plain")
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    captions = " ".join(c.value for c in at.main.caption)
    assert "names.pbtxt" in captions and "2 classes" in captions, captions
