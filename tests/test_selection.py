"""Selections: the records a view shows and their order, against a brute-force reading of
the same records; the URL form round-trips; facets count what the selection holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

import codec
from browser_app.sample_data import write_detection_checks
from browser_app.selection import (
    BASES,
    FACET_GROUPS,
    UNREVIEWED,
    Selection,
    between,
    facet_counts,
    feature_keys,
    record_facts,
    resolve,
)
from codec.detection import layouts, record_boxes
from codec.example import decode


@pytest.fixture(scope="module")
def od(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sel") / "od.tfrecord"
    write_detection_checks(path, 300)
    return path


@pytest.fixture(scope="module")
def facts(od: Path):  # type: ignore[no-untyped-def]
    with codec.TFRecordDataset(str(od)) as ds:
        return record_facts(ds)


def _brute(od: Path) -> list[dict]:
    """Every record read on its own: status, size, classes, boxes."""
    out = []
    with codec.TFRecordDataset(str(od)) as ds:
        for slot in ds.page(0, len(ds)):
            if slot.index is None:
                continue
            classes: set[str] = set()
            boxes = 0
            if slot.payload is not None:
                feats = decode(slot.payload).features
                for layout in layouts(feats):
                    got = record_boxes(feats, layout, normalized=True).boxes
                    boxes += len(got)
                    classes |= {b.caption or "(no class)" for b in got}
            out.append(
                {"status": slot.status, "bytes": slot.length, "classes": classes, "boxes": boxes}
            )
    return out


def test_facts_agree_with_each_record_read_alone(od: Path, facts) -> None:  # type: ignore[no-untyped-def]
    brute = _brute(od)
    assert facts.total == len(brute)
    assert [r["bytes"] for r in brute] == facts.nbytes.tolist()
    assert [r["boxes"] for r in brute] == facts.boxes.tolist()
    codes = {"intact": 0, "recovered": 1, "damaged": 2}
    assert [codes[r["status"]] for r in brute] == facts.status.tolist()
    assert any(r["status"] == "damaged" for r in brute)  # the planted data has damage
    for name, records in facts.classes.items():
        assert records.tolist() == [i for i, r in enumerate(brute) if name in r["classes"]]
    assert set(facts.classes) == set().union(*(r["classes"] for r in brute))


_marks = st_.dictionaries(st_.integers(0, 299), st_.sampled_from(["passed", "flagged"]))


@settings(max_examples=60, deadline=None)
@given(
    marks=_marks,
    base=st_.sampled_from([b for b in BASES if b not in ("finding", "sql")]),
    picks=st_.lists(st_.integers(-5, 320), max_size=40),
    facet_review=st_.sampled_from([None, "passed", "flagged", UNREVIEWED]),
    facet_class=st_.sampled_from([None, "cat (1)", "dog (2)", "bird (3)", "yak (99)", "nope"]),
    sort=st_.sampled_from(["", "bytes", "boxes", "feature:image/height"]),
    descending=st_.booleans(),
)
def test_resolve_matches_brute_force(
    od, facts, marks, base, picks, facet_review, facet_class, sort, descending
) -> None:  # type: ignore[no-untyped-def]
    brute = _brute_cached(od)
    facets = []
    if facet_review:
        facets.append(("review", facet_review))
    if facet_class:
        facets.append(("class", facet_class))
    sel = Selection(base, "x" if base == "filter" else "", tuple(facets), sort, descending)
    with codec.TFRecordDataset(str(od)) as ds:
        keys = feature_keys(ds, "image/height") if sort.startswith("feature:") else None
    got = resolve(sel, facts, marks=marks, base_records=picks, sort_keys=keys).tolist()

    def review_of(i: int) -> str:
        return marks.get(i, UNREVIEWED)

    def keep(i: int) -> bool:
        r = brute[i]
        ok = {
            "all": True,
            "filter": i in picks,
            "flagged": review_of(i) == "flagged",
            "passed": review_of(i) == "passed",
            UNREVIEWED: review_of(i) == UNREVIEWED,
            "damaged": r["status"] == "damaged",
            "recovered": r["status"] == "recovered",
        }[base]
        if facet_review and review_of(i) != facet_review:
            ok = False
        if facet_class and facet_class not in r["classes"]:
            ok = False
        return ok

    expected = [i for i in range(len(brute)) if keep(i)]
    if sort:
        values = {
            "bytes": [r["bytes"] for r in brute],
            "boxes": [r["boxes"] for r in brute],
        }.get(sort)
        key_of = (lambda i: values[i]) if values else (lambda i: keys[i])  # type: ignore[index]

        def k(i: int) -> tuple[int, float, int]:
            v = float(key_of(i))
            if np.isnan(v):
                return (1, 0.0, i)
            return (0, -v if descending else v, i)

        expected.sort(key=k)
    assert got == expected


_BRUTE: dict[str, list[dict]] = {}


def _brute_cached(od: Path) -> list[dict]:
    if str(od) not in _BRUTE:
        _BRUTE[str(od)] = _brute(od)
    return _BRUTE[str(od)]


@settings(max_examples=40, deadline=None)
@given(marks=_marks, picks=st_.lists(st_.integers(0, 299), max_size=80))
def test_facet_counts_count_the_selection(od, facts, marks, picks) -> None:  # type: ignore[no-untyped-def]
    brute = _brute_cached(od)
    picked = np.unique(np.asarray(picks, np.int64))
    counts = facet_counts(picked, facts, marks)
    for value, n in counts["review"]:
        assert n == sum(1 for i in picked if marks.get(int(i), UNREVIEWED) == value)
    for value, n in counts["class"]:
        assert n == sum(1 for i in picked if value in brute[int(i)]["classes"])
    for value, n in counts["status"]:
        assert n == sum(1 for i in picked if brute[int(i)]["status"] == value)
    # Facets never list a value with no record in the selection.
    assert all(n > 0 for items in counts.values() for _, n in items)


text = st_.text(min_size=1, max_size=30).filter(lambda t: "\x00" not in t)


@settings(max_examples=80, deadline=None)
@given(
    base=st_.sampled_from(list(BASES)),
    arg=text,
    facets=st_.lists(st_.tuples(st_.sampled_from(list(FACET_GROUPS)), text), max_size=3),
    sort=st_.sampled_from(["", "bytes", "boxes", "feature:a:b/c d"]),
    descending=st_.booleans(),
)
def test_url_form_round_trips(base, arg, facets, sort, descending) -> None:  # type: ignore[no-untyped-def]
    unique = {}
    for g, v in facets:
        unique.pop(g, None)
        unique[g] = v
    sel = Selection(
        base,
        arg if base in ("filter", "finding", "sql") else "",
        tuple(unique.items()),
        sort,
        descending and bool(sort),
    )
    params = sel.to_params()
    back, problems = Selection.from_params(
        params.get("sel", [None])[0], params.get("facet", []), params.get("sort", [None])[0]
    )
    assert problems == []
    assert back == sel


def test_links_with_unknown_parts_say_so() -> None:
    sel, problems = Selection.from_params("nonsense", ["colour:red", "class:cat"], "-shoe")
    assert sel == Selection(facets=(("class", "cat"),))
    assert problems == ["sel=nonsense", "facet=colour:red", "sort=-shoe"]


@settings(max_examples=80, deadline=None)
@given(
    order=st_.lists(st_.integers(0, 60), unique=True, max_size=30),
    record=st_.integers(0, 60),
    file_order=st_.booleans(),
)
def test_neighbours_in_a_selection(order, record, file_order) -> None:  # type: ignore[no-untyped-def]
    if file_order:
        order = sorted(order)
    arr = np.asarray(order, np.int64)
    before, after = between(arr, record)
    if record in order:
        i = order.index(record)
        assert before == (order[i - 1] if i else None)
        assert after == (order[i + 1] if i + 1 < len(order) else None)
    elif order == sorted(order):
        # A record the selection lost (just marked) steps to the selected records around it.
        assert before == max((r for r in order if r < record), default=None)
        assert after == min((r for r in order if r > record), default=None)
    else:
        assert after == (order[0] if order else None)
