"""``tfrecord-browser view`` never leaves its server behind: SIGTERM or SIGHUP to the launcher
stops the server first, and a launcher killed outright takes the server with it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from browser_support import REPO, free_port, servers_of

pytestmark = pytest.mark.slow


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def _as_from_a_terminal() -> None:
    """In the launcher's process before it starts: Ctrl+C's signal as a terminal's command
    has it (handled by Python), whatever the test process inherited or set (a process
    started where SIGINT is ignored ignores it too, as POSIX says)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(port: int, *extra: str, prefix: tuple[str, ...] = ()) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [
            *prefix,
            sys.executable,
            "-m",
            "browser_app",
            "view",
            "--no-browser",
            "--port",
            str(port),
            *extra,
        ],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_as_from_a_terminal,
    )
    deadline = time.monotonic() + 60
    while not _answers(f"http://127.0.0.1:{port}"):
        assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    return proc


def _gone(port: int, sig: str) -> None:
    """The server for ``port`` answers no more and its process has ended."""
    deadline = time.monotonic() + 20
    while _answers(f"http://127.0.0.1:{port}") or servers_of(port):
        assert time.monotonic() < deadline, f"the server outlived its launcher after {sig}"
        time.sleep(0.2)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGKILL])
def test_the_server_goes_with_the_launcher(sig: signal.Signals) -> None:
    port = free_port()
    proc = _start(port)
    assert servers_of(port)
    os.kill(proc.pid, sig)
    proc.wait(90)  # the server is given 10 s to stop, on a machine that may be loaded
    _gone(port, sig.name)
    if sig != signal.SIGKILL:
        assert proc.returncode == 0


def test_listening_on_every_interface_the_server_still_goes_with_it() -> None:
    port = free_port()
    proc = _start(port, "--host", "0.0.0.0")
    os.kill(proc.pid, signal.SIGTERM)
    proc.wait(30)
    _gone(port, "SIGTERM with --host 0.0.0.0")
    assert proc.returncode == 0


@pytest.mark.skipif(shutil.which("timeout") is None, reason="needs coreutils' timeout")
def test_timeout_stops_the_launcher_and_its_server() -> None:
    """``timeout 20 tfrecord-browser view``: when time is up, timeout sends SIGTERM."""
    port = free_port()
    proc = _start(port, prefix=("timeout", "20"))
    proc.wait(60)
    assert proc.returncode == 124  # timeout's "time ran out"
    _gone(port, "timeout's SIGTERM")
