"""What the end-to-end tests share: Debian's Chromium, and the real server started the way a
person starts it (``python -m browser_app view …``); and how a test acts on a page that
Streamlit redraws.

A rerun can replace any element of the page between two actions of a test: an element
resolved once (an ``ElementHandle``, a ``query_selector`` result, the element behind a
Locator's ``bounding_box`` / ``scroll_into_view_if_needed`` / ``evaluate`` / ``screenshot``,
the coordinates read from it) may be detached or moved by the next step. So a test never
keeps one: it acts through Locators, which find their element again at every action, waits
with ``expect(locator)``, and where an action needs a resolved element (geometry, a mouse
click at a place, a value computed in the page) it runs the lookup and the action together
in :func:`until`, which runs them again, from the lookup on, until they succeed or the
deadline passes. Nothing waits a fixed time for the app: :func:`settled` waits until the
app has been idle for a moment, with a deadline.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "artifacts"
CACHE_ENV = "TFRECORD_BROWSER_CACHE"
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


@contextlib.contextmanager
def app_server(
    base: Path, args: Sequence[str], *, cache: Path | bool = True, env: dict[str, str] | None = None
) -> Iterator[str]:
    """The app on ``args`` (Chromium needed: skipped without it, as the tests are), with its
    log in ``base`` and, unless ``cache`` says otherwise, a cache folder of its own there
    (where edit journals and indexes go): ``cache`` may name the folder, or be ``False`` for
    the environment's."""
    need_chromium()
    full_env = dict(env or {})
    if cache is True:
        full_env[CACHE_ENV] = str(base / "cache")
    elif cache:
        full_env[CACHE_ENV] = str(cache)
    with running_server(args, base, full_env) as url:
        yield url


def serve(
    tmp_path_factory: pytest.TempPathFactory, args: Sequence[str], *, cache: Path | bool = True
) -> Iterator[str]:
    """A test module's ``server`` fixture: ``yield from serve(tmp_path_factory, ARGS)`` gives
    the URL of :func:`app_server` on ``ARGS`` in a folder of its own."""
    with app_server(tmp_path_factory.mktemp("server"), args, cache=cache) as url:
        yield url


def browser_fixture() -> Any:
    """A test module's ``browser`` fixture, one Chromium for the module:
    ``browser = browser_fixture()``."""

    @pytest.fixture(scope="module")
    def browser() -> Iterator[Any]:
        with chromium() as b:
            yield b

    return browser


T = TypeVar("T")


def until(attempt: Callable[[], T], *, timeout: float = 30, what: str = "") -> T:
    """``attempt()``, run again until it returns or ``timeout`` seconds have passed (then its
    last error is raised, with ``what`` it was for).

    An attempt finds its elements itself and acts on them at once, so every try starts from
    a fresh lookup: a rerun that replaced an element between the lookup and the action (a
    Playwright error: not attached, timed out) or made the page not yet what the attempt
    checks (an ``AssertionError`` of ``assert`` or ``expect``) costs a try, not the test. The
    waits inside an attempt are short, so that a stale one leaves time for more tries."""
    from playwright.sync_api import Error

    deadline = time.monotonic() + timeout
    tries = 0
    while True:
        tries += 1
        try:
            return attempt()
        except (Error, AssertionError) as exc:
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"{what or 'an action on the page'}: still failing after {tries} tries"
                    f" in {timeout:g} s: {exc}"
                ) from exc
        time.sleep(0.1)  # between tries: the next one looks again


# Whether the app has been idle (its script not running, no element left stale from the
# run before) for ``quiet`` milliseconds. Any change of either restarts the count, even a
# run too short for two looks to see it (a mutation observer notes every change).
_IDLE = """(quiet) => {
  const now = performance.now();
  let t = window.__tfbIdle;
  if (!t) {
    t = window.__tfbIdle = { since: now };
    new MutationObserver(() => { t.since = performance.now(); }).observe(document, {
      subtree: true, attributes: true,
      attributeFilter: ["data-test-script-state", "data-stale"],
    });
  }
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = !!app && app.getAttribute("data-test-script-state") === "notRunning"
    && !document.querySelector('[data-testid="stElementContainer"][data-stale="true"]');
  if (!idle) { t.since = now; return false; }
  return now - t.since >= quiet;
}"""


def settled(page: Any, *, quiet_ms: int = 400, timeout_ms: int = 60_000) -> None:
    """Wait until the app has finished its runs: idle for ``quiet_ms`` without a break (a
    key or click made during a run may be lost, and a rerun redraws the elements a test is
    about to use). Up to ``timeout_ms``."""
    page.wait_for_function(_IDLE, arg=quiet_ms, polling=50, timeout=timeout_ms)


def no_errors(page: Any) -> None:
    """No exception box and no part of the page that says it could not be shown."""
    assert page.get_by_test_id("stException").count() == 0
    assert page.get_by_text("could not be shown").count() == 0


def go_to_record(page: Any, record: int) -> None:
    """Type ``record`` in the pager's "Go to record" box and press Enter. The box is named by
    the record it shows, so while a run draws it anew the old one may stay on the page a
    moment beside it: wait until there is one."""
    from playwright.sync_api import expect

    box = page.get_by_label("Go to record", exact=True)

    def attempt() -> None:
        expect(box).to_have_count(1, timeout=2_000)
        box.fill(str(record))
        box.press("Enter")

    until(attempt, what='the one "Go to record" box')


