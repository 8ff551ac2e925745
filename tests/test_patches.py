"""The patches view: its table (one row per object, chosen by side, class and outcome, sorted
by the likely-mistake score: the planted mislabels first), its captions and crops, and the
page through AppTest (the planted mislabels are the first tiles the grid element is sent, each
an object with its crop; a record's mark shows on every tile of that record; the predictions
side sorts the planted missing objects first; a dataset without predictions says so); the
grid's actions (marks, page turns, opening) applied once each, and its moves and marks in
its own JavaScript. Keys and marks in a browser: tests/test_e2e_patches.py."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from app_support import page_script, start_app
from patches_support import patches_data, patches_tiles
from PIL import Image
from streamlit.testing.v1 import AppTest

import codec
from browser_app.edits import Journal
from browser_app.generators import write
from browser_app.generators.evaluation import known_dataset, planted_mistakes
from browser_app.ui.components import patches
from browser_app.view.patches import PatchTable, patch_png
from codec.example import decode, encode_example
from codec.jobs import EvaluateJob, plan, run


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    known = planted_mistakes(36, seed=4, max_side=200)
    root = tmp_path_factory.mktemp("patches")
    write(root / "planted.tfrecord", known.records)
    return root, known


def _table(root: Path) -> PatchTable:
    job = EvaluateJob(mistakes=True)
    return PatchTable.of(run(job, plan([str(root / "planted.tfrecord")]), "inline"), job)


def test_the_mislabels_sort_first(planted: tuple[Path, Any]) -> None:
    root, known = planted
    table = _table(root)
    rows = table.ordered(table.rows("truth"), "mistake")
    n = len(known.mislabelled)
    first = [(int(table.record[r]), int(table.index[r])) for r in rows[:n]]
    assert sorted(first) == sorted(known.mislabelled)
    for r in rows[:n]:  # the caption names the class the model sees
        right = known.truth_class[int(table.record[r]), int(table.index[r])]
        assert f"model: {known.names[right]} " in table.caption(int(r))
    # rows without a score come last, in record order
    tail = rows[np.isnan(table.mistake[rows])]
    assert list(rows[-len(tail) :]) == list(tail)
    assert sorted(tail, key=lambda r: (table.record[r], table.index[r])) == list(tail)


def test_the_review_list_names_the_mislabels_first(planted: tuple[Path, Any]) -> None:
    """The page's review list (CSV) is the objects chosen, in their order: sorted by the
    likely-mistake score, its first lines are the planted mislabels, each with the class the
    data gives and the one the model sees."""
    import csv
    import io

    root, known = planted
    table = _table(root)
    rows = table.ordered(table.rows("truth"), "mistake")
    lines = list(csv.DictReader(io.StringIO(table.review_list(rows).decode("utf-8"))))
    assert len(lines) == len(rows)
    n = len(known.mislabelled)
    first = [(int(x["record"]), int(x["object"])) for x in lines[:n]]
    assert sorted(first) == sorted(known.mislabelled)
    for x in lines[:n]:
        rec, obj = int(x["record"]), int(x["object"])
        assert x["side"] == "ground truth"
        assert x["model_class"] == known.names[known.truth_class[rec, obj]]
        assert x["class"] != x["model_class"]
        assert float(x["likely_mistake"]) > 0.9
    # an object without a score has an empty cell, not "nan"
    assert all(x["likely_mistake"] != "nan" for x in lines)


def test_predictions_missing_from_the_truth_sort_first(planted: tuple[Path, Any]) -> None:
    root, known = planted
    table = _table(root)
    rows = table.ordered(table.rows("predictions", outcomes=["fp"]), "mistake")
    n = len(known.missing)
    first = [(int(table.record[r]), int(table.index[r])) for r in rows[:n]]
    assert sorted(first) == sorted(known.missing)
    assert all("matches nothing" in table.caption(int(r)) for r in rows[:n])


def test_choosing_by_class_and_outcome(planted: tuple[Path, Any]) -> None:
    root, _ = planted
    table = _table(root)
    everything = table.rows("truth")
    by_class, by_outcome = table.counts(everything)
    assert sum(by_class.values()) == sum(by_outcome.values()) == len(everything)
    cat = table.names.index("cat")
    cats = table.rows("truth", classes=[cat])
    assert len(cats) == by_class[cat] and (table.cls[cats] == cat).all()
    missed = table.rows("truth", classes=[cat], outcomes=["fn"])
    assert 0 < len(missed) < len(cats)
    assert {table.outcome_name(int(r)) for r in missed} == {"fn"}
    assert len(table.rows("predictions")) == len(table) - len(everything)


def test_a_patch_is_the_box_with_context(planted: tuple[Path, Any]) -> None:
    root, known = planted
    table = _table(root)
    row = int(table.rows("truth", outcomes=["tp"])[0])
    rec = decode(known.records[int(table.record[row])])
    png = patch_png(known.records[int(table.record[row])], table, row, max_side=120)
    assert png is not None
    with Image.open(io.BytesIO(png)) as img:
        assert img.format == "PNG" and max(img.size) <= 120
        pixels = np.asarray(img.convert("RGB")).reshape(-1, 3)
    # the box is drawn in the colour of a found object
    assert (np.abs(pixels.astype(int) - [0x2E, 0x7D, 0x32]).sum(axis=1) < 30).sum() > 50
    # the crop's shape follows the box's (with its context), not the picture's
    f = rec.features
    i = int(table.index[row])
    w = f["image/object/bbox/xmax"].values[i] - f["image/object/bbox/xmin"].values[i]
    h = f["image/object/bbox/ymax"].values[i] - f["image/object/bbox/ymin"].values[i]
    width, height = f["image/width"].values[0], f["image/height"].values[0]
    assert img.size[0] / img.size[1] == pytest.approx((w * width) / (h * height), rel=0.35)
    # a record without its box lists has no patch
    bare = encode_example({"image/encoded": ("bytes", [f["image/encoded"].values[0]])})
    assert patch_png(bare, table, row) is None


# -- the page -------------------------------------------------------------------------------------


def _page(monkeypatch: pytest.MonkeyPatch, root: Path, file: str) -> AppTest:
    at = start_app(
        monkeypatch, root, params={"file": file}, script=page_script("patches"), timeout=120
    )
    assert not at.exception, [e.value for e in at.exception]
    return at


def _captions(at: AppTest) -> list[str]:
    """The tiles' captions, in order (the grid is one element: its data)."""
    return [t["caption"] for t in patches_tiles(at)] if _has_grid(at) else []


