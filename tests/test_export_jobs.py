"""Export as a job: the pieces of an output (its shards) written in parallel on any executor,
byte-identical to the export in this process, and atomic — nothing under a final name until
every piece is written and verified, and no temporary output left when one fails or the
export is cancelled.

Datasets are generated (hypothesis): several files, pending edits (values, deleted and
duplicated records), a selection, and a record whose data CRC fails.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dask_support
import export_gate
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from browser_app import export as E
from browser_app.cli import main
from browser_app.cli.export import export_executor
from browser_app.cli.main import build_parser
from browser_app.edits import Journal
from browser_app.errors import ExportError
from browser_app.export import job as job_module
from browser_app.export import plan as plan_module
from browser_app.export import remote, tfrecord
from browser_app.export.job import ExportJob, ExportTask
from browser_app.export.running import run as run_export
from browser_app.export.staging import PieceRun
from browser_app.export.tempfiles import RunLock
from codec import example as ex
from codec.errors import JobCancelled
from codec.jobs import InlineExecutor, ProcessExecutor, executor
from codec.jobs.executors import Batch, WorkerDied


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessExecutor]:
    """Two local processes, shared by the tests of this module (left running between jobs)."""
    with ProcessExecutor(2) as ex_:
        yield ex_


def _dataset(folder: Path, sizes: list[int], damaged: int | None) -> list[str]:
    """Files of ``sizes`` records (Examples with an int, a float and some bytes); with
    ``damaged``, that record of the first file has a byte of its payload flipped."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    n = 0
    for k, size in enumerate(sizes):
        payloads = [
            ex.encode_example(
                {
                    "id": ("int64", [n + i]),
                    "score": ("float", [(n + i) / 7]),
                    "text": ("bytes", [f"r{n + i}".encode() * (i % 5 + 1)]),
                }
            )
            for i in range(size)
        ]
        n += size
        path = folder / f"part-{k}.tfrecord"
        codec.write_records(path, payloads)
        paths.append(str(path))
    if damaged is not None and sizes[0] > damaged:
        with codec.TFRecordFile(paths[0]) as f:
            offset, _length = f.span(damaged)
        raw = bytearray(Path(paths[0]).read_bytes())
        raw[offset + 12] ^= 0xFF  # the first payload byte: the data CRC fails
        Path(paths[0]).write_bytes(bytes(raw))
    return paths


def _edit(j: Journal, total: int, seed: int, damaged: int | None) -> None:
    """Pending edits spread over the dataset: a value set, a record deleted, one duplicated
    and its copy changed (never the ``damaged`` record: its bytes cannot be read)."""
    if total < 4:
        return
    a, b, c = ((seed * m + k) % total for m, k in ((1, 0), (7, 1), (13, 2)))
    a, b, c = (r if r != damaged else (r + 1) % total for r in (a, b, c))
    j.set_value(a, "id", 0, str(10**12 + a))
    if b != a:
        j.delete_record(b)
    if c not in (a, b):
        new = j.duplicate_record(c)
        j.set_value(new, "text", 0, "copy")


def _export(
    paths: list[str],
    out: Path,
    *,
    edit_seed: int | None,
    selection: list[int] | None,
    damaged: int | None = None,
    **kw: Any,
) -> tuple[dict[str, Any], dict[str, bytes]]:
    """Export with a journal of edits into a new folder ``out``: the report (as JSON data,
    the folder's name replaced, its time left out) and every file written."""
    out.mkdir(parents=True)
    with codec.TFRecordDataset(paths) as ds:
        jpath = str(out.parent / f"{out.name}.journal")
        with Journal(ds, path=jpath) as j:
            if edit_seed is not None:
                _edit(j, len(ds), edit_seed, damaged)
            report = E.export(j, out / kw.pop("name", "o.tfrecord"), selection=selection, **kw)
    data = dataclasses.asdict(report)
    data.pop("seconds")
    data["summary"] = report.summary()
    text = json.dumps(data, default=str, sort_keys=True).replace(str(out), "OUT")
    return json.loads(text), {p.name: p.read_bytes() for p in sorted(out.iterdir())}


