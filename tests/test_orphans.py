"""A pool's worker processes die with the process that started them: ``kill -9`` of the
app's server or of a command leaves no worker behind, holding memory and finishing tasks
that nobody waits for."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = """
import os, sys, threading, time
from codec.jobs import ProcessExecutor

if __name__ == "__main__":
    if sys.argv[1] == "threads":  # a process with threads starts its pool with spawn
        threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
    ex = ProcessExecutor(2)
    pool = ex.pool()
    pids = {pool.submit(os.getpid).result() for i in range(8)}  # importable from anywhere
    for i in range(2):
        pool.submit(time.sleep, 600)
    print(" ".join(map(str, sorted(pids))), flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose (its parent, init, reaps it)
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _check(tmp_path: Path, how: str) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script), how],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    assert proc.stdout is not None
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert pids and all(_alive(p) for p in pids)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    deadline = time.monotonic() + 60
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert left == []


def test_forked_pool_workers_die_with_their_parent(tmp_path: Path) -> None:
    _check(tmp_path, "fork")


def test_spawned_pool_workers_die_with_their_parent(tmp_path: Path) -> None:
    _check(tmp_path, "threads")
