"""A command reads of a remote object what its answer needs: ``dump --records 0`` of a
large object reads its first blocks, not its whole index; ``info`` (a full index) reads the
object about once. Bytes are counted by the server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_support import run_cli
from netservers import RangeHTTPServer, SyntheticTFRecord

REPO = Path(__file__).resolve().parent.parent
SIZE = 256 << 20  # a 256 MiB object of 4 KiB records


@pytest.fixture(scope="module")
def big() -> tuple[RangeHTTPServer, SyntheticTFRecord, str]:
    obj = SyntheticTFRecord(SIZE, 4096)
    with RangeHTTPServer({"d/big.tfrecord": obj}) as server:
        yield server, obj, server.url("d/big.tfrecord")


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cache=tmp_path / "cache")


@pytest.mark.parametrize("spec", ["0", "0:3", "5,2", "10:12:1"])
def test_dump_of_the_first_records_reads_little(big, tmp_path: Path, spec: str) -> None:
    server, _obj, url = big
    server.reset_stats()
    done = _cli(tmp_path, "dump", url, "--records", spec, "--json")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [x["index"] for x in lines] == sorted({int(i) for i in _expand(spec)})
    assert server.bytes_sent <= 64 << 20, server.bytes_sent  # not the 256 MiB object


def _expand(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        if ":" in part:
            out.extend(range(*(int(b) for b in part.split(":"))))
        else:
            out.append(int(part))
    return out


def test_dump_past_the_end_and_from_the_end_still_counts(big, tmp_path: Path) -> None:
    _server, obj, url = big
    done = _cli(tmp_path, "dump", url, "--records", f"{obj.records + 5}")
    assert done.returncode == 2
    assert f"record {obj.records + 5} is out of range (0..{obj.records - 1})" in done.stderr
    done = _cli(tmp_path, "dump", url, "--records", "-1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["index"] == obj.records - 1


def test_info_reads_the_object_about_once(big, tmp_path: Path) -> None:
    server, obj, url = big
    server.reset_stats()
    done = _cli(tmp_path, "info", url, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"][0]["records"] == obj.records
    assert server.bytes_sent <= 1.05 * obj.size, server.bytes_sent / obj.size
