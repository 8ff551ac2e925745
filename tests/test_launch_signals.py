"""``tfrecord-browser view`` never leaves its server behind: SIGTERM or SIGHUP to the launcher
stops the server first, and a launcher killed outright takes the server with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from browser_support import REPO, free_port

pytestmark = pytest.mark.slow


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def _start(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "browser_app", "view", "--no-browser", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not _answers(f"http://127.0.0.1:{port}"):
        assert proc.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_the_server_goes_with_the_launcher(sig: signal.Signals) -> None:
    port = free_port()
    proc = _start(port)
    os.kill(proc.pid, sig)
    proc.wait(30)
    deadline = time.monotonic() + 20
    while _answers(f"http://127.0.0.1:{port}"):
        assert time.monotonic() < deadline, f"the server outlived its launcher after {sig.name}"
        time.sleep(0.2)
    if sig != signal.SIGKILL:
        assert proc.returncode == 0
