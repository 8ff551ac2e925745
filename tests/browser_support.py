"""What the end-to-end tests share: Debian's Chromium, and the real server started the way a
person starts it (``python -m browser_app view …``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def need_chromium() -> None:
    """Skip without Chromium on a developer machine; fail in CI, where it must be there."""
    if os.path.exists(CHROMIUM):
        return
    message = "Debian's chromium is not installed (scripts/check.sh installs it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + "; browser tests must run in CI")
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_server(
    view_args: Sequence[str], log_dir: Path, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Start ``python -m browser_app view ARGS --no-browser --port N``, wait until it answers
    and has printed its address, yield the URL, stop it, and check its log has no traceback."""
    port = free_port()
    log_path = log_dir / "server.log"
    full_env = dict(os.environ, PYTHONUNBUFFERED="1", **(env or {}))
    cmd = [sys.executable, "-m", "browser_app", "view", *view_args, "--no-browser"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [*cmd, "--port", str(port)],
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=full_env,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server stopped:\n{log_path.read_text()}")
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"the server did not answer within 60 s:\n{log_path.read_text()}")
            time.sleep(0.2)
        # The launcher prints the URL once the server answers.
        while f"running at {url}" not in log_path.read_text():
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert "Traceback" not in log_path.read_text(), log_path.read_text()


def servers_of(port: int) -> list[int]:
    """The Streamlit servers (by process id) started for ``port``, alive or not yet reaped."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            with open(f"/proc/{name}/stat", "rb") as f:
                zombie = f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
        except OSError:
            continue
        if b"streamlit" in cmd and str(port).encode() in cmd and not zombie:
            found.append(int(name))
    return found


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian Chromium driven by Playwright (never a downloaded browser)."""
    need_chromium()
    from playwright.sync_api import expect, sync_playwright

    # A rerun of a full page takes 1-3 s here and several times that on a busy CI host, where
    # two browser test files run side by side: Playwright's 5 s default for an `expect` made
    # tests fail that only had to wait. A test that needs longer still says so itself.
    expect.set_options(timeout=20_000)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


_PICTURE_LOADED = (
    "([sel, least]) => { const i = document.querySelector(sel);"
    " return !!i && i.complete && i.naturalWidth >= least }"
)


def wait_for_picture(page: Any, selector: str, *, least: int = 1, timeout: int = 15_000) -> None:
    """Wait until the first picture ``selector`` finds has loaded, at least ``least`` pixels
    wide. The picture is found again at every look: a rerun can replace the element while
    it loads, so a handle taken once may hold a picture that is no longer shown (loaded,
    while the one shown is not yet)."""
    page.wait_for_function(_PICTURE_LOADED, arg=[selector, least], timeout=timeout)
