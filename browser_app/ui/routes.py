"""The app's own HTTP routes, served beside Streamlit's by the ``st.App`` that
``streamlit_app.py`` makes (Streamlit 1.67's custom routes): today one, ``POST /tfb/mark``,
which writes a review mark into a source's journal at once, without a run of the script.

A key typed in the record view (P, F) waits for a run of the script before the review bar
can say the mark is saved (0.15–0.5 s); the marks route answers as soon as the journal holds
the line (a few ms). The element still hands its action to Python afterwards, so the page
(the review bar, the table's review column, the counts, the URL) follows on its next run —
and Python, asking :func:`saved_by_route`, does not write the mark a second time.

What the route may do is what a script run granted, nothing else (issue 24: a visitor must
not make the server do things):

- a request names a **grant** by its token, ``secrets.token_urlsafe`` made per session and
  source (:func:`browser_app.ui.state.mark_token`), which a run of that session registered
  here (:func:`grant`) with what it may mark: that source's journal (the object, never a
  path: nothing from the request is ever opened) and the records ``0 .. records - 1``;
- the grant ends with the session (Streamlit's runtime no longer has it active): its token
  is refused from then on and forgotten;
- the body is one small JSON object (at most :data:`MAX_BODY` bytes, ``Content-Type:
  application/json``, so no cross-site form can send it) with exactly the fields
  ``token``, ``client``, ``seq`` (the element's action), ``record`` and ``status``
  (``passed`` or ``flagged`` only);
- a request from a page of another origin (an ``Origin`` that is not the server's) is
  refused;
- anything else is answered 4xx with a message (JSON ``{"error": ...}``) and writes nothing.

Where the route is not served (an ``AppTest``, a server started on the bare script),
:func:`served` is False and the elements hand every mark to Python, as before.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from browser_app.errors import AppError
from codec.errors import CodecError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from browser_app.edits import Journal

__all__ = [
    "MARK_PATH",
    "MAX_BODY",
    "REGISTRY",
    "Grant",
    "Registry",
    "app_routes",
    "grant",
    "mark_endpoint",
    "saved_by_route",
    "served",
]

MARK_PATH = "/tfb/mark"
MAX_BODY = 1024  # bytes of a request's body (a mark is ~150)
MARKS = ("passed", "flagged")
MAX_CLIENT = 100  # characters of an element's name for itself (as its actions say)
MAX_GRANTS = 10_000  # grants kept at once (sessions × sources): the oldest go first
MAX_WRITTEN = 4_096  # marks remembered per grant, for Python to know them
WAIT_WRITING = 5.0  # seconds Python waits for a write of the route under way
_FIELDS = frozenset({"token", "client", "seq", "record", "status"})

_served = False


def served() -> bool:
    """Whether this process serves the app's routes (its server is the ``st.App`` of
    ``streamlit_app.py``)."""
    return _served


def _session_active(session: str) -> bool:
    """Whether Streamlit's runtime has the session ``session`` active (its tab connected)."""
    from streamlit.runtime import Runtime, exists

    return exists() and bool(Runtime.instance().is_active_session(session))


@dataclass
class Grant:
    """What a session may mark through the route: records ``0 .. records - 1`` of the
    source whose journal is ``journal``, as long as ``session`` is active. ``written``: the
    marks the route wrote, by the element's action (client, seq) — ``None`` while one is
    being written."""

    session: str
    journal: Journal
    records: int
    written: OrderedDict[tuple[str, int], tuple[int, str] | None] = field(
        default_factory=OrderedDict
    )
    done: threading.Condition = field(default_factory=threading.Condition)


class Registry:
    """The grants of this process, by token. ``alive(session)`` says whether a session is
    still there (Streamlit's runtime, in the app); a grant whose session is gone is
    refused and forgotten."""

    def __init__(self, alive: Callable[[str], bool] = _session_active) -> None:
        self._alive = alive
        self._grants: OrderedDict[str, Grant] = OrderedDict()
        self._lock = threading.Lock()

    def grant(self, token: str, session: str, journal: Journal, records: int) -> None:
        """Let ``token`` mark records ``0 .. records - 1`` of ``journal`` for ``session``
        (again: a run refreshes its grant, the journal and the records known now)."""
        with self._lock:
            old = self._grants.pop(token, None)
            if old is not None and old.session == session and old.journal is journal:
                old.records = records
                self._grants[token] = old
            else:
                self._grants[token] = Grant(session, journal, records)
            self._prune()

    def _prune(self) -> None:
        gone = [t for t, g in self._grants.items() if not self._alive(g.session)]
        for t in gone:
            del self._grants[t]
        while len(self._grants) > MAX_GRANTS:
            self._grants.popitem(last=False)

    def find(self, token: str) -> Grant | None:
        """The grant of ``token`` while its session is active; None otherwise (and a grant
        whose session ended is forgotten)."""
        with self._lock:
            g = self._grants.get(token)
            if g is None:
                return None
            if not self._alive(g.session):
                del self._grants[token]
                return None
            return g

    def __len__(self) -> int:
        with self._lock:
            return len(self._grants)

    def begin(self, g: Grant, key: tuple[str, int]) -> tuple[int, str] | bool | None:
        """Take the write of action ``key`` on: True when it is this caller's to write; the
        mark written when it was written already; None while another request writes it."""
        with g.done:
            if key in g.written:
                return g.written[key]
            g.written[key] = None
            while len(g.written) > MAX_WRITTEN:
                g.written.popitem(last=False)
            return True

    def end(self, g: Grant, key: tuple[str, int], mark: tuple[int, str] | None) -> None:
        """The write of ``key`` is over: ``mark`` written, or None when it failed (then the
        action is Python's to write)."""
        with g.done:
            if mark is None:
                g.written.pop(key, None)
            else:
                g.written[key] = mark
            g.done.notify_all()

    def saved(
        self, token: str, client: str, seq: int, record: object, status: str, wait: float = 0.0
    ) -> bool:
        """Whether the route wrote the action ``seq`` of the element ``client`` as the mark
        ``status`` on ``record`` (waiting up to ``wait`` seconds for a write under way)."""
        with self._lock:
            g = self._grants.get(token)
        if g is None:
            return False
        key = (client, seq)
        deadline = time.monotonic() + wait
        with g.done:
            while key in g.written and g.written[key] is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                g.done.wait(left)
            return g.written.get(key) == (record, status)


