"""Every ``st.cache_*`` of the app: shared readers and journals, and the plain-data results
drawn from them.

Open readers are shared resources (``st.cache_resource``): one memory-mapped reader per set
of files (and way of reaching remote objects: with credentials or anonymously) for every
session, re-opened when a file changes on disk (``validate`` compares the size and mtime)
and closed when evicted (``on_release``). A remote object is not asked at every run whether
it changed (a request per object): reads are pinned to the version opened and raise
:class:`~codec.errors.ObjectChangedError` when it was replaced, and :func:`remote_changes`
asks, a few seconds apart, about the objects this session has read; the person then reopens
the new version (:func:`forget_source`). The edit journal of a source is
shared the same way, so two tabs on the same file see the same pending edits. Results that
are plain data (a verify report, a feature summary, a page's table, a page's gallery tiles)
use ``st.cache_data`` keyed by the files' identities (:class:`codec.cache.FileIdentity`);
pages with pending edits are built from :meth:`Journal.page
<browser_app.edits.Journal.page>` and keyed by the ids of the changes on them as well.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import numpy as np
import streamlit as st

import codec
import codec.jobs
from browser_app import view
from browser_app.edits import Journal, RecordRef
from browser_app.errors import AppError, JournalError
from browser_app.paths import RootEntry, expand_inside, list_tfrecords
from browser_app.selection import (
    RecordFacts,
    Selection,
    between,
    feature_keys,
    record_facts,
    resolve,
)
from browser_app.ui import state
from codec.errors import CodecError, RemoteError
from codec.filters import run_filter
from codec.identity import FileIdentity
from codec.kinds import DATA_CRC
from codec.locations import filesystem, is_url, remote_stat
from codec.schema.drift import findings

if TYPE_CHECKING:
    from browser_app.ui.source import Source

__all__ = [
    "AUTO_VERIFY_BYTES",
    "DASK_TIMEOUT",
    "Runner",
    "box_scale",
    "facts",
    "feature_summary",
    "finding_records",
    "forget_journals",
    "forget_source",
    "gallery_items",
    "job_executor",
    "landed_numbers",
    "landed_page",
    "landed_tiles",
    "list_files",
    "marks",
    "neighbours",
    "open_dataset",
    "open_journal",
    "order",
    "page_records",
    "page_view",
    "record_at",
    "release_executor",
    "remote_changes",
    "remote_files",
    "remote_source",
    "shared_executor",
    "shared_journal",
    "should_auto_verify",
    "usual_types",
    "verified",
    "verify",
]

log = logging.getLogger("tfrecord-browser")

# Files up to this size (all files of a source together) are verified in full automatically.
AUTO_VERIFY_BYTES = 256 << 20

Key = tuple[FileIdentity, ...]
"""The identity of a source's files: the key of every cached result about them."""

Fingerprint = tuple[tuple[RecordRef, tuple[int, ...]], ...]
"""The pending changes on a page: each touched record with the ids of its changes."""

Span = tuple[int, ...] | tuple[str, int, int]
"""The records of a page: ``("range", start, stop)`` in file order, or the record numbers."""

_T = TypeVar("_T")


# -- shared readers ------------------------------------------------------------------------


def _unchanged(ds: codec.TFRecordDataset) -> bool:
    """Whether every file of ``ds`` is open and (a local one) has the size and mtime it was
    opened with. Remote objects are checked when read, not here (see the module's text)."""
    return all(not f.closed and (f.identity.remote or f.identity.unchanged()) for f in ds.files)


def _close(ds: codec.TFRecordDataset) -> None:
    ds.close()


@st.cache_resource(
    max_entries=8,
    validate=_unchanged,
    on_release=_close,
    show_spinner="Opening…",
)
def open_dataset(
    paths: tuple[str, ...], max_inflate: int | None = None, anon: bool = False
) -> codec.TFRecordDataset:
    """One shared reader for ``paths`` (real paths or URLs, already confined to the root); a
    GZIP or ZLIB file inflates up to ``max_inflate`` bytes (default:
    :func:`codec.cache.inflate_limit`); remote objects are read without credentials when
    ``anon``."""
    return codec.TFRecordDataset(list(paths), max_inflate=max_inflate, anon=anon)


