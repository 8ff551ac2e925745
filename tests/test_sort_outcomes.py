"""Sorting by a record's evaluation: on records holding a model's predictions beside their
ground truth the sidebar offers the evaluation's per-record figures (true and false
positives, missed objects, the likely-mistake figures) as sort keys; sorting by false
positives, largest first, puts first the record the evaluation job itself counts the most
false positives in, and so on through the pages; a link carries the sort; a dataset without
predictions is not offered them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from app_support import no_crash, start_app
from streamlit.testing.v1 import AppTest

from browser_app.generators import coco, records, write
from browser_app.generators.evaluation import planted_mistakes
from browser_app.selection import EVAL_SORTS, Selection
from codec.jobs import EvaluateJob, plan, run
from codec.jobs.evaluate import RECORD_FIELDS

N = 36


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    known = planted_mistakes(N, seed=4, max_side=200)
    root = tmp_path_factory.mktemp("sortoutcomes")
    write(root / "planted.tfrecord", known.records)
    write(root / "plain.tfrecord", records(coco, 6, seed=1, masks=False, keypoints=False))
    return root, known


def _fields(root: Path) -> dict[str, np.ndarray]:
    """The evaluation job's own per-record figures (in this process, apart from the app)."""
    result = run(EvaluateJob(mistakes=True), plan([str(root / "planted.tfrecord")]), "inline")
    fields: dict[str, np.ndarray] = result.record_fields()
    return fields


def _expected(values: np.ndarray) -> list[int]:
    """Records by ``values``, largest first, ties in file order, NaN last."""
    return sorted(range(len(values)), key=lambda i: (np.isnan(values[i]), -values[i], i))


def _app(monkeypatch: pytest.MonkeyPatch, root: Path, file: str, **params: str) -> AppTest:
    at = start_app(monkeypatch, root, params={"file": file, **params}, timeout=120)
    no_crash(at)
    return at


def _table_records(at: AppTest) -> list[int]:
    df = at.main.dataframe[0].value
    return [int(x) for x in df["#"].tolist()]


def _sort_box(at: AppTest) -> Any:
    return next(s for s in at.sidebar.selectbox if s.label == "Sort by")


def test_the_sort_keys_are_the_evaluations_figures() -> None:
    assert {k.removeprefix("eval:") for k in EVAL_SORTS} <= set(RECORD_FIELDS)
    for key in EVAL_SORTS:
        sel = Selection(sort=key, descending=True)
        assert Selection.from_params(None, [], f"-{key}") == (sel, [])
    assert Selection.from_params(None, [], "-eval:nope")[1] == ["sort=-eval:nope"]


def test_most_false_positives_first(monkeypatch: pytest.MonkeyPatch, planted: Any) -> None:
    root, _known = planted
    fp = _fields(root)["fp"]
    assert np.nanmax(fp) > np.nanmin(fp)  # the planted spurious predictions differ by record
    at = _app(monkeypatch, root, "planted.tfrecord", record="0")
    box = _sort_box(at)
    assert set(EVAL_SORTS.values()) <= set(box.options)  # as they read
    box.set_value("eval:fp").run()
    no_crash(at)
    toggle = next(t for t in at.sidebar.toggle if t.label == "Largest first")
    toggle.set_value(True).run()
    no_crash(at)
    want = _expected(fp)
    assert at.query_params["sort"] == "-eval:fp"
    first = next(b for b in at.main.button if b.label == "First")
    if not first.disabled:
        first.click().run()
        no_crash(at)
    shown = _table_records(at)
    assert shown[0] == int(np.nanargmax(fp))  # the record with the most false positives
    assert shown == want[:25]
    # The link alone gives the same order in a fresh session.
    fresh = _app(monkeypatch, root, "planted.tfrecord", sort="-eval:fp", record=str(want[0]))
    assert _table_records(fresh) == want[:25]


def test_highest_mistakenness_first(monkeypatch: pytest.MonkeyPatch, planted: Any) -> None:
    root, known = planted
    mistakenness = _fields(root)["mistakenness"]
    want = _expected(mistakenness)
    assert want[0] in {r for r, _o in known.mislabelled}  # a planted mislabel leads
    at = _app(monkeypatch, root, "planted.tfrecord", sort="-eval:mistakenness", record=str(want[0]))
    assert _table_records(at) == want[:25]
    assert "sorted by mistakenness, largest first" in " ".join(c.value for c in at.sidebar.caption)


def test_not_offered_without_predictions(monkeypatch: pytest.MonkeyPatch, planted: Any) -> None:
    root, _known = planted
    at = _app(monkeypatch, root, "plain.tfrecord")
    assert not set(EVAL_SORTS.values()) & set(_sort_box(at).options)
    assert "Bytes" in _sort_box(at).options
    linked = _app(monkeypatch, root, "plain.tfrecord", sort="-eval:fp")
    infos = " ".join(i.value for i in linked.sidebar.info)
    assert "predictions beside the ground truth" in infos
    assert _table_records(linked) == list(range(6))  # file order


def test_the_outcome_facet(monkeypatch: pytest.MonkeyPatch, planted: Any) -> None:
    """ "Count outcomes" evaluates the records; the Outcome pills count the records with false
    positives, with missed objects and with every object found as the evaluation job's own
    figures do, and one narrows the records to those; a link carries it."""
    root, _known = planted
    fields = _fields(root)
    fp, fn = fields["fp"], fields["fn"]
    want = {
        "false positives": [int(i) for i in np.flatnonzero(fp > 0)],
        "missed objects": [int(i) for i in np.flatnonzero(fn > 0)],
        "all found": [int(i) for i in np.flatnonzero((fp == 0) & (fn == 0))],
    }
    assert want["false positives"] and want["missed objects"]  # planted: every record has fps
    at = _app(monkeypatch, root, "planted.tfrecord", record="0")
    assert not [p for p in at.sidebar.get("button_group") if "Outcome" in str(p.proto)]
    next(b for b in at.sidebar.button if b.label == "Count outcomes").click().run()
    no_crash(at)
    pills = at.sidebar.button_group(key="tfb:w:sel:facet:outcome")
    shown = [o.content for o in pills.proto.options]
    assert shown == [f"{v} · {len(want[v])}" for v in want if want[v]], shown
    pills.set_value("missed objects").run()
    no_crash(at)
    assert _table_records(at)[:25] == want["missed objects"][:25]
    facet = at.query_params.get("facet")
    assert facet in ("outcome:missed objects", ["outcome:missed objects"]), facet
    # the link alone: the evaluation runs for the facet, the same records
    at2 = _app(monkeypatch, root, "planted.tfrecord", facet="outcome:missed objects")
    assert _table_records(at2)[:25] == want["missed objects"][:25]
