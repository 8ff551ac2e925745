"""One job model on every executor: the verify job run in this process and on a pool of
processes gives, file by file, byte for byte the JSON of ``TFRecordFile.verify()`` — over the
golden corpus (damaged and compressed files included) and over random byte-range splits of
large generated files — whatever order the tasks finish in; a worker process killed mid-job
changes nothing; a shard that cannot be read is reported, not fatal; progress never goes back;
cancelling stops early.

The helpers and jobs here are shared with tests/test_jobs_dask.py (the same checks on Dask).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

import codec
from codec.errors import ExecutorError, JobCancelled, MissingExtraError
from codec.framing import encode_record
from codec.jobs import (
    Executor,
    InlineExecutor,
    ProcessExecutor,
    Progress,
    Task,
    VerifyJob,
    VerifyPart,
    executor,
    merge_verify,
    plan,
    run,
    verify_task,
)
from codec.jobs.executors import start_method
from codec.jobs.plan import DEFAULT_SPLIT, GROUPS_PER_WORKER, group
from codec.jobs.spec import ExecutorSpec, cores, parse_executor
from codec.kinds import UNREADABLE

REPO = Path(__file__).resolve().parent.parent

# -- data ------------------------------------------------------------------------------------


def golden() -> list[Path]:
    """Every golden file: intact, damaged, compressed, empty."""
    return sorted(DATA.glob("*.tfrecord*"))


def generated(folder: Path, seed: int) -> list[Path]:
    """Three large files: small records (some holding TFRecord framing themselves, where a
    range's search for its first record stops inside a record) with random damage, large
    records, and an intact run of tiny records."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)

    def nested() -> bytes:
        return b"".join(encode_record(rng.randbytes(rng.randint(0, 80))) for _ in range(4))

    small = bytearray()
    for _ in range(4000):
        small += encode_record(
            nested() if rng.random() < 0.15 else rng.randbytes(rng.randint(0, 300))
        )
    for _ in range(6):  # flipped bits, cut-out and inserted bytes
        at = rng.randrange(len(small))
        kind = rng.randrange(3)
        if kind == 0:
            small[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del small[at : at + rng.randint(1, 40)]
        else:
            small[at:at] = rng.randbytes(rng.randint(1, 40))
    large = b"".join(encode_record(rng.randbytes(rng.randint(20_000, 90_000))) for _ in range(25))
    tiny = b"".join(encode_record(rng.randbytes(rng.randint(0, 12))) for _ in range(30_000))
    paths = []
    for name, raw in (("small", bytes(small)), ("large", large), ("tiny", tiny)):
        path = folder / f"{name}-{seed}.tfrecord"
        path.write_bytes(raw)
        paths.append(path)
    return paths


def random_tasks(paths: Sequence[Path | str], rng: random.Random, cuts: int = 8) -> list[Task]:
    """A task per compressed file, and each plain file cut at random places into ranges."""
    tasks = []
    for k, path in enumerate(paths):
        size, compression = codec.sources.probe(str(path))
        if compression != "none" or size == 0:
            tasks.append(Task(k, str(path), 0, size))
            continue
        edges = sorted({0, size, *(rng.randrange(1, size) for _ in range(rng.randint(1, cuts)))})
        tasks += [Task(k, str(path), a, b, whole=False) for a, b in itertools.pairwise(edges)]
    return tasks


def whole_json(path: Path | str) -> str:
    """What ``TFRecordFile.verify()`` says of the whole file, as JSON."""
    with codec.TFRecordFile(path) as f:
        return json.dumps(f.verify().to_json(), sort_keys=True)


def as_json(reports: Sequence[codec.VerifyReport]) -> list[str]:
    return [json.dumps(r.to_json(), sort_keys=True) for r in reports]


# -- jobs for faults, order and cancelling (module level: pickled to workers) ------------------


@dataclass(frozen=True)
class Shuffled(VerifyJob):
    """Verify, with each task waiting a random moment first, so answers come in any order."""

    seed: int = 0

    def task(self, task: Task) -> VerifyPart:
        time.sleep(random.Random(self.seed * 7919 + task.start + task.file).random() * 0.02)
        return verify_task(task)


@dataclass(frozen=True)
class StallsOnce(VerifyJob):
    """Verify; the first try of the tasks of file ``victim`` writes its process id to
    ``marker`` and waits (to be killed); later tries run normally."""

    marker: str = ""
    victim: int = 0

    def task(self, task: Task) -> VerifyPart:
        if task.file == self.victim and not os.path.exists(self.marker):
            tmp = f"{self.marker}.{os.getpid()}"
            Path(tmp).write_text(str(os.getpid()))
            os.replace(tmp, self.marker)
            for _ in range(600):  # the test kills this process long before
                time.sleep(0.1)
        return verify_task(task)


@dataclass(frozen=True)
class Poison(VerifyJob):
    """Verify; the first task of file ``victim`` kills its worker process every time."""

    victim: int = 0

    def task(self, task: Task) -> VerifyPart:
        if task.file == self.victim and task.start == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        return verify_task(task)


@dataclass(frozen=True)
class Slow(VerifyJob):
    """Verify, each task first leaving a file in ``folder`` (to count those that ran) and
    waiting a little."""

    folder: str = ""

    def task(self, task: Task) -> VerifyPart:
        Path(self.folder, f"{task.file}-{task.start}").touch()
        time.sleep(0.05)
        return verify_task(task)


@dataclass(frozen=True)
class Strict:
    """Verify without a ``failed`` method: a task's error fails the job."""

    name: str = "strict verify"

    def task(self, task: Task) -> VerifyPart:
        return verify_task(task)

    def merge(self, parts: list[VerifyPart], rerun: Callable[[Task], VerifyPart]) -> Any:
        return merge_verify(parts, rerun)

    def records(self, part: VerifyPart) -> int:
        return 0


RERUNS: list[Task] = []  # tasks the merge of Watched walked again (the merge runs here)


@dataclass(frozen=True)
class Watched(VerifyJob):
    """Verify, noting in RERUNS every task the merge runs again."""

    def merge(self, parts: list[VerifyPart], rerun: Callable[[Task], VerifyPart]) -> Any:
        def watched(task: Task) -> VerifyPart:
            RERUNS.append(task)
            return rerun(task)

        return super().merge(parts, watched)


# -- checks shared by the executors ------------------------------------------------------------


def check_identical(ex: Executor, paths: Sequence[Path], seed: int, cuts: int = 8) -> None:
    """The verify job over random splits of ``paths`` (up to ``cuts`` cuts a file) on ``ex``:
    every file's JSON exactly that of ``TFRecordFile.verify()``."""
    tasks = random_tasks(paths, random.Random(seed), cuts)
    assert any(not t.whole for t in tasks)
    got = as_json(run(Shuffled(seed=seed), tasks, ex))
    assert got == [whole_json(p) for p in paths]


def check_kill_mid_job(ex: Executor, paths: Sequence[Path], tmp: Path) -> int:
    """A worker process killed while it runs a task: the job's answer is the undisturbed
    one. Returns the killed process's id."""
    marker = tmp / "running"
    tasks = random_tasks(paths, random.Random(5), cuts=3)
    victim = len(paths) // 2
    killed: list[int] = []

    def killer() -> None:
        for _ in range(1200):
            if marker.exists():
                pid = int(marker.read_text())
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    got = as_json(run(StallsOnce(marker=str(marker), victim=victim), tasks, ex))
    thread.join()
    assert killed and killed[0] != os.getpid()
    assert got == [whole_json(p) for p in paths]
    return killed[0]


def check_unreadable(ex: Executor, tmp: Path) -> None:
    """A shard deleted after planning and one that became a folder: each gets a report with
    one ``unreadable`` problem saying why; every other file's report is as usual."""
    paths = [tmp / f"part-{i}.tfrecord" for i in range(4)]
    for i, p in enumerate(paths):
        codec.write_records(p, [bytes([i]) * n for n in range(200)])
    tasks = plan([str(p) for p in paths], split=8_000)  # a gone file of several ranges, too
    paths[1].unlink()
    paths[2].unlink()
    paths[2].mkdir()
    progress: list[Progress] = []
    reports = run(VerifyJob(), tasks, ex, progress=progress.append)
    assert [r.path for r in reports] == [str(p) for p in paths]
    for i in (0, 3):
        assert as_json([reports[i]]) == [whole_json(paths[i])]
    for i, why in ((1, "No such file or directory"), (2, "is a folder")):
        report = reports[i]
        assert not report.ok and report.records == 0
        (problem,) = report.problems
        assert problem.kind == UNREADABLE and problem.path == str(paths[i])
        assert why in problem.message and "could not be read" in problem.message
        assert problem.describe().startswith(f"{paths[i]}: ")
    assert progress[-1].tasks_done == len(tasks)
    assert progress[-1].failed == sum(1 for t in tasks if t.file in (1, 2))


def check_progress(ex: Executor, paths: Sequence[Path]) -> None:
    """Progress starts at nothing, never goes back, and ends at every task, byte and record
    (``paths`` hold no record with TFRecord framing inside, so no range's answer is
    corrected by the merge: the records counted as answers came are the files' records).

    A report comes at the start, after each answer, and as a heartbeat while no answer comes
    (a repeat of the last counts, later): how many heartbeats come depends on the machine's
    speed, so only what holds for any number of them is asserted."""
    tasks = random_tasks(paths, random.Random(11))
    seen: list[Progress] = []
    reports = run(VerifyJob(), tasks, ex, progress=seen.append)
    first = seen[0]
    assert (first.tasks_done, first.bytes_done, first.records, first.failed) == (0, 0, 0, 0)
    for p in seen:
        assert (p.job, p.tasks_total) == ("verify", len(tasks))
        assert p.bytes_total == sum(t.bytes for t in tasks)
        assert 0 <= p.tasks_done <= p.tasks_total and 0 <= p.bytes_done <= p.bytes_total
    advances = 0
    for a, b in itertools.pairwise(seen):
        # Never back, in any count or in time.
        assert b.tasks_done >= a.tasks_done and b.bytes_done >= a.bytes_done
        assert b.records >= a.records and b.failed >= a.failed
        assert b.elapsed >= a.elapsed
        if b.tasks_done > a.tasks_done:
            advances += 1
        else:  # a heartbeat: the same counts again
            assert (b.bytes_done, b.records, b.failed) == (a.bytes_done, a.records, a.failed)
    # One advance per answer: per task here, per group of small tasks on other processes.
    assert 1 <= advances <= len(tasks)
    if isinstance(ex, InlineExecutor):
        assert advances == len(tasks)
    last = seen[-1]
    assert (last.tasks_done, last.bytes_done) == (len(tasks), sum(t.bytes for t in tasks))
    assert last.tasks_total == len(tasks) and last.bytes_total == last.bytes_done
    assert last.records == sum(r.records + r.damaged + r.recovered for r in reports)
    assert last.fraction == 1.0 and last.job == "verify" and last.failed == 0


def check_cancel(ex: Executor, tmp: Path) -> None:
    """Cancelling after two answers: JobCancelled, and most tasks never ran."""
    paths = [tmp / f"c{i}.tfrecord" for i in range(40)]
    for p in paths:
        codec.write_records(p, [b"x" * 10] * 10)
    ran = tmp / "ran"
    ran.mkdir()
    tasks = plan([str(p) for p in paths])
    stop = threading.Event()

    def progress(p: Progress) -> None:
        if p.tasks_done >= 2:
            stop.set()

    with pytest.raises(JobCancelled) as info:
        run(Slow(folder=str(ran)), tasks, ex, progress=progress, cancel=stop)
    assert 2 <= info.value.done < len(tasks) and info.value.total == len(tasks)
    assert "cancelled" in str(info.value)
    assert len(list(ran.iterdir())) < len(tasks) // 2
    # cancelled before the start: nothing runs
    never = tmp / "never"
    never.mkdir()
    with pytest.raises(JobCancelled) as info:
        run(Slow(folder=str(never)), tasks, ex, cancel=stop)
    assert info.value.done == 0 and not list(never.iterdir())


# -- the executors -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessExecutor]:
    with ProcessExecutor(2, max_kills=2) as ex:
        yield ex


@pytest.fixture(params=["inline", "processes"])
def ex(request: pytest.FixtureRequest, pool: ProcessExecutor) -> Executor:
    return InlineExecutor() if request.param == "inline" else pool


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return generated(tmp_path_factory.mktemp("big"), seed=3)


def test_golden_corpus_split_at_random_is_the_whole_files_report(ex):
    check_identical(ex, golden(), seed=0 if isinstance(ex, InlineExecutor) else 1)


def test_large_files_split_at_random_are_the_whole_files_report(ex, big):
    check_identical(ex, big, seed=1)


def test_ranges_walked_again_on_the_executor(pool, tmp_path):
    """A range whose search stopped inside a record (one that holds TFRecord framing) is
    walked again by the merge, on the same executor, and the answer is still the whole
    file's."""
    rng = random.Random(8)
    inner = [encode_record(rng.randbytes(rng.randint(0, 40))) for _ in range(400)]
    path = tmp_path / "nested.tfrecord"
    codec.write_records(path, [b"".join(inner[i : i + 20]) for i in range(0, 400, 20)])
    size = path.stat().st_size
    tasks = [Task(0, str(path), a, min(a + 997, size), whole=False) for a in range(0, size, 997)]
    RERUNS.clear()
    assert as_json(run(Watched(), tasks, pool)) == [whole_json(path)]
    assert RERUNS and all(t.entry is not None for t in RERUNS)


def test_default_executor_runs_every_core(big):
    tasks = random_tasks(big, random.Random(2), cuts=2)
    assert as_json(run(VerifyJob(), tasks)) == [whole_json(p) for p in big]
    assert run(VerifyJob(), []) == []


def test_a_worker_process_killed_mid_job_changes_nothing(pool, tmp_path, big):
    check_kill_mid_job(pool, big, tmp_path)


def test_a_task_that_kills_its_worker_every_time_is_reported_alone(pool, big):
    tasks = random_tasks(big, random.Random(4), cuts=3)
    reports = run(Poison(victim=1), tasks, pool)
    assert as_json([reports[0], reports[2]]) == [whole_json(big[0]), whole_json(big[2])]
    (problem,) = reports[1].problems
    assert problem.kind == UNREADABLE and "died" in problem.message


def test_a_shard_that_cannot_be_read_is_reported_and_the_job_completes(ex, tmp_path):
    check_unreadable(ex, tmp_path)


def test_a_task_error_fails_a_job_that_does_not_report_failures(tmp_path):
    tasks = [Task(0, str(tmp_path / "gone.tfrecord"), 0, 10)]
    with pytest.raises(FileNotFoundError):
        run(Strict(), tasks, InlineExecutor(retries=0))


def test_progress_only_grows_and_ends_at_every_task(ex, big):
    check_progress(ex, big[1:])


def test_cancel_stops_the_job_early(ex, tmp_path):
    check_cancel(ex, tmp_path)


def test_cancel_on_a_pool_it_started_leaves_no_process(tmp_path):
    """Cancelled on a pool ``run`` started itself: its processes (and the tasks they ran)
    are stopped before ``run`` returns."""
    import multiprocessing

    before = set(multiprocessing.active_children())
    paths = [tmp_path / f"c{i}.tfrecord" for i in range(20)]
    for p in paths:
        codec.write_records(p, [b"x"] * 3)
    stop = threading.Event()

    def progress(p: Progress) -> None:
        if p.tasks_done >= 1:
            stop.set()

    with pytest.raises(JobCancelled):
        run(
            Slow(folder=str(tmp_path)),
            plan([str(p) for p in paths]),
            "processes:2",
            progress=progress,
            cancel=stop,
        )
    assert set(multiprocessing.active_children()) <= before


def test_stopping_a_pool_with_cancelled_tasks_leaves_no_thread_and_no_traceback(
    monkeypatch: pytest.MonkeyPatch,
):
    """A cancelled job's pool is stopped with its tasks queued and cancelled: the pool's
    thread must not fail on them (a traceback in the app's log, seen in CI) and must end, so
    no thread is left behind and the next pool forks as before."""
    import multiprocessing

    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda a: failures.append(a.exc_value))
    threads = threading.active_count()
    before = set(multiprocessing.active_children())  # another test's pool may be running
    for _ in range(60):
        ex = ProcessExecutor(2)
        batch = ex.batch()
        for key in range(40):
            batch.submit(key, time.sleep, 5.0)
        time.sleep(0.02)
        batch.cancel()
        started = time.monotonic()
        ex.close(wait=False)
        assert time.monotonic() - started < 4.0  # the running tasks were stopped, not awaited
        assert set(multiprocessing.active_children()) <= before
    assert failures == []
    assert threading.active_count() == threads


@pytest.fixture
def page_as_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``__main__`` swapped for a script that fails when run, as Streamlit makes a page (or
    AppTest a harness) the ``__main__`` module; returns the file the script notes runs in."""
    import types

    ran = tmp_path / "page-ran"
    page = tmp_path / "page.py"
    page.write_text(f"open({str(ran)!r}, 'a').close()\nraise SystemExit('the page ran')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", main)
    return ran


def test_pool_workers_do_not_run_the_main_module_again(page_as_main, big):
    with ProcessExecutor(1) as ex:
        check_identical(ex, big[2:], seed=6, cuts=2)
    assert not page_as_main.exists()
    assert sys.modules["__main__"].__file__.endswith("page.py")  # put back


def test_pools_fork_only_in_a_process_without_other_threads():
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    try:
        assert start_method() == "spawn"
    finally:
        stop.set()
        waiting.join()
    fresh = subprocess.run(
        [sys.executable, "-c", "from codec.jobs.executors import start_method as m; print(m())"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert fresh.stdout.strip() == "fork"


def test_a_forked_pool_gives_the_whole_files_report(big):
    with ProcessExecutor(2, context="fork") as ex:
        check_identical(ex, big[2:], seed=8, cuts=3)


def test_main_is_put_back_once_overlapping_starts_end():
    from codec.jobs.executors import _main_hidden

    main = sys.modules["__main__"]
    first, second = _main_hidden(), _main_hidden()  # two threads starting workers
    first.__enter__()
    second.__enter__()
    assert sys.modules["__main__"] is not main
    first.__exit__(None, None, None)
    assert sys.modules["__main__"] is not main
    second.__exit__(None, None, None)
    assert sys.modules["__main__"] is main


def test_a_job_defined_in_main_is_refused_by_the_pool_in_words(tmp_path):
    job = type("MainJob", (VerifyJob,), {"__module__": "__main__"})()
    with pytest.raises(ExecutorError, match="defined in __main__"):
        run(job, [Task(0, str(tmp_path / "x.tfrecord"))], "processes:1")


def test_executors_by_name():
    assert isinstance(executor("inline"), InlineExecutor)
    with executor("processes:3") as ex:
        assert isinstance(ex, ProcessExecutor) and ex.workers == 3
    with executor(None) as ex:
        assert isinstance(ex, ProcessExecutor) and ex.workers >= 1
    for bad in ("processes:0", "processes:two", "threads", "dask:", "dask:local:-1", "inline:2"):
        with pytest.raises(ExecutorError) as info:
            executor(bad)
        assert repr(bad) in str(info.value) or "whole number" in str(info.value)
    with pytest.raises(ExecutorError, match="inline, processes"):
        executor("bogus")


def test_dask_is_an_extra_named_when_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    for spec in ("dask:local:2", "tcp://127.0.0.1:8786"):
        with pytest.raises(MissingExtraError) as info:
            executor(spec)
        assert "pip install 'tfrecord-browser[dask]'" in str(info.value)
        shown = str(parse_executor(spec))  # the spec as printed: one text for each
        assert str(info.value).startswith(f"{shown}: ") and info.value.extra == "dask"


def test_the_codec_does_not_import_dask():
    code = (
        "import sys, codec, codec.jobs, codec.jobs.executors, codec.jobs.run;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == "[]"


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 200 << 20), max_size=300),
    workers=st.integers(1, 64),
)
def test_groups_are_runs_of_tasks_covering_each_once(sizes, workers):
    """Groups of small tasks: consecutive, each task in exactly one, never fewer groups than
    GROUPS_PER_WORKER per worker (nor than tasks), and a group of several tasks never holds
    more than a range's bytes."""
    tasks = [Task(i, f"part-{i}", 0, n) for i, n in enumerate(sizes)]
    groups = group(tasks, workers)
    assert [i for g in groups for i in g] == list(range(len(tasks)))
    assert all(len(g) and g.step == 1 for g in groups)
    assert len(groups) >= min(len(tasks), workers * GROUPS_PER_WORKER)
    for g in groups:
        if len(g) > 1:
            assert sum(sizes[i] for i in g) <= DEFAULT_SPLIT


@dataclass(frozen=True)
class _Count:
    """A job whose answer is how many tasks it ran."""

    name: str = "count"

    def task(self, task: Task) -> int:
        return 1

    def merge(self, parts: list[int], rerun: Callable[[Task], int]) -> int:
        return sum(parts)

    def records(self, part: int) -> int:
        return 0


@settings(max_examples=200, deadline=None)
@given(
    spec=st.sampled_from(
        [
            *(None, "processes", "processes:1", "processes:3", "processes:16", "inline"),
            *("dask:local:2", "tcp://h:8786"),
        ]
    ),
    tasks=st.integers(0, 40),
    work=st.integers(0, 1 << 30),
    inline_most=st.none() | st.sampled_from([0, 64 << 20]),
)
def test_one_rule_sizes_every_pool(spec, tasks, work, inline_most):
    """fit: a pool is never larger than its tasks, one task runs here when the pool was not
    sized or (for a caller that keeps large work out) when it is small, and every other
    executor is left as given."""
    asked = parse_executor(spec)
    got = asked.fit(tasks, work=work, inline_most=inline_most)
    if asked.kind != "processes":
        assert got == asked
        return
    size = asked.workers or cores()
    sized = asked.workers is not None
    here = tasks <= 1 and (not sized if inline_most is None else work <= inline_most)
    if here:
        assert str(got) == "inline"
    else:
        assert str(got) == f"processes:{min(size, max(1, tasks))}"


def test_the_commands_the_app_and_the_library_size_pools_alike(monkeypatch):
    """The command line's executor for a job and for an export, the app's for a page's job,
    and run()'s own pool: all by ExecutorSpec.fit."""
    from browser_app.cli import export as cli_export
    from browser_app.cli.main import build_parser
    from browser_app.ui import services

    run_module = sys.modules["codec.jobs.run"]  # the module, not the function of that name

    assert str(parse_executor(None).fit(1)) == "inline"
    assert str(parse_executor("processes:8").fit(3)) == "processes:3"
    assert str(parse_executor("processes:2").fit(1)) == "processes:1"  # asked for: a pool
    args = build_parser().parse_args(["export", "a.tfrecord", "b.tfrecord", "--shards", "40"])
    assert str(cli_export.export_executor(args)) == f"processes:{min(cores(), 40)}"
    small = [Task(0, "a", 0, 1 << 20)]
    big = [Task(0, "a", 0, 1 << 30)]
    ex, _ = services.job_executor(ExecutorSpec("processes", 2), small)
    assert isinstance(ex, InlineExecutor)  # not worth a process
    ex, _ = services.job_executor(ExecutorSpec("processes", 2), big)
    assert isinstance(ex, ProcessExecutor) and ex.workers == 1  # kept out of the app's process
    made: list[str] = []
    monkeypatch.setattr(
        run_module, "executor", lambda spec: made.append(str(spec)) or InlineExecutor()
    )
    run_module.run(_Count(), [Task(i, "") for i in range(3)], "processes:9")
    run_module.run(_Count(), [Task(0, "")], None)
    assert made == ["processes:3", "inline"]
