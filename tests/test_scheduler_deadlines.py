"""Every wait on a Dask scheduler has a deadline: a server that accepts the connection and
never answers (or a scheduler that stops answering) is an error after the time given, in
the library and on the command line, never a wait without end."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import DATA

from browser_app.errors import EXIT_CLUSTER
from codec.errors import SchedulerError
from codec.jobs import executor
from codec.jobs.executors import within

pytest.importorskip("distributed")

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def silent() -> Iterator[str]:
    """A TCP server on loopback that accepts every connection and never sends a byte."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def test_the_library_gives_up_on_a_silent_scheduler(silent: str) -> None:
    with pytest.raises(SchedulerError) as info:
        executor(f"tcp://{silent}", timeout=1.0)
    assert f"tcp://{silent}: cannot reach the Dask scheduler" in str(info.value)
    assert "no answer within 1 s" in str(info.value)


def test_the_command_line_gives_up_after_dask_timeout(silent: str) -> None:
    """``--dask-timeout`` bounds the whole start, so the command ends with the cluster's
    exit code and one line (the guard below only keeps a regression from hanging CI)."""
    cmd = [
        sys.executable,
        "-m",
        "browser_app",
        "verify",
        str(DATA / "basic.tfrecord"),
        "--dask",
        f"tcp://{silent}",
        "--dask-timeout",
        "1",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == EXIT_CLUSTER, done.stderr
    assert "cannot reach the Dask scheduler (no answer within 1 s)" in done.stderr
    assert "Traceback" not in done.stderr


def test_within_hands_a_late_answer_to_be_closed() -> None:
    release = threading.Event()
    closed: list[str] = []

    def slow() -> str:
        release.wait(10)
        return "client"

    with pytest.raises(TimeoutError):
        within(0.05, slow, late=closed.append)
    release.set()
    for _ in range(200):
        if closed:
            break
        threading.Event().wait(0.05)
    assert closed == ["client"]
    assert within(5, lambda: 7) == 7
    with pytest.raises(ZeroDivisionError):
        within(5, lambda: 1 // 0)
