"""Shared fixtures: golden data from TensorFlow 2.21 (tests/data, see its README) and an
isolated cache directory for every test; and a check, when the session ends, that the tests
left no process behind (a Streamlit server, a launcher, Chromium)."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from netservers import (
    GCS_TEST_ENV,
    Azurite,
    FaultProxy,
    GcsEmulator,
    MotoS3,
    RangeHTTPServer,
    forget_azure_filesystems,
    forget_gcs_filesystems,
    forget_s3_filesystems,
)

from codec.values import plural

# Before anything imports gcsfs or Google's auth library (both read these once, on import):
# the GCS tests' emulator works, and no test looks for Google credentials beyond loopback.
os.environ.update(GCS_TEST_ENV)

DATA = Path(__file__).parent / "data"
EXPECTED = DATA / "expected"

INTACT_GOLDEN = [
    "basic.tfrecord",
    "basic.tfrecord.gz",
    "basic.tfrecord.zlib",
    "detection.tfrecord",
    "drift.tfrecord",
    "edge_values.tfrecord",
    "images_jpeg.tfrecord",
    "images_png.tfrecord",
    "raw_pixels.tfrecord",
    "raw_records.tfrecord",
    "sequence.tfrecord",
    "tensors.tfrecord",
]


def expected_lines(name: str) -> list[dict]:
    with open(EXPECTED / f"{name}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def damaged_expectations() -> dict:
    return json.loads((EXPECTED / "damaged.json").read_text())


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Indexes and inflated streams go to a fresh folder, never the user's cache."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(cache))
    from codec import locations

    locations.forget()  # objects' sizes, versions and anonymous buckets are per test
    return cache


@pytest.fixture
def without_library(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """``without_library(proto, library)``: fsspec finds no library for ``proto://``, as when
    the extra that installs it is missing."""
    import importlib

    registry = importlib.import_module("fsspec.registry")

    def hide(proto: str, library: str = "missing") -> None:
        monkeypatch.setitem(
            registry.known_implementations,
            proto,
            {"class": f"{library}_not_installed.FileSystem", "err": f"Install {library}"},
        )
        monkeypatch.delitem(registry._registry, proto, raising=False)

    return hide


@pytest.fixture
def data_dir() -> Path:
    return DATA


# -- no process left behind ----------------------------------------------------------------------

# Every process this test run starts inherits this mark in its environment (so do orphans
# whose parent died), which is how the end-of-session check finds them, and only them.
RUN_MARK = "TFRECORD_BROWSER_TEST_RUN"
WATCHED = re.compile(r"streamlit|browser_app|chrom(e|ium)|playwright|headless_shell")
GRACE = 10.0  # seconds a process stopped by its fixture may take to exit


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault(RUN_MARK, f"{os.getpid()}-{uuid.uuid4().hex[:12]}")
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker:  # a pytest-xdist worker: its own mark, under the run's
        os.environ[RUN_MARK] = f"{os.environ[RUN_MARK]}-{worker}"


def _ours(environ: bytes) -> bool:
    """Whether a process's environment carries this run's mark (or, for the process that
    runs the session, the mark of one of its parallel workers)."""
    mark = f"{RUN_MARK}={os.environ.get(RUN_MARK, '')}".encode()
    return any(v == mark or v.startswith(mark + b"-") for v in environ.split(b"\0"))


def leftover_processes() -> Iterator[tuple[int, str]]:
    """``(pid, command line)`` of the live processes this test run (this worker, when the
    tests run in parallel) started, by their mark, that are servers, launchers or browsers."""
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if not _ours(f.read()):
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        except OSError:
            continue  # gone, or not ours to read
        if cmd and WATCHED.search(cmd):
            yield int(name), cmd


def _stop(pids: list[int]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in pids):
            time.sleep(0.1)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run, loudly, when a server or browser it started is still alive (after a
    grace period for those being stopped), and stop them."""
    if not sys.platform.startswith("linux") or not os.path.isdir("/proc"):
        return
    deadline = time.monotonic() + GRACE
    left = list(leftover_processes())
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = list(leftover_processes())
    if not left:
        return
    _stop([pid for pid, _ in left])
    lines = "\n".join(f"  {pid}: {cmd[:200]}" for pid, cmd in left)
    what = plural(len(left), "process", "processes")
    message = f"\nThe tests left {what} running (now stopped):\n{lines}\n"
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(message, red=True, bold=True)
    else:
        sys.stderr.write(message)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# -- servers on loopback for remote datasets (tests/netservers.py) -------------------------------


