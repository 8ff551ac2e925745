"""Dataset-wide jobs on a page, and where they run.

:func:`run` runs a job (:func:`codec.jobs.run`) on the session's executor with a progress bar
("12 of 64 tasks · 1.2 GiB of 4.8 GiB · 310,000 records/s") and a Cancel button. A click
while the page's script runs reruns it, and Streamlit stops the running script at its next
call into Streamlit — the job's progress callback, called at least every half second: the
job's batch is cancelled as the script unwinds, a pool of this job's own is stopped with its
running tasks, and the Cancel button's callback has marked the job cancelled, so the rerun
says "cancelled — nothing was kept" instead of starting it again; the page's own button
starts it again (``fresh``). Any other click during a job also stops it, and the rerun runs
it again when the page still needs it.

:func:`sidebar_setting` shows where jobs run ("this machine (2 cores)", "the Dask cluster at
…") and changes it among what the operator offers at launch (``--executor``, ``--dask``,
``--allow-executor``): a visitor never names an address, and nothing a page sends makes the
server connect anywhere else. A Dask cluster is reached when chosen, so one that does not
answer is said there and then and the setting stays as it was; the shared client of the
previous setting (and a local cluster started for it) is closed.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import streamlit as st

import codec.jobs
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.view import md_text, progress_text, where_text
from codec.errors import ExecutorError, MissingExtraError
from codec.jobs.spec import ExecutorSpec, cores

__all__ = ["Bar", "Stopped", "cancelled", "run", "run_work", "runner", "sidebar_setting", "where"]

T = TypeVar("T")

log = logging.getLogger("tfrecord-browser")

THIS_MACHINE, THIS_PROCESS = "This machine", "This process only"


class Stopped(Exception):
    """The job gave no result: it was cancelled (now or before, and not asked for again), or
    where it runs failed. The page has said so."""


def _wkey(name: str, key: str) -> str:
    """A widget key for job ``key`` (a digest: widget keys reach the page, job keys may hold
    file names)."""
    return state.widget_key(f"job:{name}:{hashlib.sha256(key.encode()).hexdigest()[:16]}")


def where() -> str:
    """Where this session's jobs run, in words."""
    return where_text(state.executor(), cores())


class Bar:
    """A running job's progress bar: :meth:`job` shows a :class:`codec.jobs.Progress`,
    :meth:`stage` any other step. Each is a call into Streamlit, where a rerun of the page
    stops the job."""

    def __init__(self, bar: Any, what: str, on: str) -> None:
        self.bar = bar
        self.what = what
        self.on = on

    def job(self, p: codec.jobs.Progress) -> None:
        self.show(p.fraction, progress_text(p))

    def stage(self, text: str, fraction: float) -> None:
        self.show(fraction, text)

    def show(self, fraction: float, text: str) -> None:
        if not state.session_connected():
            # The tab is closed: stop the job now (its pool stops with the script), instead
            # of working for nobody until the server forgets the session.
            st.stop()
        self.bar.progress(min(1.0, max(0.0, fraction)), text=f"{self.what} on {self.on}: {text}")


def run_work(
    work: Callable[[Any, Bar], T],
    *,
    key: str,
    what: str,
    fresh: bool = False,
    tasks: Sequence[codec.jobs.Task] | None = None,
) -> T:
    """Run ``work(executor, bar)`` — a job on the session's executor, showing its progress on
    ``bar`` — under a progress bar and a Cancel button, and return what it returns. ``key``
    names the job in this session (the job and its source), ``what`` says what it is ("The
    CRC check"); ``tasks`` (when known) size a pool of local processes to them. A job
    cancelled earlier is not run again unless ``fresh`` (the person asked for it again): it
    says so and raises :class:`Stopped`, as does a job whose executor fails (said in an
    error box)."""
    if fresh:
        state.set_job_cancelled(key, False)
    if cancelled(key, what):
        raise Stopped(key)
    spec = state.executor()
    try:
        ex, shared = services.job_executor(
            spec, tasks, state.session_key(), timeout=state.dask_timeout()
        )
    except (ExecutorError, MissingExtraError) as exc:
        _failed(what, exc)
        raise Stopped(key) from None
    slot = st.empty()
    with slot.container():
        c = st.columns([8, 1], vertical_alignment="bottom")
        bar = Bar(c[0].progress(0.0), what, md_text(where_text(spec, cores())))
        bar.show(0.0, "starting…")
        c[1].button(
            "Cancel",
            key=_wkey("cancel", key),
            icon=":material/stop_circle:",
            on_click=state.set_job_cancelled,
            args=(key, True),
            width="stretch",
        )
    try:
        result = work(ex, bar)
    except BaseException as exc:
        if not shared:
            ex.close(wait=False)  # stops the tasks still running: nothing is kept
        if isinstance(exc, Exception):  # not Streamlit's rerun or stop: the page goes on
            slot.empty()
        if isinstance(exc, (ExecutorError, MissingExtraError)):
            _failed(what, exc)
            raise Stopped(key) from None
        raise  # a rerun or a stop of the page's script (Streamlit's), or an error to report
    if not shared:
        ex.close()
    slot.empty()
    return result


