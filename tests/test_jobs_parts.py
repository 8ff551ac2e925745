"""What a range task sends back stays small: the client of a job over a large dataset of
small records holds every answer until the merge, so an answer must not grow with the
records of its range (their offsets stay on the worker), only with what is wrong in them."""

from __future__ import annotations

import pickle
import random

import codec
from codec.jobs import merge_verify, plan, verify_task


def _answers(path, pieces: int) -> list:
    size = path.stat().st_size
    tasks = plan([str(path)], split=-(-size // pieces))
    assert len(tasks) == pieces and not any(t.whole for t in tasks)
    return [verify_task(t) for t in tasks]


def test_a_range_answer_does_not_grow_with_its_records(tmp_path):
    rng = random.Random(3)
    largest = {}
    for count in (1_000, 40_000):
        path = tmp_path / f"{count}.tfrecord"
        codec.write_records(path, [rng.randbytes(rng.randint(0, 40)) for _ in range(count)])
        answers = _answers(path, 3)
        largest[count] = max(len(pickle.dumps(a)) for a in answers)
        (report,) = merge_verify(answers)
        assert report.records == count and not report.problems
    assert largest[40_000] < largest[1_000] + 64


def test_a_range_answer_carries_its_damaged_records(tmp_path):
    rng = random.Random(4)
    payloads = [rng.randbytes(30) for _ in range(3_000)]
    path = tmp_path / "d.tfrecord"
    codec.write_records(path, payloads)
    raw = bytearray(path.read_bytes())
    hit = sorted(rng.sample(range(len(payloads)), 5))
    for i in hit:
        raw[i * 46 + 12 + 7] ^= 0x20  # a payload byte: that record's data CRC fails
    path.write_bytes(bytes(raw))
    (report,) = merge_verify(_answers(path, 4))
    with codec.TFRecordFile(path) as f:
        whole = f.verify()
    assert report == whole
    assert report.damaged == 5
    assert [p.offset for p in report.problems] == [i * 46 for i in hit]
