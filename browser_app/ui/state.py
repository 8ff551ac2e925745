"""Session state and query parameters: the only module that reads or writes either.

What a person would bookmark lives in the URL as plain strings (``?file=<path relative to the
root>&record=<N>``, ``&at=<percent>`` for a jump into the bytes, ``&anon=1`` for anonymous
access to a public bucket when the app was not started that way); everything else lives in
``st.session_state`` under keys starting with ``tfb:``. Other modules never touch
``st.session_state`` or ``st.query_params`` directly: they call the helpers here: typed
accessors for what several modules share (the open source, the position, the filter's result
that the export reads, the last export, the inferred schema, the edit revision), and
:func:`get`/:func:`put` and :func:`widget_key` for a widget's own values, which keeps the key
space in one place.

Nothing is ever unpickled from a URL: query parameters are parsed as text and integers. A
remote spec goes into the URL only as :func:`codec.locations.shown` writes it: a signed URL's
query string (its signature) stays in this session's memory and never reaches the address
bar; a link holding such a spec says so when opened (:data:`SIGNED_MARK`).
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

import streamlit as st

from browser_app.paths import relative_inside
from browser_app.selection import Selection
from browser_app.view import ExportOutcome, SchemaResult
from codec.errors import ExecutorError
from codec.jobs.spec import DEFAULT as DEFAULT_EXECUTOR
from codec.jobs.spec import ExecutorSpec, parse_executor
from codec.labelmap import LabelMap
from codec.locations import is_url, shown

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "FILTER_SELECTION",
    "PAGE_SIZES",
    "SIGNED_MARK",
    "UPLOAD_PREFIX",
    "AppArgs",
    "FilterSelection",
    "FlashKind",
    "TableColumns",
    "add_upload",
    "anon",
    "app_args",
    "bump_edit_revision",
    "clear_source",
    "edit_revision",
    "export_outcome",
    "filter_selection",
    "flash",
    "forget_recent",
    "get",
    "init",
    "is_upload",
    "label_map",
    "landing",
    "link_spec",
    "page_size",
    "page_start",
    "pop_flashes",
    "put",
    "recent",
    "record",
    "reset_widget",
    "review_id_feature",
    "schema_result",
    "selection",
    "set_anon",
    "set_export_outcome",
    "set_filter_selection",
    "set_label_map",
    "set_landing",
    "set_page_size",
    "set_record",
    "set_review_id_feature",
    "set_schema_result",
    "set_selection",
    "set_show_boxes",
    "set_source",
    "set_table_columns",
    "set_widget_value",
    "show_boxes",
    "source_spec",
    "table_columns",
    "upload_path",
    "widget_key",
    "widget_value",
]

PAGE_SIZES = (10, 25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 25
UPLOAD_PREFIX = "upload:"
_RECENT_MAX = 8

# Session keys. Widget keys are made by widget_key(); values of other pages by get()/put().
_INIT = "tfb:init"
_SOURCE = "tfb:source"
_RECORD = "tfb:record"
_PAGE_SIZE = "tfb:page_size"
_RECENT = "tfb:recent"
_BOXES = "tfb:boxes"
_UPLOADS = "tfb:uploads"
_UPLOAD_FILES = "tfb:upload_files"
_FLASH = "tfb:flash"
_SELECTION = "tfb:selection"
_ANON = "tfb:anon"
_LANDING = "tfb:landing"

# Values several modules share (under tfb:x:, as get()/put() keep them).
FILTER_SELECTION = "filter:selection"
_EXPORT_REPORT = "export:report"
_EDIT_REVISION = "edit:rev"

# Query parameter names.
Q_FILE = "file"
Q_RECORD = "record"
Q_SIZE = "size"
Q_SELECTION = "sel"
Q_FACET = "facet"
Q_SORT = "sort"
Q_AT = "at"
Q_ANON = "anon"
_SELECTION_PARAMS = (Q_SELECTION, Q_FACET, Q_SORT)

SIGNED_MARK = "?…"
"""How :func:`codec.locations.shown` writes a URL's query string: a spec in a link that
holds it was a signed URL, whose signature links never keep."""


@dataclass(frozen=True)
class AppArgs:
    """What the launcher passed after ``--``: the root (a folder, or a URL prefix), the paths
    to open first, whether remote objects are read anonymously (public buckets), and where
    dataset-wide jobs run (:class:`codec.jobs.ExecutorSpec`; by default every core) and how
    long to try to reach a Dask scheduler (seconds; None: the app's default)."""

    root: str
    paths: tuple[str, ...]
    anon: bool = False
    executor: ExecutorSpec = DEFAULT_EXECUTOR
    dask_timeout: float | None = None


def app_args(argv: Sequence[str] | None = None) -> AppArgs:
    """Parse ``--root ROOT [--anon] [--executor SPEC] [--dask-timeout S] [PATH...]`` from
    ``sys.argv`` (unknown arguments are ignored).

    The root defaults to the current directory; a URL root is kept as given (less a
    trailing ``/``)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", default=None)
    parser.add_argument("--anon", action="store_true")
    parser.add_argument("--executor", default=None)
    parser.add_argument("--dask-timeout", type=float, default=None)
    parser.add_argument("paths", nargs="*")
    args, _ = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if args.root and is_url(args.root):
        root = args.root.rstrip("/") if not args.root.endswith("://") else args.root
    else:
        root = os.path.realpath(args.root or os.getcwd())
    try:
        executor = parse_executor(args.executor)
    except ExecutorError:  # the launcher refuses it first: only a hand-made command has one
        executor = DEFAULT_EXECUTOR
    timeout = args.dask_timeout if args.dask_timeout and args.dask_timeout > 0 else None
    return AppArgs(
        root=root,
        paths=tuple(args.paths),
        anon=bool(args.anon),
        executor=executor,
        dask_timeout=timeout,
    )


# -- generic helpers for every page ------------------------------------------------------


def widget_key(name: str) -> str:
    """The session key for a widget called ``name`` (``tfb:w:<name>``)."""
    return f"tfb:w:{name}"


def get(name: str, default: Any = None) -> Any:
    """A page's own session value ``name`` (``tfb:x:<name>``)."""
    return st.session_state.get(f"tfb:x:{name}", default)


def put(name: str, value: Any) -> None:
    """Store a page's own session value ``name``."""
    st.session_state[f"tfb:x:{name}"] = value


def widget_value(name: str, default: Any = None) -> Any:
    """The current value of the widget made with ``key=widget_key(name)``."""
    return st.session_state.get(widget_key(name), default)


def set_widget_value(name: str, value: Any) -> None:
    """Set a widget's value before it is drawn (or from a callback)."""
    st.session_state[widget_key(name)] = value


def reset_widget(name: str) -> None:
    """Forget a widget's value, so it starts again from its default when next drawn. Use this,
    not :func:`set_widget_value`, for a widget that always has a default (``st.pagination``):
    Streamlit logs a warning with a stack trace when such a widget's value is also set."""
    st.session_state.pop(widget_key(name), None)


FlashKind = Literal["error", "warning", "info", "success"]


def flash(message: str, kind: FlashKind = "warning") -> None:
    """Queue a message to show on the next run (``kind``: error, warning, info, success).
    It is plain text (shown escaped): pass file names and values as they are."""
    st.session_state.setdefault(_FLASH, []).append((kind, message))


def pop_flashes() -> list[tuple[FlashKind, str]]:
    """The queued messages, oldest first; the queue is emptied."""
    return list(st.session_state.pop(_FLASH, []))


# -- start of a run ----------------------------------------------------------------------


def _int_param(name: str) -> int | None:
    raw = st.query_params.get(name)
    if raw is None:
        return None
    try:
        return int(str(raw).strip())
    except ValueError:
        flash(f"The link's {name}={raw!r} is not a number; it was ignored.")
        return None


def init() -> None:
    """Call first in every run. On a session's first run, adopt the URL (``file``,
    ``record``, ``size``) or else the first path given on the command line."""
    ss = st.session_state
    if ss.get(_INIT):
        _publish()
        return
    ss[_INIT] = True
    ss.setdefault(_RECENT, [])
    ss.setdefault(_BOXES, True)
    ss.setdefault(_UPLOADS, {})
    ss[_ANON] = _anon_param()
    ss[_LANDING] = _at_param()
    size = _int_param(Q_SIZE)
    ss[_PAGE_SIZE] = size if size in PAGE_SIZES else DEFAULT_PAGE_SIZE
    spec = st.query_params.get(Q_FILE)
    rec = _int_param(Q_RECORD)
    if spec and SIGNED_MARK in str(spec):
        flash(
            f"The link named {spec}: a signed URL. The signed part of a URL (its query string)"
            " is never kept in links, so it cannot be opened from one: paste the whole signed"
            " URL into the path box to open it again."
        )
        spec = None
        ss[_LANDING] = None
    if spec:
        ss[_SOURCE] = str(spec)
        ss[_RECORD] = max(0, rec or 0)
        _remember(str(spec))
        ss[_SELECTION] = _selection_param()
    else:
        args = app_args()
        if args.paths:
            ss[_SOURCE] = _relative(args.root, args.paths[0])
            ss[_RECORD] = max(0, rec or 0)
            for p in reversed(args.paths):
                _remember(_relative(args.root, p))
        else:
            ss[_SOURCE] = None
            ss[_RECORD] = 0
    _publish()


def _anon_param() -> bool:
    """Anonymous access as the link asks (``anon=1`` / ``anon=0``), else as started."""
    raw = str(st.query_params.get(Q_ANON) or "").strip().lower()
    if raw in ("1", "true", "yes"):
        return True
    if raw in ("0", "false", "no"):
        return False
    return app_args().anon


def _at_param() -> float | None:
    """The link's jump into the bytes (``at=50``: 50 %), or None."""
    raw = st.query_params.get(Q_AT)
    if raw is None:
        return None
    try:
        value = float(str(raw).strip().rstrip("%"))
    except ValueError:
        value = float("nan")
    if not 0.0 <= value <= 100.0:  # NaN fails this too
        flash(f"The link's {Q_AT}={raw!r} is not a percentage from 0 to 100; it was ignored.")
        return None
    return value


def _selection_param() -> Selection:
    """The selection the URL describes (``sel``, ``facet``, ``sort``); parts not understood are
    left out, with a message."""
    qp = st.query_params
    sel, problems = Selection.from_params(qp.get(Q_SELECTION), qp.get_all(Q_FACET), qp.get(Q_SORT))
    if problems:
        what = ", ".join(problems)
        flash(f"The link's {what} is not a selection this app knows; it was ignored.")
    return sel


def _relative(root: str, path: str) -> str:
    """A path given on the command line as it goes into the URL: relative to the root when it
    lies inside (else as given, for the refusal to name it)."""
    rel = relative_inside(root, path)
    return path if rel is None else rel


def _publish() -> None:
    """Write the bookmarkable state into the URL (uploads are never put in a URL)."""
    ss = st.session_state
    spec = ss.get(_SOURCE)
    want: dict[str, list[str]] = {}
    if spec and not is_upload(spec):
        want[Q_FILE] = [link_spec(spec)]
        want[Q_RECORD] = [str(ss.get(_RECORD, 0))]
        at = ss.get(_LANDING)
        if at is not None:
            want[Q_AT] = [f"{at:g}"]
        if bool(ss.get(_ANON)) != app_args().anon:
            want[Q_ANON] = ["1" if ss.get(_ANON) else "0"]
        if ss.get(_PAGE_SIZE, DEFAULT_PAGE_SIZE) != DEFAULT_PAGE_SIZE:
            want[Q_SIZE] = [str(ss[_PAGE_SIZE])]
        want.update(selection().to_params())
    for name in (Q_FILE, Q_RECORD, Q_SIZE, Q_AT, Q_ANON, *_SELECTION_PARAMS):
        if name in want:
            if st.query_params.get_all(name) != want[name]:
                st.query_params[name] = want[name] if len(want[name]) > 1 else want[name][0]
        elif name in st.query_params:
            del st.query_params[name]


# -- the open source ---------------------------------------------------------------------


def source_spec() -> str | None:
    """What is open: a path or pattern relative to the root, ``upload:<name>``, or None."""
    value = st.session_state.get(_SOURCE)
    return str(value) if value else None


def link_spec(spec: str) -> str:
    """``spec`` as it may go into a link or be shown: a URL without credentials or query
    string (:func:`codec.locations.shown`); anything else as it is."""
    return shown(spec) if is_url(spec) else spec


def set_source(spec: str, record_no: int = 0) -> None:
    """Open ``spec`` (path, glob or shard pattern relative to the root) at ``record_no``."""
    ss = st.session_state
    if ss.get(_SOURCE) != spec:
        ss[_SELECTION] = Selection()  # a selection belongs to the dataset it was made on
    ss[_SOURCE] = spec
    ss[_RECORD] = max(0, int(record_no))
    ss[_LANDING] = None
    _remember(spec)
    _publish()


def clear_source() -> None:
    """Nothing is open any more."""
    st.session_state[_SOURCE] = None
    st.session_state[_RECORD] = 0
    st.session_state[_SELECTION] = Selection()
    st.session_state[_LANDING] = None
    _publish()


def _remember(spec: str) -> None:
    items: list[str] = st.session_state.setdefault(_RECENT, [])
    if spec in items:
        items.remove(spec)
    items.insert(0, spec)
    del items[_RECENT_MAX:]


def recent() -> list[str]:
    """Recently opened specs, newest first."""
    return list(st.session_state.get(_RECENT, []))


def forget_recent(spec: str) -> None:
    """Drop ``spec`` from the recent list (it could not be opened)."""
    items: list[str] = st.session_state.get(_RECENT, [])
    if spec in items:
        items.remove(spec)


# -- uploads -----------------------------------------------------------------------------


def is_upload(spec: str | None) -> bool:
    """Whether ``spec`` names an upload of this session (never put in a URL)."""
    return bool(spec) and str(spec).startswith(UPLOAD_PREFIX)


class _SessionUploads:
    """The files uploaded in one session. When Streamlit lets go of the session's state (it
    keeps it a little while after the browser goes away, for a reconnect, then drops it),
    this object goes with it and ``on_end`` is called with the files; also when the server
    stops. Nothing else marks the end of a session."""

    def __init__(self, on_end: Callable[[list[str]], object]) -> None:
        self.paths: list[str] = []
        weakref.finalize(self, on_end, self.paths)


def add_upload(
    name: str, path: str, on_end: Callable[[list[str]], object] | None = None
) -> tuple[str, str | None]:
    """Register an uploaded file stored at ``path`` (a private file) under ``name`` and
    return its spec and the file it replaces (an earlier upload of the same name), if any.
    Only files registered here in this session can be opened as uploads. ``on_end`` is
    called with every file of the session when the session's state is dropped."""
    spec = f"{UPLOAD_PREFIX}{name}"
    uploads = st.session_state.setdefault(_UPLOADS, {})
    replaced = uploads.get(spec)
    uploads[spec] = path
    if on_end is not None:
        files = st.session_state.get(_UPLOAD_FILES)
        if not isinstance(files, _SessionUploads):
            files = st.session_state[_UPLOAD_FILES] = _SessionUploads(on_end)
        files.paths.append(path)
    return spec, (str(replaced) if replaced and replaced != path else None)


def upload_path(spec: str) -> str | None:
    """The temporary file behind an upload spec of this session, else None."""
    value = st.session_state.get(_UPLOADS, {}).get(spec)
    return str(value) if value else None


# -- what the views show -------------------------------------------------------------------


def selection() -> Selection:
    """The current selection (the whole dataset in file order unless narrowed or sorted);
    the records table, the gallery and the review buttons page through it."""
    value = st.session_state.get(_SELECTION)
    return value if isinstance(value, Selection) else Selection()


def set_selection(value: Selection, record_no: int | None = None) -> None:
    """Make ``value`` the current selection (and ``record_no`` the current record, when
    given); the URL follows."""
    st.session_state[_SELECTION] = value
    if record_no is not None:
        st.session_state[_RECORD] = max(0, int(record_no))
    _publish()


# -- position ----------------------------------------------------------------------------


def record() -> int:
    """The current record (global number); it also decides the page shown."""
    return int(st.session_state.get(_RECORD, 0))


def set_record(n: int) -> None:
    """Make record ``n`` the current one (the page follows; a jump into the bytes is left)."""
    st.session_state[_RECORD] = max(0, int(n))
    st.session_state[_LANDING] = None
    _publish()


def landing() -> float | None:
    """Where the views jumped into the bytes (a percentage, 0 to 100), or None: they then
    show numbered pages around the current record."""
    value = st.session_state.get(_LANDING)
    return float(value) if isinstance(value, (int, float)) else None


def set_landing(percent: float | None) -> None:
    """Jump to ``percent`` % of the dataset's bytes (None: back to numbered pages)."""
    st.session_state[_LANDING] = None if percent is None else min(100.0, max(0.0, percent))
    _publish()


def anon() -> bool:
    """Whether remote objects are read without credentials (a public bucket)."""
    return bool(st.session_state.get(_ANON, app_args().anon))


def set_anon(value: bool) -> None:
    """Read remote objects anonymously (or with credentials again); the URL follows."""
    st.session_state[_ANON] = bool(value)
    _publish()


def page_size() -> int:
    """Records per page."""
    value = int(st.session_state.get(_PAGE_SIZE, DEFAULT_PAGE_SIZE))
    return value if value > 0 else DEFAULT_PAGE_SIZE


def set_page_size(n: int) -> None:
    """Change the page size, staying on the page that holds the current record."""
    st.session_state[_PAGE_SIZE] = int(n) if int(n) in PAGE_SIZES else DEFAULT_PAGE_SIZE
    _publish()


def page_start(total: int | None = None) -> int:
    """First record of the page holding the current record (clamped to ``total``)."""
    size = page_size()
    rec = record()
    if total is not None and total > 0:
        rec = min(rec, total - 1)
    return (rec // size) * size


def show_boxes() -> bool:
    """Whether pictures are drawn with their Object Detection boxes."""
    return bool(st.session_state.get(_BOXES, True))


def set_show_boxes(value: bool) -> None:
    """Turn the boxes on or off, on every page."""
    st.session_state[_BOXES] = bool(value)


# -- what pages hand to each other ---------------------------------------------------------


class _FilterSelectionBase(TypedDict):
    spec: str
    key: str
    expression: str
    records: list[int]
    complete: bool


class FilterSelection(_FilterSelectionBase, total=False):
    """The filter's last result: the source ``spec`` and identity ``key`` (a repr) it was run
    on, the ``expression``, the matching ``records`` (the first ones when not ``complete``),
    and ``for_export`` while the Export page has yet to pick it up."""

    for_export: bool


def filter_selection(source_key: str) -> FilterSelection | None:
    """The filter's last result of this session, when it was made on the source whose
    identity has the repr ``source_key``; else None."""
    value = get(FILTER_SELECTION)
    if not isinstance(value, dict) or value.get("key") != source_key:
        return None
    if not isinstance(value.get("records"), list):
        return None
    return cast(FilterSelection, value)


def set_filter_selection(value: FilterSelection) -> None:
    put(FILTER_SELECTION, value)


def export_outcome() -> ExportOutcome | None:
    """What the last export of this session did, or None."""
    value = get(_EXPORT_REPORT)
    return value if isinstance(value, ExportOutcome) else None


def set_export_outcome(value: ExportOutcome | None) -> None:
    put(_EXPORT_REPORT, value)


def schema_result(source_key: str) -> SchemaResult | None:
    """The schema inferred in this session for the source whose identity has the repr
    ``source_key`` (the Schema and Statistics pages share it), or None."""
    value = get(f"schema:{source_key}")
    return value if isinstance(value, SchemaResult) else None


def set_schema_result(source_key: str, value: SchemaResult) -> None:
    put(f"schema:{source_key}", value)


def label_map(spec: str) -> tuple[str, LabelMap] | None:
    """The label map chosen for the source ``spec`` in this session: ``(where it came from,
    the map)``, or None."""
    value = get(f"label_map:{spec}")
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], LabelMap):
        return cast(tuple[str, LabelMap], value)
    return None


