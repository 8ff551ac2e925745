"""The results of dataset-wide jobs, in one store shared by every session: a source's verify
report and its inferred schema, kept until its files change.

A schema depends only on the files and the label map its labels were checked against, so it
is kept under those (any session that asks with the same files and label map gets it: the
Schema and Statistics pages of every tab share it), and the last one inferred over the files
is kept too, whichever label map it used: a page shows it, saying that the label map changed,
until the schema is inferred again.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import streamlit as st

import codec
import codec.jobs
from browser_app import view
from browser_app.ui.services.executors import Runner
from browser_app.view import SchemaResult
from codec.labelmap import LabelMap

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = [
    "AUTO_VERIFY_BYTES",
    "LabelChoice",
    "forget_results",
    "keep_schema_result",
    "last_schema_result",
    "schema_result",
    "should_auto_verify",
    "verified",
    "verify",
]

# Files up to this size (all files of a source together) are verified in full automatically.
AUTO_VERIFY_BYTES = 256 << 20

LabelChoice = tuple[str, LabelMap]
"""A label map as chosen for a source: where it came from (a file's name) and the map."""


class _Results:
    """Results of dataset-wide jobs (plain data), shared by every session: the newest
    ``limit`` kept, keyed by the job, the identity of its files and its options (a verify
    report takes one entry, a schema two: the same object, see :func:`keep_schema_result`)."""

    def __init__(self, limit: int = 48) -> None:
        self.limit = limit
        self.lock = threading.Lock()
        self.items: OrderedDict[Any, Any] = OrderedDict()

    def get(self, key: Any) -> Any:
        with self.lock:
            if key not in self.items:
                return None
            self.items.move_to_end(key)
            return self.items[key]

    def put(self, key: Any, value: Any) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.limit:
                self.items.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.items.clear()


@st.cache_resource(show_spinner=False)
def _results() -> _Results:
    # Not st.cache_data: a job draws its progress bar and Cancel button while it runs,
    # which a cached function may not (its elements would be replayed on every hit).
    return _Results()


def forget_results() -> None:
    """Drop every kept result (a source is opened again as it is now)."""
    _results().clear()


def _run_on(executor: codec.jobs.ExecutorSpec, job: Any, tasks: list[codec.jobs.Task]) -> Any:
    return codec.jobs.run(job, tasks, executor)


# -- the full CRC check ----------------------------------------------------------------------


def verified(src: Source) -> list[dict[str, Any]] | None:
    """The full CRC check of every file of ``src`` when it has been made (until a file
    changes), else None."""
    return _results().get(("verify", src.key))  # type: ignore[no-any-return]


def verify(
    src: Source,
    executor: codec.jobs.ExecutorSpec,
    runner: Runner | None = None,
) -> list[dict[str, Any]]:
    """A full CRC check of every file of ``src`` (kept until a file changes): the verify job
    over its files (:class:`codec.jobs.VerifyJob`; a range per worker of ``executor`` of a
    large plain file), run by ``runner`` (the page's, with progress and cancellation;
    default: :func:`codec.jobs.run` on ``executor``). The damaged
    records it finds are noted on the shared reader (of a file it has indexed), so the views
    know them without reading them again."""
    key = ("verify", src.key)
    got: list[dict[str, Any]] | None = _results().get(key)
    if got is not None:
        return got
    run: Runner = runner or functools.partial(_run_on, executor)
    reports = run(codec.jobs.VerifyJob(), codec.jobs.tasks_of(src.dataset.files, executor=executor))
    for f, report in zip(src.dataset.files, reports):
        if f.index_complete:  # else noting it would index the file here (remote: fetch it)
            for problem in report.problems:
                f.note_damage(problem)
    got = [view.report_dict(r) for r in reports]
    _results().put(key, got)
    return got


def should_auto_verify(src: Source) -> bool:
    """Whether ``src`` is small enough to be verified in full when its overview opens (a
    remote source never is: that would download it whole)."""
    if src.remote:
        return False
    return sum(f.size for f in src.dataset.files) <= AUTO_VERIFY_BYTES


# -- the inferred schema ---------------------------------------------------------------------


def _labels(label_map: LabelChoice | None) -> tuple[str, tuple[tuple[int, str], ...]] | None:
    """A label map as part of a key: its name (the result names it) and its classes."""
    if label_map is None:
        return None
    return label_map[0], tuple(sorted(label_map[1].names.items()))


def schema_result(src: Source, label_map: LabelChoice | None) -> SchemaResult | None:
    """The schema inferred over the files of ``src`` with ``label_map`` (None: none), in any
    session, or None."""
    value = _results().get(("schema", src.key, _labels(label_map)))
    return value if isinstance(value, SchemaResult) else None


def last_schema_result(src: Source) -> SchemaResult | None:
    """The schema last inferred over the files of ``src``, whichever label map it was
    inferred with (its ``label_map`` names it), or None."""
    value = _results().get(("schema", src.key))
    return value if isinstance(value, SchemaResult) else None


def keep_schema_result(src: Source, label_map: LabelChoice | None, value: SchemaResult) -> None:
    """Keep ``value``, the schema inferred over the files of ``src`` with ``label_map``."""
    _results().put(("schema", src.key, _labels(label_map)), value)
    _results().put(("schema", src.key), value)
