"""The schema job (with the Object Detection checks) gives exactly the schema one process
infers (:func:`codec.schema.infer_schema`): byte-identical JSON and chart data, per-shard
statistics and record numbers included, for any split of the files into byte ranges, any
completion order, damaged files, and with every bounded statistic past its bound."""

from __future__ import annotations

import copy
import itertools
import json
import math
import pickle
import random
import struct
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import DATA
from damage import damage
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
import codec.schema.counters as counters
import codec.schema.detection as detection
import codec.schema.scan as scan
import codec.schema.stats as stats
from codec.example import encode_example, encode_sequence_example
from codec.framing import encode_record
from codec.jobs import SchemaJob, Task, plan, run
from codec.schema import RecordList, ValueCounter, infer_schema
from codec.schema.counters import mix64

LABELS = {1: "cat", 2: "dog", 3: "yak"}
_SLOW_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def _json(schema: codec.schema.Schema) -> str:
    doc = schema.to_json()
    doc["statistics"] = schema.statistics()
    return json.dumps(doc, sort_keys=True)


def _tasks(paths: list[str], cuts: list[float]) -> list[Task]:
    """A task per compressed file; each plain file cut into ranges at ``cuts`` (fractions of
    its size, taken in turn for every file)."""
    tasks = []
    for t in plan(paths, split=1 << 40):
        if t.path.endswith((".gz", ".zlib")) or t.end == 0:
            tasks.append(t)
            continue
        at = sorted({int(c * t.end) for c in cuts if 0 < int(c * t.end) < t.end})
        edges = [0, *at, t.end]
        tasks += [Task(t.file, t.path, a, b, whole=False) for a, b in itertools.pairwise(edges)]
    return tasks


def _job_json(paths: list[str], tasks: list[Task], order: random.Random, **opts) -> str:
    job = SchemaJob(**opts)
    parts = [job.task(t) for t in tasks]
    order.shuffle(parts)  # tasks finish in any order
    return _json(job.merge(parts, rerun=job.task))


# -- generated datasets -------------------------------------------------------------------------