def set_label_map(spec: str, name: str | None, value: LabelMap | None) -> None:
    """Use ``value`` (read from ``name``) as the label map of ``spec``; None forgets it."""
    put(f"label_map:{spec}", None if value is None or name is None else (name, value))


def review_id_feature(spec: str) -> str | None:
    """The feature the review report identifies records of the source ``spec`` by, as picked
    in this session; None for the usual choice (``image/source_id``, else
    ``image/filename``)."""
    value = get(f"review:id:{spec}")
    return value if isinstance(value, str) and value else None


def set_review_id_feature(spec: str, name: str | None) -> None:
    """Identify the records of ``spec`` in the review report by ``name`` (None: the usual
    choice)."""
    put(f"review:id:{spec}", name or None)


class TableColumns(TypedDict):
    """The records table's columns chosen for a dataset: the ``shown`` ones in order (None:
    all of them) and the ``pinned`` ones (kept in view on the left)."""

    shown: list[str] | None
    pinned: list[str]


def table_columns(source_key: str) -> TableColumns | None:
    """The records table's columns chosen in this session for the dataset whose identity has
    the repr ``source_key``, or None."""
    value = get(f"columns:{source_key}")
    return cast(TableColumns, value) if isinstance(value, dict) else None


def set_table_columns(source_key: str, value: TableColumns) -> None:
    put(f"columns:{source_key}", value)


