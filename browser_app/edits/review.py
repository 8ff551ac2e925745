"""Review progress and the review report: every mark as rows, as CSV and as JSON.

Marks live in the journal (:meth:`Journal.set_mark <browser_app.edits.journal.Journal.set_mark>`);
these functions only read them.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable, Mapping
from typing import NamedTuple, NotRequired, TypedDict

from browser_app.edits.journal import Journal
from browser_app.edits.model import FLAGGED, PASSED, MarkStatus, RecordRef, sort_refs
from browser_app.errors import AppError
from codec.errors import CodecError
from codec.example import Feature, Record
from codec.kinds import INT64
from codec.names import ClassNames
from codec.values import format_float

__all__ = [
    "CLASSES_FIELD",
    "ID_FEATURES",
    "REPORT_FIELDS",
    "ReportRow",
    "ReviewProgress",
    "classes_text",
    "id_text",
    "identity",
    "marked_features",
    "progress",
    "report_csv",
    "report_json",
    "report_rows",
]

REPORT_FIELDS = (
    "record",
    "status",
    "comment",
    "time",
    "file",
    "local_index",
    "id_feature",
    "id",
    "edited",
    "deleted",
)
CLASSES_FIELD = "classes"  # the report's column of class names, when names files are bound
# The features that name a record in the Object Detection API's layout, first found first.
ID_FEATURES = ("image/source_id", "image/filename")
_ID_CHARS = 200  # characters of an identifying value the report keeps
_TEXT_FIELDS = frozenset(
    {"comment", "file", "id_feature", "id", CLASSES_FIELD}
)  # free text, from people or files


class ReviewProgress(NamedTuple):
    """How far the review is: records reviewed (marked) out of ``total``, and how many of
    them passed and were flagged."""

    reviewed: int
    total: int
    passed: int
    flagged: int


class ReportRow(TypedDict):
    """One mark in the review report: the record's number in the dataset, the mark, where the
    record comes from (``file`` and ``local_index``, its position in that file; empty and
    ``None`` for a new record) and what identifies it (``id`` is the value of the feature
    ``id_feature``; both empty when the record has none of them); with class names bound,
    ``classes``: the record's labels by name (:func:`classes_text`)."""

    record: RecordRef
    status: MarkStatus
    comment: str
    time: str
    file: str
    local_index: int | None
    id_feature: str
    id: str
    edited: bool
    deleted: bool
    classes: NotRequired[str]


def progress(journal: Journal) -> ReviewProgress:
    """Review progress over the records of the edited dataset (while the source's index is
    still growing, over the records indexed so far); marks on deleted records, and on
    records not indexed yet, do not count."""
    total_source = journal.source.indexed
    deleted = set(journal.deleted_records())
    live = [
        m
        for r, m in journal.marks().items()
        if r not in deleted and (isinstance(r, str) or r < total_source)
    ]
    try:
        total = journal.count(total_source)
    except (AppError, CodecError, IndexError):
        total = total_source
    passed = sum(1 for m in live if m.status == PASSED)
    flagged = sum(1 for m in live if m.status == FLAGGED)
    return ReviewProgress(len(live), total, passed, flagged)


def id_text(feature: Feature) -> str:
    """A feature's values as one line of text for a report: text as text (bytes that are not
    UTF-8 as ``\\xNN`` escapes), numbers as written, several values joined by ``"; "``; at
    most a couple of hundred characters."""
    parts: list[str] = []
    for v in feature.values:
        if isinstance(v, bytes):
            parts.append(v.decode("utf-8", errors="backslashreplace"))
        elif isinstance(v, float):
            parts.append(format_float(v))
        else:
            parts.append(str(v))
    text = "; ".join(parts)
    return text if len(text) <= _ID_CHARS else text[: _ID_CHARS - 1] + "…"


def _record(journal: Journal, ref: RecordRef) -> Record | None:
    try:
        rec = journal.effective_record(ref)
        return rec if rec is not None else journal.source_record(ref)
    except (AppError, CodecError, IndexError, KeyError):
        return None  # a damaged record, or one that is not there any more


