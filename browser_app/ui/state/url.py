"""What a person would bookmark: the open source, the current record, the page size, the
selection, a jump into the bytes and anonymous access, kept in the session and written into
the URL at every change (``?file=<path relative to the root>&record=<N>``, ``&size=``,
``&sel=``/``&facet=``/``&sort=``, ``&at=<percent>``, ``&anon=1``, and the score threshold of
predictions, ``&score=0.3``, from :mod:`.layers`).

Nothing is ever unpickled from a URL: query parameters are parsed as text and integers. A
remote spec goes into the URL only as :func:`codec.locations.shown` writes it: a signed URL's
query string (its signature) stays in this session's memory and never reaches the address
bar; a link holding such a spec says so when opened (:data:`SIGNED_MARK`).
"""

from __future__ import annotations

import streamlit as st

from browser_app.paths import relative_inside
from browser_app.selection import Selection
from browser_app.ui.state import layers as _layers
from browser_app.ui.state.args import app_args
from browser_app.ui.state.layers import Q_SCORE, link_score, score_param
from browser_app.ui.state.store import flash
from browser_app.ui.state.uploads import is_upload
from codec.locations import is_url, shown

__all__ = [
    "DEFAULT_PAGE_SIZE",
    "PAGE_SIZES",
    "SIGNED_MARK",
    "anon",
    "apply_linked_selection",
    "clear_source",
    "drop_linked_selection",
    "forget_recent",
    "init",
    "landing",
    "link_spec",
    "linked_selection",
    "page_size",
    "page_start",
    "recent",
    "record",
    "selection",
    "set_anon",
    "set_landing",
    "set_page_size",
    "set_record",
    "set_score_threshold",
    "set_selection",
    "set_source",
    "source_spec",
]

PAGE_SIZES = (10, 25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 25
_RECENT_MAX = 8

# Session keys.
_INIT = "tfb:init"
_SOURCE = "tfb:source"
_RECORD = "tfb:record"
_PAGE_SIZE = "tfb:page_size"
_RECENT = "tfb:recent"
_SELECTION = "tfb:selection"
_LINKED = "tfb:linked_selection"  # a link's selection, waiting to be applied
_ANON = "tfb:anon"
_LANDING = "tfb:landing"

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
        link_score(str(spec))
        linked = _selection_param()
        # A link's selection reads every record (facts, a filter, sort keys): it waits for
        # the sidebar, which applies it at once for a dataset of a usual size and asks for
        # a larger or remote one, so a link alone never sets the server reading.
        ss[_SELECTION] = Selection()
        if linked.narrowed or linked.sort:
            ss[_LINKED] = linked
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
        linked = ss.get(_LINKED)
        shown = linked if isinstance(linked, Selection) else selection()
        want.update(shown.to_params())  # a link's selection stays in it until answered
        score = score_param(spec)
        if score:
            want[Q_SCORE] = score
    for name in (Q_FILE, Q_RECORD, Q_SIZE, Q_AT, Q_ANON, Q_SCORE, *_SELECTION_PARAMS):
        if name in want:
            if st.query_params.get_all(name) != want[name]:
                st.query_params[name] = want[name] if len(want[name]) > 1 else want[name][0]
        elif name in st.query_params:
            del st.query_params[name]


def set_score_threshold(spec: str, value: float) -> None:
    """Draw the predictions of ``spec`` scoring at least ``value``, and say so in the URL at
    once: the slider runs inside a fragment, whose run writes no URL otherwise, and a link
    copied right after moving it must carry the threshold."""
    _layers.set_score_threshold(spec, value)
    _publish()


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
        ss.pop(_LINKED, None)
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
    st.session_state.pop(_LINKED, None)
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


# -- what the views show, and where --------------------------------------------------------


def selection() -> Selection:
    """The current selection (the whole dataset in file order unless narrowed or sorted);
    the records table, the gallery and the review buttons page through it."""
    value = st.session_state.get(_SELECTION)
    return value if isinstance(value, Selection) else Selection()


def linked_selection() -> Selection | None:
    """The selection a link named, not applied yet (see :func:`init`), or None."""
    value = st.session_state.get(_LINKED)
    return value if isinstance(value, Selection) else None


def apply_linked_selection() -> None:
    """Make the link's selection the current one."""
    linked = st.session_state.pop(_LINKED, None)
    if isinstance(linked, Selection):
        st.session_state[_SELECTION] = linked
    _publish()


def drop_linked_selection() -> None:
    """Forget the link's selection (the whole dataset stays shown)."""
    st.session_state.pop(_LINKED, None)
    _publish()


def set_selection(value: Selection, record_no: int | None = None) -> None:
    """Make ``value`` the current selection (and ``record_no`` the current record, when
    given); the URL follows (and a link's selection waiting is forgotten)."""
    st.session_state.pop(_LINKED, None)
    st.session_state[_SELECTION] = value
    if record_no is not None:
        st.session_state[_RECORD] = max(0, int(record_no))
    _publish()


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
