"""The sidebar's selection in the app: a facet click narrows the records table and the
gallery, a link carries the selection and sort, a sort over the whole dataset orders the
pages, the review state is a selection, and a bad link says what it ignored."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from app_support import gallery_data, gallery_tiles, start_app
from streamlit.testing.v1 import AppTest

import codec
from browser_app.edits import Journal
from browser_app.sample_data import write_detection_checks
from browser_app.selection import Selection, record_facts
from codec.filters import run_filter

N = 120
RECORD = "tfb:record"  # the current record in the session (browser_app.ui.state.url)


@pytest.fixture(scope="module")
def od(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("odsel")
    write_detection_checks(root / "od.tfrecord", N)
    return root


def _app(
    monkeypatch: pytest.MonkeyPatch, root: Path, params: dict[str, Any], page: str | None = None
) -> AppTest:
    at = start_app(monkeypatch, root, params={"file": "od.tfrecord", **params}, timeout=90)
    if page:
        at.switch_page(f"ui/pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table_records(at: AppTest) -> list[int]:
    df = at.main.dataframe[0].value
    return [int(x) for x in df["#"].tolist()]


TILE = re.compile(r"^#(\d+) ·")


def _tiles(at: AppTest) -> list[int]:
    """The records of the tiles the gallery's grid element was sent, in order; each tile's
    caption names its record too (what a user reads under the picture)."""
    tiles = gallery_tiles(at)
    for t in tiles:
        m = TILE.match(t["caption"])
        assert m and int(m.group(1)) == t["record"], t
    return [t["record"] for t in tiles]


def _param(at: AppTest, name: str) -> list[str]:
    value = at.query_params.get(name, [])
    return [value] if isinstance(value, str) else list(value)


def _facts(root: Path):  # type: ignore[no-untyped-def]
    with codec.TFRecordDataset(str(root / "od.tfrecord")) as ds:
        return record_facts(ds)


def test_a_facet_click_narrows_the_table_and_goes_into_the_url(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(od)
    at = _app(monkeypatch, od, {"size": "100"})
    classes = next(p for p in at.sidebar.button_group if p.label == "Class")
    cls = "cat (1)"
    assert any(o.startswith(cls) for o in classes.options)
    classes.set_value(cls).run()
    assert not at.exception
    want = facts.classes[cls].tolist()
    assert _table_records(at) == want[:100]
    assert _param(at, "facet") == ["class:cat (1)"]
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert f"{len(want):,} of {N:,} records selected" in caption
    # The same link in a fresh session shows the same records, in the gallery too.
    fresh = _app(monkeypatch, od, {"facet": "class:cat (1)", "size": "100"}, page="gallery")
    assert _tiles(fresh) == want[:100]


def test_sort_by_bytes_orders_every_page(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(od)
    at = _app(monkeypatch, od, {"sort": "-bytes", "size": "25"})
    first = _table_records(at)
    expected = sorted(range(N), key=lambda i: (-int(facts.nbytes[i]), i))
    assert first == expected[:25]
    next_button = next(b for b in at.main.button if b.label == "Next")
    next_button.click().run()
    assert _table_records(at) == expected[25:50]
    assert _param(at, "sort") == ["-bytes"]


def test_review_states_and_damage_are_selections(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    facts = _facts(od)
    flagged = [3, 17, 40]
    with codec.TFRecordDataset(str(od / "od.tfrecord")) as ds, Journal(ds) as j:
        for r in flagged:
            j.set_mark(r, "flagged", "look")
        j.set_mark(5, "passed")
    at = _app(monkeypatch, od, {"sel": "flagged"})
    assert _table_records(at) == flagged
    at = _app(monkeypatch, od, {"sel": "damaged", "size": "100"})
    damaged = [i for i in range(N) if facts.status[i] == 2]
    assert damaged and _table_records(at) == damaged
    review = next(p for p in at.sidebar.button_group if p.label == "Review")
    marked = {**dict.fromkeys(flagged, "flagged"), 5: "passed"}
    counts = {"passed": 0, "flagged": 0, "unreviewed": 0}
    for i in damaged:
        counts[marked.get(i, "unreviewed")] += 1
    assert review.options == [f"{k} · {n:,}" for k, n in counts.items() if n]


def test_a_bad_link_says_what_it_ignored(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    at = _app(monkeypatch, od, {"sel": "everything", "sort": "shoe"})
    warnings = " ".join(w.value for w in at.warning)
    assert "sel=everything" in warnings.replace("\\", "") and "sort=shoe" in warnings
    assert len(_table_records(at)) == 25  # every record, in file order


def test_a_filter_that_cannot_run_falls_back_to_every_record(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    at = _app(monkeypatch, od, {"sel": "filter:no_such_feature > 1"})
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "cannot run" in errors
    at.run()
    assert not at.exception
    assert _param(at, "sel") == []
    assert Selection.from_params(None, _param(at, "facet"), None)[0].base == "all"


def test_filter_results_show_pictures_and_open_in_the_gallery(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    expression = "any(image/object/class/label == 2)"
    with codec.TFRecordDataset(str(od / "od.tfrecord")) as ds:
        matches = run_filter(ds, expression).matches
    at = _app(monkeypatch, od, {"size": "100"}, page="filter")
    at.text_input(key="tfb:w:filter:expr").set_value(expression).run()
    assert not at.exception
    captions = [i.proto.imgs[0].caption.lstrip("\\") for i in at.main.image]
    page = list(matches)[:100]
    # Every match of the page with a picture is shown small, captioned with its number.
    assert captions and all(int(c.split()[0].lstrip("#")) in page for c in captions)
    next(b for b in at.main.button if b.label == "Open in gallery").click().run()
    assert not at.exception
    assert _param(at, "sel") == [f"filter:{expression}"]
    assert _tiles(at) == list(matches)[:100]


def test_gallery_keys_page_through_the_selection(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    """Pages of the gallery are pages of the selection. The keys (N/B, J/K past a page's
    end) are the grid element's and cannot be typed here: the pager turns the page, and the
    record a key's page turn makes current (its handling: tests/test_gallery_tiles.py) shows
    its page of the selection with the focus on it."""
    facts = _facts(od)
    want = facts.classes["cat (1)"].tolist()
    at = _app(monkeypatch, od, {"facet": "class:cat (1)", "size": "10"}, page="gallery")
    assert _tiles(at) == want[:10]
    at.button(key="tfb:w:gallery:next").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert _tiles(at) == want[10:20]
    assert _param(at, "record") == [str(want[10])]
    assert gallery_data(at)["focus"] == want[10]
    # Back past the first tile (K) lands on the last tile of the previous page: that record
    # made current shows the previous page of the selection, focused on its last tile.
    at.session_state[RECORD] = want[9]
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert _tiles(at) == want[:10]
    assert _param(at, "record") == [str(want[9])]
    assert gallery_data(at)["focus"] == want[9]
    # And forward past the last tile (J), on the first tile of the next page.
    at.session_state[RECORD] = want[10]
    at.run()
    assert _tiles(at) == want[10:20]
    assert _param(at, "record") == [str(want[10])]
    assert gallery_data(at)["focus"] == want[10]
    # The pager back (B) turns to the previous page of the selection, on its first tile.
    at.button(key="tfb:w:gallery:prev").click().run()
    assert _tiles(at) == want[:10]
    assert _param(at, "record") == [str(want[0])]


def test_a_links_selection_on_a_large_dataset_waits_to_be_applied(monkeypatch, od) -> None:  # type: ignore[no-untyped-def]
    """A link's filter, sort or facets read every record: on a dataset larger than the app
    reads at once (or a remote one), the link alone reads nothing; the sidebar says what it
    would select, and Apply runs it (Ignore forgets it)."""
    import sys

    from browser_app.ui.widgets import selection as selection_widget

    order_module = sys.modules["browser_app.ui.services.order"]  # not the function "order"

    monkeypatch.setattr(selection_widget, "FACTS_AUTO_RECORDS", 10)  # od (120) counts as large
    runs: list[str] = []
    real = order_module.run_filter
    monkeypatch.setattr(
        order_module, "run_filter", lambda ds, text, *a, **k: runs.append(text) or real(ds, text)
    )
    expr = "len(image/object/bbox/xmin) >= 2"
    at = _app(monkeypatch, od, {"sel": f"filter:{expr}", "size": "100"})
    assert runs == []  # nothing read for the link
    info = " ".join(i.value for i in at.sidebar.info).replace("\\", "")  # Markdown escapes
    assert "The link selects" in info and expr in info and "120 records" in info
    assert _table_records(at) == list(range(100))  # every record, until applied
    assert _param(at, "sel") == [f"filter:{expr}"]  # the link stays the link
    at.sidebar.button(key="tfb:w:sel:linked:apply").click().run()
    assert not at.exception
    assert runs == [expr]
    with codec.TFRecordDataset(str(od / "od.tfrecord")) as ds:
        want = run_filter(ds, expr).matches
    assert _table_records(at) == want[:100]
    # Ignored: the link's selection is forgotten, the URL says every record.
    at = _app(monkeypatch, od, {"sel": f"filter:{expr}"})
    at.sidebar.button(key="tfb:w:sel:linked:drop").click().run()
    assert not at.exception and not at.sidebar.info
    assert _param(at, "sel") == []
