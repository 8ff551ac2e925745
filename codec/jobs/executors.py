"""Where a job's tasks run: this process, a pool of local processes, or a Dask cluster.

Every executor runs the same task functions (module-level, picklable) and hands back each
task's final outcome: its answer, or the error it still raised after ``retries`` more tries.
:func:`codec.jobs.run` does the rest (progress, cancellation, merging), the same way for all.

- ``inline``: one task after the other in this process.
- ``processes[:N]`` (the default, every core): a pool of ``N`` processes. They are forked
  when this process runs no other thread (a command-line run: a worker starts in
  milliseconds, with the codec already imported), and started with *spawn* otherwise (forking
  a process with threads — the app, an fsspec event loop, a Dask client — can copy a lock in
  a held state). Spawned workers do not run this process's ``__main__`` again (a Streamlit
  page is ``__main__`` in the app): a job and its tasks live in importable modules. A worker
  process that dies (killed, out of memory) breaks the pool: it is started again and the
  unfinished tasks are submitted again, those that may have been running first and one at a
  time, so a task that kills its worker every time is found and reported (after
  ``MAX_KILLS`` deaths) instead of taking the job down.
- ``dask:local[:N]``: a Dask ``LocalCluster`` of ``N`` single-threaded worker processes on
  127.0.0.1 (no dashboard), closed with the executor; ``dask:tcp://host:port`` (or just
  ``tcp://host:port``): a running Dask scheduler. Dask retries a task whose worker died on
  another worker; a scheduler that cannot be reached, or that is lost mid-job, is a
  :class:`~codec.errors.SchedulerError` naming its address. A LocalCluster's workers start
  without running ``__main__`` again, like the pool's (those its nannies restart later too),
  with the environment and Dask settings this process had then.

Dask is an optional extra (``pip install 'tfrecord-browser[dask]'``), imported only when a
Dask executor is made.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import itertools
import logging
import multiprocessing.context
import os
import queue
import sys
import threading
import time
import types
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ExecutorError, MissingExtraError, SchedulerError
from ..values import plural
from .spec import ExecutorSpec, cores, parse_executor

__all__ = [
    "DEFAULT_RETRIES",
    "MAX_KILLS",
    "Batch",
    "DaskExecutor",
    "Executor",
    "Finished",
    "InlineExecutor",
    "ProcessExecutor",
    "WorkerDied",
    "executor",
    "start_method",
    "worker_died",
]

DEFAULT_RETRIES = 2  # more tries of a task that raised, before its error is its outcome
MAX_KILLS = 3  # a task whose worker process died this often (alone) is reported, not retried
CONNECT_TIMEOUT = 10.0  # seconds to reach a Dask scheduler
FETCH_EVERY = 0.25  # seconds between fetches of finished tasks' answers from Dask workers
GATHER_TIMEOUT = 120.0  # seconds to fetch finished tasks' (small) answers before giving up


def start_method() -> str:
    """How a pool started now starts its processes: ``fork`` where the platform has it and
    this process runs no thread but the main one, else ``spawn``."""
    import multiprocessing

    if (
        threading.active_count() == 1
        and sys.platform != "darwin"  # macOS system libraries are not safe to fork
        and "fork" in multiprocessing.get_all_start_methods()
    ):
        return "fork"
    return "spawn"


class WorkerDied(Exception):
    """The outcome of a task whose worker process died every time it ran it."""


def worker_died(exc: BaseException) -> bool:
    """Whether ``exc`` says that the process running a task died: ours
    (:class:`WorkerDied`), or Dask's ``KilledWorker`` (looked for only when Dask is loaded:
    it never is for this question alone)."""
    if isinstance(exc, WorkerDied):
        return True
    distributed = sys.modules.get("distributed")
    killed = getattr(distributed, "KilledWorker", None) if distributed else None
    return isinstance(killed, type) and isinstance(exc, killed)


@dataclass
class Finished:
    """A task's final outcome: ``value`` (its answer), or ``error`` (what it raised on its
    last try). ``key`` is the number it was submitted with."""

    key: int
    value: Any = None
    error: BaseException | None = None


class Batch(ABC):
    """The tasks of one job on an executor: submit them, collect their final outcomes."""

    @abstractmethod
    def submit(self, key: int, fn: Callable[[Any], Any], arg: Any) -> None:
        """Run ``fn(arg)`` somewhere; its outcome comes back from :meth:`wait` as ``key``."""

    @abstractmethod
    def wait(self, timeout: float) -> list[Finished]:
        """The outcomes that are final now (waiting up to ``timeout`` seconds for the first)."""

    @abstractmethod
    def cancel(self) -> None:
        """Drop every task not finished: pending ones never start, answers are not kept."""


class Executor(ABC):
    """Runs tasks. ``name`` says where (for messages), ``workers`` how many at once."""

    name: str = ""
    workers: int = 1

    def __init__(self, retries: int = DEFAULT_RETRIES) -> None:
        self.retries = max(0, retries)

    @abstractmethod
    def batch(self) -> Batch:
        """A new, empty batch of tasks (one per job; several may run at once)."""

    def close(self, wait: bool = True) -> None:
        """Stop the workers this executor started (nothing to do by default): after the
        tasks they run (``wait``), or now."""
        return None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


# -- in this process ---------------------------------------------------------------------------


class InlineExecutor(Executor):
    """Tasks one after the other in this process (one core; nothing to pickle)."""

    name = "this process"

    def batch(self) -> Batch:
        return _InlineBatch(self.retries)


class _InlineBatch(Batch):
    def __init__(self, retries: int) -> None:
        self._retries = retries
        self._todo: deque[tuple[int, Callable[[Any], Any], Any]] = deque()

    def submit(self, key: int, fn: Callable[[Any], Any], arg: Any) -> None:
        self._todo.append((key, fn, arg))

    def wait(self, timeout: float) -> list[Finished]:
        if not self._todo:
            return []
        key, fn, arg = self._todo.popleft()  # one task per call: cancel is seen between tasks
        for attempt in range(self._retries + 1):
            try:
                return [Finished(key, fn(arg))]
            except Exception as exc:
                if attempt == self._retries:
                    return [Finished(key, error=exc)]
        raise AssertionError("unreachable")

    def cancel(self) -> None:
        self._todo.clear()


# -- a pool of local processes -----------------------------------------------------------------


class ProcessExecutor(Executor):
    """A pool of ``workers`` processes (default: every core), started on first use and kept
    until :meth:`close`. ``context`` is the multiprocessing start method; ``"auto"`` forks
    when the process starting the pool runs no other thread and spawns otherwise (decided
    each time a pool starts: see :func:`start_method`)."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        retries: int = DEFAULT_RETRIES,
        context: str = "auto",
        max_kills: int = MAX_KILLS,
    ) -> None:
        super().__init__(retries)
        self.workers = workers or cores()
        self.name = plural(self.workers, "local process", "local processes")
        self.max_kills = max(1, max_kills)
        self._context = context
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def pool(self) -> ProcessPoolExecutor:
        """The running pool (started now if there is none)."""
        import multiprocessing

        with self._lock:
            if self._pool is None:
                method = start_method() if self._context == "auto" else self._context
                context = (
                    _SpawnContext() if method == "spawn" else multiprocessing.get_context(method)
                )
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=context,
                    initializer=_worker_start,
                    initargs=(os.getpid(),),
                )
            return self._pool

    def restart(self, broken: ProcessPoolExecutor) -> None:
        """Drop ``broken`` (a pool a worker died in); the next task starts a new one."""
        with self._lock:
            if self._pool is broken:
                self._pool = None
        broken.shutdown(wait=False, cancel_futures=True)

    def batch(self) -> Batch:
        return _PoolBatch(self)

    def close(self, wait: bool = True) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        if not wait:  # stop the tasks running too (a cancelled job's)
            stop = getattr(pool, "terminate_workers", None)  # Python 3.14
            if stop is not None:
                stop()
            else:
                _stop_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _stop_workers(pool: ProcessPoolExecutor, within: float = 2.0) -> None:
    """Stop ``pool``'s workers, the tasks they run with them, and the pool's own thread.

    A pool whose workers die marks every task it still holds as failed; before Python 3.12
    that raises, in the pool's thread, for a task already cancelled (a traceback on the
    console, the thread gone without closing its queues, and every later pool of the process
    spawned rather than forked, as a thread is left running). So the pool is first shut down
    with ``cancel_futures``, and its thread given up to ``within`` seconds to drop the tasks
    no worker has started; then the workers are stopped and the thread joined."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    thread = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + within
    while (
        thread is not None
        and thread.is_alive()
        and getattr(pool, "_cancel_pending_futures", False)
        and time.monotonic() < deadline
    ):
        time.sleep(0.005)
    for process in processes:
        process.terminate()
    if thread is not None:
        thread.join(max(0.0, deadline - time.monotonic()) + within)


ORPHAN_CHECK = 1.0  # seconds between a pool worker's looks at whether its parent is alive


def _worker_start(parent: int) -> None:
    """A pool worker ignores Ctrl+C (a terminal sends it to every process of the command):
    the process that runs the job cancels it and stops its workers, without a traceback from
    each of them. And it dies with its parent: a parent killed outright (``kill -9`` of the
    app's server or of a command) cannot stop its workers, which would otherwise live on,
    holding memory and finishing tasks nobody waits for."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_exit_when_orphaned, args=(parent,), name="tfrecord-browser-orphan", daemon=True
    ).start()


