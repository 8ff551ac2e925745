"""Where dataset-wide jobs run: one shared Dask client per setting, used by every session
and job and closed when the last session using it leaves it; or a pool of a job's own, no
larger than its tasks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

import codec
import codec.jobs

__all__ = ["DASK_TIMEOUT", "Runner", "job_executor", "release_executor", "shared_executor"]

Runner = Callable[[Any, list[codec.jobs.Task]], Any]
"""Runs a job over its tasks and returns its result (:func:`codec.jobs.run`, or the page's
runner with a progress bar and a Cancel button)."""

DASK_TIMEOUT = 5.0  # seconds to reach a Dask scheduler named in the app


def _connected(ex: codec.jobs.Executor) -> bool:
    connected = getattr(ex, "connected", None)
    return bool(connected()) if connected is not None else True


def _close_executor(ex: codec.jobs.Executor) -> None:
    ex.close(wait=False)


@st.cache_resource(
    max_entries=4, validate=_connected, on_release=_close_executor, show_spinner=False
)
def _shared_executor(spec: str, timeout: float) -> codec.jobs.Executor:
    return codec.jobs.executor(spec, timeout=timeout)  # the spec's text: a plain cache key


class _Users:
    """The sessions that use each shared executor (by spec): those whose setting named it or
    that ran a job on it, until they leave it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.of: dict[str, set[str]] = {}


@st.cache_resource(show_spinner=False)
def _users() -> _Users:
    return _Users()


def shared_executor(
    spec: codec.jobs.ExecutorSpec, session: str | None = None, timeout: float | None = None
) -> codec.jobs.Executor:
    """The one client of the Dask cluster ``spec`` names, shared by every session and job:
    connected now (a ``dask:local`` cluster started now; a scheduler tried for ``timeout``
    seconds, the launcher's ``--dask-timeout``, else :data:`DASK_TIMEOUT`) and kept while a
    session uses it (``session``, from now until :func:`release_executor`) or until the
    connection is lost. Raises :class:`codec.errors.ExecutorError` (a
    :class:`~codec.errors.SchedulerError` for a scheduler that cannot be reached) or
    :class:`codec.errors.MissingExtraError`."""
    ex = _shared_executor(str(spec), timeout or DASK_TIMEOUT)
    if session is not None:
        users = _users()
        with users.lock:
            users.of.setdefault(str(spec), set()).add(session)
    return ex


def release_executor(
    spec: codec.jobs.ExecutorSpec, session: str, timeout: float | None = None
) -> None:
    """``session`` no longer uses ``spec``: its shared Dask client (and a local cluster
    started for it; ``timeout`` as it was reached with) is closed when no other session uses
    it either. (A session that ends without leaving it keeps it open, as do the tabs of a
    session.)"""
    if not spec.is_dask:
        return
    users = _users()
    with users.lock:
        left = users.of.get(str(spec), set())
        left.discard(session)
        if left:
            return
        users.of.pop(str(spec), None)
    _shared_executor.clear(str(spec), timeout or DASK_TIMEOUT)


def job_executor(
    spec: codec.jobs.ExecutorSpec,
    tasks: Sequence[codec.jobs.Task] | None = None,
    session: str | None = None,
    timeout: float | None = None,
) -> tuple[codec.jobs.Executor, bool]:
    """``(executor, shared)`` for a job on ``spec``: the shared Dask client (used by
    ``session`` from now; reached within ``timeout`` seconds), or an executor of this job's
    own (close it after the job). Local processes are no more than the ``tasks`` (when
    known), and one small task runs in this process: not worth starting a process for."""
    if spec.is_dask:
        return shared_executor(spec, session, timeout), True
    if tasks is not None:
        work = sum(t.bytes for t in tasks)
        spec = spec.fit(len(tasks), work=work, inline_most=codec.jobs.DEFAULT_SPLIT)
    return codec.jobs.executor(spec), False  # a pool starts on its first task: cheap until then
