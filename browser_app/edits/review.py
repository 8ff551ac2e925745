"""Review progress and the review report: every mark as rows, as CSV and as JSON.

Marks live in the journal (:meth:`Journal.set_mark <browser_app.edits.journal.Journal.set_mark>`);
these functions only read them.
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable
from typing import NamedTuple, TypedDict

from browser_app.edits.journal import Journal
from browser_app.edits.model import FLAGGED, PASSED, MarkStatus, RecordRef, sort_refs
from browser_app.errors import AppError
from codec.errors import CodecError

__all__ = [
    "REPORT_FIELDS",
    "ReportRow",
    "ReviewProgress",
    "progress",
    "report_csv",
    "report_json",
    "report_rows",
]

REPORT_FIELDS = ("record", "status", "comment", "time", "file", "edited", "deleted")


class ReviewProgress(NamedTuple):
    """How far the review is: records reviewed (marked) out of ``total``, and how many of
    them passed and were flagged."""

    reviewed: int
    total: int
    passed: int
    flagged: int


class ReportRow(TypedDict):
    """One mark in the review report."""

    record: RecordRef
    status: MarkStatus
    comment: str
    time: str
    file: str
    edited: bool
    deleted: bool


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


def report_rows(journal: Journal, file_name: Callable[[str], str] = str) -> list[ReportRow]:
    """One row per mark, in record order: record, status, comment, time (local, ISO 8601),
    the source file (named by ``file_name``; empty for a new record), and whether the record
    is edited or deleted."""
    marks = journal.marks()
    rows: list[ReportRow] = []
    for r in sort_refs(marks):
        m = marks[r]
        where = ""
        if isinstance(r, int):
            try:
                found = journal.locate(r)
            except (IndexError, CodecError):
                found = None
            where = file_name(found[0]) if found is not None else ""
        rows.append(
            {
                "record": r,
                "status": m.status,
                "comment": m.comment,
                "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(m.timestamp)),
                "file": where,
                "edited": journal.is_touched(r),
                "deleted": journal.is_deleted(r),
            }
        )
    return rows


def report_csv(rows: list[ReportRow]) -> bytes:
    """The report as CSV (UTF-8, a header line, ``\\n`` line ends)."""
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=REPORT_FIELDS, lineterminator="\n")
    w.writeheader()
    for row in rows:
        w.writerow(row)
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
