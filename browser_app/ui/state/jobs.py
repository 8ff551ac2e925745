"""Where this session's dataset-wide jobs run, which of them were cancelled, and the
session's own name (which sessions use a shared Dask client is told by it)."""

from __future__ import annotations

import uuid

import streamlit as st

from browser_app.ui.state.args import app_args
from browser_app.ui.state.store import read, write
from codec.jobs.spec import ExecutorSpec

__all__ = [
    "dask_timeout",
    "executor",
    "executor_problem",
    "executors",
    "job_cancelled",
    "session_connected",
    "session_key",
    "set_executor",
    "set_executor_problem",
    "set_job_cancelled",
]

_EXECUTOR = "tfb:executor"
_EXECUTOR_PROBLEM = "tfb:executor_problem"
_SESSION = "tfb:session"


def session_key() -> str:
    """This session's own name (random, made on first use): which sessions use what they
    share, a Dask client, is told by it."""
    key = st.session_state.get(_SESSION)
    if not isinstance(key, str):
        key = uuid.uuid4().hex
        st.session_state[_SESSION] = key
    return key


def session_connected() -> bool:
    """Whether this session's browser tab is still connected (True where no server runs the
    app: a test). A job checks it at every progress report: the work of a tab that was
    closed stops then, not when the server forgets the session minutes later."""
    from streamlit.runtime import Runtime, exists
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not exists():
        return True
    return bool(Runtime.instance().is_active_session(ctx.session_id))


def executor() -> ExecutorSpec:
    """Where this session's dataset-wide jobs run, as chosen in the sidebar among what the
    operator offers (:attr:`AppArgs.executors <browser_app.ui.state.AppArgs.executors>`),
    else as the app was started (``--executor`` / ``--dask``; by default a process per
    core). A value in the session that is not offered is never used."""
    value = st.session_state.get(_EXECUTOR)
    args = app_args()
    return value if isinstance(value, ExecutorSpec) and value in args.executors else args.executor


def executors() -> tuple[ExecutorSpec, ...]:
    """The executors this session may choose among, the launch's own first."""
    return app_args().executors


def set_executor(spec: ExecutorSpec) -> None:
    """Run this session's jobs on ``spec`` from now on; one the operator does not offer is
    refused (``ValueError``)."""
    if spec not in app_args().executors:
        raise ValueError(f"{spec} is not offered by this app")
    st.session_state[_EXECUTOR] = spec
    st.session_state.pop(_EXECUTOR_PROBLEM, None)


def executor_problem() -> str | None:
    """Why the last executor asked for could not be used (plain text), or None."""
    value = st.session_state.get(_EXECUTOR_PROBLEM)
    return str(value) if value else None


def set_executor_problem(text: str | None) -> None:
    st.session_state[_EXECUTOR_PROBLEM] = text or None


def dask_timeout() -> float | None:
    """How long to try to reach a Dask scheduler, in seconds, as the app was started
    (``--dask-timeout``); None: the app's default."""
    return app_args().dask_timeout


def job_cancelled(key: str) -> bool:
    """Whether the job ``key`` was cancelled in this session (it then waits to be asked
    again instead of starting by itself)."""
    return read(f"job:cancelled:{key}", bool) is True


def set_job_cancelled(key: str, value: bool = True) -> None:
    """Mark the job ``key`` cancelled (from its Cancel button's callback), or clear the mark."""
    write(f"job:cancelled:{key}", True if value else None)
