"""Staging: every output is written to a temporary file (or folder) beside its destination,
synced, read back, and only then renamed into place, for every format alike.

:func:`exporting` is the one way an export runs: it plans the records, hands the format's
exporter a :class:`Job` to write them with, then syncs, verifies and commits what was staged.
A failure at any step (a full disk, an unwritable folder, a failed verification) removes the
temporary files and leaves the destinations, the source and the journal as they were. The
source is never written to, unless the exporter asks for exactly that
(:meth:`Stage.replace_on_commit`): the old file is kept as a backup first.

The temporary outputs have names of their own, and the export holds a lock in every folder it
writes to (:mod:`~browser_app.export.tempfiles`): the first export to a folder after one that
was killed removes what the killed one left there, and never what a running one is writing.

A destination that is a URL (``s3://``, ``gs://``, ``az://``) is staged the same way in a local
staging folder, verified there, and committed by :func:`~browser_app.export.remote.publish`:
uploaded to a temporary name beside the destination, checked, then moved to its final name.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar

from browser_app.edits import RecordRef
from browser_app.errors import ExportError, os_error_message
from browser_app.export import remote
from browser_app.export.base import (
    ExportFormat,
    ExportReport,
    Progress,
)
from browser_app.export.plan import ExportSource, Plan
from browser_app.export.tempfiles import RunLock, atomic_file, clean_stale
from codec.errors import RemoteError, WriteError
from codec.locations import is_url, shown
from codec.writer import fsync_dir, new_file_mode

if TYPE_CHECKING:
    pass

__all__ = [
    "TICK_EVERY",
    "Check",
    "Job",
    "Output",
    "Stage",
    "exporting",
    "fsync_file",
    "guard_sources",
    "output_file",
    "staged",
]

TICK_EVERY = 1024  # records between two progress reports

Check = Callable[[str, int, str], None]
"""``check(path, expected, shown)``: read the written output at ``path`` back and raise
:class:`ExportError` unless it holds ``expected`` records (rows, pictures); ``shown`` is the
destination, to name in the message."""

T = TypeVar("T")
S = TypeVar("S", bound="Stage")


@dataclass
class Output:
    """One staged output: ``tmp`` is written now and becomes ``dst`` on commit; ``check``
    reads it back, expecting ``expected`` (set it once written). When the records are split
    over several outputs (shards), ``records`` says how many of them, in order, this one
    holds."""

    tmp: str
    dst: str
    check: Check
    expected: int = 0
    records: int | None = None  # of the plan's records, in order, when they are split

    @property
    def remote(self) -> bool:
        """Whether the destination is a URL (the output is uploaded on commit)."""
        return is_url(self.dst)


class Stage:
    """Outputs staged beside their destinations, synced, verified and committed together
    (:meth:`finish`) or all discarded. ``total`` is the amount of work in records, for the
    progress reports; ``anon`` reaches remote destinations without credentials."""

    def __init__(
        self,
        report: ExportReport,
        *,
        total: int = 0,
        verify: bool = True,
        progress: Progress | None = None,
        anon: bool = False,
    ) -> None:
        self.report = report
        self.total = total
        self.verify = verify
        self.progress = progress
        self.anon = anon
        self.outputs: list[Output] = []
        self.replacing = False
        self._locks: dict[str, RunLock] = {}

    # -- progress ------------------------------------------------------------------------------

    def tick(self, stage: str, done: int, total: int | None = None) -> None:
        """Report progress: ``done`` of ``total`` (default: the stage's records)."""
        if self.progress is not None:
            self.progress(stage, done, self.total if total is None else total)

    def ticking(self, items: Iterable[T], stage: str = "write") -> Iterator[T]:
        """``items``, reporting progress every :data:`TICK_EVERY` of them."""
        for n, item in enumerate(items, start=1):
            yield item
            if n % TICK_EVERY == 0:
                self.tick(stage, n)

    # -- outputs -------------------------------------------------------------------------------

    def reserve(self, dst: str, check: Check) -> Output:
        """A new empty temporary file beside ``dst`` (for a URL: in the local staging
        folder), to become ``dst`` on commit."""
        return self._reserve(dst, check, folder=False)

    def reserve_folder(self, dst: str, check: Check) -> Output:
        """A new empty temporary folder beside ``dst``, to become ``dst`` on commit."""
        return self._reserve(dst, check, folder=True)

    def _reserve(self, dst: str, check: Check, *, folder: bool) -> Output:
        if is_url(dst):
            remote.check_writable(dst, anon=self.anon)
            directory = remote.staging_folder()
            name = dst.split("?", 1)[0].rstrip("/")
        else:
            directory = os.path.dirname(os.path.abspath(dst))
            name = dst
        try:
            tmp = self._lock(directory).new_temp(name, folder)
        except OSError as exc:
            raise WriteError(f"{shown(dst)}: cannot write here: {exc.strerror or exc}") from exc
        out = Output(tmp, dst, check)
        self.outputs.append(out)
        return out

    def _lock(self, directory: str) -> RunLock:
        """This export's lock in ``directory`` (see :mod:`~browser_app.export.tempfiles`),
        taken on first use, when the temporary outputs that killed exports left in the folder
        are removed (counted into the report's ``cleaned``)."""
        lock = self._locks.get(directory)
        if lock is None:
            lock = self._locks[directory] = RunLock(directory)
            cleaned = clean_stale(directory)
            self.report.cleaned += cleaned.entries
            self.report.cleaned_bytes += cleaned.bytes
        return lock

    @contextlib.contextmanager
    def atomic_file(self, path: str) -> Iterator[IO[Any]]:
        """Write the file ``path`` now, on its own: through a temporary output of this
        export, renamed over ``path`` once complete and synced. OS errors become
        :class:`codec.WriteError`. Local files only."""
        if is_url(path):
            raise ExportError(f"{shown(path)}: cannot be written on its own here")
        directory = os.path.dirname(os.path.abspath(path))
        try:
            with atomic_file(self._lock(directory), path) as f:
                yield f
        except OSError as exc:
            raise WriteError(f"{path}: write failed: {exc.strerror or exc}") from exc

    def replace_on_commit(self) -> None:
        """Commit the one output over an existing file (the source), keeping that file as
        a backup first; the backup's path goes to ``report.backup``. A remote object is
        never replaced in place."""
        self.replacing = True

    # -- the end -------------------------------------------------------------------------------

    def finish(self) -> None:
        """Sync every output, read each one back (unless ``verify`` is off), count the bytes
        written, and move the outputs into place."""
        for out in self.outputs:
            _sync(out)
        if self.verify and self.outputs:
            n = len(self.outputs)
            for k, out in enumerate(self.outputs):
                self.tick("verify", k, n)
                out.check(out.tmp, out.expected, shown(out.dst))
            self.tick("verify", n, n)
            self.report.verified = True
        self.report.bytes += sum(_size(out.tmp) for out in self.outputs)
        if self.replacing:
            if any(out.remote for out in self.outputs):
                raise ExportError(
                    "a remote object is not replaced in place; export to a new name instead"
                )
            self.report.backup = self._commit_keeping_backup()
        else:
            self.commit()

    def release(self) -> None:
        """Let this export's locks go (after :meth:`finish` or :meth:`discard`)."""
        for lock in self._locks.values():
            lock.release()
        self._locks = {}

    def discard(self, which: Callable[[Output], bool] | None = None) -> None:
        """Remove every staged output (``which``: those it says yes to)."""
        keep = []
        for out in self.outputs:
            if which is not None and not which(out):
                keep.append(out)
                continue
            with contextlib.suppress(OSError):
                if os.path.isdir(out.tmp) and not os.path.islink(out.tmp):
                    shutil.rmtree(out.tmp)
                else:
                    os.unlink(out.tmp)
        self.outputs = keep

    def _remote_run(self) -> str:
        """The run name of this export's temporary objects beside remote destinations: its
        run in the local staging folder."""
        return self._lock(remote.staging_folder()).run

    def commit(self) -> None:
        """Put every staged output in place: uploaded and moved to its URL (see
        :func:`~browser_app.export.remote.publish`; :class:`~browser_app.errors.UploadError`
        when that fails), or renamed over its local destination."""
        uploads = [
            remote.Upload(out.tmp, out.dst, remote.temp_url(out.dst, self._remote_run()))
            for out in self.outputs
            if out.remote
        ]
        if uploads:
            try:
                remote.publish(uploads, anon=self.anon)
            except BaseException:
                self.discard()
                raise
            uploaded = {up.local for up in uploads}
            self.discard(lambda out: out.tmp in uploaded)  # the local copies are done with
        done: list[str] = []
        dst = ""
        try:
            for out in self.outputs:
                dst = out.dst
                # Temporary files are private; the output gets a normal file's permissions.
                os.chmod(out.tmp, new_file_mode(directory=os.path.isdir(out.tmp)))
                os.replace(out.tmp, dst)
                done.append(dst)
                fsync_dir(os.path.dirname(os.path.abspath(dst)))
        except OSError as exc:
            self.discard()
            raise WriteError(
                f"{shown(dst)}: cannot move the output into place: {exc.strerror or exc}"
                + (f" ({len(done)} of the other files were already written)" if done else "")
            ) from exc
        self.outputs = []

    def _commit_keeping_backup(self) -> str:
        """Keep the first output's destination (the source) as a backup (a hard link when
        possible), then move the outputs into place, the first over it in one rename.
        Returns the backup's path."""
        out = self.outputs[0]
        src = out.dst
        backup = f"{src}.bak"
        if os.path.lexists(backup):
            backup = f"{src}.{time.strftime('%Y%m%d-%H%M%S')}.bak"
            n = 1
            while os.path.lexists(backup):
                backup = f"{src}.{time.strftime('%Y%m%d-%H%M%S')}-{n}.bak"
                n += 1
        try:
            os.link(src, backup)
        except OSError:
            try:
                with open(src, "rb") as fin, self.atomic_file(backup) as fout:
                    shutil.copyfileobj(fin, fout, 1 << 20)
            except (OSError, WriteError) as exc:
                raise WriteError(f"{src}: cannot keep a backup, not replaced: {exc}") from exc
        try:
            self.commit()
        except WriteError:
            with contextlib.suppress(OSError):
                os.unlink(backup)
            raise
        return backup


def fsync_file(path: str, shown: str) -> None:
    """fsync the file at ``path``; ``shown`` names it in the error."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise WriteError(f"{shown}: cannot sync: {exc.strerror or exc}") from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        raise WriteError(f"{shown}: write failed: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def _sync(out: Output) -> None:
    if os.path.isdir(out.tmp):
        for name in os.listdir(out.tmp):
            fsync_file(os.path.join(out.tmp, name), out.dst)
        fsync_dir(out.tmp)
    else:
        fsync_file(out.tmp, out.dst)


def _size(path: str) -> int:
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(path, name)) for name in os.listdir(path))
    return os.path.getsize(path)


def guard_sources(sources: Iterable[str], dsts: Sequence[str]) -> None:
    """Refuse destinations that are one of the ``sources`` (given as
    :func:`~browser_app.export.remote.same_place` keys: real paths, URLs as shown)."""
    real = set(sources)
    for d in dsts:
        if remote.same_place(d) in real:
            raise ExportError(
                f"{shown(d)} is a source file of this export; pick another destination"
                " (or replace the source explicitly)"
            )


@contextlib.contextmanager
def staged(stage: S, what: str = "export") -> Iterator[S]:
    """Run the body's writes on ``stage``, then :meth:`Stage.finish` it; on any failure
    discard what was staged (an OS error becomes :class:`codec.WriteError`, saying that
    nothing was written; a remote object that could not be read stays a
    :class:`~codec.errors.RemoteError`, with its own exit code)."""
    try:
        yield stage
        stage.finish()
    except BaseException as exc:
        stage.discard()
        if isinstance(exc, OSError) and not isinstance(exc, RemoteError):
            remote_name = isinstance(exc.filename, str) and is_url(exc.filename)
            why = os_error_message(exc) if remote_name else (exc.strerror or exc)
            raise WriteError(f"{what} failed, nothing written: {why}") from exc
        raise
    finally:
        stage.release()


class Job(Stage):
    """One export under way: the :class:`Plan` of records to write and the outputs staged
    for them (see :class:`Stage`)."""

    def __init__(
        self,
        plan: Plan,
        report: ExportReport,
        *,
        verify: bool = True,
        progress: Progress | None = None,
        anon: bool = False,
    ) -> None:
        super().__init__(report, total=plan.total, verify=verify, progress=progress, anon=anon)
        self.plan = plan

    def guard(self, dsts: Sequence[str]) -> None:
        """Refuse to write over a source file of this export."""
        guard_sources(self.plan.source_paths(), dsts)


@contextlib.contextmanager
def exporting(
    source: ExportSource,
    fmt: ExportFormat,
    *,
    selection: Iterable[RecordRef] | None = None,
    include_added: bool = True,
    verify: bool = True,
    progress: Progress | None = None,
    anon: bool = False,
) -> Iterator[Job]:
    """Plan the records of ``source``, give the body a :class:`Job` to write them with, then
    sync, verify and commit the job's outputs (or discard them all on failure). Damage that
    is not a record is added to the report's ``skipped`` when the whole dataset is exported;
    a journal whose edits were written over the source is set aside."""
    t0 = time.perf_counter()
    plan = Plan(source, selection, include_added, anon=anon)
    report = ExportReport(fmt, deleted=plan.deleted)
    try:
        with staged(Job(plan, report, verify=verify, progress=progress, anon=anon)) as job:
            yield job
        if report.backup is not None and plan.journal is not None:
            plan.journal.discard()  # its edits are part of the source file now
    finally:
        plan.close()
        report.seconds = time.perf_counter() - t0
    report.skipped.extend(plan.region_problems())


@contextlib.contextmanager
def output_file(
    dst: str, *, check: Check | None = None, expected: int = 0, anon: bool = False
) -> Iterator[str]:
    """A local path to write the file ``dst`` (a path or a URL) to, on its own: once the body
    is done it is synced, read back with ``check`` (expecting ``expected``) when given, and
    put in place as an export's output is (renamed over a local ``dst``; uploaded to a
    temporary name, checked and moved for a URL). On any failure nothing is left."""

    def unchecked(path: str, expected: int, shown: str) -> None:
        return None

    # The stage's report is its own: what it counts (bytes, leftovers cleaned) is not asked.
    stage = Stage(ExportReport("tfrecord"), verify=check is not None, anon=anon)
    with staged(stage, f"writing {shown(dst)}"):
        out = stage.reserve(dst, check or unchecked)
        out.expected = expected
        yield out.tmp
