"""The verify job on a Dask cluster (one LocalCluster of two worker processes on 127.0.0.1 for
the module): the same answers as ``TFRecordFile.verify()``, byte for byte, over the golden
corpus and random byte-range splits of large files, with a worker killed mid-job, a shard that
cannot be read, and data the workers read from S3 themselves (moto's server on loopback);
progress and cancelling as on the other executors; a scheduler that cannot be reached, or is
lost mid-job, is one clear error naming its address."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import sys
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
from dask_support import local_scheduler
from netservers import Azurite, GcsEmulator, MotoS3
from test_jobs_executors import (
    as_json,
    check_cancel,
    check_identical,
    check_kill_mid_job,
    check_progress,
    check_unreadable,
    generated,
    golden,
    random_tasks,
    whole_json,
)

import codec
from codec.errors import SchedulerError
from codec.jobs import DaskExecutor, Progress, Task, VerifyJob, executor, plan, run
from codec.kinds import UNREADABLE

pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def dask_ex(
    tmp_path_factory: pytest.TempPathFactory,
    s3_server: MotoS3,
    gcs_server: GcsEmulator,
    az_server: Azurite,
) -> Iterator[DaskExecutor]:
    """``dask:local:2``, its workers started with a cache folder of their own and the object
    stores' endpoints in their environment (workers keep the environment of the cluster's
    start), while ``__main__`` is a script that fails when run (as a Streamlit page is in the
    app): the workers must not run it."""
    folder = tmp_path_factory.mktemp("dask-cache")
    env = {
        "TFRECORD_BROWSER_CACHE": str(folder),
        "AWS_ENDPOINT_URL": s3_server.endpoint,
        "STORAGE_EMULATOR_HOST": gcs_server.endpoint,
        "AZURE_STORAGE_CONNECTION_STRING": az_server.connection_string,
    }
    page = folder / "page.py"
    page.write_text("raise SystemExit('the page ran')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(page)
    with pytest.MonkeyPatch.context() as mp:
        for name, value in env.items():
            mp.setenv(name, value)
        mp.setitem(sys.modules, "__main__", main)
        ex = executor("dask:local:2")
    assert isinstance(ex, DaskExecutor)
    with ex:
        yield ex


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return generated(tmp_path_factory.mktemp("big"), seed=5)


def _worker_pids(ex: DaskExecutor) -> set[int]:
    return set(ex.client.run(os.getpid).values())


def test_golden_corpus_split_at_random_is_the_whole_files_report(dask_ex):
    check_identical(dask_ex, golden(), seed=2, cuts=4)


def test_large_files_split_at_random_are_the_whole_files_report(dask_ex, big):
    check_identical(dask_ex, big, seed=3)


def test_a_worker_killed_mid_job_changes_nothing(dask_ex, big, tmp_path):
    before = _worker_pids(dask_ex)
    killed = check_kill_mid_job(dask_ex, big, tmp_path)
    assert killed in before
    assert killed not in _worker_pids(dask_ex)


def test_a_shard_that_cannot_be_read_is_reported_and_the_job_completes(dask_ex, tmp_path):
    check_unreadable(dask_ex, tmp_path)


def test_progress_only_grows_and_ends_at_every_task(dask_ex, big):
    check_progress(dask_ex, big[1:])


def test_cancel_stops_the_job_early(dask_ex, tmp_path):
    check_cancel(dask_ex, tmp_path)


def test_a_job_reaches_the_scheduler_in_bulk_and_its_answers_come_in_one_fetch(
    dask_ex, tmp_path, monkeypatch
):
    """What Dask costs a short job is round trips: its tasks are sent with one ``map`` per
    function (its task, its groups), not one ``submit`` each, and the answers that finished
    are fetched together (here all of them at the end: the fetch interval is made longer than
    the job). The answers are the whole files' reports all the same, shards that cannot be
    read included."""
    from distributed.diagnostics.plugin import SchedulerPlugin

    from codec.jobs import executors

    class Count(SchedulerPlugin):
        """Counts graph updates: one per ``client.submit`` or ``client.map``."""

        name = "count-graph-updates"
        updates = 0

        def update_graph(self, scheduler: object, **kwargs: object) -> None:
            self.updates += 1

    paths = []
    for i in range(30):  # 30 shards on 2 workers: groups of several, and groups of one
        path = tmp_path / f"part-{i:02d}.tfrecord"
        codec.write_records(path, [bytes([i]) * (i * 7 % 50)] * (1 + i % 4))
        paths.append(path)
    paths[7].write_bytes(b"\x05not a record")  # damage, reported by its task
    tasks = plan([str(p) for p in paths])
    gathers: list[int] = []
    real_gather = dask_ex.client.gather

    def gather(futures: list[object], *args: object, **kwargs: object) -> object:
        gathers.append(len(futures))
        return real_gather(futures, *args, **kwargs)

    count = Count()
    scheduler = dask_ex._cluster.scheduler
    scheduler.add_plugin(count, name=count.name)
    monkeypatch.setattr(executors, "FETCH_EVERY", 3600.0)
    monkeypatch.setattr(dask_ex.client, "gather", gather)
    try:
        reports = run(VerifyJob(), tasks, dask_ex)
    finally:
        scheduler.remove_plugin(name=count.name)
    assert as_json(reports) == [whole_json(p) for p in paths]
    assert reports[7].damaged or reports[7].problems
    assert 1 <= count.updates <= 2  # the job's task and its groups
    assert len(gathers) == 1 and gathers[0] >= 2 * dask_ex.workers


def test_a_worker_restarted_later_does_not_run_main(dask_ex, tmp_path, monkeypatch):
    """A worker that dies while ``__main__`` is a script that fails when run (in the app, a
    Streamlit page): its nanny starts it again without running that script, so the cluster
    is whole again (it used to be restarted and fail, over and over)."""
    page = tmp_path / "page.py"
    page.write_text("raise SystemExit('the page ran')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", main)
    client = dask_ex.client
    client.wait_for_workers(2, timeout=60)
    victim = sorted(client.scheduler_info()["workers"])[0]
    with contextlib.suppress(Exception):  # the worker dies before it answers
        client.run(os._exit, 1, workers=[victim])
    deadline = time.monotonic() + 60
    while True:
        workers = set(client.scheduler_info()["workers"])
        if victim not in workers and len(workers) == 2:
            break
        assert time.monotonic() < deadline, f"the cluster has {len(workers)} workers"
        time.sleep(0.2)
    assert len(client.run(os.getpid)) == 2


def _malloc_trim() -> str | None:
    return os.environ.get("MALLOC_TRIM_THRESHOLD_")


_TRIM_BEFORE = _malloc_trim()  # read when the tests are collected, before any cluster starts


def test_local_workers_allocate_as_this_process_does(dask_ex):
    """The workers of a local cluster are not given Dask's MALLOC_TRIM_THRESHOLD_ (it turns
    off glibc's adaptive mmap threshold: a schema task took 1.5x the CPU), unless this
    process had it; nor is this process's environment changed (a pool spawned later would
    inherit it). A worker its nanny started again (after the kill test) included."""
    dask_ex.client.wait_for_workers(2, timeout=60)
    seen = dask_ex.client.run(_malloc_trim)
    assert len(seen) == 2
    assert set(seen.values()) == {_TRIM_BEFORE}
    assert _malloc_trim() == _TRIM_BEFORE


def _sampling(dask_worker: object) -> tuple[bool, float]:
    """Whether a worker samples its stack (for the dashboard's profile), and how often (s) it
    times its event loop."""
    return "profile" in dask_worker.periodic_callbacks, dask_worker._tick_interval  # type: ignore[attr-defined]


def test_local_workers_sample_nothing_nobody_reads(dask_ex):
    """The local cluster has no dashboard and silenced logs: its workers (the one the kill
    test's nanny restarted included) do not sample their stacks every 10 ms, nor time their
    event loop every 20 ms, and neither does its scheduler."""
    dask_ex.client.wait_for_workers(2, timeout=60)
    seen = dask_ex.client.run(_sampling)
    assert len(seen) == 2
    assert set(seen.values()) == {(False, 1.0)}
    assert dask_ex._cluster.scheduler._tick_interval == 1.0


def test_workers_read_objects_themselves(dask_ex, store):
    """Objects on S3, Google Cloud Storage or Azure, split into ranges: the workers read them
    (the endpoint is in their environment) and every report is the one this process gets for
    the whole object; an object deleted after planning is reported as unreadable."""
    scheme, store = store
    files = golden()[:6]
    urls = []
    for path in files:
        store.put("jobs", f"data/{path.name}", path.read_bytes())
        urls.append(f"{scheme}://jobs/data/{path.name}")
    store.put("jobs", "data/gone.tfrecord", files[0].read_bytes())
    gone = f"{scheme}://jobs/data/gone.tfrecord"
    tasks = random_tasks(urls, random.Random(9), cuts=4)
    tasks.append(Task(len(urls), gone, 0, files[0].stat().st_size))
    want = [whole_json(url) for url in urls]
    store.delete("jobs", "data/gone.tfrecord")
    reports = run(VerifyJob(), tasks, dask_ex)
    assert as_json(reports[:-1]) == want
    (problem,) = reports[-1].problems
    assert problem.kind == UNREADABLE and problem.path == gone


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_scheduler_that_cannot_be_reached_is_one_error_naming_it():
    address = f"tcp://127.0.0.1:{_free_port()}"
    for spec in (address, f"dask:{address}"):
        with pytest.raises(SchedulerError) as info:
            executor(spec, timeout=1)
        assert info.value.address == address
        assert str(info.value).startswith(f"{address}: cannot reach the Dask scheduler")


def test_losing_the_scheduler_mid_job_is_one_error_naming_it(tmp_path):
    """A scheduler (with no workers, so the tasks wait) closed while the job runs."""
    with local_scheduler(0) as cluster:
        address = cluster.scheduler_address
        paths = [tmp_path / f"{i}.tfrecord" for i in range(3)]
        for p in paths:
            p.write_bytes(b"")
        closer = threading.Thread(target=cluster.close)

        def progress(p: Progress) -> None:
            if not closer.is_alive() and closer.ident is None:
                closer.start()

        try:
            with executor(address) as ex, pytest.raises(SchedulerError) as info:
                run(VerifyJob(), plan([str(p) for p in paths]), ex, progress=progress)
        finally:
            closer.join()
    assert info.value.address == address
    assert str(info.value).startswith(f"{address}: the connection to the Dask scheduler was lost")
