"""``tfrecord-browser clean FOLDER...``: what an export that is over left is removed without
another export, in a local folder and in a bucket; a live run's files, another machine's run
and files that are not an export's stay; a folder that is not there is an error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_export_killed import RUN_AWAY, RUN_DEAD, RUN_GONE, RUN_LIVE, _marker

from browser_app.cli.main import main
from browser_app.errors import EXIT_OK, EXIT_USAGE
from browser_app.export import remote
from browser_app.export.tempfiles import MARK, RunLock
from codec.values import format_bytes

REPO = Path(__file__).resolve().parent.parent

# An export's run that is killed: its lock file and a temporary output of 1,000 bytes stay,
# and nobody holds its lock any more.
KILLED = """
import os, sys
from browser_app.export.tempfiles import RunLock
lock = RunLock(sys.argv[1])
with open(lock.new_temp(os.path.join(sys.argv[1], "out.tfrecord")), "wb") as f:
    f.write(b"x" * 1000)
os._exit(9)
"""


def _clean(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``tfrecord-browser clean ARGV`` as the command line runs it."""
    code = main(["clean", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_killed_runs_leftovers_go_and_a_live_runs_stay(capsys, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("not ours")
    killed = subprocess.run([sys.executable, "-c", KILLED, str(out)], cwd=REPO, check=False)
    assert killed.returncode == 9
    dead = set(os.listdir(out)) - {"keep.txt"}
    assert len(dead) == 2 and any(n.endswith(".lock") for n in dead), dead
    dead_bytes = sum((out / n).stat().st_size for n in dead)
    live = RunLock(str(out))
    try:
        live_temp = live.new_temp(str(out / "other.tfrecord"))
        mine = {Path(live.path).name, Path(live_temp).name}
        code, printed, err = _clean(capsys, str(out))
        assert code == EXIT_OK, err
        size = format_bytes(dead_bytes)
        assert printed == f"{out}: removed 2 leftover files and folders ({size})\n"
        assert set(os.listdir(out)) == mine | {"keep.txt"}
        code, printed, _ = _clean(capsys, str(out))
        assert (code, printed) == (EXIT_OK, f"{out}: removed nothing\n")
    finally:
        live.abandon()
    assert os.listdir(out) == ["keep.txt"]


def test_a_bucket_keeps_what_is_alive_or_another_machines(capsys, s3, tmp_path: Path) -> None:
    if not Path("/proc/sys/kernel/random/boot_id").exists():
        pytest.skip("no boot id on this system: runs are judged by the process table of /proc")
    s3.make_bucket("out")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    markers = {
        RUN_DEAD: _marker(gone.pid, "1"),  # a process of this machine that is gone
        RUN_LIVE: _marker(os.getpid(), remote._start_time(os.getpid())),
        RUN_AWAY: _marker(1, "1", host="another-machine"),
    }
    for run_name, body in markers.items():
        s3.put("out", f"d/.{MARK}-{run_name}.lock", body)
        s3.put("out", f"d/.o.tfrecord.{MARK}-{run_name}.part", b"partial")
    s3.put("out", f"d/.o.tfrecord.{MARK}-{RUN_GONE}.part", b"no marker: its run is over")
    s3.put("out", "d/keep.txt", b"not ours")
    before = set(s3.keys("out"))
    code, printed, err = _clean(capsys, "s3://out/d")
    assert code == EXIT_OK, err
    assert printed == "s3://out/d: removed 3 leftover objects\n"
    assert before - set(s3.keys("out")) == {
        f"d/.{MARK}-{RUN_DEAD}.lock",
        f"d/.o.tfrecord.{MARK}-{RUN_DEAD}.part",
        f"d/.o.tfrecord.{MARK}-{RUN_GONE}.part",
    }
    code, printed, _ = _clean(capsys, "s3://out/d")
    assert (code, printed) == (EXIT_OK, "s3://out/d: removed nothing\n")


def test_a_folder_that_is_not_there_is_said(capsys, s3, tmp_path: Path) -> None:
    code, printed, err = _clean(capsys, str(tmp_path / "nowhere"))
    assert (code, printed) == (EXIT_USAGE, "")
    assert err == f"tfrecord-browser: {tmp_path / 'nowhere'}: no such folder\n"
    s3.put("out", "d/file.tfrecord", b"x")
    code, printed, err = _clean(capsys, "s3://out/d/file.tfrecord")
    assert (code, printed) == (EXIT_USAGE, "")
    assert err == "tfrecord-browser: s3://out/d/file.tfrecord is an object, not a folder\n"
    code, printed, err = _clean(capsys, "s3://out/empty")  # no object under it
    assert (code, printed, err) == (EXIT_OK, "s3://out/empty: removed nothing\n", "")