def edit_revision() -> int:
    """A counter bumped after every edit of this session (the editor's widget keys include
    it, so its tables and uploaders redraw with the saved values)."""
    return int(get(_EDIT_REVISION, 0))


def bump_edit_revision() -> None:
    put(_EDIT_REVISION, edit_revision() + 1)


# -- classes of boxes left out of the drawing, per source ------------------------------------

__all__ += ["hidden_classes", "set_class_shown", "show_all_classes"]

ClassKey = tuple[str | None, int | None]  # a class of boxes: (text, label)


def hidden_classes(spec: str) -> frozenset[ClassKey]:
    """The classes of boxes hidden on the source ``spec`` in this session (record view,
    full view and gallery)."""
    value = get(f"hidden_classes:{spec}")
    return value if isinstance(value, frozenset) else frozenset()


def set_class_shown(spec: str, key: ClassKey, shown: bool) -> None:
    """Show (or hide) the boxes of class ``key`` on the source ``spec``."""
    now = hidden_classes(spec)
    put(f"hidden_classes:{spec}", now - {key} if shown else now | {key})


def show_all_classes(spec: str) -> None:
    put(f"hidden_classes:{spec}", frozenset())


# -- where dataset-wide jobs run, and jobs cancelled ----------------------------------------

__all__ += [
    "executor",
    "executor_problem",
    "job_cancelled",
    "session_key",
    "set_executor",
    "set_executor_problem",
    "set_job_cancelled",
]

