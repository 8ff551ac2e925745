"""Byte ranges of a file verified apart give exactly the whole file's report: for any split,
any damage, and records that themselves hold TFRecord data (where a range's search for its
first record stops inside a record and must be walked again from where the range before it
left)."""

from __future__ import annotations

import itertools
import json
import random

import pytest
from conftest import DATA
from damage import damage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from codec.framing import encode_record
from codec.jobs import Task, merge_verify, plan, verify_task
from codec.jobs.plan import MIN_SPLIT


def _whole(path) -> str:
    with codec.TFRecordFile(path) as f:
        return json.dumps(f.verify().to_json(), sort_keys=True)


def _split(path, cuts: list[int], size: int) -> str:
    edges = [0, *sorted(set(c for c in cuts if 0 < c < size)), size]
    tasks = [Task(0, str(path), a, b, whole=False) for a, b in itertools.pairwise(edges)]
    parts = [verify_task(t) for t in reversed(tasks)]  # any order
    (report,) = merge_verify(parts)
    return json.dumps(report.to_json(), sort_keys=True)


def _stream(rng: random.Random) -> bytes:
    out = []
    for _ in range(rng.randint(0, 80)):
        if rng.random() < 0.1:  # a record that holds TFRecord framing
            inner = b"".join(
                encode_record(rng.randbytes(rng.randint(0, 60))) for _ in range(rng.randint(1, 5))
            )
            out.append(encode_record(inner))
        else:
            out.append(encode_record(rng.randbytes(rng.randint(0, 300))))
    return b"".join(out)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1), cuts=st.lists(st.floats(0, 1), max_size=8))
def test_any_split_of_any_damaged_file_gives_the_whole_files_report(tmp_path, seed, cuts):
    rng = random.Random(seed)
    raw = damage(rng, _stream(rng))
    path = tmp_path / f"{seed}.tfrecord"
    path.write_bytes(raw)
    size = len(raw)
    assert _split(path, [int(c * size) for c in cuts], size) == _whole(path)


@pytest.mark.parametrize("path", sorted(DATA.glob("*.tfrecord")), ids=lambda p: p.name)
def test_golden_files_split_at_every_few_bytes(path):
    size = path.stat().st_size
    if size == 0:
        return
    for step in {max(13, size // 150), max(97, size // 40), max(1, size // 3)}:
        assert _split(path, list(range(step, size, step)), size) == _whole(path)


def test_plan_splits_large_plain_files_and_keeps_compressed_ones_whole(tmp_path):
    rng = random.Random(1)
    payloads = [rng.randbytes(1000) for _ in range(300)]
    codec.write_records(tmp_path / "a.tfrecord", payloads)
    codec.write_records(tmp_path / "b.tfrecord.gz", payloads, compression="gzip")
    tasks = plan([str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord.gz")], split=50_000)
    ranges = [t for t in tasks if t.file == 0]
    assert len(ranges) == 7 and all(not t.whole for t in ranges)
    assert ranges[0].start == 0 and ranges[-1].end == (tmp_path / "a.tfrecord").stat().st_size
    assert all(a.end == b.start for a, b in itertools.pairwise(ranges))
    (gz,) = [t for t in tasks if t.file == 1]
    assert gz.whole
    reports = merge_verify([verify_task(t) for t in tasks])
    assert [r.records for r in reports] == [300, 300]


def test_plan_cuts_smaller_ranges_so_every_worker_has_a_task(tmp_path):
    big, small = tmp_path / "big.tfrecord", tmp_path / "small.tfrecord.gz"
    sizes = [(40 << 20, "none"), (1 << 20, "gzip")]
    paths = [str(big), str(small)]
    for p in (big, small):
        p.touch()  # only the sizes given are read
    assert len(plan(paths, sizes=sizes)) == 2  # 40 MiB is under the default split
    tasks = plan(paths, sizes=sizes, at_least=5)
    ranges = [t for t in tasks if t.file == 0]
    assert len(ranges) == 5  # 40 MiB cut for 5 workers...
    assert all(a.end == b.start for a, b in itertools.pairwise(ranges))
    assert ranges[0].start == 0 and ranges[-1].end == 40 << 20
    assert [t.whole for t in tasks if t.file == 1] == [True]
    # ...but never in ranges under MIN_SPLIT, whatever the number of workers
    many = [t for t in plan(paths, sizes=sizes, at_least=1000) if t.file == 0]
    assert len(many) == (40 << 20) // MIN_SPLIT
    assert all(t.bytes >= MIN_SPLIT for t in many)
