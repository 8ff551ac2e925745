"""The filter job gives exactly the run one process makes (:func:`codec.filters.run_filter`):
the same record numbers, ``complete`` and feature names seen, and the same error for a name no
record has, for any split of generated shards (damaged ones included) into byte ranges, any
completion order, any limit, and filters that look at ``index`` (decided only once a record's
number is known) or only at ``intact`` (no payload decoded)."""

from __future__ import annotations

import functools
import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_jobs_executors import golden, random_tasks
from test_jobs_schema import _dataset, _tasks

import codec
from codec.example import decode
from codec.filters import FilterRun, FilterSyntaxError, compile_filter, run_filter
from codec.jobs import FilterJob, Task, plan, run

EXPRESSIONS = [
    "not intact",
    "intact and index >= 3",
    "index < 7 or not intact",
    "id < 3 or index == 11",
    "any(tok == index) or not (index in [2, 3, 5, 8])",
    "len(tok) > 1 and not has(pic)",
    '"a" in txt or ctx == 1',
    "all(tok != 0) and index > 0",
    "any(image/object/bbox/xmin >= image/object/bbox/xmax)",
    "f > 0.5 and index <= 30 or nosuch == 2",
]
_SLOW_OK = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


def _as_json(get) -> str:
    """A run as JSON (names sorted), or the error it raised."""
    try:
        found: FilterRun = get()
    except FilterSyntaxError as exc:
        return json.dumps({"error": type(exc).__name__, "message": str(exc)})
    return json.dumps(
        {"matches": found.matches, "complete": found.complete, "seen": sorted(found.seen)}
    )


def _one_process(paths: list[str], expression: str, limit: int | None) -> str:
    with codec.TFRecordDataset(paths) as ds:
        return _as_json(lambda: run_filter(ds, expression, limit=limit))


def _job(tasks: list[Task], expression: str, limit: int | None, order: random.Random) -> str:
    job = FilterJob(expression, limit=limit)
    parts = [job.task(t) for t in tasks]
    order.shuffle(parts)  # tasks finish in any order
    return _as_json(lambda: job.merge(parts, rerun=job.task))


@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW_OK)
@given(
    seed=st.integers(0, 2**32 - 1),
    cuts=st.lists(st.floats(0, 1), max_size=6),
    limits=st.lists(st.none() | st.integers(1, 12), min_size=len(EXPRESSIONS)),
)
def test_any_split_and_limit_gives_the_one_process_run(tmp_path, seed, cuts, limits):
    rng = random.Random(seed)
    paths = _dataset(Path(tempfile.mkdtemp(dir=tmp_path)), rng)
    tasks = _tasks(paths, cuts)
    for expression, limit in zip(EXPRESSIONS, limits):
        want = _one_process(paths, expression, limit)
        assert _job(tasks, expression, limit, rng) == want, (expression, limit)


@pytest.mark.parametrize("spec", ["inline", "processes:2"])
def test_executors_give_the_one_process_run(tmp_path, spec):
    """Generated shards and the golden corpus (damaged and compressed files included), cut
    at random places into ranges, on a real executor."""
    rng = random.Random(14)
    paths = _dataset(tmp_path, rng, records=120)
    for files in (paths, [str(p) for p in golden()]):
        tasks = random_tasks(files, rng)
        assert any(not t.whole for t in tasks)
        with codec.jobs.executor(spec) as ex:
            for expression in (EXPRESSIONS[2], EXPRESSIONS[4], "not intact", "has(label)"):
                for limit in (None, 3):
                    want = _one_process(files, expression, limit)
                    job = FilterJob(expression, limit=limit)
                    got = _as_json(functools.partial(run, job, tasks, ex))
                    assert got == want, (expression, limit)


def test_a_bad_expression_fails_when_the_job_is_made():
    with pytest.raises(FilterSyntaxError):
        FilterJob("label == ")


def test_the_limit_stops_a_task_early_and_keeps_the_datasets_first_matches(tmp_path):
    """Two files; the second one's task finds its own first matches, which the merge does
    not keep when the first file already gave ``limit`` of them."""
    a, b = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    codec.write_records(a, [codec.encode_example({"x": ("int64", [i])}) for i in range(10)])
    codec.write_records(b, [codec.encode_example({"x": ("int64", [i])}) for i in range(10)])
    job = FilterJob("x >= 4", limit=3)
    tasks = plan([str(a), str(b)])
    parts = [job.task(t) for t in tasks]
    assert [p.found.matches for p in parts] == [[4, 5, 6], [4, 5, 6]]
    found = job.merge(parts)
    assert (found.matches, found.complete) == ([4, 5, 6], False)


# -- deciding before the record number is known -----------------------------------------------


_VALUES = st.one_of(st.integers(-3, 40), st.floats(-2, 40, width=32), st.just(float("nan")))
_INDEX_EXPRESSIONS = [
    "index < a",
    "not (index > a)",
    "any(b == index)",
    "all(b <= index) or intact",
    "not any(index == a and b > 0)",
    "index in b or index in [3, 4]",
    "a == 1 and index",
    "not index",
    "len(b) == index or has(c)",
    "index >= 5 and not (b != index)",
]


@settings(max_examples=200, deadline=None)
@given(
    a=st.lists(_VALUES, max_size=2),
    b=st.lists(_VALUES, max_size=4),
    intact=st.booleans(),
    index=st.integers(0, 45),
    expression=st.sampled_from(_INDEX_EXPRESSIONS),
)
def test_a_decision_without_the_number_holds_for_every_number(a, b, intact, index, expression):
    feats = {}
    if a:
        feats["a"] = ("float" if any(isinstance(v, float) for v in a) else "int64", a)
    if b:
        feats["b"] = ("float" if any(isinstance(v, float) for v in b) else "int64", b)
    record = decode(codec.encode_example(feats)) if intact else None
    flt = compile_filter(expression)
    decided = flt.decide(record, intact=intact)
    if decided is not None:
        assert flt.matches(record, index=index, intact=intact) is decided
