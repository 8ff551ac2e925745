"""The end-of-session check (``conftest.pytest_sessionfinish``) finds exactly the servers and
browsers this test run started and left alive, orphans included, and no one else's."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import RUN_MARK, leftover_processes

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")

# A stand-in for a server: a sleeping Python whose command line names streamlit.
SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)", "streamlit-stand-in"]


def _found(pid: int) -> bool:
    return any(p == pid for p, _cmd in leftover_processes())


def test_a_process_this_run_started_is_found_until_it_ends() -> None:
    proc = subprocess.Popen(SLEEPER)
    try:
        deadline = time.monotonic() + 10
        while not _found(proc.pid):
            assert time.monotonic() < deadline, "a live stand-in server was not found"
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait()
    assert not _found(proc.pid)


def test_an_orphan_is_found_too() -> None:
    """A launcher killed outright leaves its child to init: the mark still finds it."""
    launcher = subprocess.run(
        [
            sys.executable,
            "-c",
            "import subprocess, sys;"
            f" p = subprocess.Popen({SLEEPER!r}, stdout=subprocess.DEVNULL,"
            " stderr=subprocess.DEVNULL); print(p.pid)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = int(launcher.stdout.strip())
    try:
        deadline = time.monotonic() + 10
        while not _found(orphan):
            assert time.monotonic() < deadline, "the orphan was not found"
            time.sleep(0.05)
    finally:
        os.kill(orphan, 9)
    deadline = time.monotonic() + 10
    while _found(orphan) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _found(orphan)


def test_a_process_of_another_run_is_not_ours() -> None:
    env = {k: v for k, v in os.environ.items() if k != RUN_MARK}
    proc = subprocess.Popen(SLEEPER, env={**env, RUN_MARK: "another-run"})
    try:
        time.sleep(0.3)
        assert proc.poll() is None and not _found(proc.pid)
    finally:
        proc.kill()
        proc.wait()