datasets = st.fixed_dictionaries(
    {
        "sizes": st.lists(st.integers(0, 40), min_size=1, max_size=3),
        "shards": st.integers(1, 5),
        "compression": st.sampled_from(["none", "gzip", "zlib"]),
        "damaged": st.none() | st.integers(0, 10),
        "edit_seed": st.none() | st.integers(0, 1000),
        "every": st.none() | st.integers(1, 4),  # the selection: every n-th record
    }
)


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=datasets)
def test_sharded_exports_are_identical_on_every_executor(
    case: dict[str, Any], pool: ProcessExecutor
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        paths = _dataset(base / "src", case["sizes"], case["damaged"])
        total = sum(case["sizes"])
        selection = list(range(0, total, case["every"])) if case["every"] else None
        options = {
            "damaged": case["damaged"],
            "edit_seed": case["edit_seed"],
            "selection": selection,
            "shards": case["shards"],
            "compression": case["compression"],
        }
        inline = _export(paths, base / "inline", executor="inline", **options)
        parallel = _export(paths, base / "pool", executor=pool, **options)
        assert parallel == inline
        report, files = inline
        assert report["records"] == sum(
            len(list(codec.TFRecordFile(str(base / "inline" / n)))) for n in files if "map" not in n
        )


def test_every_format_gives_the_same_bytes_in_a_worker(
    tmp_path: Path, pool: ProcessExecutor
) -> None:
    """Formats that are not split run as one piece: on a worker process as here."""
    paths = _dataset(tmp_path / "src", [30, 12], damaged=4)
    for name in ("o.jsonl", "o.csv", "o.json", "o.parquet", "o.zip", "o.tfrecord"):
        here = _export(paths, tmp_path / f"here-{name}", edit_seed=5, selection=None, name=name)
        there = _export(
            paths, tmp_path / f"there-{name}", edit_seed=5, selection=None, name=name, executor=pool
        )
        assert there == here, name


def test_a_dask_cluster_writes_the_same_shards(tmp_path: Path) -> None:
    paths = _dataset(tmp_path / "src", [25, 0, 40], damaged=3)
    options: dict[str, Any] = {"edit_seed": 11, "selection": list(range(1, 65, 2)), "shards": 3}
    inline = _export(paths, tmp_path / "inline", compression="gzip", **options)
    with executor("dask:local:2") as cluster:
        dask = _export(paths, tmp_path / "dask", compression="gzip", executor=cluster, **options)
    assert dask == inline and len(inline[1]) == 4  # three shards and the index map


def _left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_shard_that_fails_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer fails on the third shard (inline): no shard appears, and no temporary."""
    paths = _dataset(tmp_path / "src", [30, 30], damaged=None)
    real = tfrecord.write_tfrecord
    calls: list[str] = []

    def failing(path: str, compression: str, payloads: Any) -> int:
        calls.append(path)
        if len(calls) >= 3:
            raise OSError(28, "No space left on device")
        return real(path, compression, payloads)

    monkeypatch.setattr(tfrecord, "write_tfrecord", failing)
    out = tmp_path / "out"
    out.mkdir()
    with Journal(paths[0]) as j:
        j.set_value(0, "id", 0, "5")
        with pytest.raises(codec.WriteError, match="No space left on device"):
            E.export(j, out / "o.tfrecord", shards=4, executor=InlineExecutor())
        assert j.pending == 1  # the edits are kept
    assert len(calls) == 5  # two shards written, the third tried three times
    assert _left(out) == []


def test_a_source_that_changes_under_a_worker_fails_the_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool: ProcessExecutor
) -> None:
    """The workers open the sources again: one that changed since the export planned is
    refused by the task that reads it, and the export leaves nothing behind."""
    paths = _dataset(tmp_path / "src", [20, 20], damaged=None)
    real = plan_module.Plan.portions

    def then_change(self: plan_module.Plan, bounds: Any) -> Any:
        out = real(self, bounds)
        with open(paths[1], "ab") as f:
            f.write(codec.framing.encode_record(b"late"))
        return out

    monkeypatch.setattr(plan_module.Plan, "portions", then_change)
    out = tmp_path / "out"
    out.mkdir()
    changed = r"part-1\.tfrecord: the file changed since it was opened"
    with pytest.raises(ExportError, match=changed):
        E.export(paths, out / "o.tfrecord", shards=2, executor=pool)
    assert _left(out) == []


@pytest.mark.parametrize("where", ["between pieces", "inside a piece"])
def test_cancelling_leaves_nothing(tmp_path: Path, where: str) -> None:
    paths = _dataset(tmp_path / "src", [1500, 1500], damaged=None)
    cancel = threading.Event()
    seen: list[Any] = []

    def job_progress(p: Any) -> None:
        seen.append(p)
        if where == "between pieces" and p.tasks_done == 1:
            cancel.set()

    written: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        written.append(done)
        if where == "inside a piece" and stage == "write" and done >= 1024:
            cancel.set()

    out = tmp_path / "out"
    out.mkdir()
    shards = 3 if where == "between pieces" else 1
    with pytest.raises(JobCancelled, match="export was cancelled"):
        E.export(
            paths,
            out / "o.tfrecord",
            shards=shards,
            job_progress=job_progress,
            progress=progress,
            cancel=cancel,
        )
    assert _left(out) == []
    assert seen and seen[0].tasks_total == shards
    assert max(written) < 3000  # stopped before the last record, inside the piece too


def test_cancelling_a_pool_leaves_nothing(tmp_path: Path) -> None:
    paths = _dataset(tmp_path / "src", [40] * 4, damaged=None)
    cancel = threading.Event()
    out = tmp_path / "out"
    out.mkdir()

    def job_progress(p: Any) -> None:
        if p.tasks_done >= 1:
            cancel.set()

    with pytest.raises(JobCancelled):
        E.export(
            paths,
            out / "o.tfrecord",
            shards=6,
            executor="processes:2",
            job_progress=job_progress,
            cancel=cancel,
        )
    assert _left(out) == []


def _whole(paths: list[str]) -> plan_module.Portion:
    """Every record of ``paths`` as one piece's portion (plain data, as a task gets it)."""
    plan = plan_module.Plan(paths)
    try:
        (portion,) = plan.portions([0, plan.total])
    finally:
        plan.close()
    return portion


def test_a_piece_written_after_the_export_gave_up_removes_itself(tmp_path: Path) -> None:
    """A task still running when its export failed (on an executor that outlives the job)
    finds the export's lock gone when it is done, and removes what it wrote; one that
    starts after that writes nothing."""
    paths = _dataset(tmp_path / "src", [10], damaged=None)
    out = tmp_path / "out"
    out.mkdir()
    dst = str(out / "o.tfrecord")
    lock = RunLock(str(out))
    portion = _whole(paths)
    exporter = tfrecord.TFRecordExporter(dst, compression="none")
    job = PieceRun(portion, E.ExportReport("tfrecord"), run=lock.run, dsts=[dst])
    exporter.write(job)  # written, not handed back yet
    assert len(_left(out)) == 2  # the lock, and the piece's temporary file
    os.unlink(lock.path)  # the export gives up: its lock file goes first
    written = job.hand_back()
    assert written.abandoned and written.outputs == []
    lock.abandon()
    assert _left(out) == []
    late = ExportTask(0, "o", portion=portion, dsts=(dst,))
    with pytest.raises(ExportError, match="the export was stopped"):
        ExportJob(exporter, lock.run).task(late)
    assert _left(out) == []


def test_a_piece_uploaded_after_the_export_gave_up_removes_itself(s3: Any, tmp_path: Path) -> None:
    """The same for a remote destination, where no lock ends with the client: a task that
    uploads its piece after the client removed the run's marker object finds it gone, and
    removes its upload; one that starts after that writes nothing."""
    s3.make_bucket("out")
    paths = _dataset(tmp_path / "src", [10], damaged=None)
    dst = "s3://out/x/o.tfrecord"
    run = "0123456789abcdef"
    marker = remote.mark_run(dst, run)
    assert sorted(s3.keys("out")) == [f"x/.tfb-export-{run}.lock"] and remote.run_marked(dst, run)
    portion = _whole(paths)
    exporter = tfrecord.TFRecordExporter(dst, compression="none")
    job = PieceRun(portion, E.ExportReport("tfrecord"), run=run, dsts=[dst])
    exporter.write(job)  # written locally, not uploaded yet
    remote.unmark_run(marker)  # the export gives up: its marker goes first
    written = job.hand_back()  # uploads, then finds the marker gone
    assert written.abandoned and written.outputs == []
    assert s3.keys("out") == []
    late = ExportTask(0, "o", portion=portion, dsts=(dst,))
    with pytest.raises(ExportError, match="the export was stopped"):
        ExportJob(exporter, run).task(late)
    assert s3.keys("out") == []


@pytest.mark.parametrize("where", ["pool", "dask"])
def test_cancelling_an_export_to_s3_on_workers_that_outlive_it_leaves_nothing(
    s3: Any, tmp_path: Path, where: str
) -> None:
    """An export to S3 given up while its pieces are written, on executors the export does
    not own (a running pool, a Dask scheduler), which let the pieces already running go on:
    they upload after the client removed its temporary objects, so they must remove their
    own. Once every worker is idle the bucket holds nothing: no final, temporary or marker
    object."""
    s3.make_bucket("out")
    paths = _dataset(tmp_path / "src", [300, 300], damaged=None)
    gate = tmp_path / "gate"
    gate.mkdir()
    cancel = threading.Event()

    def job_progress(p: Any) -> None:  # called at least every half second while tasks run
        if any(gate.glob("reached-*")):
            cancel.set()  # a piece is written and waits to be handed back

    exporter = export_gate.GatedExporter("s3://out/x/o.tfrecord", str(gate), shards=4)
    with contextlib.ExitStack() as stack:
        if where == "pool":
            ex_: Any = stack.enter_context(ProcessExecutor(2))
        else:
            cluster = stack.enter_context(dask_support.local_scheduler(2, 1))
            ex_ = stack.enter_context(executor(f"dask:{cluster.scheduler_address}"))
        with pytest.raises(JobCancelled):
            run_export(exporter, paths, executor=ex_, job_progress=job_progress, cancel=cancel)
        assert s3.keys("out") == []  # given up: the run's marker went with it
        (gate / "open").touch()  # the pieces still running go on, and upload
        if where == "pool":
            ex_.close(wait=True)  # the pieces running (or queued in the pool) finish first
        else:
            _idle(cluster)
    assert any(gate.glob("reached-*"))
    assert s3.keys("out") == []


def _idle(cluster: Any, seconds: float = 60.0) -> None:
    """Wait until no worker of the in-process Dask ``cluster`` runs a task (one cancelled
    while it runs too: the scheduler forgets it at once, the worker only when it ends)."""
    deadline = time.monotonic() + seconds
    while any(w.state.executing_count for w in cluster.workers.values()):
        assert time.monotonic() < deadline, "the Dask workers are still busy"
        time.sleep(0.05)


def test_an_s3_destination_gets_every_shard_at_once(s3: Any, tmp_path: Path) -> None:
    """Worker processes write and upload the shards of a remote destination; they are moved
    to their names together, and read back as the shards written here."""
    s3.make_bucket("out")
    paths = _dataset(tmp_path / "src", [30, 25], damaged=2)
    _report, here = _export(
        paths, tmp_path / "here", name="d.tfrecord", edit_seed=None, selection=None, shards=3
    )
    report = E.export(paths, "s3://out/x/d.tfrecord", shards=3, executor="processes:2")
    assert report.verified and len(report.outputs) == 3 and len(report.skipped) == 1
    assert sorted(s3.keys("out")) == sorted(f"x/{name}" for name in here)  # no temporaries
    for name, data in here.items():
        assert s3.get("out", f"x/{name}") == data


@pytest.mark.parametrize(
    ("argv", "spec"),
    [
        ([], "inline"),
        (["--shards", "4"], None),  # a process per core, at most one per shard
        (["--shards", "4", "--workers", "3"], "processes:3"),
        (["--executor", "inline", "--shards", "4"], "inline"),
        (["--executor", "processes:2"], "processes:2"),
        (["--dask", "local:3"], "dask:local:3"),
        (["--dask", "tcp://10.0.0.1:8786"], "dask:tcp://10.0.0.1:8786"),
        (["--dask", "sched:8786"], "dask:tcp://sched:8786"),
    ],
)
def test_where_the_command_line_writes_the_shards(argv: list[str], spec: str | None) -> None:
    args = build_parser().parse_args(["export", "a.tfrecord", "b.tfrecord", *argv])
    got = str(export_executor(args))
    if spec is None:
        assert got.startswith("processes:") and 1 <= int(got.split(":")[1]) <= 4
    else:
        assert got == spec


@pytest.mark.parametrize(
    "argv", [["--workers", "0"], ["--dask", "tcp://h:1", "--workers", "2"], ["--progress"]]
)
def test_job_options_that_do_not_apply_are_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["export", "a.tfrecord", "b.tfrecord", *argv])
    assert info.value.code == 2
    assert argv[0] in capsys.readouterr().err  # the option is named


