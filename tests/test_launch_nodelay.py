"""The app's server answers at once on a kept-alive connection (``TCP_NODELAY``).

Streamlit 1.67 leaves Nagle's algorithm on for its server's connections, so each response
after the first on a kept-alive connection waited ~40 ms for the browser's delayed ACK (a
gallery's pictures, one after another). The launcher runs Streamlit through
:mod:`browser_app.cli.serve`, which turns ``TCP_NODELAY`` on. Here: the real app, started as
a person starts it, serves a ``/media`` picture of a page open in Chromium again and again on
one kept-alive connection; and the serve module hands Streamlit its arguments unchanged, and
changes nothing where uvicorn is not what it expects.

The timing test is not a speed target: it tells a fixed ~40 ms stall (the delayed-ACK timer)
from none, with the threshold at half of it.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import REPO, browser_fixture, serve, settled, shot

from browser_app.cli import launch
from browser_app.cli import serve as serve_module
from browser_app.sample_data import write_sample

# -- the serve module -------------------------------------------------------------------------


def _run_with_fake_streamlit(tmp_path: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with a stand-in ``streamlit`` package first on the path, whose
    ``__main__`` prints the ``sys.argv`` it sees as JSON."""
    fake = tmp_path / "fake" / "streamlit"
    if not fake.is_dir():
        fake.mkdir(parents=True)
        (fake / "__init__.py").write_text("")
        (fake / "__main__.py").write_text(
            "import json, sys\nif __name__ == '__main__':\n    print(json.dumps(sys.argv))\n"
        )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake.parent), str(REPO)]))
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )


def _argv_seen(tmp_path: Path, args: list[str]) -> list[str]:
    done = _run_with_fake_streamlit(tmp_path, args)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_serve_hands_streamlit_the_arguments_unchanged(tmp_path: Path) -> None:
    cmd = launch.server_command("127.0.0.1", 8600, str(tmp_path), [str(tmp_path / "a b.rec")])
    # The server's command line names Streamlit (tools find the server by it), then `run`.
    assert cmd[1:5] == ["-m", "browser_app.cli.serve", "streamlit", "run"]
    args = cmd[4:]
    through_serve = _argv_seen(tmp_path, cmd[1:])
    direct = _argv_seen(tmp_path, ["-m", "streamlit", *args])
    # As `python -m streamlit ARGS` sees them: its own __main__ as argv[0], then ARGS.
    assert through_serve == direct
    assert through_serve[1:] == args
    assert Path(through_serve[0]) == tmp_path / "fake" / "streamlit" / "__main__.py"


@pytest.mark.parametrize("args", [[], ["run", "app.py"], ["python", "run", "app.py"]])
def test_serve_runs_nothing_but_streamlit(tmp_path: Path, args: list[str]) -> None:
    done = _run_with_fake_streamlit(tmp_path, ["-m", "browser_app.cli.serve", *args])
    assert done.returncode == 2 and done.stdout == ""
    assert "usage: python -m browser_app.cli.serve streamlit ARGS" in done.stderr


def test_serve_reaches_the_real_streamlit() -> None:
    def version(*module: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", *module, "--version"],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
            timeout=120,
        ).stdout

    got = version("browser_app.cli.serve", "streamlit")
    assert got.startswith("Streamlit, version ") and got == version("streamlit")


class _Recorder:
    """A stand-in for uvicorn's ``Server``: ``startup`` notes what it was given."""

    seen: list[Any]

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.seen = [sockets]


def _listener(family: socket.AddressFamily = socket.AF_INET) -> socket.socket:
    # As Streamlit 1.67 binds it: the protocol left at 0, so asyncio sets no TCP_NODELAY.
    s = socket.socket(family=family)
    s.bind(("::1" if family == socket.AF_INET6 else "127.0.0.1", 0))
    s.listen()
    return s


