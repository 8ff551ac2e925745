"""The Duplicates page (AppTest, no browser): a split searched alone and against another
split, the groups side by side with their records' links and splits and each pair's distance;
keeping one copy drops the others through the edit journal (an export leaves them out), and
the drops are undone; the same answers as the command line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from app_support import no_crash, page_script, start_app
from streamlit.testing.v1 import AppTest

from browser_app.edits import Journal
from browser_app.generators.duplicates import Planted, write_planted
from browser_app.view.duplicates import KEPT_COMMENT
from codec.dataset import TFRecordDataset


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    root = tmp_path_factory.mktemp("dups")
    return write_planted(root, originals=30, copied=12, decoys=3, shards=1, seed=2)


def _root(p: Planted) -> Path:
    return p.root.parent.parent  # <root>/planted/1.0.0


def _page(monkeypatch: pytest.MonkeyPatch, p: Planted, split: str = "train") -> AppTest:
    spec = os.path.relpath(p.splits[split], _root(p))
    return start_app(
        monkeypatch,
        _root(p),
        spec,
        "--executor",
        "inline",
        timeout=60,
        script=page_script("duplicates"),
    )


def _text(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in at.main.markdown)


def _run(at: AppTest) -> AppTest:
    at.button(key="tfb:w:dups:run").click().run()
    no_crash(at, unshown=None)
    return at


def test_one_split_alone(monkeypatch, planted: Planted) -> None:
    at = _page(monkeypatch, planted)
    no_crash(at, unshown=None)
    assert at.selectbox(key="tfb:w:dups:other").options == ["(this split only)", "test"]
    # A small split on this machine is searched on opening the page, without a click.
    assert not any("Find duplicates" in str(i.value) for i in at.main.info)
    inside_now = [g for g in planted.groups if g[0][0] == g[1][0] == "train"]
    assert f"{len(inside_now)} group" in _text(at)
    _run(at)  # the button searches again
    inside = [g for g in planted.groups if g[0][0] == g[1][0] == "train"]
    text = _text(at)
    assert f"{len(inside)} group" in text
    for g in inside:
        for _, n in g:
            assert f"record=[{n}]" not in text  # links are written [n](./?file=…&record=n)
            assert f"&record={n})" in text
    assert "Compared by pHash and dHash within 6 bits" in "\n".join(
        str(c.value) for c in at.main.caption
    )


def test_two_splits_show_the_leaks_and_their_distances(monkeypatch, planted: Planted) -> None:
    at = _page(monkeypatch, planted)
    at.selectbox(key="tfb:w:dups:other").set_value("test").run()
    _run(at)
    leaks = [g for g in planted.groups if g[0][0] != g[1][0]]
    text = _text(at)
    assert f"{len(leaks)} group" in text and "found in both sides" in text
    assert text.count("in more than one split") == len(leaks)
    assert "**train** · record" in text and "**test** · record" in text
    assert "near: pHash" in text or "identical bytes" in text
    # every group lists both of its records, each linked in its own split
    for g in leaks:
        for split, n in g:
            assert f"%3A{split}&record={n})" in text


def test_keep_one_copy_drops_the_others_and_undo(monkeypatch, planted: Planted) -> None:
    at = _page(monkeypatch, planted)
    _run(at)
    inside = [sorted(n for _, n in g) for g in planted.groups if g[0][0] == g[1][0] == "train"]
    first, second = min(inside)  # the page's first group: the one whose first record is first
    keep = [b for b in at.button if b.key and b.key.startswith("tfb:w:dups:keep:1:")]
    assert len(keep) == 2
    keep[0].click().run()
    no_crash(at, unshown=None)
    assert any("dropped 1 other copy" in str(s.value) for s in at.main.success)
    paths = [str(p) for p in sorted(planted.root.glob("planted-train.tfrecord-*"))]
    with TFRecordDataset(paths) as ds, Journal(ds) as j:
        assert j.deleted_records() == [second]
        mark = j.marks()[first]
        assert mark.status == "passed" and mark.comment.startswith(KEPT_COMMENT)
    text = _text(at)
    assert "dropped" in text and "kept" in text
    at.button(key="tfb:w:dups:undo:1").click().run()
    no_crash(at, unshown=None)
    with TFRecordDataset(paths) as ds, Journal(ds) as j:
        assert j.deleted_records() == []
        assert first not in j.marks()


def test_an_embedding_feature_is_offered_and_compared_by_cosine(monkeypatch, tmp_path) -> None:
    """Records holding an embedding (a float list of one length) offer it on the page; chosen,
    the groups are those of its vectors' cosine distance (two records with nearly the same
    vector), not of the pictures (all different)."""
    import io

    from PIL import Image

    import codec
    from browser_app.generators import photo
    from codec.example import encode_example

    img = Image.open(io.BytesIO(photo("coffee", 64).encoded)).convert("RGB")
    recs = []
    for i in range(6):
        buf = io.BytesIO()
        img.rotate(i * 30).save(buf, "PNG")
        vec = [1.0, float(i)] + [0.0] * 8 if i != 4 else [1.0, 1.0001] + [0.0] * 8
        recs.append(encode_example({"image": ("bytes", [buf.getvalue()]), "emb": ("float", vec)}))
    codec.write_records(tmp_path / "emb.tfrecord", recs)
    at = start_app(
        monkeypatch,
        tmp_path,
        str(tmp_path / "emb.tfrecord"),
        timeout=60,
        script=page_script("duplicates"),
    )
    no_crash(at, unshown=None)
    by = at.selectbox(key="tfb:w:dups:by")
    assert by.options == [
        "the pictures (pHash and dHash)",
        "emb (an embedding of 10 numbers, cosine distance)",
    ]
    by.set_value("emb").run()
    at.number_input(key="tfb:w:dups:cosine").set_value(0.001).run()
    no_crash(at, unshown=None)
    text = _text(at)
    assert "1 group" in text
    assert "record=1)" in text and "record=4)" in text
    assert not [r for r in (0, 2, 3, 5) if f"record={r})" in text]


def test_another_dataset_under_the_root(monkeypatch, tmp_path) -> None:
    """Besides the other splits, every other dataset under the root may be searched with the
    open one: a picture of the train split copied into a file of its own is found in both."""

    import codec

    p = write_planted(tmp_path / "data", originals=12, copied=4, decoys=2, shards=1, seed=5)
    with TFRecordDataset([str(f) for f in sorted(p.root.glob("planted-train.*"))]) as ds:
        payload = next(iter(ds.files[0].records(0, 1))).data
    outside = tmp_path / "data" / "outside.tfrecord"
    codec.write_records(outside, [payload])
    spec = os.path.relpath(p.splits["train"], tmp_path / "data")
    at = start_app(
        monkeypatch,
        tmp_path / "data",
        spec,
        "--executor",
        "inline",
        timeout=60,
        script=page_script("duplicates"),
    )
    no_crash(at, unshown=None)
    box = at.selectbox(key="tfb:w:dups:other")
    assert box.options[:2] == ["(this split only)", "test"]
    assert "outside.tfrecord" in box.options
    # the folder's own entries (the folder, its splits, its shard files) are not offered
    assert not [o for o in box.options[2:] if o.startswith("planted/")]
    box.set_value("outside.tfrecord").run()
    no_crash(at, unshown=None)
    text = _text(at)
    assert "found in both sides" in text and "outside.tfrecord" in text