def test_the_command_line_writes_shards_on_workers_as_it_does_here(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = _dataset(tmp_path / "src", [33, 17], damaged=None)
    outputs = {}
    for how in (["--executor", "inline"], ["--workers", "2"]):
        out = tmp_path / how[-1]
        out.mkdir()
        code = main(["export", *paths, str(out / "o.tfrecord.gz"), "--shards", "3", *how])
        text = capsys.readouterr().out.replace(str(out), "OUT")
        assert code == 0
        outputs[how[-1]] = (text, {p.name: p.read_bytes() for p in out.iterdir()})
    assert outputs["inline"] == outputs["2"] and len(outputs["2"][1]) == 4


class KilledWorker(Exception):
    """Dask's error for a task whose workers died, as a stand-in ``distributed`` has it."""


@pytest.mark.parametrize("dask_loaded", [False, True])
@pytest.mark.parametrize("error", ["ours", "dask's", "another of that name", "other"])
def test_a_worker_that_died_every_time_is_said_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, error: str, dask_loaded: bool
) -> None:
    """A pool's :class:`WorkerDied`, and Dask's ``KilledWorker`` (recognised only when Dask is
    loaded, and by its class, not its name), fail the export in words; any other error is
    raised as it is. Nothing is written either way."""
    fake = types.ModuleType("distributed")
    fake.KilledWorker = KilledWorker  # type: ignore[attr-defined]
    if dask_loaded:
        monkeypatch.setitem(sys.modules, "distributed", fake)
    else:
        monkeypatch.delitem(sys.modules, "distributed", raising=False)
    named = type("KilledWorker", (Exception,), {})  # not Dask's, whatever its name
    raised = {
        "ours": WorkerDied("gone"),
        "dask's": KilledWorker("gone"),
        "another of that name": named("gone"),
        "other": ValueError("gone"),
    }[error]

    def dies(*args: Any, **kwargs: Any) -> Any:
        raise raised

    monkeypatch.setattr(job_module.jobs, "run", dies)
    paths = _dataset(tmp_path / "src", [5], damaged=None)
    out = tmp_path / "out"
    out.mkdir()
    died = error == "ours" or (error == "dask's" and dask_loaded)
    with pytest.raises(ExportError if died else type(raised)) as info:
        E.export(paths, out / "o.tfrecord")
    if died:
        assert "a worker process writing it died every time" in str(info.value)
    else:
        assert info.value is raised
    assert _left(out) == []