def _exit_when_orphaned(parent: int) -> None:
    # Not PR_SET_PDEATHSIG: it fires when the *thread* that started the worker ends (a
    # Streamlit script run), not the process.
    while os.getppid() == parent:
        time.sleep(ORPHAN_CHECK)
    os._exit(1)


@dataclass
class _Entry:
    key: int
    fn: Callable[[Any], Any]
    arg: Any
    seq: int = 0  # submission order, for telling which tasks may have been running
    tries: int = 0
    kills: int = 0
    future: Future[Any] | None = None
    pool: ProcessPoolExecutor | None = None


@dataclass
class _PoolBatch(Batch):
    """Tasks on a :class:`ProcessExecutor`. When its pool breaks (a worker died), the tasks
    that may have been running (the first ``workers + 1`` unfinished, in the order the pool
    takes them) go to a quarantine where they run one at a time, so a death there is that
    task's own; the other tasks wait for the quarantine to empty."""

    ex: ProcessExecutor
    live: dict[int, _Entry] = field(default_factory=dict)
    done_q: queue.SimpleQueue[tuple[int, Future[Any]]] = field(default_factory=queue.SimpleQueue)
    quarantine: deque[int] = field(default_factory=deque)
    held: list[int] = field(default_factory=list)
    seq: itertools.count[int] = field(default_factory=itertools.count)
    breaks: int = 0  # breaks in a row with no task finishing in between

    def submit(self, key: int, fn: Callable[[Any], Any], arg: Any) -> None:
        # whose code runs: a bound method's object, or the job of a group of its tasks
        owner = getattr(fn, "__self__", None) or getattr(fn, "job", None)
        where = type(owner).__module__ if owner is not None else getattr(fn, "__module__", "")
        if where == "__main__":
            raise ExecutorError(
                f"{getattr(fn, '__qualname__', fn)} is defined in __main__: a job run on"
                " local processes must be defined in a module they can import"
            )
        entry = _Entry(key, fn, arg)
        self.live[key] = entry
        if self.quarantine:
            self.held.append(key)
        else:
            self._start(entry)

    def _start(self, entry: _Entry) -> None:
        pool = self.ex.pool()
        entry.seq = next(self.seq)
        entry.pool = pool
        try:
            fut = pool.submit(entry.fn, entry.arg)
        except BrokenProcessPool:  # broke between pool() and submit(): next wait() sees it
            fut = Future()
            fut.set_exception(BrokenProcessPool("the pool broke"))
        entry.future = fut
        fut.add_done_callback(functools.partial(_put, self.done_q, entry.key))

    def wait(self, timeout: float) -> list[Finished]:
        out: list[Finished] = []
        try:
            items = [self.done_q.get(timeout=timeout)]
        except queue.Empty:
            return out
        while True:
            try:
                items.append(self.done_q.get_nowait())
            except queue.Empty:
                break
        broken: set[ProcessPoolExecutor] = set()
        for key, fut in items:
            entry = self.live.get(key)
            if entry is None or entry.future is not fut or fut.cancelled():
                continue  # an answer already taken, or of a try given up
            exc = fut.exception()
            if isinstance(exc, BrokenProcessPool):
                assert entry.pool is not None
                broken.add(entry.pool)
                continue
            self.breaks = 0
            if exc is not None and entry.tries < self.ex.retries:
                entry.tries += 1
                self._start(entry)
                continue
            del self.live[key]
            out.append(Finished(key, None if exc is not None else fut.result(), exc))
            if self.quarantine and self.quarantine[0] == key:
                self.quarantine.popleft()
                self._next_in_quarantine()
        for pool in broken:
            out.extend(self._broke(pool))
        return out

    def _broke(self, pool: ProcessPoolExecutor) -> list[Finished]:
        """A worker of ``pool`` died: start a new pool, and the tasks that were on this one
        again (in quarantine when they may have been running)."""
        self.ex.restart(pool)
        self.breaks += 1
        if self.breaks > self.ex.max_kills * (self.ex.workers + 1) + 1:
            raise ExecutorError(
                f"the pool of {plural(self.ex.workers, 'local process', 'local processes')}"
                " keeps breaking: its worker"
                " processes die before finishing any task (killed, out of memory, or they"
                " cannot start); try the inline executor to see the error"
            )
        out: list[Finished] = []
        lost = sorted(
            (e for e in self.live.values() if e.pool is pool and e.future is not None),
            key=lambda e: e.seq,
        )
        stranded = []
        for entry in lost:
            fut = entry.future
            assert fut is not None
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                del self.live[entry.key]  # finished before the pool broke
                out.append(Finished(entry.key, fut.result()))
            else:
                entry.future = None
                stranded.append(entry)
        alone = self.quarantine[0] if self.quarantine else None
        if alone is not None and any(e.key == alone for e in stranded):
            suspects = [alone]  # it ran alone: the death is its own
        else:
            suspects = [e.key for e in stranded[: self.ex.workers + 1]]
        for key in suspects:
            entry = self.live[key]
            entry.kills += 1
            if entry.kills >= self.ex.max_kills:
                del self.live[key]
                out.append(Finished(key, error=WorkerDied(_died(entry.kills))))
        quarantined = set(self.quarantine)
        for entry in stranded:
            if entry.key not in self.live:
                continue
            if entry.kills and entry.key not in quarantined:
                self.quarantine.append(entry.key)
            elif entry.key not in quarantined:
                self.held.append(entry.key)
        self.quarantine = deque(k for k in self.quarantine if k in self.live)
        self._next_in_quarantine()
        return out

    def _next_in_quarantine(self) -> None:
        """Run the next quarantined task alone, or, when none is left, every task held."""
        while self.quarantine:
            entry = self.live.get(self.quarantine[0])
            if entry is None:
                self.quarantine.popleft()
                continue
            if entry.future is None:
                self._start(entry)
            return
        held, self.held = self.held, []
        for key in sorted(held, key=lambda k: self.live[k].seq if k in self.live else 0):
            entry = self.live.get(key)
            if entry is not None and entry.future is None:
                self._start(entry)

    def cancel(self) -> None:
        for entry in self.live.values():
            if entry.future is not None:
                entry.future.cancel()
        self.live.clear()
        self.quarantine.clear()
        self.held.clear()


