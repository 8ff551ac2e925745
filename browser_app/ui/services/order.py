"""The order the views page through: the records a selection shows (a filter's matches, a
schema finding's records, review marks, facets), sorted as it asks; and the facts of every
record it is drawn from (status, size, boxes, classes, read once and shared)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

import codec
from browser_app.selection import (
    RecordFacts,
    Selection,
    between,
    feature_keys,
    record_facts,
    resolve,
)
from browser_app.ui.services.identity import Key
from browser_app.ui.services.journals import shared_journal
from browser_app.ui.services.names import NamesKey, beside, names_key
from browser_app.view import SchemaResult
from codec.filters import run_filter
from codec.schema.drift import findings

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = [
    "facts",
    "finding_records",
    "forget_matches",
    "marks",
    "neighbours",
    "order",
    "page_records",
    "record_at",
]


@st.cache_resource(max_entries=8, show_spinner="Reading every record for facets and sorting…")
def _facts(key: Key, _ds: codec.TFRecordDataset) -> RecordFacts:
    return record_facts(_ds)


def facts(src: Source) -> RecordFacts:
    """Status, size, boxes and classes of every record of ``src`` (one pass, shared)."""
    return _facts(src.key, src.dataset)


@st.cache_resource(max_entries=16, show_spinner="Reading a sort key from every record…")
def _sort_keys(key: Key, name: str, _ds: codec.TFRecordDataset) -> np.ndarray:
    return feature_keys(_ds, name)


@st.cache_data(max_entries=16, show_spinner="Filtering every record…")
def _matches(
    key: Key,
    expression: str,
    _ds: codec.TFRecordDataset,
    names: NamesKey = (),
    _names: dict[str, Any] | None = None,
) -> list[int]:
    return list(run_filter(_ds, expression, names=_names).matches)


def forget_matches() -> None:
    """Drop every filter's matches (a source is opened again as it is now)."""
    _matches.clear()


def finding_records(
    src: Source, arg: str, schema: SchemaResult | None
) -> tuple[list[int], int] | None:
    """The records of the schema finding ``check:feature`` of ``src`` in ``schema`` (the first
    ones when the schema keeps fewer than it counts) and its count; None without a schema."""
    if schema is None:
        return None
    check, _, feature = arg.partition(":")
    for f in findings(schema.schema):
        if f.check == check and f.feature == feature:
            return list(f.records), f.count
    return [], 0


def marks(src: Source) -> dict[int, str]:
    """Review status by record number (records of the file; new records are left out)."""
    j = shared_journal(src)
    if j is None:
        return {}
    return {r: m.status for r, m in j.marks().items() if isinstance(r, int)}


def order(src: Source, sel: Selection, schema: SchemaResult | None) -> np.ndarray | None:
    """The records ``sel`` shows, in its order (a finding's records from ``schema``, the
    schema inferred for ``src``); None for the whole dataset in file order (views then page
    through the file itself, skipped regions in place). Raises
    :class:`codec.filters.FilterSyntaxError` for a filter that cannot run."""
    if sel.is_all:
        return None
    base: list[int] | None = None
    if sel.base == "filter":
        # Class names found with the data (a link means the same in every session); the
        # filter page spells names bound in one session only as numbers in the selection.
        found = beside(src)[0]
        base = _matches(src.key, sel.arg, src.dataset, names_key(found), found)
    elif sel.base == "finding":
        got = finding_records(src, sel.arg, schema)
        base = got[0] if got is not None else []
    keys = None
    if sel.sort.startswith("feature:"):
        keys = _sort_keys(src.key, sel.sort.removeprefix("feature:"), src.dataset)
    return resolve(sel, facts(src), marks=marks(src), base_records=base, sort_keys=keys)


def page_records(
    src: Source, start: int, stop: int, sel: Selection, schema: SchemaResult | None
) -> list[int] | None:
    """The record numbers at positions ``start..stop`` of ``sel`` (see :func:`order`); None
    when it is the whole dataset in file order (positions are record numbers)."""
    got = order(src, sel, schema)
    return None if got is None else [int(r) for r in got[max(0, start) : stop]]


def neighbours(
    src: Source, record: int, sel: Selection, schema: SchemaResult | None
) -> tuple[int | None, int | None]:
    """The records before and after ``record`` in the order of ``sel`` (in the file when it
    is the whole dataset); None at either end. A record the selection no longer holds (just
    marked, in "unreviewed") has the neighbours of the place it had."""
    got = order(src, sel, schema)
    if got is None:
        ds = src.dataset
        last = ds.indexed - 1 if ds.index_complete else None
        return (record - 1 if record > 0 else None), (
            None if last is not None and record >= last else record + 1
        )
    return between(got, record)


def record_at(src: Source, position: int, sel: Selection, schema: SchemaResult | None) -> int:
    """The record at ``position`` of ``sel`` (clamped to it; the record number itself when it
    is the whole file): where a page starting there begins."""
    got = order(src, sel, schema)
    if got is None:
        return max(0, position)
    return int(got[min(max(position, 0), len(got) - 1)]) if len(got) else 0