def _nodelay(s: socket.socket) -> int:
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_listening_socket_gets_nodelay_and_accepted_connections_inherit_it() -> None:
    class Server(_Recorder):
        pass

    assert serve_module.send_without_delay(Server)
    assert serve_module.send_without_delay(Server)  # once is enough: not wrapped twice
    with _listener() as listener:
        assert listener.proto == 0 and _nodelay(listener) == 0
        server = Server()
        asyncio.run(server.startup(sockets=[listener]))
        assert server.seen == [[listener]]  # uvicorn's own startup still runs, as called
        assert _nodelay(listener)
        with socket.create_connection(listener.getsockname()):
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.proto == 0 and _nodelay(accepted)
    # Called without sockets (uvicorn binding its own, which asyncio handles): unchanged.
    server = Server()
    asyncio.run(server.startup())
    assert server.seen == [None]


def test_a_unix_socket_is_left_alone(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        assert not serve_module.no_delay(s)


class _NoStartup:
    pass


class _PlainStartup:
    def startup(self, sockets: list[socket.socket] | None = None) -> None:
        pass


class _StartupWithoutSockets:
    async def startup(self, config: object) -> None:
        pass


@pytest.mark.parametrize("server_class", [_NoStartup, _PlainStartup, _StartupWithoutSockets])
def test_a_server_that_changed_is_left_alone(server_class: type) -> None:
    before = dict(vars(server_class))
    assert not serve_module.send_without_delay(server_class)
    assert dict(vars(server_class)) == before


def test_the_installed_uvicorn_still_takes_the_hook() -> None:
    """If this fails, a new uvicorn changed ``Server.startup``: the fix is skipped (the
    server runs, with Nagle's algorithm on again) and the timing test below fails too."""
    import uvicorn

    class Server(uvicorn.Server):
        pass

    assert serve_module.send_without_delay(Server)
    assert uvicorn.Server.startup is not Server.startup  # only the subclass was changed


# -- the real server, a picture of a page open in Chromium -----------------------------------

ROUNDS = 25
BOUND_MS = 20.0  # a stall is ~40 ms (the delayed-ACK timer); without one, a few ms


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    sample = tmp_path_factory.mktemp("sample")
    write_sample(sample)
    yield from serve(tmp_path_factory, [str(sample / "detection.tfrecord"), "--root", str(sample)])


browser = browser_fixture()


def _timed_gets(host: str, port: int, path: str, rounds: int) -> tuple[list[float], set[bytes]]:
    """GET ``path`` ``rounds`` times on one kept-alive connection: milliseconds from the
    request sent to the last byte read, per response, and the bodies seen."""
    conn = http.client.HTTPConnection(host, port, timeout=30)
    times, bodies = [], set()
    try:
        for _ in range(rounds):
            start = time.perf_counter()
            conn.request("GET", path)
            r = conn.getresponse()
            body = r.read()
            times.append((time.perf_counter() - start) * 1000)
            assert r.status == 200, (r.status, path)
            assert (r.getheader("Content-Type") or "").startswith("image/"), r.getheader(
                "Content-Type"
            )
            assert not r.will_close, "the server closed the connection: not kept alive"
            bodies.add(body)
    finally:
        conn.close()
    return times, bodies


@pytest.mark.browser
@pytest.mark.slow
def test_media_pictures_come_at_once_on_a_kept_alive_connection(server: str, browser: Any) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{server}/gallery?file=detection.tfrecord&record=0&size=25")
    pictures = page.locator("img[src*='/media/']")
    expect(pictures.first).to_be_visible(timeout=60_000)
    settled(page)
    shot(page, "nodelay-gallery.png")
    src = pictures.first.get_attribute("src")
    assert src
    # The page keeps the picture (its session holds it) while it is fetched here.
    url = urllib.parse.urlsplit(urllib.parse.urljoin(server + "/", src))
    assert url.path.startswith("/media/"), src
    host, port = url.hostname or "127.0.0.1", int(url.port or 80)
    times, bodies = _timed_gets(host, port, url.path, ROUNDS)
    assert len(bodies) == 1 and len(next(iter(bodies))) > 0
    # The first response on a new connection never waits (the ACK is quick then); every
    # one after it did, without the fix.
    later = times[1:]
    median = statistics.median(later)
    assert median < BOUND_MS, (
        f"responses 2..{ROUNDS} on one kept-alive connection took {median:.1f} ms (median;"
        f" all: {', '.join(f'{t:.1f}' for t in later)}): Nagle's algorithm is on"
    )
    page.close()
