"""Staging: every output is written to a temporary file (or folder) beside its destination,
synced, read back, and only then renamed into place, for every format alike.

An export is run by :func:`browser_app.export.running.run` as a job of :mod:`codec.jobs`:
the client (:class:`ExportRun`) plans the records and takes the export's lock in every folder
it writes to; each task (:class:`PieceRun`, in this process, a pool worker or a Dask worker) writes
its piece of the output into temporary files beside the destination, named for the client's
run, syncs them and reads them back; the client then stages the index map and moves every
output into place together. A failure at any step (a full disk, an unwritable folder, a
failed verification, a cancelled job) removes the temporary files and leaves the
destinations, the source and the journal as they were. The source is never written to,
unless the exporter asks for exactly that (:meth:`Stage.replace_on_commit`): the old file is
kept as a backup first.

The temporary outputs have names of their own, and the export holds a lock in every folder it
writes to (:mod:`~browser_app.export.tempfiles`): the first export to a folder after one that
was killed removes what the killed one left there, and never what a running one is writing. A
worker writes only while the client's lock file is there, and removes what it wrote when it is
gone (the client gave up).

A destination that is a URL (``s3://``, ``gs://``, ``az://``) is staged the same way in a local
staging folder, verified there, and uploaded to a temporary name beside the destination
(:mod:`~browser_app.export.remote`; by the worker that wrote it); the client moves every
uploaded output to its final name once all are there.

A task run in the client's own process reports its progress to the client and stops when the
export is cancelled through the client's :class:`Hooks`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TypeVar

from browser_app.edits import RecordRef
from browser_app.errors import ExportError, os_error_message
from browser_app.export import remote
from browser_app.export.base import (
    FORMULA_RECORDS_SHOWN,
    ExportProgress,
    ExportReport,
    FormulaCells,
)
from browser_app.export.plan import Plan, Portion
from browser_app.export.tempfiles import RunLock, atomic_file, clean_stale, new_temp, run_alive
from codec.errors import RemoteError, WriteError
from codec.framing import Problem
from codec.locations import filesystem, is_url, parent_url, shown
from codec.writer import fsync_dir, new_file_mode

if TYPE_CHECKING:
    import codec
    from codec import jobs

__all__ = [
    "TICK_EVERY",
    "Check",
    "ExportRun",
    "Hooks",
    "JobProgress",
    "Output",
    "Piece",
    "PieceRun",
    "Stage",
    "Staged",
    "Stopped",
    "fsync_file",
    "guard_sources",
    "output_file",
    "staged",
    "write_failure",
]

TICK_EVERY = 1024  # records between two progress reports

Check = Callable[[str, int, str], None]
"""``check(path, expected, shown)``: read the written output at ``path`` back and raise
:class:`ExportError` unless it holds ``expected`` records (rows, pictures); ``shown`` is the
destination, to name in the message."""

JobProgress = Callable[["jobs.Progress"], None]
"""``job_progress(p)``: the export's :class:`codec.jobs.Progress` as its pieces are written."""

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
    ready: bool = False  # written, synced and read back by the task that wrote it
    size: int | None = None  # bytes, when ``ready``
    upload: remote.Upload | None = None  # a remote output a task has uploaded (``tmp``: its URL)

    @property
    def remote(self) -> bool:
        """Whether the destination is a URL (the output is uploaded on commit)."""
        return is_url(self.dst)