def _has_grid(at: AppTest) -> bool:
    return any(e.proto.component_name == patches.NAME for e in at.get("bidi_component"))


def _record(caption: str) -> int:
    return int(caption.removeprefix("#").split(" ")[0])


def test_the_page_shows_the_mislabels_first(monkeypatch, planted) -> None:
    root, known = planted
    at = _page(monkeypatch, root, "planted.tfrecord")
    tiles = patches_tiles(at)
    assert len(tiles) == 24 and all(t["src"] for t in tiles)  # a crop each
    assert all("why" not in t for t in tiles)
    # a tile is an object: its key names its side, record and place in the record's lists
    keys = [t["key"] for t in tiles]
    assert len(set(keys)) == 24
    assert all(k == f"t:{t['record']}:{k.split(':')[2]}" for k, t in zip(keys, tiles))
    data = patches_data(at)
    assert data["focus"] == keys[0] and data["page"] == 1 and data["can_mark"]
    captions = _captions(at)
    n = len(known.mislabelled)
    first = [(t["record"], int(t["key"].split(":")[2])) for t in tiles[:n]]
    assert sorted(first) == sorted(known.mislabelled)
    assert all("model: " in c for c in captions[:n])
    # the predictions, matching nothing, sorted by confidence: the planted missing first
    at.radio(key="tfb:w:patches:side").set_value("predictions").run()
    at.multiselect(key="tfb:w:patches:outcomes:predictions").set_value(["fp"]).run()
    assert not at.exception
    tiles = patches_tiles(at)
    m = len(known.missing)
    assert all(t["key"].startswith("p:") for t in tiles)
    assert sorted(t["record"] for t in tiles[:m]) == sorted(r for r, _ in known.missing)


def test_a_records_mark_shows_on_each_of_its_tiles(monkeypatch, planted, tmp_path) -> None:
    """A mark in the journal shows on every tile of its record, and on no other."""
    root, _ = planted
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(tmp_path / "cache"))
    at = _page(monkeypatch, root, "planted.tfrecord")
    at.selectbox(key="tfb:w:patches:sort").set_value("record").run()
    tiles = patches_tiles(at)
    first = tiles[0]["record"]
    same = [t for t in tiles if t["record"] == first]
    assert len(same) > 1  # the first record has several objects on the page
    with codec.TFRecordDataset([str(root / "planted.tfrecord")]) as ds:
        j = Journal(ds)
        try:
            j.set_mark(first, "flagged")
        finally:
            j.close()
    at.run()
    tiles = patches_tiles(at)
    assert {t["key"]: t.get("mark") for t in tiles if t["record"] == first} == {
        t["key"]: "flagged" for t in same
    }
    assert all("mark" not in t for t in tiles if t["record"] != first)


def _act(client: str, *actions: dict[str, object]) -> dict[str, object]:
    return {"client": client, "actions": list(actions)}


