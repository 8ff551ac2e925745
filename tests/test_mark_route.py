"""The marks route (``POST /tfb/mark``, :mod:`browser_app.ui.routes`), driven through ASGI
as the server drives it, on a real journal: a mark is written only with a token a session
was granted, only on the granted records, only ``passed`` or ``flagged``, only from a small
JSON body of exactly its fields; the line is written once however often it is posted, and
Python, told the route wrote it, does not write it again; when the session ends the token
is refused and forgotten. Anything refused is a 4xx with a message and writes nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from browser_app.edits import Journal
from browser_app.sample_data import write_sample
from browser_app.ui import routes
from browser_app.ui.components import review_keys as keys

TOKEN = "t" * 43
RECORDS = 60  # in the sample's detection.tfrecord


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("data")
    write_sample(folder)
    return folder


@pytest.fixture
def journal(data: Path, tmp_path: Path) -> Iterator[Journal]:
    # A cache folder of its own: every test starts with an empty journal.
    j = Journal(str(data / "detection.tfrecord"), cache_dir=tmp_path / "cache")
    yield j
    j.close()


class Sessions:
    """Which sessions are active (the runtime's answer, in the app)."""

    def __init__(self) -> None:
        self.active = {"s1"}

    def __call__(self, session: str) -> bool:
        return session in self.active


@pytest.fixture
def sessions() -> Sessions:
    return Sessions()


@pytest.fixture
def registry(sessions: Sessions, journal: Journal) -> routes.Registry:
    r = routes.Registry(alive=sessions)
    r.grant(TOKEN, "s1", journal, RECORDS)
    return r


def _app(registry: routes.Registry) -> Starlette:
    # The route as app_routes makes it, without marking this process as serving it.
    return Starlette(
        routes=[Route(routes.MARK_PATH, routes.mark_endpoint(registry), methods=["POST"])]
    )


def call(
    app: Starlette,
    body: bytes | list[bytes],
    *,
    method: str = "POST",
    content_type: str | None = "application/json",
    length: bool = True,
    origin: str | None = None,
) -> tuple[int, dict[str, Any]]:
    """One request through ASGI (``body`` a list: sent in chunks, without a length)."""
    chunks = body if isinstance(body, list) else [body]
    headers = [(b"host", b"127.0.0.1:8501")]
    if content_type is not None:
        headers.append((b"content-type", content_type.encode()))
    if length and not isinstance(body, list):
        headers.append((b"content-length", str(len(body)).encode()))
    if origin is not None:
        headers.append((b"origin", origin.encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": routes.MARK_PATH,
        "raw_path": routes.MARK_PATH.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8501),
    }
    sent: list[dict[str, Any]] = []

    async def run() -> None:
        queue = [
            {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
            for i, c in enumerate(chunks)
        ]

        async def receive() -> dict[str, Any]:
            return queue.pop(0) if queue else {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)

    asyncio.run(run())
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    raw = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, (json.loads(raw) if raw.startswith(b"{") else {})


def mark(**fields: Any) -> bytes:
    body = {"token": TOKEN, "client": "c1", "seq": 1, "record": 5, "status": "passed"}
    body.update(fields)
    return json.dumps({k: v for k, v in body.items() if v is not ...}).encode()


def marks_in(j: Journal) -> list[tuple[object, str | None]]:
    lines = [json.loads(x) for x in j.path.read_text().splitlines() if x] if j.path.exists() else []
    return [(o["target"], o["status"]) for o in lines if o.get("type") == "mark"]


def test_a_granted_mark_is_written_once_and_python_does_not_write_it_again(
    registry: routes.Registry, journal: Journal
) -> None:
    app = _app(registry)
    assert call(app, mark()) == (200, {"saved": True, "record": 5, "status": "passed"})
    assert marks_in(journal) == [(5, "passed")]
    assert journal.marks()[5].status == "passed"
    # Posted again (a retry): answered, not written again.
    assert call(app, mark())[0] == 200
    assert marks_in(journal) == [(5, "passed")]
    # Python is told the route wrote that action, and only that one.
    assert registry.saved(TOKEN, "c1", 1, 5, "passed")
    assert not registry.saved(TOKEN, "c1", 1, 5, "flagged")
    assert not registry.saved(TOKEN, "c1", 2, 5, "passed")
    assert not registry.saved(TOKEN, "c2", 1, 5, "passed")

    def step(record: keys.Record, n: int) -> keys.Record:
        assert isinstance(record, int)
        return record + n

    def saved(client: str, seq: int, record: keys.Record, status: str) -> bool:
        return registry.saved(TOKEN, client, seq, record, status)

    value = {
        "client": "c1",
        "actions": [
            {"seq": 1, "kind": "mark", "record": 5, "status": "passed"},
            {"seq": 2, "kind": "move", "record": 5, "step": 1},
            {"seq": 3, "kind": "mark", "record": None, "status": "flagged"},
        ],
    }
    effects, memory = keys.handle(value, keys.Memory(), 5, step, saved)
    assert effects.saved == [(5, "passed")]  # written by the route
    assert effects.marks == [(6, "flagged")]  # Python's to write
    assert effects.record == 6 and memory == keys.Memory("c1", 3)


def test_a_mark_keeps_the_comment_the_record_has(
    registry: routes.Registry, journal: Journal
) -> None:
    journal.set_mark(7, "flagged", "blurry")
    assert call(_app(registry), mark(record=7))[0] == 200
    assert journal.marks()[7].status == "passed"
    assert journal.marks()[7].comment == "blurry"


@pytest.mark.parametrize(
    ("body", "code", "says"),
    [
        (mark(token="x" * 43), 403, "token"),
        (mark(token=...), 400, "exactly"),
        (mark(token=7), 400, "token"),
        (mark(status="deleted"), 400, "status"),
        (mark(status=None), 400, "status"),
        (mark(record=RECORDS), 422, "not a record"),
        (mark(record=-1), 400, "record"),
        (mark(record="n1"), 400, "record"),
        (mark(record=True), 400, "record"),
        (mark(seq=0), 400, "seq"),
        (mark(client=""), 400, "client"),
        (mark(client="c" * 101), 400, "client"),
        (mark(path="/etc/passwd"), 400, "exactly"),
        (b"[1, 2]", 400, "exactly"),
        (b"p", 400, "JSON"),
        (b"\xff\xfe", 400, "JSON"),
    ],
)
def test_what_is_not_a_granted_mark_is_refused_with_a_message(
    registry: routes.Registry, journal: Journal, body: bytes, code: int, says: str
) -> None:
    status, answer = call(_app(registry), body)
    assert status == code
    assert says in answer["error"]
    assert marks_in(journal) == []


def test_a_large_body_is_refused_unread(registry: routes.Registry, journal: Journal) -> None:
    app = _app(registry)
    big = mark(client="c" * 50) + b" " * routes.MAX_BODY
    assert call(app, big)[0] == 413
    # Without a length (chunked): refused once it passes the cap.
    assert call(app, [big[:600], big[600:]])[0] == 413
    assert call(app, big, length=False)[0] == 413
    # A mark that fits, in chunks, is fine.
    small = mark()
    assert call(app, [small[:10], small[10:]], length=False)[0] == 200
    assert marks_in(journal) == [(5, "passed")]


def test_only_json_from_this_server_is_taken(registry: routes.Registry, journal: Journal) -> None:
    app = _app(registry)
    # A form a page of another site could send without asking.
    assert call(app, mark(), content_type="application/x-www-form-urlencoded")[0] == 415
    assert call(app, mark(), content_type="text/plain")[0] == 415
    assert call(app, mark(), content_type=None)[0] == 415
    assert call(app, mark(), origin="http://evil.example")[0] == 403
    assert call(app, mark(), origin="null")[0] == 403
    assert call(app, mark(), method="GET")[0] == 405
    assert call(app, mark(), method="PUT")[0] == 405
    assert marks_in(journal) == []
    assert call(app, mark(), origin="http://127.0.0.1:8501")[0] == 200
    assert marks_in(journal) == [(5, "passed")]


def test_the_token_expires_when_its_session_ends(
    registry: routes.Registry, sessions: Sessions, journal: Journal
) -> None:
    app = _app(registry)
    assert call(app, mark(seq=1))[0] == 200
    assert len(registry) == 1
    sessions.active.clear()  # the tab closed: the runtime no longer has the session
    status, answer = call(app, mark(seq=2, record=6))
    assert status == 403 and "expired" in answer["error"]
    assert len(registry) == 0  # forgotten
    sessions.active.add("s1")  # even should the same session come back, the grant is gone
    assert call(app, mark(seq=3, record=6))[0] == 403
    assert marks_in(journal) == [(5, "passed")]


def test_grants_of_ended_sessions_are_dropped_when_another_is_made(
    registry: routes.Registry, sessions: Sessions, journal: Journal
) -> None:
    sessions.active = {"s2"}
    registry.grant("u" * 43, "s2", journal, RECORDS)
    assert len(registry) == 1
    assert registry.find(TOKEN) is None


def test_a_journal_no_longer_usable_is_not_written(
    registry: routes.Registry, journal: Journal
) -> None:
    journal.close()  # the files changed, the cache closed it
    status, answer = call(_app(registry), mark())
    assert status == 409 and answer["error"]
    # The action is Python's to write then.
    assert not registry.saved(TOKEN, "c1", 1, 5, "passed")


def test_a_grant_covers_only_its_own_source(
    registry: routes.Registry, journal: Journal, data: Path, tmp_path: Path
) -> None:
    """Two tokens of one session, two sources: each marks its own journal."""
    other = Journal(str(data / "segmentation.tfrecord"), cache_dir=tmp_path / "c2")
    try:
        registry.grant("o" * 43, "s1", other, 3)
        app = _app(registry)
        assert call(app, mark(token="o" * 43, record=2))[0] == 200
        assert call(app, mark(token="o" * 43, record=5, seq=2))[0] == 422
        assert marks_in(other) == [(2, "passed")] and marks_in(journal) == []
    finally:
        other.close()


def test_the_route_is_served_only_where_the_app_made_it() -> None:
    # This process (a test) serves no route: the elements hand every mark to Python.
    assert routes.served() is False