@pytest.fixture
def http_server() -> Iterator[RangeHTTPServer]:
    """An empty range-serving HTTP server: ``put(name, data)`` objects, ``url(name)``."""
    with RangeHTTPServer() as server:
        yield server


@pytest.fixture
def http_proxy() -> Iterator[Callable[..., FaultProxy]]:
    """``http_proxy(upstream, latency=0, bandwidth=None)``: a running FaultProxy in front of
    ``upstream`` (a URL, or a server with an ``endpoint``), stopped after the test."""
    with ExitStack() as stack:

        def make(upstream: str | RangeHTTPServer | MotoS3, **kwargs: float | None) -> FaultProxy:
            url = upstream if isinstance(upstream, str) else upstream.endpoint
            return stack.enter_context(FaultProxy(url, **kwargs))  # type: ignore[arg-type]

        yield make


@pytest.fixture(scope="session")
def s3_server() -> Iterator[MotoS3]:
    """moto's S3 server for the whole session, with fake credentials in the environment."""
    with MotoS3() as server:
        yield server


@pytest.fixture
def s3(s3_server: MotoS3, monkeypatch: pytest.MonkeyPatch) -> Iterator[MotoS3]:
    """The S3 server emptied, and ``AWS_ENDPOINT_URL`` pointing at it for this test."""
    s3_server.reset()
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    forget_s3_filesystems()
    yield s3_server
    forget_s3_filesystems()


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[GcsEmulator]:
    """A Google Cloud Storage emulator for the whole session."""
    with GcsEmulator() as server:
        yield server


@pytest.fixture
def gcs(gcs_server: GcsEmulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[GcsEmulator]:
    """The GCS emulator emptied, and ``STORAGE_EMULATOR_HOST`` pointing at it for this test."""
    gcs_server.reset()
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_server.endpoint)
    forget_gcs_filesystems()
    yield gcs_server
    forget_gcs_filesystems()


@pytest.fixture(scope="session")
def az_server() -> Iterator[Azurite]:
    """Azurite (Azure Blob Storage) for the whole session."""
    with Azurite() as server:
        yield server


@pytest.fixture
def az(az_server: Azurite, monkeypatch: pytest.MonkeyPatch) -> Iterator[Azurite]:
    """Azurite emptied, and ``AZURE_STORAGE_CONNECTION_STRING`` naming it for this test."""
    az_server.reset()
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", az_server.connection_string)
    forget_azure_filesystems()
    yield az_server
    forget_azure_filesystems()


# The object stores on loopback, by URL scheme: the fixture that gives each one.
STORES = {"s3": "s3", "gs": "gcs", "az": "az"}


@pytest.fixture(params=list(STORES))
def store(request: pytest.FixtureRequest) -> tuple[str, object]:
    """An emptied object store on loopback and its URL scheme: moto's S3 server, the Google
    Cloud Storage emulator, or Azurite."""
    return request.param, request.getfixturevalue(STORES[request.param])


@pytest.fixture
def s3_proxy(s3: MotoS3, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultProxy]:
    """A FaultProxy in front of the (emptied) S3 server, and ``AWS_ENDPOINT_URL`` pointing at
    the proxy for this test; ``s3_proxy.endpoint`` is its URL."""
    with FaultProxy(s3.endpoint) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.endpoint)
        forget_s3_filesystems()
        yield proxy
        forget_s3_filesystems()