@st.cache_data(ttl=15, max_entries=64, show_spinner=False)
def list_files(root: str, query: str, anon: bool = False) -> tuple[list[RootEntry], bool]:
    """TFRecord-looking files under the root matching ``query`` (re-listed every 15 s)."""
    return list_tfrecords(root, query, anon=anon)


@st.cache_data(ttl=30, max_entries=64, show_spinner="Listing…")
def remote_files(root: str, spec: str, anon: bool = False) -> list[str]:
    """The objects a remote ``spec`` names under the root (:func:`paths.expand_inside
    <browser_app.paths.expand_inside>`), listed again at most every 30 s rather than at every
    run."""
    return expand_inside(root, spec, anon=anon)


def remote_source(f: codec.TFRecordFile) -> Any:
    """The source behind a remote file's reader (its requests and bytes read: for a compressed
    object, those of its compressed bytes), or None for a local file."""
    source = getattr(f, "_source", None)
    return source if getattr(source, "remote", False) else None


CHANGES_CHECKED = 8  # remote objects asked about per run, at most


def remote_changes(src: Source) -> list[str]:
    """The remote objects of ``src`` that this process has read from and that are no longer
    the version opened (the server is asked at most every few seconds per object, and about
    :data:`CHANGES_CHECKED` of them at most: the last read from, in file order): their URLs
    as shown."""
    read = [
        (p, f)
        for p, f in zip(src.paths, src.dataset.files)
        if not f.closed and (s := remote_source(f)) is not None and s.requests
    ]
    out = []
    for p, f in read[-CHANGES_CHECKED:]:
        try:
            now = remote_stat(p, anon=src.anon)
        except FileNotFoundError:
            out.append(f.path)
            continue
        except OSError:  # the network: the reads say so when it matters
            continue
        if now.moved_from(f.identity.size, f.identity.version):
            out.append(f.path)
    return out


def forget_source(
    root: str, spec: str, paths: tuple[str, ...], anon: bool, max_inflate: int | None
) -> None:
    """Drop everything kept about the source ``spec`` (its files ``paths``), so its remote
    objects open again as they are now: the shared reader, the listing of its spec, what the
    file systems and the codec remember of the objects (sizes, versions, listings), and the
    plain-data results made from them (those of other sources are made again on demand)."""
    open_dataset.clear(paths, max_inflate, anon)
    remote_files.clear(root, spec, anon)
    list_files.clear()
    for p in paths:
        if not is_url(p):
            continue
        try:
            fs, path = filesystem(p, anon=anon)
            fs.invalidate_cache(path)
            remote_stat(p, anon=anon, fresh=True)
        except (OSError, AttributeError, CodecError):
            continue  # reopening says what is wrong
    for cached in (_page, _gallery, _summary, _box_scale, _matches):
        cached.clear()
    _results().clear()


# -- where jobs run ------------------------------------------------------------------------

Runner = Callable[[Any, list[codec.jobs.Task]], Any]
"""Runs a job over its tasks and returns its result (:func:`codec.jobs.run`, or the page's
runner with a progress bar and a Cancel button)."""

DASK_TIMEOUT = 5.0  # seconds to reach a Dask scheduler named in the app


def _connected(ex: codec.jobs.Executor) -> bool:
    connected = getattr(ex, "connected", None)
    return bool(connected()) if connected is not None else True


def _close_executor(ex: codec.jobs.Executor) -> None:
    ex.close(wait=False)


@st.cache_resource(
    max_entries=4, validate=_connected, on_release=_close_executor, show_spinner=False
)
def _shared_executor(spec: str, timeout: float) -> codec.jobs.Executor:
    return codec.jobs.executor(spec, timeout=timeout)  # the spec's text: a plain cache key


def _timeout() -> float:
    return state.app_args().dask_timeout or DASK_TIMEOUT


