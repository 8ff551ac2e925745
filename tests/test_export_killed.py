"""An export killed outright (``kill -9`` of the app's server or of the command) leaves
nothing for good: its pool workers die with it, and the next export to the same place
removes the run's marker object and temporary objects, named by the marker, while the
runs of live processes (and of other machines) are left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DATA

import codec
from browser_app.export import export, remote
from browser_app.export.tempfiles import MARK

REPO = Path(__file__).resolve().parent.parent
RUN_DEAD, RUN_LIVE, RUN_AWAY, RUN_GONE = "1" * 16, "2" * 16, "3" * 16, "4" * 16


def _marker(pid: int, start: str, *, host: str | None = None) -> bytes:
    here = remote._this_process()
    lines = {**here, "pid": str(pid), "start": start}
    if host is not None:
        lines["host"] = host
    return ("tfrecord-browser export\n" + "".join(f"{k} {v}\n" for k, v in lines.items())).encode()


def test_the_next_export_removes_what_a_killed_run_left(s3, tmp_path: Path) -> None:
    if not Path("/proc/sys/kernel/random/boot_id").exists():
        pytest.skip("no boot id on this system: runs are judged by the process table of /proc")
    s3.make_bucket("out")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = _marker(gone.pid, "1")  # a process of this machine that is gone
    live = _marker(os.getpid(), remote._start_time(os.getpid()))
    away = _marker(1, "1", host="another-machine")
    for run, body in ((RUN_DEAD, dead), (RUN_LIVE, live), (RUN_AWAY, away)):
        s3.put("out", f"d/.{MARK}-{run}.lock", body)
        s3.put("out", f"d/.o-00000-of-00002.tfrecord.{MARK}-{run}.part", b"partial")
    s3.put("out", f"d/.o.tfrecord.{MARK}-{RUN_GONE}.part", b"no marker: its run is over")
    s3.put("out", "d/keep.txt", b"not ours")
    report = export([str(DATA / "basic.tfrecord")], "s3://out/d/new.tfrecord")
    left = set(s3.keys("out"))
    assert f"d/.{MARK}-{RUN_DEAD}.lock" not in left
    assert f"d/.o-00000-of-00002.tfrecord.{MARK}-{RUN_DEAD}.part" not in left
    assert f"d/.o.tfrecord.{MARK}-{RUN_GONE}.part" not in left
    for run in (RUN_LIVE, RUN_AWAY):  # alive, or not this machine's to judge
        assert f"d/.{MARK}-{run}.lock" in left
        assert f"d/.o-00000-of-00002.tfrecord.{MARK}-{run}.part" in left
    assert {"d/keep.txt", "d/new.tfrecord"} <= left
    assert report.cleaned == 3


def test_kill_9_mid_export_then_the_next_export_leaves_nothing(s3, tmp_path: Path) -> None:
    s3.make_bucket("out")
    src = tmp_path / "big.tfrecord"
    codec.write_records(src, [os.urandom(2000) for _ in range(20_000)])
    cmd = [
        sys.executable,
        "-m",
        "browser_app",
        "export",
        str(src),
        "s3://out/d/o.tfrecord",
        "--shards",
        "4",
        "--workers",
        "2",
    ]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if any(k.endswith(".lock") for k in s3.keys("out")):
            break
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.skip("the export ended before it could be killed")
    children = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    _wait_gone(children)
    done = subprocess.run(
        [*cmd[:5], "s3://out/d/again.tfrecord"], cwd=REPO, capture_output=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    left = [k for k in s3.keys("out") if MARK in k]
    assert left == []


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _wait_gone(pids: list[int], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = [p for p in pids if Path(f"/proc/{p}").exists() and _state(p) != "Z"]
        if not alive:
            return
        time.sleep(0.1)
    raise AssertionError(f"processes left after kill -9 of their parent: {alive}")


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return "Z"
