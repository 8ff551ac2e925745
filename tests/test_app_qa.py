"""The Schema, Statistics and Filter pages through AppTest (no browser).

Each page runs in a small script that does what the router does before a page runs
(``state.init()``), with ``sys.argv`` set as the launcher sets it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from app_support import no_crash, page_script, start_app
from conftest import DATA
from streamlit.testing.v1 import AppTest

from browser_app.ui import state


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("qa")
    for name in (
        "drift.tfrecord",
        "sequence.tfrecord",
        "images_png.tfrecord",
        "corrupt_data_crc.tfrecord",
        "basic.tfrecord",
    ):
        shutil.copy(DATA / name, root / name)
    (root / "shards").mkdir()
    for p in (DATA / "shards").iterdir():
        shutil.copy(p, root / "shards" / p.name)
    return root


def page(monkeypatch: pytest.MonkeyPatch, root: Path, name: str, path: str, **params: str):
    """The page ``name`` alone, on ``path`` (inside ``root``)."""
    script = page_script(name)
    return start_app(monkeypatch, root, str(root / path), params=params, timeout=30, script=script)


def markdown(at: AppTest) -> str:
    return "\n".join(str(m.value) for m in at.main.markdown)


# -- schema ---------------------------------------------------------------------------------


def test_schema_table_and_drift_links(monkeypatch, root):
    at = page(monkeypatch, root, "schema", "drift.tfrecord")
    no_crash(at, unshown=None)
    df = at.main.dataframe[0].value
    assert list(df["feature"]) == ["id", "label", "tags", "weight"]
    label = df[df["feature"] == "label"].iloc[0]
    assert label["types"] == "float 2, int64 38"
    assert df[df["feature"] == "weight"].iloc[0]["present"] == "35 / 40"
    text = markdown(at)
    assert "**label** is int64 in most records" in text
    assert "[7](./?file=drift.tfrecord&record=7)" in text
    assert "[23](./?file=drift.tfrecord&record=23)" in text
    assert "**weight** is missing from 5 records" in text
    assert "[30](./?file=drift.tfrecord&record=30)" in text
    assert [m.value for m in at.main.metric][:4] == ["40", "4", "0", "2"]


def test_schema_without_drift_and_with_feature_lists(monkeypatch, root):
    at = page(monkeypatch, root, "schema", "sequence.tfrecord")
    no_crash(at, unshown=None)
    df = at.main.dataframe[0].value
    lists = df[df["kind"] == "feature list"]
    assert set(lists["feature"]) == {"frame_id", "frame_score", "tokens"}
    assert all(lists["steps"] != "")
    assert at.main.success and "No drift" in at.main.success[0].value


def test_schema_sample_is_labelled(monkeypatch, root):
    at = page(monkeypatch, root, "schema", "basic.tfrecord")
    no_crash(at, unshown=None)
    assert not at.main.warning
    at.toggle(key="tfb:w:schema:use_sample").set_value(True).run()
    at.number_input(key="tfb:w:schema:sample").set_value(10).run()
    at.button(key="tfb:w:schema:infer").click().run()
    no_crash(at, unshown=None)
    assert at.main.warning and "sample" in at.main.warning[0].value.lower()
    assert "10 of 64" in at.main.warning[0].value


def test_schema_reports_damaged_records(monkeypatch, root):
    at = page(monkeypatch, root, "schema", "corrupt_data_crc.tfrecord")
    no_crash(at, unshown=None)
    errors = [e.value for e in at.main.error]
    assert any("1 record fails its CRC and is not counted" in e and "record=5" in e for e in errors)


# -- statistics -----------------------------------------------------------------------------


def test_statistics_charts_each_feature(monkeypatch, root):
    at = page(monkeypatch, root, "statistics", "drift.tfrecord")
    no_crash(at, unshown=None)
    box = at.selectbox(key="tfb:w:statistics:feature")
    assert box.options == ["id", "label", "tags", "weight"]
    box.set_value("weight").run()
    no_crash(at, unshown=None)
    assert any("Histogram" in str(m.value) for m in at.main.markdown)
    at.selectbox(key="tfb:w:statistics:feature").set_value("tags").run()
    no_crash(at, unshown=None)
    text = markdown(at)
    assert "Most common values" in text and "Values per record" in text


def test_statistics_image_sizes_and_shards(monkeypatch, root):
    at = page(monkeypatch, root, "statistics", "images_png.tfrecord")
    no_crash(at, unshown=None)
    at.selectbox(key="tfb:w:statistics:feature").set_value("picture").run()
    no_crash(at, unshown=None)
    assert "Image sizes" in markdown(at)
    at = page(monkeypatch, root, "statistics", "shards/part-*")
    no_crash(at, unshown=None)
    shard_box = at.selectbox(key="tfb:w:statistics:shard")
    assert len(shard_box.options) == 4
    shard_box.set_value(shard_box.options[2]).run()
    at.selectbox(key="tfb:w:statistics:feature").set_value("feature1").run()
    no_crash(at, unshown=None)
    assert "Most common values" in markdown(at)


# -- filter ---------------------------------------------------------------------------------


def test_filter_results_and_paging(monkeypatch, root):
    at = page(monkeypatch, root, "filter", "basic.tfrecord")
    no_crash(at, unshown=None)
    assert at.main.info
    at.text_input(key="tfb:w:filter:expr").input("feature1 >= 0").run()
    no_crash(at, unshown=None)
    df = at.main.dataframe[0].value
    assert list(df["#"]) == list(range(25))
    assert "64 matching records" in markdown(at)
    at.pagination(key="tfb:w:filter:page").select(3).run()
    no_crash(at, unshown=None)
    assert list(at.main.dataframe[0].value["#"]) == list(range(50, 64))


def test_filter_syntax_error_shows_the_position(monkeypatch, root):
    at = page(monkeypatch, root, "filter", "basic.tfrecord")
    at.text_input(key="tfb:w:filter:expr").input("feature1 == 3)").run()
    no_crash(at, unshown=None)
    assert at.main.error and "unbalanced ')'" in at.main.error[0].value
    assert at.main.code[0].value == "feature1 == 3)\n             ^"
    assert not at.main.dataframe


def test_filter_damaged_and_export_hand_off(monkeypatch, root):
    at = page(monkeypatch, root, "filter", "corrupt_data_crc.tfrecord")
    at.text_input(key="tfb:w:filter:expr").input("not intact").run()
    no_crash(at, unshown=None)
    df = at.main.dataframe[0].value
    assert list(df["#"]) == [5]
    assert df["status"][0].startswith("damaged")
    at.button(key="tfb:w:filter:export").click().run()
    no_crash(at, unshown=None)
    chosen = at.session_state["tfb:x:" + state.FILTER_SELECTION]
    assert chosen["records"] == [5] and chosen["for_export"] is True
    assert chosen["spec"] == "corrupt_data_crc.tfrecord"