class _Users:
    """The sessions that use each shared executor (by spec): those whose setting named it or
    that ran a job on it, until they leave it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.of: dict[str, set[str]] = {}


@st.cache_resource(show_spinner=False)
def _users() -> _Users:
    return _Users()


def shared_executor(
    spec: codec.jobs.ExecutorSpec, session: str | None = None
) -> codec.jobs.Executor:
    """The one client of the Dask cluster ``spec`` names, shared by every session and job:
    connected now (a ``dask:local`` cluster started now; a scheduler tried for
    ``--dask-timeout`` seconds, else :data:`DASK_TIMEOUT`) and kept while a session uses it
    (``session``, from now until :func:`release_executor`) or until the connection is lost.
    Raises :class:`codec.errors.ExecutorError` (a :class:`~codec.errors.SchedulerError` for a
    scheduler that cannot be reached) or :class:`codec.errors.MissingExtraError`."""
    ex = _shared_executor(str(spec), _timeout())
    if session is not None:
        users = _users()
        with users.lock:
            users.of.setdefault(str(spec), set()).add(session)
    return ex


def release_executor(spec: codec.jobs.ExecutorSpec, session: str) -> None:
    """``session`` no longer uses ``spec``: its shared Dask client (and a local cluster
    started for it) is closed when no other session uses it either. (A session that ends
    without leaving it keeps it open, as do the tabs of a session.)"""
    if not spec.is_dask:
        return
    users = _users()
    with users.lock:
        left = users.of.get(str(spec), set())
        left.discard(session)
        if left:
            return
        users.of.pop(str(spec), None)
    _shared_executor.clear(str(spec), _timeout())


def job_executor(
    spec: codec.jobs.ExecutorSpec,
    tasks: Sequence[codec.jobs.Task] | None = None,
    session: str | None = None,
) -> tuple[codec.jobs.Executor, bool]:
    """``(executor, shared)`` for a job on ``spec``: the shared Dask client (used by
    ``session`` from now), or an executor of this job's own (close it after the job). Local
    processes are no more than the ``tasks`` (when known), and one small task runs in this
    process: not worth starting a process for."""
    if spec.is_dask:
        return shared_executor(spec, session), True
    if tasks is not None:
        work = sum(t.bytes for t in tasks)
        spec = spec.fit(len(tasks), work=work, inline_most=codec.jobs.DEFAULT_SPLIT)
    return codec.jobs.executor(spec), False  # a pool starts on its first task: cheap until then


class _Results:
    """Results of dataset-wide jobs (plain data), shared by every session: the newest
    ``limit`` kept, keyed by the job and the identity of its files."""

    def __init__(self, limit: int = 32) -> None:
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


def _run_on(executor: codec.jobs.ExecutorSpec, job: Any, tasks: list[codec.jobs.Task]) -> Any:
    return codec.jobs.run(job, tasks, executor)


# -- plain-data results --------------------------------------------------------------------


def verified(src: Source) -> list[dict[str, Any]] | None:
    """The full CRC check of every file of ``src`` when it has been made (until a file
    changes), else None."""
    return _results().get(("verify", src.key))


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
    got = _results().get(key)
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


@st.cache_data(max_entries=32, show_spinner=False)
def _summary(key: Key, limit: int, _ds: codec.TFRecordDataset) -> dict[str, Any]:
    return view.feature_summary(_ds, limit)


def feature_summary(src: Source, limit: int = 200) -> dict[str, Any]:
    """Kinds and features (names, types, lengths) of the first ``limit`` records."""
    return _summary(src.key, limit, src.dataset)


def usual_types(src: Source) -> tuple[dict[str, str], dict[str, str]]:
    """``({feature: type}, {feature list: type})``: the type most of the first records of
    ``src`` give each feature, for warnings about edits that disagree (none when the records
    cannot be read)."""
    try:
        return view.usual_types(feature_summary(src))
    except (AppError, CodecError):
        return {}, {}


@st.cache_data(max_entries=32, show_spinner=False)
def _box_scale(key: Key, limit: int, _ds: codec.TFRecordDataset) -> view.BoxScale:
    total = _ds.indexed if _ds.index_complete else None
    return view.boxes_normalized(view.first_payloads(_ds, limit), total)


def box_scale(src: Source) -> view.BoxScale:
    """Whether the boxes of ``src`` are normalised or pixels: one decision for the dataset,
    from every record when the schema has been inferred in this session, else from the
    first :data:`~browser_app.view.BOX_SAMPLE` records."""
    got = state.schema_result(repr(src.key))
    if got is not None and not got.schema.get("sampled"):
        decisions = [d.get("normalized") for d in got.schema.get("detection", {}).values()]
        if decisions:
            return view.BoxScale(bool(decisions[0]), int(got.schema["records"]), False)
    return _box_scale(src.key, view.BOX_SAMPLE, src.dataset)


# -- the shared journal --------------------------------------------------------------------


def _alive(j: Journal) -> bool:
    """A cached journal stays valid while its dataset is open (the reader cache may have
    closed it), its files are unchanged and its own file reads (once a damaged line is met,
    it is opened again, which fails and offers to set it aside: no restart needed)."""
    return j.damaged is None and _unchanged(j.source)


def _release(j: Journal) -> None:
    j.close()


@st.cache_resource(max_entries=8, validate=_alive, on_release=_release, show_spinner=False)
def _open_journal(key: Key, _dataset: codec.TFRecordDataset) -> Journal:
    # The usual types come from the same files (the key): not part of the key themselves,
    # which would hash every feature name on every call.
    try:
        feats, lists = view.usual_types(_summary(key, 200, _dataset))
    except (AppError, CodecError):
        feats, lists = {}, {}
    return Journal(_dataset, known_types=feats, known_list_types=lists)


def open_journal(src: Source) -> Journal:
    """The edit journal of ``src``, shared by every page and session. Raises
    :class:`~browser_app.errors.JournalMismatchError` when it was made on another version of
    the files, :class:`~browser_app.errors.JournalError` or ``OSError`` when it cannot be
    read."""
    return _open_journal(src.key, src.dataset)


def shared_journal(src: Source) -> Journal | None:
    """The journal of ``src``, or None when it cannot be opened (the Edit view and the Edit
    pages explain why; see :mod:`browser_app.ui.widgets.journal`)."""
    try:
        return open_journal(src)
    except (JournalError, OSError):
        return None


def forget_journals() -> None:
    """Drop every shared journal (after one was set aside)."""
    _open_journal.clear()


# -- selections: the order the views page through -----------------------------------------


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
def _matches(key: Key, expression: str, _ds: codec.TFRecordDataset) -> list[int]:
    return list(run_filter(_ds, expression).matches)


def finding_records(src: Source, arg: str) -> tuple[list[int], int] | None:
    """The records of the schema finding ``check:feature`` (the first ones when the schema
    keeps fewer than it counts) and its count; None until the schema is inferred."""
    got = state.schema_result(repr(src.key))
    if got is None:
        return None
    check, _, feature = arg.partition(":")
    for f in findings(got.schema):
        if f.check == check and f.feature == feature:
            return list(f.records), f.count
    return [], 0


def marks(src: Source) -> dict[int, str]:
    """Review status by record number (records of the file; new records are left out)."""
    j = shared_journal(src)
    if j is None:
        return {}
    return {r: m.status for r, m in j.marks().items() if isinstance(r, int)}


def order(src: Source, sel: Selection | None = None) -> np.ndarray | None:
    """The records the current selection (or ``sel``) shows, in its order; None for the whole
    dataset in file order (views then page through the file itself, skipped regions in
    place). Raises :class:`codec.filters.FilterSyntaxError` for a filter that cannot run."""
    sel = state.selection() if sel is None else sel
    if sel.is_all:
        return None
    base: list[int] | None = None
    if sel.base == "filter":
        base = _matches(src.key, sel.arg, src.dataset)
    elif sel.base == "finding":
        got = finding_records(src, sel.arg)
        base = got[0] if got is not None else []
    keys = None
    if sel.sort.startswith("feature:"):
        keys = _sort_keys(src.key, sel.sort.removeprefix("feature:"), src.dataset)
    return resolve(sel, facts(src), marks=marks(src), base_records=base, sort_keys=keys)


def page_records(src: Source, start: int, stop: int) -> list[int] | None:
    """The record numbers at positions ``start..stop`` of the current selection; None when
    the selection is the whole dataset in file order (positions are record numbers)."""
    got = order(src)
    return None if got is None else [int(r) for r in got[max(0, start) : stop]]


def neighbours(src: Source, record: int) -> tuple[int | None, int | None]:
    """The records before and after ``record`` in the current selection's order (in the
    file when there is none); None at either end. A record the selection no longer holds
    (just marked, in "unreviewed") has the neighbours of the place it had."""
    got = order(src)
    if got is None:
        ds = src.dataset
        last = ds.indexed - 1 if ds.index_complete else None
        return (record - 1 if record > 0 else None), (
            None if last is not None and record >= last else record + 1
        )
    return between(got, record)


def record_at(src: Source, position: int) -> int:
    """The record at ``position`` of the current selection (clamped to it; the record number
    itself when the selection is the whole file): where a page starting there begins."""
    got = order(src)
    if got is None:
        return max(0, position)
    return int(got[min(max(position, 0), len(got) - 1)]) if len(got) else 0


def _span(src: Source, start: int, stop: int) -> Span:
    records = page_records(src, start, stop)
    return ("range", start, stop) if records is None else tuple(records)


def _items(pages: _Pages, span: Span) -> list[view.PageItem]:
    """The page's slots: a range of the file (skipped regions in place), or the given
    records one by one (each with the new records placed after it)."""
    if span and span[0] == "range":
        return list(pages.page(int(span[1]), int(span[2])))
    out: list[view.PageItem] = []
    for r in span:
        out.extend(s for s in pages.page(int(r), int(r) + 1) if _index(s) is not None)
    return out


def _index(item: view.PageItem) -> int | None:
    slot = getattr(item, "slot", item)
    return getattr(slot, "index", None)


# -- pages of records, with the pending edits applied --------------------------------------


def _fingerprint(j: Journal, span: Span) -> Fingerprint:
    """What a page with pending edits depends on: the pending change ids of its records (and
    of new records placed among them)."""
    if span and span[0] == "range":
        lo, hi = int(span[1]), int(span[2])
        inside: Callable[[int], bool] = lambda root: lo <= root < hi  # noqa: E731
    else:
        members = set(span)
        inside = members.__contains__
    out = []
    for r in j.edited_records():
        root = j.anchor(r)
        if root is not None and inside(root):
            out.append((r, tuple(c.id for c in j.changes_for(r))))
    return tuple(out)


class _Pages(Protocol):
    """What a page of records is read from: the dataset, or the journal (edits applied)."""

    def page(self, start: int, stop: int) -> Sequence[view.PageItem]: ...


def _with_edits(src: Source, span: Span, build: Callable[[Fingerprint, _Pages], _T]) -> _T:
    """``build(fingerprint, pages)`` for the records of ``span``: from the journal when
    changes are pending on them, else (or when the edits cannot be applied: the page is then
    shown as the file has it) from the dataset with an empty fingerprint."""
    j = shared_journal(src)
    if j is not None:
        try:
            fp = _fingerprint(j, span) if j.pending else ()
            if fp:
                return build(fp, j)
        except (AppError, CodecError):
            log.exception("applying the pending edits failed")
    return build((), src.dataset)


@st.cache_data(max_entries=64, show_spinner=False)
def _page(
    key: Key,
    span: Span,
    thumbs: int,
    boxes: bool,
    normalized: bool | None,
    fingerprint: Fingerprint,
    _pages: _Pages,
) -> view.PageView:
    return view.page_view(
        _items(_pages, span), thumb_size=thumbs, boxes=boxes, normalized=normalized
    )


def page_view(
    src: Source, start: int, stop: int, thumbs: int = 72, boxes: bool = True
) -> view.PageView:
    """The records page's table of the records at positions ``start..stop`` of the current
    selection (record numbers when it is the whole file) with the pending edits applied
    (cached per page). Rows of new records carry their anchor's number in ``view.records``
    (selecting one opens the anchor, whose editor offers the new record)."""
    normalized = box_scale(src).normalized if boxes else None
    span = _span(src, start, stop)
    return _with_edits(
        src, span, lambda fp, pages: _page(src.key, span, thumbs, boxes, normalized, fp, pages)
    )


@st.cache_data(max_entries=16, show_spinner=False)
def _gallery(
    key: Key,
    span: Span,
    size: int,
    boxes: bool,
    normalized: bool | None,
    fingerprint: Fingerprint,
    _pages: _Pages,
    hidden: frozenset[state.ClassKey] = frozenset(),
) -> list[view.GalleryItem]:
    return view.gallery_items(
        _items(_pages, span), size=size, boxes=boxes, normalized=normalized, hidden=hidden
    )


def gallery_items(
    src: Source,
    start: int,
    stop: int,
    size: int = 160,
    boxes: bool = True,
    *,
    records: Sequence[int] | None = None,
) -> list[view.GalleryItem]:
    """The gallery's tiles of the records at positions ``start..stop`` of the current
    selection (record numbers when it is the whole file) with the pending edits applied
    (edited pictures and labels, new records in place, deleted ones captioned as such); or
    of the given ``records``; without the boxes of the classes hidden on this source
    (:func:`state.hidden_classes`)."""
    normalized = box_scale(src).normalized if boxes else None
    hidden = state.hidden_classes(src.spec)
    span = _span(src, start, stop) if records is None else tuple(int(r) for r in records)
    return _with_edits(
        src,
        span,
        lambda fp, pages: _gallery(src.key, span, size, boxes, normalized, fp, pages, hidden),
    )


# -- a jump into the bytes -----------------------------------------------------------------

Spans = tuple[tuple[int, int], ...]
"""The ``(offset, length)`` of records found by a jump, in one file."""


def _landed_slots(f: codec.TFRecordFile, spans: Spans) -> list[codec.Slot]:
    """The records at ``spans`` of ``f`` as slots (numbered by their place: the numbers the
    person sees are written by :func:`landed_numbers`)."""
    slots = []
    for k, (off, n) in enumerate(spans):
        try:
            payload: bytes | None = f.read_at(off)
            problem = None
        except RemoteError:
            raise
        except (CodecError, IndexError) as exc:
            payload = None
            problem = codec.Problem(DATA_CRC, off, off, getattr(exc, "reason", str(exc)), f.path)
        slots.append(codec.Slot(k, f.path, off, n, payload, problem))
    return slots


@st.cache_data(max_entries=16, show_spinner=False)
def _landed_page(
    key: Key,
    file: int,
    spans: Spans,
    thumbs: int,
    boxes: bool,
    normalized: bool | None,
    _ds: codec.TFRecordDataset,
) -> view.PageView:
    slots = _landed_slots(_ds.files[file], spans)
    return view.page_view(slots, thumb_size=thumbs, boxes=boxes, normalized=normalized)


def landed_page(
    src: Source, file: int, spans: Spans, thumbs: int = 72, boxes: bool = True
) -> view.PageView:
    """The records table of the records at ``spans`` of file ``file`` (found by a jump),
    cached per source identity."""
    normalized = box_scale(src).normalized if boxes else None
    return _landed_page(src.key, file, spans, thumbs, boxes, normalized, src.dataset)


@st.cache_data(max_entries=16, show_spinner=False)
def _landed_tiles(
    key: Key,
    file: int,
    spans: Spans,
    size: int,
    boxes: bool,
    normalized: bool | None,
    hidden: frozenset[state.ClassKey],
    _ds: codec.TFRecordDataset,
) -> list[view.GalleryItem]:
    slots = _landed_slots(_ds.files[file], spans)
    return view.gallery_items(slots, size=size, boxes=boxes, normalized=normalized, hidden=hidden)


def landed_tiles(
    src: Source, file: int, spans: Spans, size: int = 160, boxes: bool = True
) -> list[view.GalleryItem]:
    """The gallery tiles of the records at ``spans`` of file ``file`` (found by a jump)."""
    normalized = box_scale(src).normalized if boxes else None
    hidden = state.hidden_classes(src.spec)
    return _landed_tiles(src.key, file, spans, size, boxes, normalized, hidden, src.dataset)


def landed_numbers(
    src: Source, file: int, spans: Spans, estimate: int | None
) -> list[view.LandedNumber]:
    """The numbers of the records at ``spans`` of file ``file``, the first estimated as
    ``estimate``: exact where the index has reached them (and every file before is
    indexed), "inside a record" where it reached their byte and found no record there."""
    ds = src.dataset
    f = ds.files[file]
    before_done = all(g.index_complete for g in ds.files[:file])
    reached = f.size if f.index_complete else int(f.index_progress * f.size)
    out = []
    for k, (off, _n) in enumerate(spans):
        guess = None if estimate is None else estimate + k
        local = f.known_number(off)
        if local is not None and before_done:
            out.append(view.LandedNumber(ds.global_index(file, local), guess))
        elif local is None and off < reached:
            out.append(view.LandedNumber(None, guess, inside=True))
        else:
            out.append(view.LandedNumber(None, guess))
    return out
