"""Where a job runs is parsed in one place (:func:`codec.jobs.parse_executor`): the command
line (``--executor``, ``--dask``, ``--workers``), the app (its launch options and the
sidebar's scheduler box) and the library (``executor=`` arguments) give the same
:class:`~codec.jobs.ExecutorSpec` for every form, and its text reads back as itself."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from browser_app.cli.jobs import executor_of
from browser_app.cli.main import build_parser
from browser_app.errors import UsageError
from browser_app.ui import state
from codec.errors import ExecutorError
from codec.jobs import DaskExecutor, ExecutorSpec, InlineExecutor, ProcessExecutor, executor
from codec.jobs.spec import cores, dask_address, parse_executor

# (what is typed, where it is typed, what it means)
FORMS = [
    ("inline", "executor", ExecutorSpec("inline")),
    ("processes", "executor", ExecutorSpec("processes")),
    ("processes:3", "executor", ExecutorSpec("processes", 3)),
    ("dask:local", "executor", ExecutorSpec("dask-local")),
    ("dask:local:2", "executor", ExecutorSpec("dask-local", 2)),
    ("dask:tcp://sched:8786", "executor", ExecutorSpec("dask", address="tcp://sched:8786")),
    ("tcp://sched:8786", "executor", ExecutorSpec("dask", address="tcp://sched:8786")),
    ("tls://10.1.2.3:8786", "executor", ExecutorSpec("dask", address="tls://10.1.2.3:8786")),
    ("sched:8786", "executor", ExecutorSpec("dask", address="tcp://sched:8786")),
    ("dask:sched:8786", "executor", ExecutorSpec("dask", address="tcp://sched:8786")),
    ("local", "dask", ExecutorSpec("dask-local")),
    ("local:4", "dask", ExecutorSpec("dask-local", 4)),
    ("tcp://[::1]:8786", "dask", ExecutorSpec("dask", address="tcp://[::1]:8786")),
    ("sched:8786", "dask", ExecutorSpec("dask", address="tcp://sched:8786")),
    ("dask:local:3", "dask", ExecutorSpec("dask-local", 3)),
]


def _cli(typed: str, where: str) -> ExecutorSpec:
    args = build_parser().parse_args(["verify", "x.tfrecord", f"--{where}", typed])
    return executor_of(args)


def _app_launch(typed: str, where: str) -> ExecutorSpec:
    """What the server of ``view --executor/--dask TYPED`` runs the app's jobs on."""
    from browser_app.cli import launch

    args = build_parser().parse_args(["view", "--root", ".", f"--{where}", typed])
    spec = launch.app_executor(args)
    cmd = launch.server_command("127.0.0.1", 8600, ".", [], executor=spec)
    return state.app_args(cmd[cmd.index("--") + 1 :]).executor


def _app_sidebar(typed: str, where: str) -> ExecutorSpec:
    """What the sidebar's scheduler box (a Dask address) makes of the text."""
    return parse_executor(dask_address(typed) if where == "dask" else typed)


@pytest.mark.parametrize(("typed", "where", "meant"), FORMS)
def test_every_form_means_the_same_everywhere(typed: str, where: str, meant: ExecutorSpec):
    assert _cli(typed, where) == meant
    assert _app_launch(typed, where) == meant
    if where == "dask" or meant.is_dask:
        assert _app_sidebar(typed, where) == meant
    library = parse_executor(dask_address(typed) if where == "dask" else typed)
    assert library == meant
    assert parse_executor(str(meant)) == meant  # printed once, read back the same


def test_workers_option_is_a_sized_pool() -> None:
    args = build_parser().parse_args(["verify", "x.tfrecord", "--workers", "5"])
    assert executor_of(args) == ExecutorSpec("processes", 5)
    args = build_parser().parse_args(["verify", "x.tfrecord"])
    assert executor_of(args) == ExecutorSpec() and executor_of(args).is_default


@pytest.mark.parametrize(
    "typed",
    [
        "processes:0",
        "processes:x",
        "dask:nowhere",
        "dask:local:-1",
        "gpu",
        "http://h:1",
        ":80",
        "inline:2",
        "dask:dask:1",
    ],
)
def test_a_text_that_names_no_executor_is_refused_alike(typed: str) -> None:
    with pytest.raises(ExecutorError) as lib:
        parse_executor(typed)
    with pytest.raises(UsageError) as cli:
        executor_of(argparse.Namespace(executor=typed))
    assert str(cli.value) == str(lib.value)


def test_the_library_builds_the_executor_the_spec_names() -> None:
    assert isinstance(executor("inline"), InlineExecutor)
    with executor(ExecutorSpec("processes", 3)) as ex:
        assert isinstance(ex, ProcessExecutor) and ex.workers == 3
    with executor(None) as ex:
        assert isinstance(ex, ProcessExecutor) and ex.workers == cores()
    assert issubclass(DaskExecutor, object)  # reached only when asked: not in this test


def test_planned_workers() -> None:
    assert parse_executor("processes:6").planned_workers == 6
    assert parse_executor("dask:local:3").planned_workers == 3
    assert parse_executor(None).planned_workers == cores()
    assert parse_executor("inline").planned_workers == 1
    assert parse_executor("tcp://h:1").planned_workers == 1  # not asked yet


@given(
    kind=st.sampled_from(["inline", "processes", "dask-local", "dask"]),
    workers=st.none() | st.integers(1, 512),
    host=st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True),
    port=st.integers(1, 65535),
    scheme=st.sampled_from(["tcp", "tls", "ws", "wss", "ucx"]),
)
def test_text_and_value_round_trip(kind, workers, host, port, scheme) -> None:
    if kind == "inline":
        spec = ExecutorSpec("inline")
    elif kind == "dask":
        spec = ExecutorSpec("dask", address=f"{scheme}://{host}:{port}")
    else:
        spec = ExecutorSpec(kind, workers)
    assert parse_executor(str(spec)) == spec
    assert parse_executor(f"  {spec}  ") == spec