class Stage:
    """Outputs staged beside their destinations, synced, verified and committed together
    (:meth:`finish`) or all discarded. ``total`` is the amount of work in records, for the
    progress reports; ``anon`` reaches remote destinations without credentials. ``run`` names
    the export's temporary outputs in every folder (default: a new name per folder)."""

    def __init__(
        self,
        report: ExportReport,
        *,
        total: int = 0,
        verify: bool = True,
        progress: ExportProgress | None = None,
        anon: bool = False,
        run: str | None = None,
    ) -> None:
        self.report = report
        self.total = total
        self.verify = verify
        self.progress = progress
        self.anon = anon
        self.run = run
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
            lock = self._locks[directory] = RunLock(directory, self.run)
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
            if not out.ready:
                _sync(out)
        if self.verify and self.outputs:
            n = len(self.outputs)
            for k, out in enumerate(self.outputs):
                self.tick("verify", k, n)
                if not out.ready:
                    out.check(out.tmp, out.expected, shown(out.dst))
            self.tick("verify", n, n)
            self.report.verified = True
        self.report.bytes += sum(
            out.size if out.size is not None else _size(out.tmp) for out in self.outputs
        )
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
            if out.upload is not None:
                remote.remove_temporaries([out.upload], self.anon)
            if not is_url(out.tmp):
                _remove_path(out.tmp)
        self.outputs = keep

    def _remote_run(self) -> str:
        """The run name of this export's temporary objects beside remote destinations: its
        run, else its run in the local staging folder."""
        return self.run or self._lock(remote.staging_folder()).run

    def commit(self) -> None:
        """Put every staged output in place: uploaded and moved to its URL (see
        :func:`~browser_app.export.remote.publish`; :class:`~browser_app.errors.UploadError`
        when that fails), or renamed over its local destination."""
        uploads = [
            out.upload
            or remote.Upload(out.tmp, out.dst, remote.temp_url(out.dst, self._remote_run()))
            for out in self.outputs
            if out.remote
        ]
        if uploads:
            try:
                remote.publish(uploads, anon=self.anon)
            except BaseException:
                self.discard()
                raise
            for out in self.outputs:
                out.upload = None  # in place: nothing of it to remove any more
            self.discard(lambda out: out.remote)  # the local copies are done with
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


def _remove_path(path: str) -> None:
    """Remove a temporary file or folder, if it is there."""
    with contextlib.suppress(OSError):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


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
        failure = write_failure(exc, what)
        if failure is not exc:
            raise failure from exc
        raise
    finally:
        stage.release()


def write_failure(exc: BaseException, what: str = "export") -> BaseException:
    """What a failure while staging is raised as: an OS error as :class:`codec.WriteError`,
    saying that nothing was written (a remote object that could not be read stays a
    :class:`~codec.errors.RemoteError`, with its own exit code); anything else as it is."""
    if isinstance(exc, OSError) and not isinstance(exc, RemoteError):
        remote_name = isinstance(exc.filename, str) and is_url(exc.filename)
        why = os_error_message(exc) if remote_name else (exc.strerror or exc)
        return WriteError(f"{what} failed, nothing written: {why}")
    return exc


@dataclass(frozen=True)
class Piece:
    """One task of an export: the plan's records ``start`` to ``stop`` (positions in
    :meth:`Plan.items`), written to ``dsts`` (a shard; or every output of a format that is not
    split, whose exporter names them when it writes)."""

    start: int
    stop: int
    dsts: tuple[str, ...]


@dataclass
class Staged:
    """An output a task wrote, synced and read back (plain data, sent back to the client):
    its temporary file ``tmp`` beside ``dst`` (a remote one's temporary URL, with ``upload``),
    the records or rows it holds (``expected``), how many of the plan's records (``records``,
    for split outputs) and its size."""

    tmp: str
    dst: str
    expected: int
    records: int | None
    size: int
    upload: remote.Upload | None = None


@dataclass
class Written:
    """What a task sends back: its piece's report, the outputs it staged, the damaged source
    records it skipped (for the index map), and whether it found the export given up (then
    it removed what it wrote)."""

    report: ExportReport
    outputs: list[Staged] = field(default_factory=list)
    damaged: dict[RecordRef, Problem] = field(default_factory=dict)
    abandoned: bool = False


def _ready(path: str, expected: int, shown: str) -> None:
    """The check of an output its task has read back already."""
    return None


class Stopped(BaseException):
    """Raised inside a task run in the client's process when the export is cancelled: not an
    error of the task, so no executor tries it again."""


class Hooks:
    """The client's side of the tasks that run in its own process: the plan's open files,
    and the progress and cancellation of the export, which such a task reports to and checks
    from inside (every :data:`TICK_EVERY` records)."""

    def __init__(
        self,
        files: Sequence[codec.TFRecordFile],
        total: int,
        progress: ExportProgress | None,
        job_progress: JobProgress | None,
        cancel: threading.Event | None,
    ) -> None:
        self.files = files
        self.total = total
        self.progress = progress
        self.job_progress = job_progress
        self.cancel = cancel
        self.last: jobs.Progress | None = None
        self.started = time.monotonic()
        self.tasks = 0

    def on_job(self, p: jobs.Progress) -> None:
        """The job's progress (from :func:`codec.jobs.run`)."""
        self.last = p
        if self.job_progress is not None:
            self.job_progress(p)
        if self.progress is not None and p.tasks_done:
            self.progress("write", p.records, self.total)

    def tick(self, stage: str, done: int) -> None:
        """``done`` records of the piece being written here (``stage``: ``write`` or a
        table's first pass, ``scan``)."""
        base = self.last.records if self.last is not None else 0
        if self.progress is not None:
            self.progress(stage, base + done, self.total)
        if self.job_progress is not None and self.last is not None:
            elapsed = time.monotonic() - self.started
            self.job_progress(dataclasses.replace(self.last, records=base + done, elapsed=elapsed))
        if self.cancel is not None and self.cancel.is_set():
            raise Stopped


