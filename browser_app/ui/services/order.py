"""The order the views page through: the records a selection shows (a filter's matches, a
schema finding's records, a SQL query's records in its order, review marks, facets), sorted as
it asks (a feature, a record's evaluation); and the facts of every record it is drawn from
(status, size, boxes, classes, read once and shared)."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import streamlit as st

import codec
from browser_app.selection import (
    EVAL_PREFIX,
    RecordFacts,
    Selection,
    between,
    feature_keys,
    index_facts,
    index_feature_keys,
    record_facts,
    resolve,
)
from browser_app.ui.services.executors import Runner
from browser_app.ui.services.identity import Key
from browser_app.ui.services.journals import shared_journal
from browser_app.ui.services.names import NamesKey, beside, names_key
from browser_app.view import SchemaResult
from codec.columns_index import ColumnsIndex, stored_index
from codec.filters import run_filter
from codec.jobs import EvaluateJob, tasks_of
from codec.jobs.evaluate import Looked, label_map_of, look
from codec.schema.drift import findings
from codec.sql import SqlError, query

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = [
    "EVAL_LOOK_AT",
    "SQL_SECONDS",
    "NoSqlIndex",
    "evaluated",
    "evaluation_fields",
    "evaluation_layouts",
    "facts",
    "facts_indexed",
    "finding_records",
    "forget_index_looks",
    "forget_matches",
    "marks",
    "neighbours",
    "order",
    "page_records",
    "record_at",
    "sort_indexed",
    "sql_records",
]

SQL_SECONDS = 30.0  # how long a selection's query may run (the SQL page's own limit)
EVAL_LOOK_AT = 200  # first records whose layouts say whether a dataset can be evaluated


@st.cache_resource(max_entries=8, show_spinner="Reading every record for facets and sorting…")
def _facts(key: Key, _ds: codec.TFRecordDataset) -> RecordFacts:
    return record_facts(_ds)


class _NotIndexed(Exception):
    """The stored columnar index cannot answer (not stored, or not exactly): raised, so a
    cached function keeps nothing and asks again once the index is built."""


def _stored(ds: codec.TFRecordDataset) -> ColumnsIndex:
    """The stored columnar index of ``ds`` (never built here), or raises
    :class:`_NotIndexed`."""
    index = stored_index(ds.files) if ds.index_complete else None
    if index is None:
        raise _NotIndexed
    return index


@st.cache_resource(max_entries=8, show_spinner="Reading facets from the dataset's index…")
def _indexed_facts(key: Key, _ds: codec.TFRecordDataset) -> RecordFacts:
    # Looked for on a miss only: once kept, the facts stay true for these files' identity.
    got = index_facts(_stored(_ds), _ds)
    if got is None:
        raise _NotIndexed
    return got


INDEX_LOOK_S = 5.0
"""How long the answer "this dataset's columnar index is (not) stored" is kept."""


@st.cache_resource(max_entries=16, ttl=INDEX_LOOK_S, show_spinner=False)
def _index_stored(key: Key, _ds: codec.TFRecordDataset) -> bool:
    # The readers below raise on a dataset without a stored index, so they keep nothing and
    # are asked again at every run; asked, a cached reader that shows a spinner starts a
    # timer thread and sends the page a message, every time (tens of ms on a loaded
    # machine, in every run that draws the sidebar). So whether the index is there is asked
    # here first, kept a few seconds (a look costs a stat of the first file's table).
    return _ds.index_complete and stored_index(_ds.files) is not None


def forget_index_looks() -> None:
    """Look for stored columnar indexes again at once (one was just built)."""
    _index_stored.clear()


def _from_index(src: Source) -> RecordFacts | None:
    if not _index_stored(src.key, src.dataset):
        return None
    try:
        return _indexed_facts(src.key, src.dataset)
    except _NotIndexed:
        return None


def facts(src: Source) -> RecordFacts:
    """Status, size, boxes and classes of every record of ``src`` (one pass, shared): from
    its columnar index when that is stored and answers exactly (the same facts, without
    reading the records), else read from the records."""
    got = _from_index(src)
    return got if got is not None else _facts(src.key, src.dataset)


def facts_indexed(src: Source) -> bool:
    """Whether the facts of ``src`` come from its stored columnar index (facets are then
    counted at once, whatever the dataset's size)."""
    return _from_index(src) is not None


@st.cache_resource(max_entries=16, show_spinner="Reading a sort key from every record…")
def _sort_keys(key: Key, name: str, _ds: codec.TFRecordDataset) -> np.ndarray:
    return feature_keys(_ds, name)


@st.cache_resource(max_entries=16, show_spinner="Reading a sort key from the dataset's index…")
def _indexed_sort_keys(key: Key, name: str, _ds: codec.TFRecordDataset) -> np.ndarray:
    got = index_feature_keys(_stored(_ds), name)
    if got is None or len(got) != len(_ds):
        raise _NotIndexed
    return got


def _index_sort(src: Source, name: str) -> np.ndarray | None:
    if not _index_stored(src.key, src.dataset):
        return None
    try:
        return _indexed_sort_keys(src.key, name, src.dataset)
    except _NotIndexed:
        return None


def _feature_sort(src: Source, name: str) -> np.ndarray:
    got = _index_sort(src, name)
    return got if got is not None else _sort_keys(src.key, name, src.dataset)


def sort_indexed(src: Source, sort: str) -> bool:
    """Whether the selection's ``sort`` is answered from the stored columnar index of
    ``src`` (file order, bytes and boxes with its facts, a feature from its column):
    without reading the records."""
    if sort.startswith("feature:"):
        return _index_sort(src, sort.removeprefix("feature:")) is not None
    return sort in ("", "bytes", "boxes") and facts_indexed(src)


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
    """Drop every filter's matches and query's records (a source is opened again as it is
    now)."""
    _matches.clear()
    _sql.clear()


class NoSqlIndex(SqlError):
    """The columnar index a SQL selection is answered from is not stored (it is built on
    the SQL page, never for a link)."""


@st.cache_data(max_entries=16, show_spinner="Running the selection's query…")
def _sql(
    key: Key, text: str, marks_key: str, _files: Any, _marks: dict[int, str]
) -> tuple[list[int], bool]:
    index = stored_index(_files)
    if index is None:  # raised, so not kept: found once the SQL page has built it
        raise NoSqlIndex(
            "this dataset's SQL index is not built: open the SQL page to build it, then"
            " the query selects its records"
        )
    result = query(index, text, marks=_marks, limit=max(index.records, 1), timeout=SQL_SECONDS)
    records = result.records()
    if records is None:
        raise SqlError("the query has no whole-number column named record")
    return records, result.truncated


def _marks_key(got: Mapping[int, str]) -> str:
    return hashlib.sha256(repr(sorted(got.items())).encode()).hexdigest()


def sql_records(src: Source, text: str) -> tuple[list[int], bool]:
    """The ``record`` column of the query ``text`` over the stored columnar index of ``src``
    (with its review marks as ``mark``, as the SQL page runs it), in the query's order, as
    many rows as the index has records; and whether rows past those were left out. Raises
    :class:`NoSqlIndex` when the index is not stored (nothing is built here: a link never
    sets the server indexing) and :class:`codec.sql.SqlError` (refused, timed out, failed)."""
    got = marks(src)
    return _sql(src.key, text, _marks_key(got), src.dataset.files, got)


def _first_payloads(ds: codec.TFRecordDataset) -> list[bytes | None]:
    out: list[bytes | None] = []
    for f in ds.files:
        for info in f.records(0, EVAL_LOOK_AT - len(out)):
            out.append(info.data)
        if len(out) >= EVAL_LOOK_AT:
            break
    return out


@st.cache_resource(max_entries=16, show_spinner=False)
def _looked(key: Key, _ds: codec.TFRecordDataset) -> Looked:
    return look(_first_payloads(_ds))


def evaluation_layouts(src: Source) -> Looked | None:
    """The ground truth's and the predictions' layouts of ``src`` (as its first
    :data:`EVAL_LOOK_AT` records have them) when it has both, else None: whether its records
    can be sorted by their evaluation."""
    seen = _looked(src.key, src.dataset)
    return seen if seen.truth is not None and seen.predictions is not None else None


class _Kept:
    """Per record evaluation figures of a few sources, shared by every session: by the
    source's files' identity, with the class names they were computed with."""

    def __init__(self, limit: int = 8) -> None:
        self.limit = limit
        self.lock = threading.Lock()
        self.items: OrderedDict[Key, tuple[NamesKey, dict[str, np.ndarray]]] = OrderedDict()

    def get(self, key: Key) -> tuple[NamesKey, dict[str, np.ndarray]] | None:
        with self.lock:
            got = self.items.get(key)
            if got is not None:
                self.items.move_to_end(key)
            return got

    def put(self, key: Key, value: tuple[NamesKey, dict[str, np.ndarray]]) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.limit:
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _evaluations() -> _Kept:
    # Not st.cache_data: the job draws its progress bar and Cancel button while it runs.
    return _Kept()


def evaluation_fields(
    src: Source, names: Mapping[str, Any], run: Runner, executor: Any
) -> dict[str, np.ndarray] | None:
    """Per record of ``src``, the numbers of its evaluation
    (:meth:`codec.jobs.evaluate.EvaluationResult.record_fields`: tp, fp, fn and the likely
    mistakes' figures; NaN for a record left out): the evaluation job with its likely
    mistakes, as the patches view runs it, by ``run`` over tasks for ``executor``; kept by
    the files' identity and the class ``names``. None when ``src`` has no predictions beside
    its ground truth."""
    seen = evaluation_layouts(src)
    if seen is None or seen.truth is None or seen.predictions is None:
        return None
    nk = names_key(dict(names))
    kept = _evaluations().get(src.key)
    if kept is not None and kept[0] == nk:
        return kept[1]
    job = EvaluateJob(
        truth=seen.truth,
        predictions=seen.predictions,
        label_map=label_map_of(names, seen.truth, seen.predictions),
        normalized=(seen.truth_normalized, seen.predictions_normalized),
        mistakes=True,
    )
    result = run(job, tasks_of(src.dataset.files, executor=executor))
    fields: dict[str, np.ndarray] = result.record_fields()
    _evaluations().put(src.key, (nk, fields))
    return fields


def _eval_keys(src: Source, field: str) -> np.ndarray | None:
    kept = _evaluations().get(src.key)
    return None if kept is None else kept[1].get(field)


def evaluated(src: Source) -> dict[str, np.ndarray] | None:
    """The records' evaluation fields of ``src`` when :func:`evaluation_fields` made them
    (for its files as they are now), else None: the outcome facet counts from them."""
    kept = _evaluations().get(src.key)
    return None if kept is None else kept[1]


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
    :class:`codec.filters.FilterSyntaxError` for a filter that cannot run, and
    :class:`codec.sql.SqlError` for a query that cannot (:class:`NoSqlIndex` without its
    index). An ``eval:`` sort uses the evaluation made by :func:`evaluation_fields` (file
    order until it is made)."""
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
    elif sel.base == "sql":
        try:
            base = sql_records(src, sel.arg)[0]
        except NoSqlIndex:
            base = []  # the sidebar says where the index is built
    keys = None
    if sel.sort.startswith("feature:"):
        keys = _feature_sort(src, sel.sort.removeprefix("feature:"))
    elif sel.sort.startswith(EVAL_PREFIX):
        keys = _eval_keys(src, sel.sort.removeprefix(EVAL_PREFIX))
    outcomes = evaluated(src) if any(g == "outcome" for g, _ in sel.facets) else None
    return resolve(
        sel, facts(src), marks=marks(src), base_records=base, sort_keys=keys, outcomes=outcomes
    )


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