def test_the_grids_actions_apply_once_each() -> None:
    """Marks in order, page turns summed, the record opened; an action sent again (the
    element resends until acknowledged) is applied once; malformed ones are dropped."""
    m = patches.Memory()
    value = _act(
        "c",
        {"seq": 1, "kind": "mark", "record": 5, "status": "passed"},
        {"seq": 2, "kind": "page", "step": 1},
        {"seq": 3, "kind": "mark", "record": 5, "status": None},
        {"seq": 4, "kind": "mark", "record": 6, "status": "bogus"},
        {"seq": 5, "kind": "page", "step": 7},
        {"seq": 6, "kind": "open", "record": 9},
    )
    effects, m = patches.handle(value, "t:9:1", m)
    assert effects.marks == [(5, "passed"), (5, None)]
    assert effects.turn == 1 and effects.opening == 9
    assert m.ack() == ("c", 6) and m.focus == "t:9:1"
    resent = _act(
        "c",
        {"seq": 6, "kind": "open", "record": 9},
        {"seq": 7, "kind": "mark", "record": 2, "status": "flagged"},
    )
    effects, m = patches.handle(resent, None, m)
    assert effects.marks == [(2, "flagged")] and effects.opening is None
    assert m.ack() == ("c", 7) and m.focus == "t:9:1"
    effects, same = patches.handle(resent, None, m)
    assert effects.marks == [] and same == m
    # another page load's element numbers from 1 again
    effects, m = patches.handle(_act("d", {"seq": 1, "kind": "page", "step": -1}), None, m)
    assert effects.turn == -1 and m.ack() == ("d", 1)
    assert patches.read_actions("nonsense") is None
    assert patches.read_focus({"tile": "t:1:2", "n": 3}) == "t:1:2"
    assert patches.read_focus({"tile": 3}) is None


def test_text_from_the_data_goes_as_text() -> None:
    """A caption is sent as it is (the element sets it with textContent)."""
    t = patches.tile("t:1:0", 1, "#1 · <b>cat</b>", None, "flagged")
    assert t == {
        "key": "t:1:0",
        "record": 1,
        "caption": "#1 · <b>cat</b>",
        "src": None,
        "why": "no picture",
        "mark": "flagged",
    }
    js = (Path(patches.__file__).parent / "assets" / "patches.js").read_text()
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js


def test_without_predictions_the_page_says_so(monkeypatch, tmp_path) -> None:
    known = known_dataset("perfect", 3, seed=1)
    bare = []
    for payload in known.records:
        feats = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        bare.append(encode_example({k: v for k, v in feats.items() if "detection" not in k}))
    write(tmp_path / "truth.tfrecord", bare)
    at = _page(monkeypatch, tmp_path, "truth.tfrecord")
    assert any("No predictions in the first 3 records" in i.value for i in at.info)
    assert not _captions(at)


_NODE = """
import {{ crossing, movedTo, shownMark }} from {module};
const cases = JSON.parse(process.argv[1]);
const calls = {{ move: movedTo, cross: crossing, mark: shownMark }};
console.log(JSON.stringify(cases.map(([kind, ...args]) => calls[kind](...args))));
"""


def test_the_elements_moves_stay_on_the_page_and_marks_are_the_records() -> None:
    """The focus moves within the page (N and B turn it), from the first tile when it is off the
    page; a move of one tile past the page's last (first) tile turns to the next (previous) page
    when there is one, a row move never does; the mark a tile shows is its record's last one
    typed (pending), else the saved one: two tiles of one record show the same."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: the element's moves are tested in Chromium")
    js = Path(patches.__file__).parent / "assets" / "patches.js"
    cases = [
        ["move", 24, 0, 1],
        ["move", 24, 23, 1],  # the last tile stays focused
        ["move", 24, 2, -6],  # a row up from the first row: the first tile
        ["move", 24, 20, 6],
        ["move", 24, -1, 5],  # the focus off the page: the first tile
        ["move", 0, -1, 1],
        ["cross", 24, 23, 1, 1, 3],  # past the last tile: the next page
        ["cross", 24, 22, 1, 1, 3],
        ["cross", 24, 23, 1, 3, 3],  # the last page's last tile: nowhere to go
        ["cross", 24, 0, -1, 2, 3],  # before the first tile: the previous page
        ["cross", 24, 0, -1, 1, 3],
        ["cross", 24, -1, 1, 1, 3],  # the focus off the page: no turn
        ["mark", [{"kind": "mark", "record": 7, "status": "flagged"}], 7, "passed"],
        ["mark", [{"kind": "mark", "record": 7, "status": None}], 7, "passed"],
        ["mark", [{"kind": "mark", "record": 7, "status": "flagged"}], 8, "passed"],
        ["mark", [], 7, None],
    ]
    out = subprocess.run(
        [
            node,
            "--input-type=module",
            "-e",
            _NODE.format(module=json.dumps(js.as_uri())),
            json.dumps(cases),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(out.stdout) == [
        1,
        23,
        0,
        23,
        0,
        -1,
        1,
        0,
        0,
        -1,
        0,
        0,
        ["flagged", True],
        ["", True],
        ["passed", False],
        ["", False],
    ]
