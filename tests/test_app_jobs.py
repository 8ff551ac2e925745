"""The app's dataset-wide jobs through AppTest: the Overview's CRC check, the Schema page and
the Filter page give what one process gives, on this process and on a pool of processes;
where jobs run is shown and changed in the sidebar (a bad Dask address is said, never a
traceback); a cancelled job says so and does not start again by itself."""

from __future__ import annotations

import pickle
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from app_support import no_crash as app_no_crash
from app_support import start_app
from streamlit.testing.v1 import AppTest
from test_app import texts

import codec
from browser_app import view
from browser_app.cli import launch
from browser_app.cli.main import build_parser, main
from browser_app.ui import services, state
from codec.filters import run_filter
from codec.jobs.spec import ExecutorSpec, cores, parse_executor
from codec.schema import infer_schema

DATA = Path(__file__).parent / "data"
SPEC = "part-*.tfrecord*"
# Damaged files (a bad data CRC, junk between records), a compressed one, and two kinds of
# Examples, so the schema has drift and the check has problems to report.
PARTS = [
    "drift.tfrecord",
    "corrupt_data_crc.tfrecord",
    "garbage_between.tfrecord",
    "basic.tfrecord.gz",
    "detection.tfrecord",
]
FILTER = "not intact or label == 1 or has(image/object/bbox/xmin)"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jobs")
    for k, name in enumerate(PARTS):
        shutil.copy(DATA / name, root / f"part-{k}-{name}")
    return root


def files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.glob(SPEC))


def app(monkeypatch: pytest.MonkeyPatch, root: Path | str, *args: str) -> AppTest:
    """The app on ``root`` with the launcher's ``args``, the dataset ``SPEC`` open."""
    return start_app(monkeypatch, root, *args, params={"file": SPEC})


def no_crash(at: AppTest) -> None:
    """No exception, and no error saying that something could not be shown or done."""
    app_no_crash(at, unshown="could not")


def page(at: AppTest, name: str) -> AppTest:
    at.switch_page(f"ui/pages/{name}.py").run()
    no_crash(at)
    return at


def shown(at: AppTest) -> dict[str, object]:
    """What the Overview, Schema and Filter pages show of the open source."""
    out: dict[str, object] = {}
    page(at, "overview")
    out["overview metrics"] = {m.label: m.value for m in at.main.metric}
    out["files"] = at.main.dataframe[0].value.to_dict("records")
    out["damage"] = texts(at.main.error) + texts(at.main.markdown)
    page(at, "schema")
    out["schema metrics"] = {m.label: m.value for m in at.main.metric}
    out["schema"] = at.main.dataframe[0].value.to_dict("records")
    out["findings"] = texts(at.main.markdown)
    page(at, "filter")
    at.text_input(key="tfb:w:filter:expr").input(FILTER).run()
    no_crash(at)
    out["matches"] = list(at.session_state["tfb:x:filter:selection"]["records"])
    out["match text"] = texts(at.main.markdown)
    return out