class PieceRun(Stage):
    """One piece of an export, where a task writes it (this process, a pool worker, a Dask
    worker): what an exporter's ``write`` gets. ``plan`` is the piece's
    :class:`~browser_app.export.plan.Portion` of the records; ``dsts`` the piece's
    destinations; ``run`` the client's run, whose temporary names the piece's local outputs
    take in folders the client holds the lock of. ``hooks`` (only in the client's own
    process) report progress to the client and stop the piece when the export is cancelled."""

    def __init__(
        self,
        plan: Portion,
        report: ExportReport,
        *,
        run: str,
        dsts: Sequence[str] = (),
        verify: bool = True,
        anon: bool = False,
        hooks: Hooks | None = None,
    ) -> None:
        super().__init__(report, total=plan.total, verify=verify, anon=anon)
        self.plan = plan
        self.client_run = run
        self.dsts = list(dsts)
        self.hooks = hooks

    def tick(self, stage: str, done: int, total: int | None = None) -> None:
        if self.hooks is not None:
            self.hooks.tick(stage, done)

    def guard(self, dsts: Sequence[str]) -> None:
        """Refuse to write over a source file of this export."""
        guard_sources(self.plan.source_paths(), dsts)

    def _reserve(self, dst: str, check: Check, *, folder: bool) -> Output:
        if is_url(dst):
            if not remote.run_marked(dst, self.client_run, anon=self.anon):
                raise ExportError(f"{shown(dst)}: the export was stopped; nothing written")
            return super()._reserve(dst, check, folder=folder)  # in this process's staging
        directory = os.path.dirname(os.path.abspath(dst))
        if not run_alive(directory, self.client_run):
            raise ExportError(f"{shown(dst)}: the export was stopped; nothing written")
        try:
            tmp = new_temp(directory, self.client_run, dst, folder)
        except OSError as exc:
            raise WriteError(f"{shown(dst)}: cannot write here: {exc.strerror or exc}") from exc
        out = Output(tmp, dst, check)
        self.outputs.append(out)
        return out

    def replace_on_commit(self) -> None:
        raise ExportError("only the export's plan decides to replace the source")

    def finish(self) -> None:
        raise AssertionError("a piece is handed back (PieceRun.hand_back), not committed")

    def hand_back(self) -> Written:
        """Sync every output, read each one back (unless ``verify`` is off), upload the
        remote ones to their temporary names, and say what was staged. When the client has
        given the export up meanwhile, remove it all instead."""
        for out in self.outputs:
            _sync(out)
        if self.verify:
            for out in self.outputs:
                out.check(out.tmp, out.expected, shown(out.dst))
        staged = [
            Staged(out.tmp, out.dst, out.expected, out.records, _size(out.tmp))
            for out in self.outputs
        ]
        for out, st in zip(self.outputs, staged):
            if out.remote:
                up = remote.Upload(out.tmp, out.dst, remote.temp_url(out.dst, self.client_run))
                remote.upload([up], anon=self.anon)
                up.files()  # a folder's names, kept for the client
                out.upload, st.tmp, st.upload = up, up.tmp, up
        written = Written(self.report, staged, dict(self.plan.damaged))
        if not self._alive():
            self.discard()
            return Written(self.report, abandoned=True)
        # Handed over: the client commits or removes them now.
        for out in self.outputs:
            if out.upload is not None:
                _remove_path(out.tmp)  # the local copy of an upload
        self.outputs = []
        return written

    def _alive(self) -> bool:
        """Whether the client still holds the export: its lock file in every local
        destination's folder, its run marker beside every remote one (asked once a folder,
        after the uploads)."""
        local = {os.path.dirname(os.path.abspath(o.dst)) for o in self.outputs if not o.remote}
        run = self.client_run
        marked = {remote.run_marker(o.dst, run): o.dst for o in self.outputs if o.remote}
        return all(run_alive(d, run) for d in local) and all(
            remote.run_marked(dst, run, anon=self.anon) for dst in marked.values()
        )