_EXECUTOR = "tfb:executor"
_EXECUTOR_PROBLEM = "tfb:executor_problem"
_SESSION = "tfb:session"


def session_key() -> str:
    """This session's own name (random, made on first use): which sessions use what they
    share, a Dask client, is told by it."""
    key = st.session_state.get(_SESSION)
    if not isinstance(key, str):
        key = uuid.uuid4().hex
        st.session_state[_SESSION] = key
    return key


def executor() -> ExecutorSpec:
    """Where this session's dataset-wide jobs run, as chosen in the sidebar, else as the app
    was started (``--executor`` / ``--dask``; by default a process per core)."""
    value = st.session_state.get(_EXECUTOR)
    return value if isinstance(value, ExecutorSpec) else app_args().executor


def set_executor(spec: ExecutorSpec) -> None:
    """Run this session's jobs on ``spec`` from now on."""
    st.session_state[_EXECUTOR] = spec
    st.session_state.pop(_EXECUTOR_PROBLEM, None)


def executor_problem() -> str | None:
    """Why the last executor asked for could not be used (plain text), or None."""
    value = st.session_state.get(_EXECUTOR_PROBLEM)
    return str(value) if value else None


def set_executor_problem(text: str | None) -> None:
    st.session_state[_EXECUTOR_PROBLEM] = text or None


def job_cancelled(key: str) -> bool:
    """Whether the job ``key`` was cancelled in this session (it then waits to be asked
    again instead of starting by itself)."""
    return bool(get(f"job:cancelled:{key}"))


def set_job_cancelled(key: str, value: bool = True) -> None:
    """Mark the job ``key`` cancelled (from its Cancel button's callback), or clear the mark."""
    put(f"job:cancelled:{key}", True if value else None)


# -- the pages of this session's router ---------------------------------------------------

__all__ += ["page_table", "set_page_table"]

_PAGE_TABLE = "tfb:pages"


def page_table() -> dict[str, Any]:
    """The pages this session's router made in its last run (``url_path -> st.Page``): the
    targets of links between pages. Empty where no router runs (a page drawn alone)."""
    value = st.session_state.get(_PAGE_TABLE)
    return dict(value) if isinstance(value, dict) else {}


def set_page_table(pages: Mapping[str, Any]) -> None:
    """Called by the router each run: this session's pages, never another session's."""
    st.session_state[_PAGE_TABLE] = dict(pages)