REGISTRY = Registry()


def grant(token: str, session: str, journal: Journal, records: int) -> None:
    """Register ``token`` in the process's registry (:meth:`Registry.grant`)."""
    REGISTRY.grant(token, session, journal, records)


def saved_by_route(token: str, client: str, seq: int, record: object, status: str) -> bool:
    """Whether the marks route wrote this action already (then Python must not write it
    again); waits for a write under way (:data:`WAIT_WRITING` at most)."""
    return REGISTRY.saved(token, client, seq, record, status, wait=WAIT_WRITING)


# -- the route ---------------------------------------------------------------------------------


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _same_origin(request: Request) -> bool:
    """Whether the request comes from a page of this server (or says no origin: not a
    browser's cross-site request)."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc == host


async def _body(request: Request) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise _Refused(413, f"the body must be at most {MAX_BODY} bytes")
    got = bytearray()
    async for chunk in request.stream():
        got += chunk
        if len(got) > MAX_BODY:
            raise _Refused(413, f"the body must be at most {MAX_BODY} bytes")
    return bytes(got)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read_mark(body: bytes) -> tuple[str, str, int, int, str]:
    """``(token, client, seq, record, status)`` from a request's body; :class:`_Refused`
    (400) when it is not exactly that."""
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise _Refused(400, "the body is not JSON") from None
    if not isinstance(obj, dict) or set(obj) != _FIELDS:
        raise _Refused(400, f"the body must hold exactly {', '.join(sorted(_FIELDS))}")
    token, client, status = obj["token"], obj["client"], obj["status"]
    seq, record = _count(obj["seq"]), _count(obj["record"])
    if not isinstance(token, str) or not 0 < len(token) <= 200:
        raise _Refused(400, "token: a string")
    if not isinstance(client, str) or not 0 < len(client) <= MAX_CLIENT:
        raise _Refused(400, f"client: a string of 1 to {MAX_CLIENT} characters")
    if seq is None or seq == 0:
        raise _Refused(400, "seq: a whole number from 1 on")
    if record is None:
        raise _Refused(400, "record: a record number (0 on)")
    if status not in MARKS:
        raise _Refused(400, f"status: {' or '.join(MARKS)}")
    return token, client, seq, record, status


async def _mark(request: Request, registry: Registry) -> tuple[int, dict[str, Any]]:
    from starlette.concurrency import run_in_threadpool

    # Imported on the first request: the server imports this module before Streamlit's
    # runtime exists, when its caches could not be made yet.
    from browser_app.ui import services

    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise _Refused(415, "the body must be application/json")
    if not _same_origin(request):
        raise _Refused(403, "a page of another origin may not mark records")
    token, client, seq, record, status = read_mark(await _body(request))
    g = registry.find(token)
    if g is None:
        raise _Refused(403, "unknown or expired token: reload the page")
    if record >= g.records:
        raise _Refused(422, f"record {record:,} is not a record of this source")
    key = (client, seq)
    took = registry.begin(g, key)
    if took is None:
        raise _Refused(409, "this action is being saved already")
    if took is not True:
        if took != (record, status):
            raise _Refused(409, "this action saved another mark")
        return 200, {"saved": True, "record": record, "status": status}
    written: tuple[int, str] | None = None
    try:
        if not services.journal_usable(g.journal):
            raise _Refused(409, "the pending edits changed: the page saves the mark")
        try:
            await run_in_threadpool(services.write_mark, g.journal, record, status)
        except (AppError, CodecError, OSError) as exc:
            raise _Refused(409, f"the mark was not saved: {exc}") from None
        written = (record, status)
    finally:
        registry.end(g, key, written)
    return 200, {"saved": True, "record": record, "status": status}


def mark_endpoint(registry: Registry = REGISTRY) -> Callable[[Request], Any]:
    """The endpoint of ``POST /tfb/mark`` over ``registry``."""
    from starlette.responses import JSONResponse

    async def endpoint(request: Request) -> Response:
        try:
            code, body = await _mark(request, registry)
        except _Refused as r:
            code, body = r.status, {"error": r.message}
        return JSONResponse(body, status_code=code, headers={"Cache-Control": "no-store"})

    return endpoint


def app_routes(registry: Registry = REGISTRY) -> list[BaseRoute]:
    """The routes the app's ``st.App`` serves beside Streamlit's; from now on this process
    serves them (:func:`served`)."""
    from starlette.routing import Route

    global _served
    _served = True
    return [Route(MARK_PATH, mark_endpoint(registry), methods=["POST"])]