class ExportRun(Stage):
    """An export on the client: the :class:`~browser_app.export.plan.Plan` of records, the
    outputs its tasks staged (:meth:`take`), the index map and the commit. Its ``run``
    names every temporary output of the export, in every folder."""

    def __init__(
        self,
        plan: Plan,
        report: ExportReport,
        *,
        run: str,
        verify: bool = True,
        progress: ExportProgress | None = None,
        anon: bool = False,
    ) -> None:
        super().__init__(
            report, total=plan.total, verify=verify, progress=progress, anon=anon, run=run
        )
        self.plan = plan
        self.pieces: list[Piece] = []
        self._markers: set[str] = set()  # the run's markers beside remote destinations

    def guard(self, dsts: Sequence[str]) -> None:
        """Refuse to write over a source file of this export."""
        guard_sources(self.plan.source_paths(), dsts)

    def prepare(self, dst: str) -> None:
        """Make ready to stage outputs for ``dst``: refuse a URL this tool cannot write; take
        the export's lock in a local destination's folder (cleaning what killed exports left
        there), which the tasks that write there check."""
        if is_url(dst):
            remote.check_writable(dst, anon=self.anon)
            if remote.run_marker(dst, self._remote_run()) not in self._markers:
                folder = parent_url(dst.split("?", 1)[0].rstrip("/"))
                self.report.cleaned += remote.clean_stale(folder, anon=self.anon)
                self._markers.add(remote.mark_run(dst, self._remote_run(), anon=self.anon))
            return
        directory = os.path.dirname(os.path.abspath(dst))
        try:
            self._lock(directory)
        except OSError as exc:
            raise WriteError(f"{shown(dst)}: cannot write here: {exc.strerror or exc}") from exc

    def take(self, parts: Sequence[Written]) -> None:
        """Add what the tasks wrote (in the plan's order) to the report and to the outputs
        to commit; the damaged records they skipped go to the plan, for the index map."""
        report = self.report
        for part in parts:
            got = part.report
            for name in ("records", "copied", "edited", "added", "images", "bytes", "reencoded"):
                setattr(report, name, getattr(report, name) + getattr(got, name))
            report.cleaned += got.cleaned
            report.cleaned_bytes += got.cleaned_bytes
            report.skipped.extend(got.skipped)
            report.unconverted.extend(got.unconverted)
            for why, n in got.inexact.items():
                report.inexact[why] = report.inexact.get(why, 0) + n
            if got.formulas is not None:
                report.formulas = (
                    got.formulas
                    if report.formulas is None
                    else _merged(report.formulas, got.formulas)
                )
            report.outputs.extend(got.outputs)
            self.plan.damaged.update(part.damaged)
            for st in part.outputs:
                self.outputs.append(
                    Output(
                        st.tmp,
                        st.dst,
                        _ready,
                        st.expected,
                        st.records,
                        ready=True,
                        size=st.size,
                        upload=st.upload,
                    )
                )

    def discard(self, which: Callable[[Output], bool] | None = None) -> None:
        super().discard(which)
        if which is not None:
            return
        # Given up: the lock files and the run markers go first (a task still writing then
        # removes what it writes or uploads), then every temporary output of the run, and
        # every temporary object a task may have uploaded.
        self._unmark()
        for lock in self._locks.values():
            lock.abandon()
        for piece in self.pieces:
            for d in piece.dsts:
                if is_url(d):
                    with contextlib.suppress(Exception):  # gone already, or the store is away
                        fs, path = filesystem(
                            remote.temp_url(d, self._remote_run()), anon=self.anon
                        )
                        fs.rm(path, recursive=True)

    def release(self) -> None:
        self._unmark()
        super().release()

    def _unmark(self) -> None:
        """Remove the run's markers beside remote destinations (the export is over)."""
        markers, self._markers = self._markers, set()
        for url in markers:
            remote.unmark_run(url, anon=self.anon)


def _merged(a: FormulaCells, b: FormulaCells) -> FormulaCells:
    """The formula cells of two pieces of one table, in order."""
    out = FormulaCells(a.neutralized, a.cells + b.cells, a.rows + b.rows, titles=a.titles)
    out.records = (a.records + b.records)[:FORMULA_RECORDS_SHOWN]
    return out


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
