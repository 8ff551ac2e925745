"""Every task of a job reads the version of a file the client opened, or the job fails as
changed: a file replaced between planning and the tasks (a local file rewritten, a remote
object put again) never gives an answer that mixes two versions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import codec
from browser_app.errors import EXIT_CHANGED
from codec.errors import ObjectChangedError
from codec.framing import encode_record
from codec.jobs import VerifyJob, run, tasks_of

REPO = Path(__file__).resolve().parent.parent


def _records(n: int, fill: int) -> bytes:
    return b"".join(encode_record(bytes([fill]) * 300) for _ in range(n))


def _damaged_late(n: int) -> bytes:
    """The same size as ``_records(n, 2)``, with a broken data CRC near its end."""
    data = bytearray(_records(n, 2))
    data[-20] ^= 0xFF
    return bytes(data)


def test_a_local_file_rewritten_after_planning_fails_the_job(tmp_path: Path) -> None:
    path = tmp_path / "a.tfrecord"
    path.write_bytes(_records(2000, 1))
    with codec.TFRecordFile(path) as f:
        tasks = tasks_of([f], split=f.file_size // 2 + 1)
    assert len(tasks) == 2 and not tasks[0].whole
    path.write_bytes(_damaged_late(2000))  # same size, new content
    os.utime(path, ns=(1, 1))
    with pytest.raises(ObjectChangedError):
        run(VerifyJob(), tasks, "inline")


def test_a_remote_object_replaced_after_planning_fails_the_job(
    http_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    http_server.put("d/a.tfrecord", _records(2000, 1))
    url = http_server.url("d/a.tfrecord")
    with codec.TFRecordFile(url, use_cache=False) as f:
        tasks = tasks_of([f], split=f.file_size // 2 + 1)
    assert len(tasks) == 2 and tasks[0].identity is not None and tasks[0].identity.version
    http_server.put("d/a.tfrecord", _damaged_late(2000))  # a new ETag
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(tmp_path / "worker-cache"))
    with pytest.raises(ObjectChangedError):
        run(VerifyJob(), tasks, "inline")


def test_unchanged_files_verify_as_before(http_server, tmp_path: Path) -> None:
    http_server.put("d/a.tfrecord", _damaged_late(2000))
    url = http_server.url("d/a.tfrecord")
    with codec.TFRecordFile(url, use_cache=False) as f:
        tasks = tasks_of([f], split=f.file_size // 3 + 1)
        (whole,) = run(VerifyJob(), tasks, "inline")
        assert whole.to_json() == f.verify().to_json()


def test_the_command_line_says_changed(tmp_path: Path) -> None:
    """The command line's exit code for a file changed under a job is the changed one."""
    path = tmp_path / "a.tfrecord"
    path.write_bytes(_records(10, 1))
    code = (
        "import os, sys, codec\n"
        "from codec.jobs import VerifyJob, run, tasks_of\n"
        "from browser_app.errors import exit_code\n"
        f"p = {str(path)!r}\n"
        "f = codec.TFRecordFile(p)\n"
        "tasks = tasks_of([f])\n"
        "open(p, 'ab').write(b'x')\n"
        "try:\n"
        "    run(VerifyJob(), tasks, 'inline')\n"
        "except Exception as exc:\n"
        "    print(exit_code(exc))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.stdout.strip() == str(EXIT_CHANGED), out.stderr