class _Elsewhere(InlineExecutor):
    """This process, but every task runs in another current folder (as a Dask worker's)."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def batch(self) -> Batch:
        inner = super().batch()
        folder = self.folder

        class _Batch(Batch):
            def submit(self, key: int, fn: Callable[[Any], Any], arg: Any) -> None:
                def there(a: Any) -> Any:
                    here = os.getcwd()
                    os.chdir(folder)
                    try:
                        return fn(a)
                    finally:
                        os.chdir(here)

                inner.submit(key, there, arg)

            def wait(self, timeout: float) -> list[Any]:
                return inner.wait(timeout)

            def cancel(self) -> None:
                inner.cancel()

        return _Batch()


def test_a_relative_destination_is_written_where_the_client_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export --dask tcp://…`` to ``out/x.tfrecord``: the workers run in other folders;
    the destination is the client's, made absolute before any task is planned."""
    paths = _dataset(tmp_path / "src", [30, 30], damaged=None)
    client = tmp_path / "client"
    (client / "out").mkdir(parents=True)
    (tmp_path / "worker").mkdir()
    monkeypatch.chdir(client)
    report = E.export(paths, "out/x.tfrecord", shards=2, executor=_Elsewhere(tmp_path / "worker"))
    assert report.records == 60
    written = sorted(p.name for p in (client / "out").iterdir())
    assert written == [
        "x-00000-of-00002.tfrecord",
        "x-00001-of-00002.tfrecord",
        "x.tfrecord.index-map.csv",
    ]
    assert list((tmp_path / "worker").iterdir()) == []