def run(
    job: Any,
    tasks: Sequence[codec.jobs.Task],
    *,
    key: str,
    what: str,
    fresh: bool = False,
) -> Any:
    """Run ``job`` (:func:`codec.jobs.run`) over ``tasks`` as :func:`run_work` does, and
    return its result."""
    tasks = list(tasks)
    return run_work(
        lambda ex, bar: codec.jobs.run(job, tasks, ex, progress=bar.job),
        key=key,
        what=what,
        fresh=fresh,
        tasks=tasks,
    )


def cancelled(key: str, what: str) -> bool:
    """Whether the job ``key`` was cancelled (and not asked for again since); when it was,
    say so ("``what`` was cancelled — nothing was kept")."""
    if not state.job_cancelled(key):
        return False
    st.warning(f"{what} was cancelled — nothing was kept.", icon=":material/cancel:")
    return True


def runner(key: str, what: str, *, fresh: bool = False) -> services.Runner:
    """:func:`run` as a :data:`services.Runner <browser_app.ui.services.Runner>` (for the
    services that run jobs)."""
    return functools.partial(run, key=key, what=what, fresh=fresh)


def verify_key(src: Source) -> str:
    """The name of the CRC check of ``src`` in this session (the Overview and Export pages
    share it: cancelled on one, it waits on both)."""
    return f"verify:{src.tag}"


def verify(src: Source) -> list[dict[str, Any]] | None:
    """The full CRC check of every file of ``src`` (:func:`services.verify
    <browser_app.ui.services.verify>`), run here when not made yet, with its progress and
    Cancel button; None when it was cancelled or could not run (said)."""
    try:
        return services.verify(src, state.executor(), runner(verify_key(src), "The CRC check"))
    except Stopped:
        return None


def _failed(what: str, exc: BaseException) -> None:
    log.warning("%s failed: %s", what, exc)
    st.error(
        f"{what} could not run on {md_text(where())}: {md_text(str(exc))}. Change where jobs"
        " run in the sidebar, or try again.",
        icon=":material/error:",
    )


# -- the setting ---------------------------------------------------------------------------


def choice_label(spec: ExecutorSpec) -> str:
    """How an executor the operator offers reads in the sidebar's list."""
    if spec.is_default:
        return THIS_MACHINE
    if spec.kind == "inline":
        return THIS_PROCESS
    text = where_text(spec, cores())
    return text[0].upper() + text[1:]


def _use(spec: ExecutorSpec) -> None:
    """Make ``spec`` (one the operator offers) this session's setting, once it works (a
    Dask cluster is reached now); else say why and keep the setting."""
    before = state.executor()
    if spec == before:
        state.set_executor_problem(None)
        return
    if spec.is_dask:
        try:
            services.shared_executor(spec, state.session_key(), state.dask_timeout())
        except (ExecutorError, MissingExtraError) as exc:
            state.set_executor_problem(str(exc))
            return
        except Exception as exc:  # a library's own error: said, never a traceback
            log.exception("reaching %s failed", spec)
            state.set_executor_problem(f"{spec}: {type(exc).__name__}: {exc}")
            return
    state.set_executor(spec)
    services.release_executor(before, state.session_key(), state.dask_timeout())


def _on_choice() -> None:
    label = state.widget_value("jobs:where")
    for spec in state.executors():
        if choice_label(spec) == label:
            _use(spec)
            return


def sidebar_setting() -> None:
    """Where jobs run, in the sidebar, and the controls to change it."""
    spec = state.executor()
    sb = st.sidebar
    sb.caption(f"Jobs run on **{md_text(where_text(spec, cores()))}**")
    with sb.expander("Where jobs run", icon=":material/memory:"):
        offered = state.executors()
        labels = [choice_label(x) for x in offered]
        if state.widget_value("jobs:where") not in labels:
            state.set_widget_value("jobs:where", choice_label(spec))
        st.radio(
            "Run dataset-wide jobs on",
            labels,
            key=state.widget_key("jobs:where"),
            on_change=_on_choice,
            help="Verify, schema, statistics, filter and export read every record: on a"
            f" process per core of this machine ({cores()}), in this process only, or where"
            " the app's launch offers (view --allow-executor: a Dask cluster's workers read"
            " the files themselves)",
        )
        if not any(x.is_dask for x in offered):
            st.caption(
                "Dask clusters are offered here when the app is started with"
                " `--dask ADDRESS` or `--allow-executor dask:…`."
            )
        problem = state.executor_problem()
        if problem:
            st.error(md_text(problem), icon=":material/error:")
