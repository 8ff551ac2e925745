"""The elements' files served by the app's own route (:func:`browser_app.ui.components.served
.routes`): each under a name holding a hash of its content, as never changing, so the browser
(and the gallery's worker, which loads the element's module again) fetches it once; any
other name is refused, and nothing a request names is opened."""

from __future__ import annotations

import asyncio
import hashlib
from importlib import resources
from typing import Any

import pytest
from starlette.applications import Starlette

from browser_app.ui.components import served


def _get(app: Starlette, path: str) -> tuple[int, dict[str, str], bytes]:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8501")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8501),
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], headers, body


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> Starlette:
    monkeypatch.setattr(served, "_routed", False)  # put back after the test
    return Starlette(routes=served.routes())


def test_every_script_and_style_sheet_is_served_by_its_content_as_never_changing(
    app: Starlette,
) -> None:
    assets = resources.files("browser_app.ui.components") / "assets"
    names = sorted(f.name for f in assets.iterdir() if f.name.endswith((".js", ".css")))
    assert "gallery.js" in names and "review_keys.js" in names
    for name in names:
        url = served._url(name, "")
        stem, ext = name.rsplit(".", 1)
        digest = hashlib.sha256((assets / name).read_bytes()).hexdigest()[:20]
        assert url == f"{served.ELEMENT_PATH}/{stem}.{digest}.{ext}"
        status, headers, body = _get(app, url)
        assert status == 200
        assert body == (assets / name).read_bytes()
        assert headers["content-type"].startswith("text/javascript" if ext == "js" else "text/css")
        assert "immutable" in headers["cache-control"]


@pytest.mark.parametrize(
    "name",
    [
        "gallery.0000000000000000000.js",  # an older content
        "gallery.js",
        "gallery.html",
        "..%2Fgallery.py",
        "../served.py",
        "",
    ],
)
def test_any_other_name_is_refused(app: Starlette, name: str) -> None:
    status, _headers, body = _get(app, f"{served.ELEMENT_PATH}/{name}")
    assert status == 404
    assert b"import" not in body


def test_without_the_route_the_files_are_media_files_or_inline() -> None:
    # This process (a test) serves no route and runs no app: the files go inline.
    assert served._routed is False
    assert served._url("gallery.js", "text/javascript") is None