@pytest.fixture
def used(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Where the app's jobs ran: ``<executor class>:<workers>`` of each job, in order."""
    used: list[str] = []
    pick = services.job_executor

    def job_executor(spec, tasks=None, session=None, timeout=None):  # type: ignore[no-untyped-def]
        ex, shared = pick(spec, tasks, session, timeout)
        used.append(f"{type(ex).__name__}:{ex.workers}")
        return ex, shared

    monkeypatch.setattr(services, "job_executor", job_executor)
    return used


def test_pages_give_what_one_process_gives_on_every_executor(monkeypatch, root, used) -> None:  # type: ignore[no-untyped-def]
    paths = files(root)
    reports = [codec.TFRecordFile(p).verify() for p in paths]
    with codec.TFRecordDataset(paths) as ds:
        doc = infer_schema(ds).to_json(top=view.LINKS_SHOWN)
        want_rows = view.schema_rows(view.schema_result(infer_schema(ds), None).schema)
        want_matches = list(run_filter(ds, FILTER).matches)
    assert any(r.problems for r in reports) and want_matches  # something to find
    seen = {}
    for spec, where in (("inline", "InlineExecutor:1"), ("processes:2", "ProcessExecutor:2")):
        used.clear()
        at = app(monkeypatch, root, "--executor", spec)
        seen[spec] = shown(at)
        assert used == [where] * 3  # verify, schema, filter
        got = seen[spec]
        metrics = got["overview metrics"]
        assert isinstance(metrics, dict)
        assert metrics["Damaged records"] == f"{sum(r.damaged for r in reports):,}"
        assert metrics["Recovered"] == f"{sum(r.recovered for r in reports):,}"
        assert [f["problems"] for f in got["files"]] == [len(r.problems) for r in reports]  # type: ignore[union-attr]
        assert got["schema"] == pd.DataFrame(want_rows).to_dict("records")
        assert got["schema metrics"]["Records read"] == f"{doc['records']:,}"  # type: ignore[index]
        assert got["matches"] == want_matches
    assert seen["inline"] == seen["processes:2"]


def test_where_jobs_run_is_shown_and_changed_in_the_sidebar(monkeypatch, root) -> None:  # type: ignore[no-untyped-def]
    at = app(
        monkeypatch,
        root,
        "--dask-timeout",
        "0.5",
        "--allow-executor",
        "dask:tcp://127.0.0.1:9",
    )
    no_crash(at)
    assert f"Jobs run on **this machine ({cores()} core" in texts(at.sidebar.caption)
    where = at.sidebar.radio(key="tfb:w:jobs:where")
    assert where.options == [
        "This machine",
        "This process only",
        "The Dask cluster at tcp://127.0.0.1:9",
    ]
    # No address is ever typed into the app: the file picker's are the sidebar's only text
    # boxes.
    assert {t.key for t in at.sidebar.text_input} <= {"tfb:w:search", "tfb:w:path"}
    where.set_value("This process only").run()
    no_crash(at)
    assert "Jobs run on **this process (one core)**" in texts(at.sidebar.caption)
    page(at, "overview")
    assert "Jobs run on this process" not in texts(at.main.caption)  # checked in full already
    # A scheduler the operator offers but nobody runs: said in the sidebar; the setting
    # stays as it was.
    at.sidebar.radio(key="tfb:w:jobs:where").set_value(
        "The Dask cluster at tcp://127.0.0.1:9"
    ).run()
    no_crash(at)
    message = texts(at.sidebar.error)
    assert view.md_text("tcp://127.0.0.1:9: cannot reach the Dask scheduler") in message
    # as long as the launcher said to try: the library's connect timeout, or our deadline
    assert "after 0.5 s" in message or "no answer within 0.5 s" in message, message
    assert "Traceback" not in message
    assert "Jobs run on **this process (one core)**" in texts(at.sidebar.caption)
    # Jobs still run where they ran.
    page(at, "schema")
    assert at.main.dataframe
    at.sidebar.radio(key="tfb:w:jobs:where").set_value("This machine").run()
    no_crash(at)
    assert not at.sidebar.error
    assert f"Jobs run on **this machine ({cores()} core" in texts(at.sidebar.caption)


@pytest.fixture
def listener() -> Iterator[tuple[str, list[bytes]]]:
    """A TCP server on loopback that would answer a Dask client with a pickled payload:
    ``(address, what each connection sent)``. The app must never connect to it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    seen: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(1)
                try:
                    seen.append(conn.recv(4096))
                except OSError:
                    seen.append(b"")
                conn.sendall(pickle.dumps({"op": "payload"}))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}", seen
    stop.set()
    thread.join(5)
    server.close()


def test_a_scheduler_named_by_a_visitor_is_never_reached(monkeypatch, root, listener, used) -> None:  # type: ignore[no-untyped-def]
    """Whatever a page sends (a forged setting, the old address box's key), jobs run only
    where the operator's launch offers; the server never connects to the visitor's address."""
    address, seen = listener
    at = start_app(monkeypatch, root, params={"file": SPEC}, run=False)
    at.session_state["tfb:executor"] = ExecutorSpec("dask", address=address)
    at.session_state["tfb:w:jobs:dask"] = address
    at.session_state["tfb:w:jobs:where"] = f"The Dask cluster at {address}"
    at.run()
    no_crash(at)
    assert f"Jobs run on **this machine ({cores()} core" in texts(at.sidebar.caption)
    used.clear()
    page(at, "overview")
    assert used and all(not u.startswith("DaskExecutor") for u in used)
    assert seen == []  # not one connection
    assert at.sidebar.radio(key="tfb:w:jobs:where").options == [
        "This machine",
        "This process only",
    ]


def test_an_executor_the_launch_does_not_offer_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    args = state.app_args(["--root", str(tmp_path), "--allow-executor", "dask:local:2"])
    assert args.executors == (
        ExecutorSpec(),
        ExecutorSpec("inline"),
        ExecutorSpec("dask-local", 2),
    )
    code = main(["view", "--root", str(tmp_path), "--allow-executor", "dask:x", "--no-browser"])
    assert code == 2


@pytest.mark.parametrize(
    ("options", "spec"),
    [
        ([], "processes"),
        (["--workers", "3"], "processes:3"),
        (["--executor", "inline"], "inline"),
        (["--dask", "local:2", "--dask-timeout", "7"], "dask:local:2"),
        (["--dask", "sched.example:8786"], "dask:tcp://sched.example:8786"),
    ],
)
def test_the_launch_options_reach_the_app(tmp_path, options, spec) -> None:  # type: ignore[no-untyped-def]
    args = build_parser().parse_args(["view", "--root", str(tmp_path), *options])
    assert str(launch.app_executor(args)) == spec
    cmd = launch.server_command(
        "127.0.0.1",
        8600,
        str(tmp_path),
        [],
        executor=launch.app_executor(args),
        dask_timeout=args.dask_timeout,
    )
    got = state.app_args(cmd[cmd.index("--") + 1 :])
    assert (str(got.executor), got.dask_timeout) == (spec, args.dask_timeout)


def test_a_launch_option_naming_no_executor_is_refused(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["view", "--root", str(tmp_path), "--executor", "processes:none", "--no-browser"])
    assert code == 2
    assert "the number of workers must be a whole number" in capsys.readouterr().err


def test_the_launch_setting_is_shown_in_the_sidebar(monkeypatch, root) -> None:  # type: ignore[no-untyped-def]
    at = app(monkeypatch, root, "--executor", "processes:3")
    assert "Jobs run on **this machine (3 processes)**" in texts(at.sidebar.caption)
    assert at.sidebar.radio(key="tfb:w:jobs:where").value == "This machine (3 processes)"
    at = app(monkeypatch, root, "--executor", "dask:tcp://127.0.0.1:9")
    where = view.md_text("the Dask cluster at tcp://127.0.0.1:9")
    assert f"Jobs run on **{where}**" in texts(at.sidebar.caption)
    assert at.sidebar.radio(key="tfb:w:jobs:where").value == (
        "The Dask cluster at tcp://127.0.0.1:9"
    )


def test_a_cancelled_job_waits_to_be_asked_again(monkeypatch, root) -> None:  # type: ignore[no-untyped-def]
    at = start_app(monkeypatch, root, params={"file": SPEC}, run=False)
    at.session_state[f"tfb:x:job:cancelled:verify:{SPEC}"] = True  # its Cancel was clicked
    page(at.run(), "overview")
    assert "The CRC check was cancelled — nothing was kept." in texts(at.main.warning)
    assert at.main.metric[1].value == "—"  # no result, and none started (small: it would)
    at.run()  # any rerun: it still waits
    assert "was cancelled" in texts(at.main.warning)
    at.button(key="tfb:w:verify").click().run()
    no_crash(at)
    assert "was cancelled" not in texts(at.main.warning)
    assert at.main.metric[1].value != "—"


def test_a_remote_source_is_read_by_the_workers_themselves(monkeypatch, s3, root) -> None:  # type: ignore[no-untyped-def]
    paths = files(root)[:3]
    for p in paths:
        s3.put("bkt", f"data/{Path(p).name}", Path(p).read_bytes())
    reports = [codec.TFRecordFile(p).verify() for p in paths]
    at = app(monkeypatch, "s3://bkt/data", "--executor", "processes:2")
    page(at, "overview")
    assert at.main.metric[3].value == "—"  # a remote source is checked only when asked
    at.button(key="tfb:w:verify").click().run()
    no_crash(at)
    metrics = {m.label: m.value for m in at.main.metric}
    assert metrics["Damaged records"] == f"{sum(r.damaged for r in reports):,}"
    assert metrics["Recovered"] == f"{sum(r.recovered for r in reports):,}"
    table = at.main.dataframe[0].value
    assert list(table["problems"]) == [len(r.problems) for r in reports]
    assert list(table["damaged"]) == [r.damaged for r in reports]


LOCAL_1 = "A local Dask cluster of 1 worker"


@pytest.mark.slow
def test_a_local_dask_cluster_from_the_sidebar_is_shared_and_closed(
    monkeypatch, root, used
) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("distributed")
    paths = files(root)
    reports = [codec.TFRecordFile(p).verify() for p in paths]
    at = app(monkeypatch, root, "--executor", "inline", "--allow-executor", "dask:local:1")
    at.sidebar.radio(key="tfb:w:jobs:where").set_value(LOCAL_1).run()
    no_crash(at)
    assert not at.sidebar.error
    assert "Jobs run on **a local Dask cluster of 1 worker**" in texts(at.sidebar.caption)
    cluster = services.shared_executor(
        parse_executor("dask:local:1")
    )  # the one the setting started
    assert cluster.connected()
    used.clear()
    page(at, "overview")
    assert used == ["DaskExecutor:1"]
    metrics = {m.label: m.value for m in at.main.metric}
    assert metrics["Damaged records"] == f"{sum(r.damaged for r in reports):,}"
    assert list(at.main.dataframe[0].value["problems"]) == [len(r.problems) for r in reports]
    assert (
        services.shared_executor(parse_executor("dask:local:1")) is cluster
    )  # shared, not one per job
    at.sidebar.radio(key="tfb:w:jobs:where").set_value("This machine").run()
    no_crash(at)
    assert not cluster.connected()  # closed with the setting that made it


@pytest.mark.slow
def test_a_shared_dask_cluster_stays_open_while_another_session_uses_it(
    monkeypatch, root, used
) -> None:  # type: ignore[no-untyped-def]
    """Two sessions on one local cluster: the first leaving it (the sidebar set back to this
    machine) leaves it open for the second, whose page still runs its job there; it closes
    when the second leaves it too. A session that only ran a job on it (the app started on
    it) counts as using it."""
    pytest.importorskip("distributed")
    paths = files(root)
    damaged = f"{sum(codec.TFRecordFile(p).verify().damaged for p in paths):,}"

    def on_cluster(at: AppTest) -> None:
        at.sidebar.radio(key="tfb:w:jobs:where").set_value(LOCAL_1).run()
        no_crash(at)
        assert not at.sidebar.error

    def leave(at: AppTest) -> None:
        at.sidebar.radio(key="tfb:w:jobs:where").set_value("This machine").run()
        no_crash(at)

    offer = ("--allow-executor", "dask:local:1")
    first = app(monkeypatch, root, "--executor", "inline", *offer)
    second = app(monkeypatch, root, "--executor", "inline", *offer)
    on_cluster(first)
    on_cluster(second)
    cluster = services.shared_executor(parse_executor("dask:local:1"))
    leave(first)
    assert cluster.connected()  # the second session's setting still names it
    used.clear()
    page(second, "overview")
    assert used == ["DaskExecutor:1"]
    assert {m.label: m.value for m in second.main.metric}["Damaged records"] == damaged
    assert services.shared_executor(parse_executor("dask:local:1")) is cluster
    leave(second)
    assert not cluster.connected()  # no session uses it now

    # the app started on the cluster: a session that ran a job there keeps it for itself
    third = app(monkeypatch, root, "--executor", "dask:local:1")
    fourth = app(monkeypatch, root, "--executor", "dask:local:1")
    page(third, "overview")
    again = services.shared_executor(parse_executor("dask:local:1"))
    assert again is not cluster and again.connected()
    on_cluster(fourth)  # the same spec: nothing changes
    leave(fourth)
    assert again.connected()  # the third session ran a job on it
    leave(third)
    assert not again.connected()


def test_a_closed_tab_stops_its_job_at_the_next_report(monkeypatch, root) -> None:  # type: ignore[no-untyped-def]
    """A job checks at each progress report that its tab is still connected: once it is
    not, the job stops there (nothing kept), instead of working on for nobody."""
    from browser_app.ui import state as state_package

    reports: list[bool] = []

    def connected() -> bool:
        reports.append(len(reports) < 1)  # connected for the first report, closed after
        return reports[-1]

    monkeypatch.setattr(state_package, "session_connected", connected)
    at = start_app(monkeypatch, root, "--executor", "inline", params={"file": SPEC}, run=False)
    at.switch_page("ui/pages/overview.py").run()
    assert not at.exception
    assert len(reports) >= 2 and reports[-1] is False
    # The run stopped inside the CRC check: nothing after it was drawn, and no error.
    assert not at.main.metric and not at.main.error
    monkeypatch.setattr(state_package, "session_connected", lambda: True)
    at.run()  # connected again (a new run of the tab): the check runs and completes
    metrics = {m.label: m.value for m in at.main.metric}
    assert metrics["Damaged records"] != "—"