def shot(page: Any, name: str, *, target: Any = None, full_page: bool = False) -> None:
    """A screenshot into ``artifacts/`` once the app has settled: the page, or the element
    of the Locator ``target`` (found again if a rerun replaces it meanwhile)."""
    ARTIFACTS.mkdir(exist_ok=True)
    settled(page)
    path = str(ARTIFACTS / name)
    if target is None:
        page.screenshot(path=path, full_page=full_page)
    else:
        until(lambda: target.screenshot(path=path, timeout=5_000), what=f"screenshot {name}")


# Streamlit's tables (glide-data-grid) are drawn on a canvas: a header row, then rows, 35 px
# each. The accessibility table inside the canvas names every cell on screen
# (glide-cell-COL-ROW) and marks the selected one (aria-selected), which tells where a click
# landed; it has no geometry of its own.
ROW_PX = 35
GRID_EDITOR = "textarea.gdg-input, input.gdg-input"


def _selected_cell(grid: Any) -> tuple[int, int] | None:
    cells = grid.locator("td[aria-selected='true']")
    if cells.count() != 1:
        return None
    col, row = (cells.first.get_attribute("data-testid", timeout=1_000) or "").split("-")[-2:]
    return int(col), int(row)


def click_cell(page: Any, grid: Any, row: int, col: int) -> tuple[float, float]:
    """Click cell (``col``, ``row``) of the table ``grid`` (a Locator) and return the point,
    once the table says that cell is the selected one. Rows are found by their height;
    columns, whose widths the page does not tell, by where a click lands (from the middle,
    halving the gap each time). Meant to run inside :func:`until`: the geometry is read and
    used at once, and any miss fails the attempt."""
    from playwright.sync_api import expect

    grid.scroll_into_view_if_needed(timeout=5_000)
    box = grid.bounding_box(timeout=5_000)
    assert box is not None, "the table is not on screen"
    y = box["y"] + ROW_PX * (row + 1) + ROW_PX / 2
    left, right = box["x"], box["x"] + box["width"]
    target = grid.get_by_test_id(f"glide-cell-{col}-{row}")
    for _ in range(8):
        x = (left + right) / 2
        page.mouse.click(x, y)
        try:
            expect(target).to_have_attribute("aria-selected", "true", timeout=1_500)
            return x, y
        except AssertionError:
            landed = _selected_cell(grid)
            assert landed is not None and landed[1] == row, f"a click for row {row}: {landed}"
            if landed[0] < col:
                left = x
            else:
                right = x
    raise AssertionError(f"no click selects cell ({col}, {row})")


def open_cell_editor(page: Any, grid: Callable[[], Any], row: int, col: int) -> Any:
    """Select cell (``col``, ``row``) of the table ``grid()`` finds, double-click it, and
    return its editor (a Locator) once it has the focus; again from the lookup on, until it
    does (an editor left open by a failed try is closed first)."""
    from playwright.sync_api import expect

    editor = page.locator(GRID_EDITOR).first

    def attempt() -> Any:
        if editor.count():
            editor.press("Escape", timeout=2_000)
        settled(page)
        x, y = click_cell(page, grid(), row, col)
        page.mouse.dblclick(x, y)
        expect(editor).to_be_focused(timeout=3_000)
        return editor

    return until(attempt, what=f"the editor of cell ({col}, {row})")


# What counts the app's runs and the server's messages, in a probe's own function where `t`
# (with done, state, running, msgs and lastMsg) is its record: every message from the server
# counted, with the time of the last (a run drawn in one go may never show as running), the
# page's websockets kept in t.sockets (a test may act on the server's next message), and
# every state the app root passes through, in order (a fast run — a fragment, a callback —
# may start and finish between two looks, so the mutation records' old values count too):
# each run that finishes (back at notRunning after running) counted in `done`.
RUN_COUNTER_JS = """
  const Socket = window.WebSocket;
  window.WebSocket = function (...args) {
    const ws = new Socket(...args);
    (t.sockets = t.sockets || []).push(ws);
    ws.addEventListener("message", () => { t.msgs += 1; t.lastMsg = performance.now(); });
    return ws;
  };
  window.WebSocket.prototype = Socket.prototype;
  Object.assign(window.WebSocket, Socket);
  const step = (s) => {
    if (s === t.state) return;
    if (s === "running" || s === "rerunRequested") t.running = true;
    if (s === "notRunning" && t.running) { t.running = false; t.done += 1; }
    t.state = s;
  };
  new MutationObserver((mutations) => {
    const app = document.querySelector('[data-testid="stApp"]');
    for (const m of mutations) if (m.target === app) step(m.oldValue || "");
    step(app ? app.getAttribute("data-test-script-state") : "");
  }).observe(document, {
    subtree: true, attributes: true, attributeOldValue: true, childList: true,
    attributeFilter: ["data-test-script-state"],
  });
"""

# In the page before Streamlit's code: every run of the script that finishes, counted, with
# the state now, and every message from the server (RUN_COUNTER_JS), in window.__runs.
RUNS_PROBE = (
    """
(() => {
  const t = (window.__runs = { done: 0, state: "", running: false, msgs: 0, lastMsg: 0 });
"""
    + RUN_COUNTER_JS
    + """})();
"""
)