def identity(record: Record | None, chosen: str | None = None) -> tuple[str, str]:
    """``(feature name, value as text)`` that identifies ``record``: the feature ``chosen``
    when given, else ``image/source_id``, else ``image/filename``; ``("", "")`` when the
    record has none of them (or cannot be read)."""
    if record is None:
        return "", ""
    for name in (chosen,) if chosen else ID_FEATURES:
        feature = record.features.get(name) if name else None
        if feature is not None and feature.values:
            return name or "", id_text(feature)
    return "", ""


def classes_text(record: Record | None, names: Mapping[str, ClassNames]) -> str:
    """The labels of ``record`` in the features that have class names, by name:
    ``label: cat`` (``objects/label: person, dog`` for a list; a label its names file does not
    name stays its number), features joined by ``"; "``; empty for none."""
    if record is None:
        return ""
    parts: list[str] = []
    for feature, cn in names.items():
        f = record.features.get(feature)
        if f is None or f.type != INT64 or not f.values:
            continue
        shown = []
        for v in dict.fromkeys(int(x) for x in f.values):
            name = cn.name(v)
            shown.append(str(v) if name is None else name)
        parts.append(f"{feature}: {', '.join(shown)}")
    text = "; ".join(parts)
    return text if len(text) <= _ID_CHARS else text[: _ID_CHARS - 1] + "…"


def marked_features(journal: Journal, limit: int = 200) -> list[str]:
    """The names of the features of the marked records (of the first ``limit`` of them),
    sorted: what a person may pick to identify records in the report."""
    names: set[str] = set()
    for ref in sort_refs(journal.marks())[:limit]:
        rec = _record(journal, ref)
        if rec is not None:
            names.update(rec.features)
    return sorted(names)


def report_rows(
    journal: Journal,
    file_name: Callable[[str], str] = str,
    id_feature: str | None = None,
    names: Mapping[str, ClassNames] | None = None,
) -> list[ReportRow]:
    """One row per mark, in record order: record, status, comment, time (local, ISO 8601),
    the source file (named by ``file_name``; empty for a new record) and the record's index
    in it, what identifies the record (:func:`identity`: ``id_feature`` when given, else
    ``image/source_id`` or ``image/filename``), and whether the record is edited or
    deleted; with ``names`` (class names by feature), its labels by name in ``classes``."""
    marks = journal.marks()
    rows: list[ReportRow] = []
    for r in sort_refs(marks):
        m = marks[r]
        found: tuple[str, int] | None = None
        if isinstance(r, int):
            try:
                found = journal.locate(r)
            except (IndexError, CodecError):
                found = None
        rec = _record(journal, r)
        name, value = identity(rec, id_feature)
        row: ReportRow = {
            "record": r,
            "status": m.status,
            "comment": m.comment,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(m.timestamp)),
            "file": file_name(found[0]) if found is not None else "",
            "local_index": found[1] if found is not None else None,
            "id_feature": name,
            "id": value,
            "edited": journal.is_touched(r),
            "deleted": journal.is_deleted(r),
        }
        if names:
            row["classes"] = classes_text(rec, names)
        rows.append(row)
    return rows


def report_csv(rows: list[ReportRow], text_cell: Callable[[str], str] | None = None) -> bytes:
    """The report as CSV (UTF-8, a header line, ``\\n`` line ends). ``text_cell`` rewrites
    every text cell (comment, file, identifying feature and value) as it is written, e.g. so
    that no spreadsheet runs one as a formula. Rows with ``classes`` add that column."""
    out = io.StringIO()
    fields: tuple[str, ...] = REPORT_FIELDS
    if any(CLASSES_FIELD in row for row in rows):
        fields = (*REPORT_FIELDS, CLASSES_FIELD)
    w = csv.DictWriter(out, fieldnames=fields, lineterminator="\n", restval="")
    w.writeheader()
    for row in rows:
        if text_cell is None:
            w.writerow(row)
            continue
        w.writerow(
            {
                k: text_cell(v) if k in _TEXT_FIELDS and isinstance(v, str) else v
                for k, v in row.items()
            }
        )
    return out.getvalue().encode("utf-8")


def report_json(journal: Journal, rows: list[ReportRow], source: str) -> bytes:
    """The report as JSON: the source's name, the progress and the marks."""
    done, total, passed, flagged = progress(journal)
    doc = {
        "source": source,
        "records": total,
        "reviewed": done,
        "passed": passed,
        "flagged": flagged,
        "marks": rows,
    }
    return json.dumps(doc, indent=1, ensure_ascii=False).encode("utf-8")
