"""A selection made of a SQL query: "Select these" on the SQL page makes the query the
selection (``sel=sql:<query>``), whose records the records table pages through in the
query's order (ORDER BY orders the pages); the same link in a fresh session shows the same
records; a query that cannot run, or is refused, in a link is said in the sidebar and every
record is shown; without the stored index the sidebar points to the SQL page (a link never
builds it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from app_support import no_crash, start_app
from streamlit.testing.v1 import AppTest

import codec
from browser_app.generators import write
from browser_app.selection import RecordFacts, Selection, resolve
from codec.columns_index import columns_index
from codec.example import encode_example
from codec.sql import query

N = 40
QUERY = "SELECT record FROM records WHERE label = 1 ORDER BY score DESC"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sqlsel")
    rows = [
        encode_example({"label": ("int64", [i % 4]), "score": ("int64", [(i * 7) % N])})
        for i in range(N)
    ]
    write(root / "plain.tfrecord", rows)
    return root


def _index(root: Path) -> Any:
    """The columnar index, stored (in this test's cache folder) as the SQL page stores it."""
    with codec.TFRecordFile(str(root / "plain.tfrecord")) as f:
        return columns_index([f], executor="inline")


def _expected(root: Path, sql: str = QUERY) -> list[int]:
    got = query(_index(root), sql).records()
    assert got is not None
    return got


def _app(monkeypatch: pytest.MonkeyPatch, root: Path, **params: str) -> AppTest:
    at = start_app(monkeypatch, root, params={"file": "plain.tfrecord", **params}, timeout=90)
    no_crash(at)
    return at


def _table_records(at: AppTest) -> list[int]:
    df = at.main.dataframe[0].value
    return [int(x) for x in df["#"].tolist()]


def _sel(at: AppTest) -> str | None:
    value = at.query_params.get("sel")
    return value if value is None or isinstance(value, str) else value[0]


def test_select_these_keeps_the_query_order(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    want = _expected(root)
    assert len(want) == 10 and want != sorted(want)  # ORDER BY gives another order than the file's
    at = _app(monkeypatch, root)
    at.switch_page("ui/pages/sql.py").run()
    no_crash(at)
    box = next(t for t in at.text_area if t.label.startswith("SQL over"))
    box.set_value(QUERY).run()
    no_crash(at)
    button = next(b for b in at.button if b.label.startswith("Select these"))
    assert button.label == "Select these 10 records"
    button.click().run()
    no_crash(at)
    assert _sel(at) == f"sql:{QUERY}"
    at.switch_page("ui/pages/records.py").run()
    no_crash(at)
    assert _table_records(at) == want
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert f"10 of {N} records selected" in caption
    # The link alone, in a fresh session, gives the same records in the same order.
    fresh = _app(monkeypatch, root, sel=f"sql:{QUERY}")
    assert _table_records(fresh) == want
    assert _sel(fresh) == f"sql:{QUERY}"


def test_no_cap_on_the_records(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every row of a query is the selection, past the 5,000 records a selection of numbers
    held (here all 6,000 records, last first)."""
    many = 6_000
    write(tmp_path / "plain.tfrecord", [encode_example({"v": ("int64", [i])}) for i in range(many)])
    _index(tmp_path)
    sql = "SELECT record FROM records ORDER BY v DESC"
    at = _app(monkeypatch, tmp_path, sel=f"sql:{sql}", record=str(many - 1))
    assert _table_records(at) == list(range(many - 1, many - 26, -1))
    caption = " ".join(c.value for c in at.sidebar.caption)
    assert f"{many:,} of {many:,} records selected" in caption


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("COPY records TO '/tmp/x.csv'", "COPY statement is not allowed"),
        ("SELECT nope FROM records", "nope"),
        ("SELECT label FROM records", "no whole-number column named record"),
    ],
)
def test_a_query_that_cannot_run_in_a_link_is_said(
    monkeypatch: pytest.MonkeyPatch, root: Path, sql: str, words: str
) -> None:
    _index(root)
    at = _app(monkeypatch, root, sel=f"sql:{sql}")
    errors = " ".join(e.value for e in at.sidebar.error)
    assert "The selection's query cannot run" in errors and words in errors
    assert _table_records(at) == list(range(25))  # every record, in file order
    at.run()
    no_crash(at)
    assert _sel(at) is None


def test_without_the_index_the_link_points_to_the_sql_page(
    monkeypatch: pytest.MonkeyPatch, root: Path
) -> None:
    at = _app(monkeypatch, root, sel=f"sql:{QUERY}")
    infos = " ".join(i.value for i in at.sidebar.info)
    assert "Open the SQL page to build it" in infos
    assert not at.main.dataframe or _table_records(at) == []
    with codec.TFRecordFile(str(root / "plain.tfrecord")) as f:
        from codec.columns_index import stored_index

        assert stored_index([f]) is None  # the link built nothing
    assert _sel(at) == f"sql:{QUERY}"  # kept: it selects once the index is built


def _facts(n: int) -> RecordFacts:
    return RecordFacts(
        np.zeros(n, np.int8),
        np.arange(n, dtype=np.int64) % 7,
        np.zeros(n, np.int32),
        {"odd": np.arange(1, n, 2, dtype=np.int64)},
    )


def test_resolve_keeps_the_query_order() -> None:
    facts = _facts(20)
    given = [9, 3, 3, 15, 42, -1, 0, 9, 7]
    sel = Selection("sql", "q")
    got = resolve(sel, facts, marks={}, base_records=given).tolist()
    assert got == [9, 3, 15, 0, 7]  # each once, where first given; out of range left out
    narrowed = sel.with_facet("class", "odd")
    assert resolve(narrowed, facts, marks={}, base_records=given).tolist() == [9, 3, 15, 7]
    flagged = sel.with_facet("review", "flagged")
    assert resolve(
        flagged, facts, marks={15: "flagged", 0: "flagged"}, base_records=given
    ).tolist() == [15, 0]
    by_bytes = Selection("sql", "q", sort="bytes")  # a sort asks for another order (stable)
    expected = sorted([9, 3, 15, 0, 7], key=lambda r: r % 7)
    assert resolve(by_bytes, facts, marks={}, base_records=given).tolist() == expected


def test_the_url_carries_the_query() -> None:
    sel = Selection("sql", "SELECT record FROM records WHERE name = 'a:b' ORDER BY 1")
    params = sel.to_params()
    assert params == {"sel": ["sql:SELECT record FROM records WHERE name = 'a:b' ORDER BY 1"]}
    assert Selection.from_params(params["sel"][0], [], None) == (sel, [])
    assert Selection.from_params("sql", [], None)[1] == ["sel=sql"]  # a query must be named
    assert sel.describe().startswith("SQL: SELECT record")
