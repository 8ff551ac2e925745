"""The review report names every marked record three ways: its number in the dataset, its file
and index in that file, and an identifying feature (``image/source_id``, else
``image/filename``, else one the person picks on the Changes page, remembered per dataset)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from app_support import page_script, start_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from browser_app.edits import Journal
from browser_app.edits.review import REPORT_FIELDS, identity, report_csv, report_json, report_rows
from codec.example import Feature, Record, encode_example
from codec.kinds import EXAMPLE
from codec.writer import TFRecordWriter


def _features(i: int, shape: str) -> dict[str, tuple[str, list[object]]]:
    """Record ``i`` with a source id, only a file name, or neither (a "key" feature)."""
    feats: dict[str, tuple[str, list[object]]] = {"key": ("bytes", [f"k-{i}".encode()])}
    if shape in ("both", "id"):
        feats["image/source_id"] = ("bytes", [f"src-{i}".encode()])
    if shape in ("both", "name"):
        feats["image/filename"] = ("bytes", [f"img_{i}.jpg".encode()])
    return feats


def _shards(folder: Path, sizes: list[int], shapes: list[str]) -> list[Path]:
    """Files of ``sizes`` records; record ``g`` (counting over the files) has shape
    ``shapes[g]``."""
    paths, g = [], 0
    for k, n in enumerate(sizes):
        p = folder / f"part-{k:05d}-of-{len(sizes):05d}.tfrecord"
        with TFRecordWriter(p) as w:
            for _ in range(n):
                w.write(encode_example(_features(g, shapes[g])))
                g += 1
        paths.append(p)
    return paths


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=hs.data())
def test_every_mark_names_its_file_its_index_there_and_an_identity(
    tmp_path_factory: pytest.TempPathFactory, data: hs.DataObject
) -> None:
    sizes = data.draw(hs.lists(hs.integers(1, 6), min_size=1, max_size=4), label="sizes")
    total = sum(sizes)
    shapes = data.draw(
        hs.lists(hs.sampled_from(["both", "id", "name", "none"]), min_size=total, max_size=total)
    )
    marked = data.draw(hs.sets(hs.integers(0, total - 1), min_size=1), label="marked")
    folder = tmp_path_factory.mktemp("shards")
    paths = _shards(folder, sizes, shapes)
    starts = [sum(sizes[:k]) for k in range(len(sizes))]
    with Journal([str(p) for p in paths], path=folder / "j.jsonl") as j:
        for r in sorted(marked):
            j.set_mark(r, "flagged" if r % 2 else "passed", f"note {r}")
        rows = report_rows(j, lambda p: Path(p).name)
        picked = report_rows(j, lambda p: Path(p).name, id_feature="key")
    assert [r["record"] for r in rows] == sorted(marked)
    for row, chosen in zip(rows, picked):
        g = int(row["record"])
        k = max(i for i, s in enumerate(starts) if s <= g)
        assert (row["file"], row["local_index"]) == (paths[k].name, g - starts[k])
        expected = {
            "both": ("image/source_id", f"src-{g}"),
            "id": ("image/source_id", f"src-{g}"),
            "name": ("image/filename", f"img_{g}.jpg"),
            "none": ("", ""),
        }[shapes[g]]
        assert (row["id_feature"], row["id"]) == expected
        assert (chosen["id_feature"], chosen["id"]) == ("key", f"k-{g}")
    table = list(csv.DictReader(io.StringIO(report_csv(rows).decode())))
    assert tuple(table[0]) == REPORT_FIELDS
    assert [(t["file"], t["local_index"], t["id"]) for t in table] == [
        (r["file"], str(r["local_index"]), r["id"]) for r in rows
    ]


def test_a_new_record_has_no_file_and_the_json_carries_every_field(tmp_path: Path) -> None:
    (p,) = _shards(tmp_path, [3], ["id", "name", "none"])
    with Journal(str(p)) as j:
        new = j.duplicate_record(1)
        j.set_mark(new, "passed", "copy")
        j.set_mark(2, "flagged", "no id")
        rows = report_rows(j, lambda q: Path(q).name)
        doc = json.loads(report_json(j, rows, "x"))
    by_record = {m["record"]: m for m in doc["marks"]}
    assert set(by_record[2]) == set(REPORT_FIELDS)
    assert (by_record[2]["file"], by_record[2]["local_index"], by_record[2]["id"]) == (
        p.name,
        2,
        "",
    )
    # The copy of record 1 is new: no file, no index, but its features still identify it.
    assert (by_record[new]["file"], by_record[new]["local_index"]) == ("", None)
    assert (by_record[new]["id_feature"], by_record[new]["id"]) == ("image/filename", "img_1.jpg")


def test_identity_text_of_numbers_long_values_and_odd_bytes() -> None:
    rec = Record(
        EXAMPLE,
        {
            "n": Feature("int64", [3, -1]),
            "f": Feature("float", [0.1]),
            "b": Feature("bytes", [b"\xff\xfeok", b"x" * 500]),
        },
        {},
    )
    assert identity(rec, "n") == ("n", "3; -1")
    assert identity(rec, "f") == ("f", "0.1")
    _, text = identity(rec, "b")
    assert text.startswith("\\xff\\xfeok; xxx") and len(text) == 200 and text.endswith("…")
    assert identity(rec) == ("", "") and identity(None, "n") == ("", "")
    assert identity(rec, "missing") == ("", "")


# -- the Changes page ------------------------------------------------------------------------


def test_changes_page_report_picks_and_remembers_the_identifying_feature(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (p,) = _shards(root, [4], ["none", "name", "none", "id"])
    with Journal(str(p)) as j:
        j.set_mark(0, "flagged", "blurry")
        j.set_mark(3, "passed")
    at = start_app(monkeypatch, root, str(p), timeout=30, script=page_script("changes"))
    assert not at.exception, [e.value for e in at.exception]
    labels = [b.label for b in at.download_button]
    assert "Review report (CSV)" in labels and "Review report (JSON)" in labels
    df = at.main.dataframe[-1].value
    assert list(df["file"]) == [p.name, p.name]
    assert list(df["index in file"]) == [0, 3]
    assert list(df["id"]) == ["", "src-3"]
    (box,) = [b for b in at.selectbox if b.label == "Identify records by"]
    assert "key" in box.options
    box.set_value("key").run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.main.dataframe[-1].value["id"]) == ["k-0", "k-3"]
    # Remembered for this dataset: a rerun keeps it.
    at.run()
    assert list(at.main.dataframe[-1].value["id"]) == ["k-0", "k-3"]
    assert [b.value for b in at.selectbox if b.label == "Identify records by"] == ["key"]


@pytest.mark.browser
@pytest.mark.slow
def test_both_download_labels_are_read_in_full(tmp_path: Path) -> None:
    """In Chromium: "Review report (CSV)" and "Review report (JSON)", not two truncated
    "Review report (…" buttons."""
    from browser_support import ARTIFACTS, chromium, need_chromium, running_server
    from playwright.sync_api import expect

    need_chromium()
    root, cache = tmp_path / "root", tmp_path / "cache"
    root.mkdir()
    (p,) = _shards(root, [3], ["id", "name", "none"])
    with Journal(str(p), cache_dir=cache) as j:
        j.set_mark(1, "flagged", "look again")
    env = {"TFRECORD_BROWSER_CACHE": str(cache)}
    with running_server(["--root", str(root), str(p)], tmp_path, env) as url, chromium() as b:
        page = b.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + "/changes")
        page.get_by_role("tab", name="Review (1 mark)").click()
        for label in ("Review report (CSV)", "Review report (JSON)"):
            button = page.get_by_role("button", name=label)
            expect(button).to_be_visible(timeout=30_000)
            clipped = button.evaluate(
                "b => [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1)"
            )
            assert not clipped, f"{label!r} is cut short on screen"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "review-report.png"))
        page.close()


def test_the_downloaded_csv_never_runs_a_formula(tmp_path: Path) -> None:
    """A comment or an identifying value from a file that starts with = (or +, -, @) is
    written with a leading ' in the page's CSV download, so a spreadsheet shows it as text;
    the JSON keeps it as it is."""
    from browser_app.export.csv import runs_as_formula
    from browser_app.ui.widgets.review import _spreadsheet_safe

    root = tmp_path / "root"
    root.mkdir()
    p = root / "f.tfrecord"
    with TFRecordWriter(p) as w:
        w.write(encode_example({"image/source_id": ("bytes", [b'=HYPERLINK("x")'])}))
        w.write(encode_example({"image/source_id": ("bytes", [b"-3"])}))
    with Journal(str(p)) as j:
        j.set_mark(0, "flagged", "@SUM(A1)")
        j.set_mark(1, "passed", "fine")
        rows = report_rows(j, lambda q: Path(q).name)
        doc = json.loads(report_json(j, rows, "f"))
    table = list(csv.DictReader(io.StringIO(report_csv(rows, _spreadsheet_safe).decode())))
    assert [(t["comment"], t["id"]) for t in table] == [
        ("'@SUM(A1)", '\'=HYPERLINK("x")'),
        ("fine", "-3"),  # a number stays a number
    ]
    assert not any(runs_as_formula(v) for t in table for v in t.values())
    assert doc["marks"][0]["comment"] == "@SUM(A1)" and doc["marks"][0]["id"].startswith("=")
