"""A GZIP file opened with a raised inflate limit (``--max-inflate``, or the higher limit the
app offers and the person accepts) is read by the job's workers with that limit too, not with
whatever their own environment says: a worker on another machine has another environment and
another cache, and used to refuse the file and report it unreadable. Tasks and export portions
carry the limit, as they carry anonymous access."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

import codec
from browser_app.cli.inputs import max_inflate
from browser_app.cli.jobs import executor_of
from browser_app.export.plan import SourceFile
from codec.errors import LimitError
from codec.jobs import ExecutorSpec, SchemaJob, VerifyJob, plan, run, tasks_of
from codec.settings import MAX_INFLATE_ENV

RECORDS = 48
RAISED = 8 << 20  # the limit the file is opened with here
LOW = "1M"  # a worker's own limit, as its environment sets it


@pytest.fixture
def gz(tmp_path: Path) -> Path:
    """3 MiB of records of zeros in ~3 KB of GZIP: past a 1 MiB limit, within 8 MiB."""
    path = tmp_path / "zeros.tfrecord.gz"
    codec.write_records(path, [bytes(64 << 10)] * RECORDS, compression="gzip")
    return path


def _elsewhere(mp: pytest.MonkeyPatch, tmp: Path) -> None:
    """This process as a worker on another machine: its own cache, its own lower limit."""
    cache = tmp / "worker-cache"
    cache.mkdir()
    mp.setenv("TFRECORD_BROWSER_CACHE", str(cache))
    mp.setenv(MAX_INFLATE_ENV, LOW)


def test_a_worker_elsewhere_inflates_as_far_as_the_client_did(gz, tmp_path, monkeypatch):
    with codec.TFRecordFile(gz, max_inflate=RAISED) as f:
        assert f.max_inflate == RAISED and len(f) == RECORDS
        tasks = plan([str(gz)], sizes=[(f.file_size, f.compression)], max_inflate=f.max_inflate)
    _elsewhere(monkeypatch, tmp_path)
    with pytest.raises(LimitError):  # what the worker's own limit says of the file
        codec.TFRecordFile(gz)
    (report,) = run(VerifyJob(), tasks, "inline")
    assert report.ok and report.records == RECORDS and not report.problems
    schema = run(SchemaJob(), tasks, "inline")
    assert schema.total == RECORDS and schema.problems == 0


def test_the_command_lines_limit_travels_with_its_tasks(gz, tmp_path, monkeypatch):
    """``--max-inflate`` is in this process's environment while the command runs; the tasks
    carry it to workers that do not have it."""
    args = argparse.Namespace(max_inflate=RAISED, compression="auto", anon=False)
    with max_inflate(args), codec.TFRecordFile(gz) as f:
        tasks = tasks_of([f], executor=executor_of(args), compression=args.compression)
    assert [t.max_inflate for t in tasks] == [RAISED]
    _elsewhere(monkeypatch, tmp_path)
    (report,) = run(VerifyJob(), tasks, "inline")
    assert report.ok and report.records == RECORDS


def test_an_export_worker_opens_the_source_with_its_limit(gz, tmp_path, monkeypatch):
    with codec.TFRecordFile(gz, max_inflate=RAISED) as f:
        source = SourceFile.of(f)
    assert source.max_inflate == RAISED
    _elsewhere(monkeypatch, tmp_path)
    with source.open() as again:
        assert len(again) == RECORDS


def test_without_a_limit_set_tasks_leave_each_worker_its_default(gz):
    with codec.TFRecordFile(gz) as f:
        assert f.max_inflate is None
        tasks = plan([str(gz)], sizes=[(f.file_size, f.compression)], max_inflate=f.max_inflate)
    assert [t.max_inflate for t in tasks] == [None]


@pytest.fixture
def two(gz: Path) -> list[Path]:
    """Two GZIP files past a worker's own limit: a dataset the library spreads over processes."""
    other = gz.with_name("zeros-2.tfrecord.gz")
    other.write_bytes(gz.read_bytes())
    return [gz, other]


def test_the_librarys_verify_on_processes_carries_the_limit(two, tmp_path, monkeypatch):
    """``TFRecordDataset.verify(workers=2)`` (and ``codec.verify_paths``): the pool's workers
    start with this process's environment as it is when the job runs, a lower limit here."""
    with codec.TFRecordDataset([str(p) for p in two], max_inflate=RAISED) as ds:
        assert len(ds) == 2 * RECORDS
        _elsewhere(monkeypatch, tmp_path)
        reports = ds.verify(workers=2)
    assert [(r.ok, r.records) for r in reports] == [(True, RECORDS)] * 2
    reports = codec.verify_paths([str(p) for p in two], workers=2, max_inflate=RAISED)
    assert [(r.ok, r.records) for r in reports] == [(True, RECORDS)] * 2


def test_the_librarys_schema_on_processes_carries_the_limit(two, tmp_path, monkeypatch):
    from codec.jobs.schema import infer_on_workers

    with codec.TFRecordDataset([str(p) for p in two], max_inflate=RAISED) as ds:
        _elsewhere(monkeypatch, tmp_path)
        built = {"decode_images": False, "label_map": None, "detection": True}
        schema = infer_on_workers(ds.files, len(ds), None, 2, built, False)
    assert schema.total == 2 * RECORDS and schema.problems == 0


def test_the_apps_jobs_carry_the_limit_the_person_accepted(gz, tmp_path, monkeypatch):
    """The app's verify (Overview, Export) and the tasks its Schema and Filter pages run:
    the source was opened with the raised limit, and so are the workers' files."""
    from browser_app.ui import services
    from browser_app.ui.source import Source

    dataset = codec.TFRecordDataset([str(gz)], max_inflate=RAISED)
    src = Source(str(gz), gz.name, str(tmp_path), (str(gz),), dataset)
    inline = ExecutorSpec("inline")
    assert [t.max_inflate for t in tasks_of(src.dataset.files, executor=inline)] == [RAISED]
    _elsewhere(monkeypatch, tmp_path)
    (report,) = services.verify(src, inline)
    assert report["ok"] and report["records"] == RECORDS
    dataset.close()
