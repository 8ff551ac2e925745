"""Where the dataset-wide commands (``verify``, ``schema``, ``filter``) run their job, once:
the options that choose the executor (``--executor``, ``--dask``, ``--workers``), progress on
stderr, and Ctrl+C.

The job (:mod:`codec.jobs`) is split into tasks — whole files, or byte ranges of large plain
files — that run on this process (``inline``), a pool of local processes (the default: one
per core, at most one per task), or a Dask cluster (``dask:local[:N]`` starts one here,
``dask:tcp://host:port`` uses a running scheduler); the answer is the same on all of them.
Ctrl+C cancels the job: its workers are stopped (a local cluster closed) and the command
exits with :data:`~browser_app.errors.EXIT_INTERRUPTED`, saying so in one line.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from browser_app.cli.inputs import positive
from browser_app.errors import Cancelled, UsageError
from browser_app.view import progress_text
from codec.errors import ExecutorError, JobCancelled
from codec.jobs import DEFAULT_SPLIT, Executor, ExecutorSpec, Job, Progress, Task, executor, run
from codec.jobs.executors import CONNECT_TIMEOUT
from codec.jobs.spec import dask_address, parse_executor
from codec.values import plural

__all__ = ["add_job_options", "executor_of", "progress_line", "run_job"]

_EVERY = 0.2  # seconds between progress lines on a terminal
_EVERY_LOG = 2.0  # ... and written to a file or a pipe (with --progress)


def _seconds(text: str) -> float:
    try:
        n = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from exc
    if not n > 0:
        raise argparse.ArgumentTypeError("must be above 0")
    return n


def add_job_options(p: argparse.ArgumentParser, *, progress: bool = True) -> None:
    """``--executor``, ``--dask``, ``--workers`` (one of them), ``--dask-timeout`` and (for a
    command that shows its progress on stderr) ``--progress``."""
    g = p.add_argument_group(
        "where the work runs",
        f"The files are split into tasks (a file, or a {DEFAULT_SPLIT >> 20} MiB byte range of a"
        " large one);"
        " the answer is the same wherever they run. Ctrl+C cancels.",
    )
    which = g.add_mutually_exclusive_group()
    which.add_argument(
        "--executor",
        metavar="SPEC",
        help="inline (this process), processes[:N] (default: a process per core, at most one"
        " per task), dask:local[:N] (a Dask cluster of N workers started here) or"
        " dask:tcp://HOST:PORT (a running Dask scheduler; its workers read the files"
        " themselves: local paths must exist there, URLs work anywhere)",
    )
    which.add_argument(
        "--dask",
        metavar="ADDR",
        help="run on Dask: local[:N] or tcp://HOST:PORT (same as --executor dask:ADDR)",
    )
    which.add_argument(
        "--workers",
        type=positive,
        metavar="N",
        help="N local processes (same as --executor processes:N)",
    )
    g.add_argument(
        "--dask-timeout",
        type=_seconds,
        metavar="SECONDS",
        help=f"how long to try to reach a Dask scheduler (default {CONNECT_TIMEOUT:g})",
    )
    if progress:
        g.add_argument(
            "--progress",
            action="store_true",
            help="show progress on stderr (tasks, bytes, records/s) even when it is not a"
            " terminal (on a terminal it is always shown)",
        )


def executor_of(args: argparse.Namespace) -> ExecutorSpec:
    """The executor the options name (none: the default pool of processes), parsed once; a
    spec that names no executor is a :class:`~browser_app.errors.UsageError`, said before
    anything starts."""
    try:
        if getattr(args, "dask", None):
            return parse_executor(dask_address(args.dask))
        if getattr(args, "workers", None):
            return ExecutorSpec("processes", args.workers)
        return parse_executor(getattr(args, "executor", None))
    except ExecutorError as exc:
        raise UsageError(str(exc)) from None


def run_job(job: Job, tasks: Sequence[Task], args: argparse.Namespace) -> Any:
    """Run ``job`` over ``tasks`` (:func:`codec.jobs.tasks_of`) on the executor the options
    name (its pool no larger than the tasks), with progress on stderr when it is a terminal
    (or ``--progress``), and Ctrl+C cancelling it (:class:`~browser_app.errors.Cancelled`). A
    Dask scheduler that cannot be reached or is lost raises
    :class:`~codec.errors.SchedulerError`."""
    spec = executor_of(args).fit(len(tasks))
    show = _ProgressLine() if getattr(args, "progress", False) or sys.stderr.isatty() else None
    cancel = threading.Event()
    ex: Executor | None = None
    try:
        with _interrupts_cancel(cancel, inline=spec.kind == "inline"):
            ex = executor(spec, timeout=getattr(args, "dask_timeout", None) or CONNECT_TIMEOUT)
            result = run(job, tasks, ex, progress=show, cancel=cancel)
    except BaseException as exc:
        if ex is not None:
            ex.close(wait=False)  # stop the tasks still running
        if not isinstance(exc, (JobCancelled, KeyboardInterrupt)):
            raise
        done = ""
        if isinstance(exc, JobCancelled):
            done = f" after {exc.done:,} of {plural(exc.total, 'task')}"
        raise Cancelled(f"{job.name} was cancelled{done} (Ctrl+C); nothing was kept") from None
    finally:
        if show is not None:
            show.end()
    ex.close()
    return result


@contextlib.contextmanager
def _interrupts_cancel(cancel: threading.Event, *, inline: bool) -> Iterator[None]:
    """While a job runs, Ctrl+C (SIGINT) sets ``cancel`` instead of raising, so the job stops
    its workers itself; a job running in this process (``inline``) is interrupted at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupted(signum: int, frame: Any) -> None:
        cancel.set()
        if inline:
            raise KeyboardInterrupt

    before = signal.signal(signal.SIGINT, interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


class _ProgressLine:
    """One progress line on stderr, rewritten in place on a terminal (a new line every few
    seconds elsewhere), and cleared at the end."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.last = 0.0
        self.width = 0

    def __call__(self, p: Progress) -> None:
        now = time.monotonic()
        final = p.tasks_done == p.tasks_total
        if not final and now - self.last < (_EVERY if self.tty else _EVERY_LOG):
            return
        self.last = now
        line = progress_line(p)
        if self.tty:
            self.stream.write("\r" + line.ljust(self.width))
            self.width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()


def progress_line(p: Progress) -> str:
    """``verify: 12 of 40 tasks · 1.2 GB of 4.0 GB · 1,234,567 records/s (30%)``."""
    return f"{p.job}: {progress_text(p)} ({100 * p.fraction:.0f}%)"