class _HiddenMain:
    """``__main__`` replaced by an empty module while any thread is inside :meth:`hidden`
    (counted, so overlapping starts put the real one back once, at the end)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved: types.ModuleType | None = None
        self.stand_in = types.ModuleType("__main__")

    @contextlib.contextmanager
    def hidden(self) -> Iterator[None]:
        with self.lock:
            if self.depth == 0:
                self.saved = sys.modules.get("__main__")
                sys.modules["__main__"] = self.stand_in
            self.depth += 1
        try:
            yield
        finally:
            with self.lock:
                self.depth -= 1
                if self.depth == 0:
                    if sys.modules.get("__main__") is self.stand_in:  # else: set anew meanwhile
                        if self.saved is None:
                            del sys.modules["__main__"]
                        else:
                            sys.modules["__main__"] = self.saved
                    self.saved = None


_HIDDEN_MAIN = _HiddenMain()


def _main_hidden() -> contextlib.AbstractContextManager[None]:
    """Processes started in this block with *spawn* do not run ``__main__`` again: while
    their start-up data is made, ``__main__`` is an empty module. Whatever ``__main__`` is
    (a Streamlit page, a test harness, a script), workers need none of it."""
    return _HIDDEN_MAIN.hidden()


class _SpawnProcess(multiprocessing.context.SpawnProcess):
    """A *spawn* process that does not run ``__main__`` again (see :func:`_main_hidden`)."""

    @staticmethod
    def _Popen(process_obj: Any) -> Any:
        with _main_hidden():
            return multiprocessing.context.SpawnProcess._Popen(process_obj)


class _SpawnContext(multiprocessing.context.SpawnContext):
    Process = _SpawnProcess


def _put(q: queue.SimpleQueue[tuple[int, Any]], key: int, fut: Any) -> None:
    q.put((key, fut))


def _died(kills: int) -> str:
    times = "once" if kills == 1 else f"{kills} times"
    return (
        f"the worker process reading it died {times} (killed, or out of memory) while it ran alone"
    )


# -- Dask ------------------------------------------------------------------------------------


# Dask's settings for a local cluster we start (its scheduler, nannies and workers):
_LOCAL_CONFIG = {
    # The environment Dask's nannies give the workers they start, less
    # MALLOC_TRIM_THRESHOLD_: set, it also turns off glibc's adaptive mmap threshold, so every
    # array of more than 128 KiB is mapped and unmapped afresh, and a schema task took 1.5x
    # the CPU of the same task on a pool worker. Without it, a local cluster's workers
    # allocate as this process's do.
    "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
    # The cluster has no dashboard, so nothing reads the workers' profiles, and its logs are
    # silenced, so nothing reports a slow event loop: sampling each worker's stack every
    # 10 ms and timing every loop each 20 ms only burnt CPU. An idle cluster of 2 workers
    # took 134 ms of CPU a second with them (13 % of a core, beside the app), 39 without.
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
}


@functools.cache
def _nanny_class(distributed: Any) -> type:
    """Dask's nanny, starting its worker process (again, after it died, too) without
    ``__main__`` (:func:`_main_hidden`): a worker restarted later would otherwise run what
    ``__main__`` is then (in the app, a Streamlit page), fail, and be restarted again and
    again, leaving the cluster a worker short."""

    class Nanny(distributed.Nanny):  # type: ignore[misc,name-defined]
        async def instantiate(self) -> Any:
            with _main_hidden():
                return await super().instantiate()

    return Nanny


class DaskExecutor(Executor):
    """Tasks on a Dask cluster: the scheduler at ``address``, or (``address=None``) a
    ``LocalCluster`` of ``workers`` single-threaded processes (default: every core) started
    here and closed with the executor, whose workers run with this process's environment as
    it is now (also those restarted later). Workers read the data themselves."""

    def __init__(
        self,
        address: str | None = None,
        *,
        workers: int | None = None,
        retries: int = DEFAULT_RETRIES,
        timeout: float = CONNECT_TIMEOUT,
        spec: str = "",
    ) -> None:
        super().__init__(retries)
        self.address = address or ""
        self._cluster: Any = None
        self._closed = False
        distributed = _distributed(spec or (f"dask:{address}" if address else "dask:local"))
        if address is None:
            n = workers or cores()
            import dask

            try:
                with _main_hidden(), dask.config.set(_LOCAL_CONFIG):
                    # _main_hidden: see ProcessExecutor (a worker restarted later is not)
                    self._cluster = distributed.LocalCluster(
                        n_workers=n,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,  # no dashboard; its HTTP server (health
                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # checks): any port
                        # a worker restarted after dying gets this environment too, not the one
                        # this process has then (credentials, endpoints, the cache folder)
                        env={k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"},
                        # a task's error is reported as a problem of its input, not logged
                        silence_logs=logging.CRITICAL,
                        worker_class=_nanny_class(distributed),
                        # the nannies' own copy of the settings, for a worker they start again
                        # (they would otherwise share parts of the global one, set back
                        # when this block ends)
                        config=copy.deepcopy(dask.config.config),
                    )
            except Exception as exc:
                raise ExecutorError(
                    f"a local Dask cluster of {plural(n, 'worker')} could not be started:"
                    f" {_one_line(exc)}"
                ) from exc
            self.address = self._cluster.scheduler_address
            self.name = f"a local Dask cluster of {plural(n, 'worker')} ({self.address})"
        else:
            self.name = f"the Dask scheduler at {address}"
        self.timeout = timeout
        target = self._cluster if self._cluster is not None else address
        try:
            # Client's own timeout covers the connection, not a scheduler that accepts it and
            # never answers: the whole start has a deadline of its own.
            self.client = within(
                timeout,
                lambda: distributed.Client(target, timeout=timeout, set_as_default=False),
                late=lambda client: client.close(timeout=timeout),
            )
        except (OSError, TimeoutError) as exc:
            self.close()
            raise SchedulerError(
                self.address,
                f"{self.address}: cannot reach the Dask scheduler ({_one_line(exc)}); check"
                " that it runs and that this address and port are reachable from here",
            ) from None
        self.workers = workers or len(self.client.scheduler_info().get("workers", {})) or 1

    def batch(self) -> Batch:
        return _DaskBatch(self)

    def lost(self, why: str = "") -> SchedulerError:
        more = f" ({why})" if why else ""
        return SchedulerError(
            self.address,
            f"{self.address}: the connection to the Dask scheduler was lost during the job"
            f"{more}; nothing was kept — check the cluster and run the job again",
        )

    def connected(self) -> bool:
        return not self._closed and self.client.status == "running"

    def close(self, wait: bool = True) -> None:
        if self._closed:
            return
        self._closed = True
        client = getattr(self, "client", None)
        if client is not None:
            try:
                seconds = getattr(self, "timeout", CONNECT_TIMEOUT)
                within(seconds, lambda: client.close(timeout=seconds))
            except Exception:
                pass
        if self._cluster is not None:
            try:
                self._cluster.close()
            except Exception:
                pass


class _DaskBatch(Batch):
    """Tasks on a :class:`DaskExecutor`, sent and fetched in bulk: what Dask costs a job is
    mostly round trips, not work.

    - Submitted tasks are held until the next :meth:`wait` and sent then with one
      ``client.map`` per function: a graph update or two for a job's tasks, not one each.
    - The answers of finished tasks stay on their workers until every task sent has
      finished, or ``FETCH_EVERY`` seconds have passed since the last fetch; then they are
      fetched with one ``gather``. A short job pays for one fetch at its end; a long one's
      answers (and progress) arrive at least that often."""

    def __init__(self, ex: DaskExecutor) -> None:
        self.ex = ex
        self.held: list[tuple[int, Callable[[Any], Any], Any]] = []  # submitted, not sent
        self.live: dict[int, Any] = {}  # sent, not yet handed back: their futures by key
        self.ended: dict[int, Any] = {}  # of those, the ones that finished
        self.done_q: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.fetched = time.monotonic()
        self.cancelled = False

    def submit(self, key: int, fn: Callable[[Any], Any], arg: Any) -> None:
        if not self.ex.connected():
            raise self.ex.lost()
        self.held.append((key, fn, arg))

    def _send(self) -> None:
        held, self.held = self.held, []
        by_function: dict[int, list[tuple[int, Callable[[Any], Any], Any]]] = {}
        for item in held:  # a job submits two functions at most: its task, and its groups
            by_function.setdefault(id(item[1]), []).append(item)
        for items in by_function.values():
            futures = self.ex.client.map(
                items[0][1], [arg for _, _, arg in items], retries=self.ex.retries, pure=False
            )
            for (key, _, _), fut in zip(items, futures):
                self.live[key] = fut
                fut.add_done_callback(functools.partial(_put, self.done_q, key))

    def wait(self, timeout: float) -> list[Finished]:
        if self.held:
            if not self.ex.connected():
                raise self.ex.lost()
            self._send()
        deadline = time.monotonic() + timeout
        while not self._fetch_now():
            now = time.monotonic()
            if now >= deadline:
                if self.live and not self.ex.connected():
                    raise self.ex.lost()
                return []
            until = min(deadline, self.fetched + FETCH_EVERY) if self.ended else deadline
            try:
                self._note(*self.done_q.get(timeout=max(0.0, until - now)))
            except queue.Empty:
                pass
        return self._fetch()

    def _note_all(self) -> None:
        while True:
            try:
                self._note(*self.done_q.get_nowait())
            except queue.Empty:
                return

    def _note(self, key: int, fut: Any) -> None:
        if self.cancelled or key not in self.live or self.live[key] is not fut:
            return  # a task of this batch cancelled, or sent again since
        if fut.status == "cancelled":
            raise self.ex.lost(_cancel_reason(fut))
        self.ended[key] = fut

    def _fetch_now(self) -> bool:
        self._note_all()
        if not self.ended:
            return False
        every = len(self.ended) == len(self.live)
        return every or time.monotonic() - self.fetched >= FETCH_EVERY

    def _fetch(self) -> list[Finished]:
        ended, self.ended = self.ended, {}
        for key in ended:
            del self.live[key]
        self.fetched = time.monotonic()
        try:
            # the answers of the tasks that finished, fetched at once (one round trip each
            # is slow)
            ok = [(key, fut) for key, fut in ended.items() if fut.status != "error"]
            futures = [fut for _, fut in ok]
            values = within(GATHER_TIMEOUT, lambda: self.ex.client.gather(futures)) if ok else []
            out = [Finished(key, value) for (key, _), value in zip(ok, values)]
            out += [
                Finished(key, error=fut.exception())
                for key, fut in ended.items()
                if fut.status == "error"
            ]
        except Exception as exc:
            if isinstance(exc, TimeoutError) or not self.ex.connected() or _is_cancelled(exc):
                raise self.ex.lost(_one_line(exc)) from None
            raise
        return out

    def cancel(self) -> None:
        self.cancelled = True
        self.held = []
        futures, self.live, self.ended = list(self.live.values()), {}, {}
        if futures and self.ex.connected():
            try:
                self.ex.client.cancel(futures)
            except Exception:
                pass


T = TypeVar("T")


def within(seconds: float, fn: Callable[[], T], *, late: Callable[[T], object] | None = None) -> T:
    """``fn()``'s answer, or :class:`TimeoutError` after ``seconds``: a wait on a Dask
    scheduler that a library call would let last forever (a server that accepts a connection
    and never answers). ``fn`` runs on a thread of its own, left behind on a time-out; what it
    gives back after that is handed to ``late`` (to close it)."""
    box: dict[str, Any] = {}
    lock = threading.Lock()
    done = threading.Event()

    def go() -> None:
        try:
            value = fn()
        except BaseException as exc:
            box["error"] = exc
        else:
            with lock:
                gave_up = box.get("gave_up", False)
                box["value"] = value
            if gave_up and late is not None:
                with contextlib.suppress(Exception):
                    late(value)
        finally:
            done.set()

    threading.Thread(target=go, name="tfrecord-browser-dask-wait", daemon=True).start()
    if not done.wait(seconds):
        with lock:
            if "value" not in box:
                box["gave_up"] = True
                raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def _distributed(spec: str) -> Any:
    try:
        import distributed
    except ImportError:
        raise MissingExtraError(
            spec, "dask", "dask.distributed", doing="running jobs on a Dask cluster"
        ) from None
    return distributed


def _is_cancelled(exc: BaseException) -> bool:
    from concurrent.futures import CancelledError

    return isinstance(exc, CancelledError)


def _cancel_reason(fut: Any) -> str:
    try:
        fut.result(timeout=0)
    except Exception as exc:
        text = _one_line(exc)
        return "" if "reason: unknown" in text else text
    return ""


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# -- by name -----------------------------------------------------------------------------------


def executor(
    spec: ExecutorSpec | str | None = None,
    *,
    retries: int = DEFAULT_RETRIES,
    timeout: float = CONNECT_TIMEOUT,
) -> Executor:
    """The executor ``spec`` names (:func:`~codec.jobs.spec.parse_executor`: ``None`` a
    process per core, ``"processes:N"``, ``"inline"``, ``"dask:local[:N]"`` — a
    LocalCluster started now —, ``"dask:tcp://host:port"`` — a running scheduler, reached
    within ``timeout`` seconds). Close it (or use ``with``) when done."""
    parsed = parse_executor(spec)
    if parsed.kind == "inline":
        return InlineExecutor(retries)
    if parsed.kind == "processes":
        return ProcessExecutor(parsed.workers, retries=retries)
    if parsed.kind == "dask-local":
        return DaskExecutor(None, workers=parsed.workers, retries=retries, spec=str(parsed))
    return DaskExecutor(parsed.address, retries=retries, timeout=timeout, spec=str(parsed))
