"""``verify``, ``schema`` and ``filter`` run as jobs: the same output, byte for byte, in this
process, on a pool of processes and on a Dask cluster (reached by its ``tcp://`` address);
progress on stderr only when asked (or on a terminal); a scheduler that cannot be reached is
one line naming it and its own exit code; Ctrl+C stops a running verify with the cancel exit
code and leaves no process behind; a remote object is read once."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dask_support import local_scheduler
from netservers import FaultProxy, MotoS3
from test_jobs_schema import _dataset

import codec
from browser_app.cli import main
from browser_app.errors import EXIT_CLUSTER, EXIT_INTERRUPTED, EXIT_USAGE
from codec.framing import encode_record

ROOT = Path(__file__).resolve().parent.parent


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """A Dask scheduler with two single-threaded workers in this process, on 127.0.0.1: its
    ``tcp://`` address."""
    with local_scheduler(2, threads_per_worker=1) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Generated shards (damaged and GZIP ones among them) and two golden damaged files."""
    folder = tmp_path_factory.mktemp("jobs-cli")
    rng = random.Random(1414)
    paths: list[str] = []
    while len(paths) < 3:
        paths = _dataset(folder, rng, records=60)
    data = ROOT / "tests" / "data"
    return [*paths, str(data / "garbage_between.tfrecord"), str(data / "detection.tfrecord")]


COMMANDS = [
    ["verify", "--json"],
    ["schema", "--json", "--stats"],
    ["filter", "not intact or any(tok == index) or len(txt) > 1", "--json"],
]


def test_every_executor_prints_the_same(capsys, dataset, scheduler):
    for command in COMMANDS:
        name, *options = command
        argv = [name, *dataset, *options]
        want = _cli(capsys, *argv)
        assert want[1] and "Traceback" not in want[2], want
        for where in (
            ["--executor", "inline"],
            ["--executor", "processes:2"],
            ["--dask", scheduler],
            ["--executor", f"dask:{scheduler}"],
        ):
            code, out, _ = _cli(capsys, *argv, *where)
            assert (code, out) == want[:2], (command, where)


def test_progress_is_shown_when_asked_and_never_on_stdout(capsys, dataset):
    code, out, err = _cli(capsys, "verify", *dataset, "--json", "--executor", "inline")
    assert err == ""
    code2, out2, err2 = _cli(capsys, "verify", *dataset, "--json", "--progress")
    assert (code2, out2) == (code, out) and json.loads(out2)["files"]
    lines = err2.splitlines()
    n = len(dataset)
    assert lines[-1].startswith(f"verify: {n:,} of {n:,} tasks · ")
    assert lines[-1].endswith(" records/s (100%)")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_scheduler_that_cannot_be_reached_is_one_line_and_its_exit_code(capsys, dataset):
    address = f"tcp://127.0.0.1:{_closed_port()}"
    code, out, err = _cli(capsys, "verify", dataset[0], "--dask", address, "--dask-timeout", "1")
    assert code == EXIT_CLUSTER and out == ""
    assert err.startswith(f"tfrecord-browser: {address}: cannot reach the Dask scheduler")
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "spec", ["threads", "processes:0", "processes:x", "dask:nowhere", "dask:local:0"]
)
def test_an_executor_that_does_not_exist_is_a_usage_error(capsys, dataset, spec):
    code, out, err = _cli(capsys, "filter", dataset[0], "intact", "--executor", spec)
    assert code == EXIT_USAGE and out == ""
    assert err.startswith("tfrecord-browser: ") and err.count("\n") == 1


def _session(sid: int) -> list[int]:
    """The live processes of session ``sid`` (zombies are dead already)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_cancels_a_running_verify_and_leaves_no_process(tmp_path):
    """A file of two 64 MiB ranges verified on two processes; Ctrl+C as a terminal sends it
    (SIGINT to every process of the command) once the job has started."""
    big = tmp_path / "big.tfrecord"
    one = encode_record(b"abcd")
    big.write_bytes(one * ((96 << 20) // len(one)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "browser_app", "verify", str(big), "--json", "--progress"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith("verify: 0 of 2 tasks"), first
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert out == "" and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("tfrecord-browser: verify was cancelled after ")
    assert last.endswith(" of 2 tasks (Ctrl+C); nothing was kept")
    deadline = time.monotonic() + 10
    while _session(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _session(proc.pid) == []


def test_verify_reads_a_remote_object_once(capsys, s3: MotoS3, s3_proxy: FaultProxy, tmp_path):
    rng = random.Random(3)
    raw = b"".join(encode_record(rng.randbytes(rng.randrange(10, 3000))) for _ in range(3000))
    s3.put("jobs", "one.tfrecord", raw)
    local = tmp_path / "one.tfrecord"
    local.write_bytes(raw)
    s3_proxy.reset_stats()
    code, out, err = _cli(capsys, "verify", "s3://jobs/one.tfrecord", "--json")
    assert code == 0, err
    assert len(raw) <= s3_proxy.bytes_forwarded < len(raw) * 1.05
    report = json.loads(out)["files"][0]
    with codec.TFRecordFile(local) as f:
        want = f.verify().to_json()
    assert {k: v for k, v in report.items() if k != "path"} == {
        k: v for k, v in want.items() if k != "path"
    }