def _gif(w: int, h: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", w, h) + bytes(8)


def _png(w: int, h: int, complete: bool) -> bytes:
    head = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", w, h) + bytes(9)
    return head + (b"\x00\x00\x00\x00IEND\xaeB`\x82" if complete else b"")


def _floats(rng: random.Random, n: int) -> list[float]:
    specials = [0.0, -0.0, math.nan, math.inf, -math.inf, 1e-45, -3.4e38]
    return [rng.choice(specials) if rng.random() < 0.2 else rng.uniform(-9, 9) for _ in range(n)]


def _objects(rng: random.Random, feats: dict) -> None:
    """Object Detection lists, now and then with a problem planted."""
    n = rng.choice([0, 1, 2, 3])
    labels = [rng.choice([1, 2, 3, 3, 7]) for _ in range(n)]
    texts = [(LABELS.get(v, "zebra") if rng.random() < 0.85 else "dog").encode() for v in labels]
    xs = [rng.uniform(-0.1, 0.6) for _ in range(n)]
    ys = [rng.uniform(0.0, 0.6) for _ in range(n)]
    x1 = [x + rng.uniform(-0.1, 0.5) for x in xs]
    y1 = [rng.choice([y + 0.2, math.nan]) if rng.random() < 0.1 else y + 0.3 for y in ys]
    lists = {
        "image/object/bbox/xmin": ("float", xs),
        "image/object/bbox/ymin": ("float", ys),
        "image/object/bbox/xmax": ("float", x1),
        "image/object/bbox/ymax": ("float", y1),
        "image/object/class/label": ("int64", labels),
        "image/object/class/text": ("bytes", texts),
    }
    if rng.random() < 0.15:  # a list left out, or one of another length
        name = rng.choice(sorted(lists))
        if rng.random() < 0.5:
            del lists[name]
        else:
            t, v = lists[name]
            lists[name] = (t, v[:-1] if v else v)
    if rng.random() < 0.1:
        lists["image/object/difficult"] = ("int64", [0] * n)
    feats.update(lists)
    w, h = rng.choice([(64, 48), (32, 32)])
    feats["image/encoded"] = ("bytes", [_gif(w, h)])
    feats["image/width"] = ("int64", [w])
    feats["image/height"] = ("int64", [h if rng.random() < 0.9 else h + 1])


def _example(rng: random.Random, wide: int, boxes: bool) -> bytes:
    feats: dict = {}
    if rng.random() < 0.9:
        feats["id"] = ("int64", [rng.randrange(wide)])
    elif rng.random() < 0.5:
        feats["id"] = ("float", [rng.uniform(0, 1)])  # a type conflict
    n = rng.choice([1, 1, 1, 2, rng.randrange(0, 90)])  # many distinct lengths now and then
    feats["tok"] = ("int64", [0 if rng.random() < 0.3 else rng.randrange(wide) for _ in range(n)])
    words = [b"a", b"bb", b"ccc", "\u00e9t\u00e9".encode(), b"\x00\xff"]
    feats["txt"] = (
        "bytes",
        [
            rng.choice(words) if rng.random() < 0.6 else rng.randbytes(rng.randrange(1, 6))
            for _ in range(rng.randrange(0, 4))
        ],
    )
    if rng.random() < 0.05:
        feats["txt"][1].append(b"x" * 300)  # a long value: not counted one by one
    if rng.random() < 0.05:  # a value holding TFRecord framing: ranges may enter inside it
        inner = b"".join(encode_record(rng.randbytes(rng.randrange(0, 30))) for _ in range(3))
        feats["blob"] = ("bytes", [inner])
    if rng.random() < 0.8:
        feats["f"] = ("float", _floats(rng, rng.randrange(0, 4)))
    if rng.random() < 0.3:
        w, h = rng.randrange(1, 9), rng.randrange(1, 9)
        pic = _png(w, h, rng.random() < 0.8) if rng.random() < 0.7 else _gif(w, h)
        feats["pic"] = ("bytes", [pic])
    if boxes:
        _objects(rng, feats)
    return encode_example(feats)


def _sequence(rng: random.Random, wide: int) -> bytes:
    steps = [
        ("int64", [rng.randrange(wide) for _ in range(rng.randrange(0, 4))])
        for _ in range(rng.randrange(0, 5))
    ]
    words = [
        ("bytes", [rng.choice([b"x", b"y", rng.randbytes(2)])]) for _ in range(rng.randrange(0, 3))
    ]
    lists = {"steps": steps}
    if rng.random() < 0.7:
        lists["words"] = words
    return encode_sequence_example({"ctx": ("int64", [rng.randrange(5)])}, lists)


def _payload(rng: random.Random, wide: int, boxes: bool) -> bytes:
    roll = rng.random()
    if roll < 0.05:
        return rng.randbytes(rng.randrange(0, 20))  # raw bytes
    if roll < 0.15:
        return _sequence(rng, wide)
    return _example(rng, wide, boxes)


def _dataset(root: Path, rng: random.Random, records: int = 40) -> list[str]:
    """A few shards of generated records: plain (sometimes damaged) or GZIP."""
    wide = rng.choice([6, 5000])  # few distinct values, or more than the counters hold
    boxes = rng.random() < 0.6
    paths = []
    for k in range(rng.randrange(1, 4)):
        payloads = [_payload(rng, wide, boxes) for _ in range(rng.randrange(0, records))]
        if rng.random() < 0.2:
            path = root / f"part-{k}.tfrecord.gz"
            codec.write_records(path, payloads, compression="gzip")
        else:
            path = root / f"part-{k}.tfrecord"
            raw = b"".join(encode_record(p) for p in payloads)
            path.write_bytes(damage(rng, raw, hits=2) if rng.random() < 0.4 else raw)
        paths.append(str(path))
    return paths


def _check(tmp_path: Path, seed: int, cuts: list[float], records: int = 40) -> None:
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = _dataset(root, rng, records)
    label_map = LABELS if rng.random() < 0.5 else None
    want = _json(infer_schema(paths, label_map=label_map))
    tasks = _tasks(paths, cuts)
    assert _job_json(paths, tasks, rng, label_map=label_map) == want


_CUTS = st.lists(st.floats(0, 1), max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=_SLOW_OK)
@given(seed=st.integers(0, 2**32 - 1), cuts=_CUTS)
def test_any_split_of_generated_shards_gives_the_one_process_schema(tmp_path, seed, cuts):
    _check(tmp_path, seed, cuts)


@pytest.fixture
def small_bounds(monkeypatch):
    """Every bounded statistic a few entries wide, and batches of a few records, so small
    datasets go past every bound, and the one-process run cuts batches elsewhere than the
    job's ranges."""
    real = ValueCounter

    def tiny(capacity: int = 10_000, sketch: int = 1024, budget: int = 4096) -> ValueCounter:
        return real(capacity=min(capacity, 6), sketch=8, budget=12)

    monkeypatch.setattr(stats, "ValueCounter", tiny)
    monkeypatch.setattr(stats, "_LEN_TRACKED", 3)
    monkeypatch.setattr(stats, "_LEN_RECORD_CAP", 4)
    monkeypatch.setattr(stats, "_IMAGE_SIZES_CAP", 2)
    monkeypatch.setattr(detection, "_PAIRS_CAP", 2)
    monkeypatch.setattr(RecordList.__init__, "__defaults__", (5,))
    monkeypatch.setattr(scan, "_CHUNK", 7)
    monkeypatch.setattr(scan.scan_slow, "__defaults__", (None, 3))


@settings(max_examples=25, deadline=None, suppress_health_check=_SLOW_OK)
@given(seed=st.integers(0, 2**32 - 1), cuts=_CUTS)
def test_bounded_statistics_past_their_bounds_do_not_depend_on_the_split(
    tmp_path, small_bounds, seed, cuts
):
    _check(tmp_path, seed, cuts)


def _alone(path: str, first: int, **opts) -> codec.schema.Schema:
    """``path``'s schema inferred alone, its records numbered from ``first``."""
    alone = infer_schema([path], **opts)
    alone.builder.shift(first)
    return codec.schema.Schema(alone.builder, total=alone.total)


def _shards_stand_alone(tmp_path: Path, seed: int) -> None:
    """Each file's statistics in a dataset's schema are those of the file inferred alone, and
    the dataset's own figures are those of a run that keeps no per-file statistics: merging
    the files into the dataset takes nothing over from any of them (an independent oracle:
    the job and the one-process run share the merge, so comparing them cannot show this)."""
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    paths = _dataset(root, rng)
    label_map = LABELS if rng.random() < 0.5 else None
    whole = infer_schema(paths, label_map=label_map)
    job = SchemaJob(label_map=label_map)
    parts = [job.task(t) for t in _tasks(paths, [rng.random() for _ in range(3)])]
    by_job = job.merge(parts, rerun=job.task)
    flat = infer_schema(paths, label_map=label_map, per_shard=False)
    for schema in (whole, by_job):
        if len(paths) > 1:
            assert set(schema.shards) == set(paths)
            for info in schema.files:
                alone = _alone(info.path, info.first_record, label_map=label_map)
                shard = schema.shards[info.path]
                assert shard.to_json() == alone.to_json()
                assert shard.statistics() == alone.statistics()
        doc = schema.to_json()
        assert doc == flat.to_json()
        stats_doc = schema.statistics()
        stats_doc.pop("shards", None)
        assert stats_doc == flat.statistics()


@settings(max_examples=25, deadline=None, suppress_health_check=_SLOW_OK)
@given(seed=st.integers(0, 2**32 - 1))
def test_each_files_statistics_are_its_own_after_the_dataset_merge(tmp_path, seed):
    _shards_stand_alone(tmp_path, seed)


@settings(max_examples=25, deadline=None, suppress_health_check=_SLOW_OK)
@given(seed=st.integers(0, 2**32 - 1))
def test_each_files_statistics_are_its_own_past_every_bound(tmp_path, small_bounds, seed):
    _shards_stand_alone(tmp_path, seed)


@settings(max_examples=25, deadline=None, suppress_health_check=_SLOW_OK)
@given(seed=st.integers(0, 2**32 - 1), cuts=_CUTS, per_shard=st.booleans())
def test_answers_combined_in_groups_give_the_one_process_schema(tmp_path, seed, cuts, per_shard):
    """Tasks run in groups (as on a pool or Dask): the answers ``combine`` folds together,
    merged, give the schema one process infers, with and without each file's statistics."""
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    (root / "more").mkdir()
    paths = _dataset(root, rng) + _dataset(root / "more", rng)
    label_map = LABELS if rng.random() < 0.5 else None
    want = _json(infer_schema(paths, label_map=label_map, per_shard=per_shard))
    job = SchemaJob(label_map=label_map, per_shard=per_shard)
    tasks = _tasks(paths, cuts) if rng.random() < 0.5 else plan(paths)  # ranges, whole files
    edges = sorted({0, len(tasks), *(rng.randrange(len(tasks) + 1) for _ in range(4))})
    parts = []
    for a, b in itertools.pairwise(edges):
        combined = job.combine([job.task(t) for t in tasks[a:b]])
        wholes = sum(1 for t in tasks[a:b] if t.whole)
        if not per_shard and wholes > 1 and all(t.whole for t in tasks[a:b]):
            assert len(combined) == 1  # whole files in a row travel as one answer
        assert len(combined) <= b - a
        parts += combined
    rng.shuffle(parts)
    assert _json(job.merge(parts, rerun=job.task)) == want


def test_many_small_shards_on_a_pool_run_in_groups(tmp_path):
    """Forty shards on two processes run as groups of several shards (fewer answers than
    shards come back) and give the one-process schema, each file's statistics included."""
    rng = random.Random(5)
    paths = []
    for k in range(40):
        path = tmp_path / f"part-{k:03d}.tfrecord"
        codec.write_records(
            path, [_example(rng, 6, k % 3 == 0) for _ in range(rng.randrange(1, 9))]
        )
        paths.append(str(path))
    tasks = plan(paths)
    answers: list[int] = []
    for per_shard in (False, True):
        want = _json(infer_schema(paths, label_map=LABELS, per_shard=per_shard))
        got = run(
            SchemaJob(label_map=LABELS, per_shard=per_shard),
            tasks,
            "processes:2",
            progress=lambda p: answers.append(p.tasks_done),
        )
        assert _json(got) == want
    assert len(answers) < 2 * len(tasks)  # progress came per group, not per shard


FOLDS: list[tuple[float, list[tuple[int, int]]]] = []  # (when, the tasks) of each fold here


@dataclass
class LastIsLate(SchemaJob):
    """The schema job, its last task waiting ``late`` seconds first (and the others a random
    moment, so answers come in any order); its merger notes in FOLDS when it was fed which
    answers (the merge runs in this process)."""

    late: float = 1.0
    last: tuple[int, int] = (-1, -1)

    def task(self, task: Task) -> codec.jobs.SchemaPart:
        key = (task.file, task.start)
        time.sleep(self.late if key == self.last else random.Random(hash(key)).random() * 0.05)
        return super().task(task)

    def merger(self, rerun=None):  # type: ignore[no-untyped-def]
        inner = super().merger(rerun)
        real = inner.add

        def add(parts):  # type: ignore[no-untyped-def]
            FOLDS.append((time.monotonic(), [(p.task.file, p.task.start) for p in parts]))
            real(parts)

        inner.add = add  # type: ignore[method-assign]
        return inner


@pytest.mark.parametrize("per_shard", [False, True])
def test_answers_are_merged_in_task_order_while_later_tasks_run(tmp_path, per_shard):
    """On a pool, the answers come in any order; the merge takes them in task order as soon
    as every one before them is in, so most of it is done before the last task ends, and
    the schema is the one one process infers."""
    rng = random.Random(11)
    paths: list[str] = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        paths += _dataset(tmp_path / name, rng, records=60)
    tasks = _tasks(paths, [0.3, 0.6])  # plain files in ranges, stitched by the merge
    want = _json(infer_schema(paths, per_shard=per_shard))
    job = LastIsLate(per_shard=per_shard, last=(tasks[-1].file, tasks[-1].start))
    FOLDS.clear()
    ended: list[float] = []

    def progress(p: codec.jobs.Progress) -> None:
        if p.tasks_done == p.tasks_total and not ended:
            ended.append(time.monotonic())

    got = run(job, tasks, "processes:2", progress=progress)
    assert _json(got) == want
    fed = [key for _, keys in FOLDS for key in keys]
    order = [(t.file, t.start) for t in tasks]
    assert fed == [k for k in order if k in fed]  # in task order (groups: their first task)
    assert fed[-1] == order[-1]
    early = [keys for when, keys in FOLDS if when < ended[0] - 0.5]
    assert early and len(early) < len(FOLDS)  # folded while the last task still ran


# -- the golden corpus, and datasets planned as the commands will ------------------------------


def _golden() -> list[str]:
    files = sorted(DATA.glob("*.tfrecord*")) + sorted((DATA / "shards").glob("*"))
    return [str(p) for p in files]


@pytest.mark.parametrize(("label_map", "pieces"), [(None, 5), (None, 29), (LABELS, 13)])
def test_golden_corpus_split_every_few_bytes(label_map, pieces):
    paths = _golden()
    want = _json(infer_schema(paths, label_map=label_map))
    cuts = [i / pieces for i in range(1, pieces)]
    got = _job_json(paths, _tasks(paths, cuts), random.Random(pieces), label_map=label_map)
    assert got == want


def test_golden_corpus_with_pictures_decoded():
    paths = _golden()
    want = _json(infer_schema(paths, decode_images=True, detection=False, per_shard=False))
    tasks = _tasks(paths, [0.25, 0.5, 0.75])
    opts = {"decode_images": True, "detection": False, "per_shard": False}
    assert _job_json(paths, tasks, random.Random(3), **opts) == want


def test_detection_data_with_planted_problems_planned_in_ranges(tmp_path):
    from browser_app.sample_data import write_detection_checks

    paths = []
    for k in range(3):
        path = tmp_path / f"od-{k}.tfrecord"
        write_detection_checks(path, 150, seed=k)
        paths.append(str(path))
    for label_map in (None, LABELS):
        want = _json(infer_schema(paths, label_map=label_map))
        tasks = plan(paths, split=16_384)
        assert len(tasks) > 3 * 3  # ranges of every file
        got = _job_json(paths, tasks, random.Random(1), label_map=label_map)
        assert got == want
        doc = json.loads(got)
        assert {f["check"] for f in doc["findings"]} >= {"object_lengths", "box_range", "damaged"}


def test_record_lists_past_their_cap_across_ranges(tmp_path):
    """More records than a drift list keeps (the smallest record numbers are kept, whichever
    range saw them), in two shards cut into ranges."""
    paths = []
    rng = random.Random(5)
    for k in range(2):
        path = tmp_path / f"many-{k}.tfrecord"
        payloads = [
            encode_example(
                {"a": ("int64", [i])}
                if rng.random() < 0.7
                else {"a": ("float", [0.5]), "b": ("bytes", [b"x"] * rng.randrange(3))}
            )
            for i in range(14_000)
        ]
        codec.write_records(path, payloads)
        paths.append(str(path))
    want = _json(infer_schema(paths))
    doc = json.loads(want)
    assert doc["missing_counts"]["b"] > counters.RECORD_CAP  # past the cap
    tasks = plan(paths, split=25_000)
    assert _job_json(paths, tasks, random.Random(2)) == want


def test_parts_report_their_records_and_ranges_are_walked_again_when_needed(tmp_path):
    """A record holding TFRecord framing: a range starting inside it enters at a record
    inside the record, and is walked again from where the range before it left."""
    inner = b"".join(encode_record(encode_example({"x": ("int64", [7])})) for _ in range(40))
    payloads = [encode_example({"blob": ("bytes", [inner]), "n": ("int64", [i])}) for i in range(6)]
    path = tmp_path / "nested.tfrecord"
    codec.write_records(path, payloads)
    size = path.stat().st_size
    job = SchemaJob()
    tasks = [Task(0, str(path), a, b, whole=False) for a, b in itertools.pairwise([0, 200, size])]
    parts = [job.task(t) for t in tasks]
    assert parts[1].walk is not None and parts[1].walk.entry != parts[0].walk.exit  # inside
    walked = []

    def rerun(task: Task):
        walked.append(task)
        return job.task(task)

    assert sum(job.records(p) for p in parts) != 6
    got = job.merge(parts, rerun=rerun)
    assert walked and walked[0].entry == parts[0].walk.exit
    assert _json(got) == _json(infer_schema(str(path)))
    assert got.records == 6 and got.to_json()["features"]["n"]["numeric"]["max"] == 5


def test_forced_compression(tmp_path):
    path = tmp_path / "named-plain.tfrecord"
    path.write_bytes((DATA / "basic.tfrecord.zlib").read_bytes())
    want = _json(infer_schema(str(path), compression="zlib"))
    tasks = plan(str(path), split=100, sizes=[(path.stat().st_size, "zlib")])
    assert [t.whole for t in tasks] == [True]
    assert _job_json([str(path)], tasks, random.Random(0), compression="zlib") == want


def test_empty_and_missing_answers():
    job = SchemaJob()
    empty = job.merge([])
    assert empty.records == 0 and empty.total == 0 and not empty.files
    assert json.loads(_json(empty))["features"] == {}


def test_job_pickles_with_its_label_map():
    import pickle

    job = SchemaJob(label_map={1: "cat"})
    again = pickle.loads(pickle.dumps(job))
    assert again.name == "schema" and again.label_map == {1: "cat"}


# -- the counters themselves --------------------------------------------------------------------


def _state(c: ValueCounter) -> tuple:
    return (c.exact, c.total, c.distinct(), c.top(20), sorted(c.estimates().items(), key=repr))


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(st.integers(0, 60) | st.binary(max_size=2), max_size=300),
    cuts=st.lists(st.integers(0, 300), max_size=6),
    seed=st.integers(0, 2**32 - 1),
)
def test_value_counter_does_not_depend_on_the_split_nor_the_merge_order(values, cuts, seed):
    """Also when counters travel (pickled, as answers from workers do) and go on counting
    after."""
    keys = mix64(np.arange(len(values), dtype=np.uint64))
    travel = random.Random(seed ^ 1)

    def counter(lo: int, hi: int) -> ValueCounter:
        c = ValueCounter(capacity=10, sketch=8, budget=16)
        for a, b in itertools.pairwise(range(lo, hi + 1, 7) if hi > lo else []):
            c.add(values[a:b], keys[a:b])
            if travel.random() < 0.3:
                c = pickle.loads(pickle.dumps(c))
        c.add(values[(hi - lo) // 7 * 7 + lo : hi], keys[(hi - lo) // 7 * 7 + lo : hi])
        return c

    whole = counter(0, len(values))
    edges = [0, *sorted(c for c in cuts if c < len(values)), len(values)]
    parts = [counter(a, b) for a, b in itertools.pairwise(edges)]
    rng = random.Random(seed)
    while len(parts) > 1:  # a random merge tree
        i = rng.randrange(len(parts) - 1)
        a, b = parts[i], parts.pop(i + 1)
        if rng.random() < 0.5:
            a, b = b, a
        a = copy.deepcopy(a)
        a.merge(b)
        parts[i] = a
    assert _state(parts[0]) == _state(whole)
    assert len(whole._keys) <= whole.budget


@settings(max_examples=200, deadline=None)
@given(
    numbers=st.lists(st.integers(0, 10**6), unique=True, max_size=60),
    cuts=st.lists(st.integers(0, 60), max_size=8),
    cap=st.integers(1, 12),
    seed=st.integers(0, 2**32 - 1),
)
def test_record_lists_keep_the_smallest_numbers_whatever_the_order(numbers, cuts, cap, seed):
    rng = random.Random(seed)
    edges = [0, *sorted(c for c in cuts if c < len(numbers)), len(numbers)]
    pieces = [numbers[a:b] for a, b in itertools.pairwise(edges)]
    rng.shuffle(pieces)
    lists = []
    for piece in pieces:
        one = RecordList(cap)
        for part in np.array_split(np.array(piece, np.int64), rng.randrange(1, 4)):
            one.add(part)
        lists.append(one)
    total = lists[0]
    for more in lists[1:]:
        total.merge(more)
    assert total.tolist() == sorted(numbers)[:cap] and total.count == len(numbers)
