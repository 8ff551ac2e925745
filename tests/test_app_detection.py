"""The generated Object Detection dataset with planted problems, in the app: the Schema page
lists every planted record under a finding (with links) and nothing else, with the label map
found beside the data or uploaded; the Filter page finds each planted problem with its
documented expression and names a misspelt feature; the Statistics page draws a bar per
label with exact counts."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_support import gallery_tiles, start_app
from streamlit.testing.v1 import AppTest

from browser_app.sample_data import LABEL_MAP, PLANTS, write_detection_checks

N = 200
LINK = re.compile(r"\[(\d+)\]\(\./\?file=od\.tfrecord&record=\d+\)")


@pytest.fixture(scope="module")
def od(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[int]]]:
    root = tmp_path_factory.mktemp("od")
    planted = write_detection_checks(root / "od.tfrecord", N)
    (root / "label_map.pbtxt").write_text(LABEL_MAP)
    return root, planted


def _app(monkeypatch: pytest.MonkeyPatch, root: Path, page: str | None = None) -> AppTest:
    at = start_app(monkeypatch, root, params={"file": "od.tfrecord"})
    if page:
        at.switch_page(f"ui/pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _linked(lines: list[str]) -> set[int]:
    return {int(n) for line in lines for n in LINK.findall(line)}


def _plain(markdown: str) -> str:
    """Markdown source with its backslash escapes undone: the text a reader sees."""
    return re.sub(r"\\(.)", r"\1", markdown)


def _findings(at: AppTest) -> list[str]:
    return [_plain(m.value) for m in at.main.markdown if m.value.startswith("- ")]


def test_schema_page_lists_every_planted_record_and_nothing_else(monkeypatch, od) -> None:
    root, planted = od
    at = _app(monkeypatch, root, "schema")
    assert "Labels are checked against **label_map.pbtxt**" in _plain(
        "".join(c.value for c in at.main.caption)
    )
    lines = _findings(at)
    shown = _linked(lines)
    damaged = [e.value for e in at.main.error if "fail their CRC" in e.value]
    shown |= _linked(damaged)
    # Every planted record is linked, and no other record is.
    assert shown == set().union(*planted.values())
    assert any("is not in the label map" in line for line in lines)
    by_check = {
        "outside [0, 1]": "box_range",
        "not a number": "box_not_finite",
        "xmin ≥ xmax": "box_inverted",
        "differ from the picture's own size": "image_size",
        "cannot be decoded": "undecodable",
    }
    for words, kind in by_check.items():
        matching = [x for x in lines if words in x]
        assert len(matching) == 1, (words, lines)
        line = matching[0]
        assert _linked([line]) == set(planted[kind]), (kind, line)
    metrics = {m.label: m.value for m in at.main.metric}
    assert metrics["Damaged records"] == str(len(planted["damaged"]))


def test_turning_the_label_map_off_checks_one_text_per_label(monkeypatch, od) -> None:
    root, planted = od
    at = _app(monkeypatch, root, "schema")
    at.toggle(key="tfb:w:schema:label_map_beside").set_value(False).run()
    assert not at.exception
    lines = _findings(at)
    assert not [x for x in lines if "is not in the label map" in x]
    assert "no label map chosen" in "".join(c.value for c in at.main.caption)
    (text,) = [x for x in lines if "'cat' in most boxes" in x]
    assert _linked([text]) == set(planted["label_text"])


def test_label_map_uploads_good_and_bad(monkeypatch, od) -> None:
    root, planted = od
    at = _app(monkeypatch, root, "schema")
    before = _findings(at)
    uploader = at.get("file_uploader")[0]
    # Not text: refused with a message; the findings stay as they were.
    uploader.set_value(("bad.pbtxt", b"\xff\xfe item {", "text/plain"))
    at.run()
    assert not at.exception
    errors = [_plain(e.value) for e in at.main.error]
    assert any("bad.pbtxt cannot be used" in e and "not UTF-8" in e for e in errors), errors
    assert _findings(at) == before
    # Refused once: later runs say so again without reading the upload again.
    from browser_app.ui.widgets import schema as schema_widget

    parsed: list[int] = []
    real = schema_widget.parse_label_map_bytes
    monkeypatch.setattr(
        schema_widget, "parse_label_map_bytes", lambda b: parsed.append(len(b)) or real(b)
    )
    at.run()
    at.run()
    assert parsed == []
    assert any("bad.pbtxt cannot be used" in _plain(e.value) for e in at.main.error)
    # A label map without the class 3: every box labelled 3 is now outside it.
    at.get("file_uploader")[0].set_value(
        ("two.pbtxt", b'item { id: 1 name: "cat" } item { id: 2 name: "dog" }', "text/plain")
    )
    at.run()
    assert not at.exception
    assert "Labels are checked against **two.pbtxt** (2 classes)" in _plain(
        "".join(c.value for c in at.main.caption)
    )
    (line,) = [x for x in _findings(at) if "is not in the label map" in x]
    assert set(planted["label_map"]) < _linked([line]) or "more" in line


@pytest.mark.parametrize("kind", [k for k, expr in PLANTS.items() if expr])
def test_filter_page_finds_each_planted_problem(monkeypatch, od, kind) -> None:
    root, planted = od
    at = _app(monkeypatch, root, "filter")
    at.text_input(key="tfb:w:filter:expr").input(PLANTS[kind]).run()
    assert not at.exception and not at.main.error, [e.value for e in at.main.error]
    found = list(at.main.dataframe[0].value["#"]) if at.main.dataframe else []
    assert found == planted[kind][: len(found)]
    n = len(planted[kind])
    assert f"{n} matching record" in " ".join(m.value for m in at.main.markdown)


def test_filter_page_names_a_misspelt_feature(monkeypatch, od) -> None:
    root, _ = od
    at = _app(monkeypatch, root, "filter")
    at.text_input(key="tfb:w:filter:expr").input("image/object/class/lable > 5").run()
    (err,) = at.main.error
    assert "no record has a feature named" in err.value and "image/object/class/label" in err.value
    assert "did you mean" in err.value
    assert at.main.code[0].value.endswith("^")
    assert not at.main.dataframe
    # Inside has() the same name is a fair question with an answer.
    at.text_input(key="tfb:w:filter:expr").input("has(image/object/class/lable)").run()
    assert not at.main.error
    assert "0 matching records" in " ".join(m.value for m in at.main.markdown)


def test_statistics_draws_one_exact_bar_per_label(monkeypatch, od) -> None:
    root, _ = od
    at = _app(monkeypatch, root, "statistics")
    at.selectbox(key="tfb:w:statistics:feature").set_value("image/object/class/label").run()
    assert not at.exception
    text = " ".join(m.value for m in at.main.markdown)
    assert "**Every value** · 4 distinct values" in text
    chart = at.main.get("vega_lite_chart")[0]
    assert '"symlog"' not in chart.proto.spec
    at.toggle(key="tfb:w:statistics:log").set_value(True).run()
    chart = at.main.get("vega_lite_chart")[0]
    assert '"symlog"' in chart.proto.spec


def test_gallery_badges_the_records_with_bad_boxes(monkeypatch, od) -> None:
    root, planted = od
    at = _app(monkeypatch, root, "gallery")
    tiles = gallery_tiles(at)
    assert all(t["caption"].startswith(f"#{t['record']} ") for t in tiles)
    shown = {t["record"] for t in tiles}
    badged = {t["record"] for t in tiles if any("bad box" in b for b in t.get("badges", []))}
    bad = {
        i
        for kind in ("box_range", "box_not_finite", "box_inverted")
        for i in planted[kind]
        if i in shown
    }
    assert bad and badged == bad
