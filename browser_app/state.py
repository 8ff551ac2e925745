"""Session state and query parameters: the only module that reads or writes either.

What a person would bookmark lives in the URL as plain strings (``?file=<path relative to the
root>&record=<N>``); everything else lives in ``st.session_state`` under keys starting with
``tfb:``. Other modules never touch ``st.session_state`` or ``st.query_params`` directly: they
call the helpers here (pages added later use :func:`get`/:func:`put` and :func:`widget_key`
for their own values, which keeps the key space in one place).

Nothing is ever unpickled from a URL: query parameters are parsed as text and integers.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "PAGE_SIZES",
    "AppArgs",
    "add_upload",
    "app_args",
    "clear_source",
    "flash",
    "get",
    "init",
    "is_upload",
    "page_size",
    "page_start",
    "pop_flashes",
    "put",
    "recent",
    "record",
    "set_page_size",
    "set_record",
    "set_source",
    "show_boxes",
    "source_spec",
    "upload_path",
    "widget_key",
]

PAGE_SIZES = (10, 25, 50, 100)
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
_FLASH = "tfb:flash"

# Query parameter names.
Q_FILE = "file"
Q_RECORD = "record"
Q_SIZE = "size"


@dataclass(frozen=True)
class AppArgs:
    """What the launcher passed after ``--``: the root folder and the paths to open first."""

    root: str
    paths: tuple[str, ...]


def app_args(argv: Sequence[str] | None = None) -> AppArgs:
    """Parse ``--root ROOT [PATH...]`` from ``sys.argv`` (unknown arguments are ignored).

    The root defaults to the current directory."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", default=None)
    parser.add_argument("paths", nargs="*")
    args, _ = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    root = os.path.realpath(args.root or os.getcwd())
    return AppArgs(root=root, paths=tuple(args.paths))


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


def flash(message: str, kind: str = "warning") -> None:
    """Queue a message to show on the next run (``kind``: error, warning, info, success)."""
    st.session_state.setdefault(_FLASH, []).append((kind, message))


def pop_flashes() -> list[tuple[str, str]]:
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
    size = _int_param(Q_SIZE)
    ss[_PAGE_SIZE] = size if size in PAGE_SIZES else DEFAULT_PAGE_SIZE
    spec = st.query_params.get(Q_FILE)
    rec = _int_param(Q_RECORD)
    if spec:
        ss[_SOURCE] = str(spec)
        ss[_RECORD] = max(0, rec or 0)
        _remember(str(spec))
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


def _relative(root: str, path: str) -> str:
    real = os.path.realpath(path)
    try:
        if os.path.commonpath([real, root]) == root:
            return os.path.relpath(real, root).replace(os.sep, "/")
    except ValueError:
        pass
    return path


def _publish() -> None:
    """Write the bookmarkable state into the URL (uploads are never put in a URL)."""
    ss = st.session_state
    spec = ss.get(_SOURCE)
    want: dict[str, str] = {}
    if spec and not is_upload(spec):
        want[Q_FILE] = spec
        want[Q_RECORD] = str(ss.get(_RECORD, 0))
        if ss.get(_PAGE_SIZE, DEFAULT_PAGE_SIZE) != DEFAULT_PAGE_SIZE:
            want[Q_SIZE] = str(ss[_PAGE_SIZE])
    for name in (Q_FILE, Q_RECORD, Q_SIZE):
        if name in want:
            if st.query_params.get(name) != want[name]:
                st.query_params[name] = want[name]
        elif name in st.query_params:
            del st.query_params[name]


# -- the open source ---------------------------------------------------------------------


def source_spec() -> str | None:
    """What is open: a path or pattern relative to the root, ``upload:<name>``, or None."""
    value = st.session_state.get(_SOURCE)
    return str(value) if value else None


def set_source(spec: str, record_no: int = 0) -> None:
    """Open ``spec`` (path, glob or shard pattern relative to the root) at ``record_no``."""
    ss = st.session_state
    ss[_SOURCE] = spec
    ss[_RECORD] = max(0, int(record_no))
    _remember(spec)
    _publish()


def clear_source() -> None:
    st.session_state[_SOURCE] = None
    st.session_state[_RECORD] = 0
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
    items: list[str] = st.session_state.get(_RECENT, [])
    if spec in items:
        items.remove(spec)


# -- uploads -----------------------------------------------------------------------------


def is_upload(spec: str | None) -> bool:
    return bool(spec) and str(spec).startswith(UPLOAD_PREFIX)


def add_upload(name: str, path: str) -> str:
    """Register an uploaded file stored at ``path`` (a temporary file) and return its spec.
    Only files registered here in this session can be opened as uploads."""
    spec = f"{UPLOAD_PREFIX}{name}"
    st.session_state.setdefault(_UPLOADS, {})[spec] = path
    return spec


def upload_path(spec: str) -> str | None:
    """The temporary file behind an upload spec of this session, else None."""
    value = st.session_state.get(_UPLOADS, {}).get(spec)
    return str(value) if value else None


def upload_paths() -> dict[str, str]:
    return dict(st.session_state.get(_UPLOADS, {}))


# -- position ----------------------------------------------------------------------------


def record() -> int:
    """The current record (global number); it also decides the page shown."""
    return int(st.session_state.get(_RECORD, 0))


def set_record(n: int) -> None:
    st.session_state[_RECORD] = max(0, int(n))
    _publish()


def page_size() -> int:
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
    return bool(st.session_state.get(_BOXES, True))


def set_show_boxes(value: bool) -> None:
    st.session_state[_BOXES] = bool(value)
