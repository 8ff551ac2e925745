"""The app as a person uses it: the real server in headless Chromium at 1440×900, timed from
the action (a click or a key) until the page shows its result, now and at an earlier commit
in the same run.

Each time is measured in the page: ``performance.now()`` at the first animation frame where
the step's condition holds, minus the time stamp of the ``pointerdown`` / ``mousedown`` /
``keydown`` that started the action, so Playwright's round trips are not in it. A condition
that waits for a script run also needs Streamlit's script state on the app root
(``data-test-script-state``) back at ``notRunning`` after a run that began after the action,
with no element left stale from the run before. What the gallery element draws by itself (a
focus move, a page it holds already, a mark Python has confirmed) is read from the element's
own state (``data-focus``, ``data-page``, the tiles' ``data-mark`` / ``data-pending``)
without waiting for a run; for a focus move, the script runs and the bytes over the app's
websocket until it has been still for a second are counted too.

The steps (issue 27's table; one set-up and one timed action each, see :data:`STEPS`):

- gallery, the next page of 100 photographs, by the N key and by the pager's Next button:
  until the pictures in the window are shown, and until every picture of the page is
  decoded (after N, also until the app's run has finished);
- gallery, the focus to the next tile (→), and the websocket bytes and runs it cost;
- gallery, a record marked passed (P) until the mark shows as saved;
- gallery, the focused record opened (Enter) until its record view is shown;
- record view, a record marked passed (P) until shown saved (the keys element says so once
  the marks route has written the journal line; without the route, the review bar after a
  run) and until the review bar shows it, then the next record (J);
- records page, the next page of 25;
- records table, a row selected (the record view follows), and a value edit saved.

The gallery is measured as it is on the page: the gallery element (Streamlit Components v2:
a root ``.tfb-gallery`` with ``data-focus`` / ``data-page`` / ``data-rev``, tiles
``.tfb-tile`` with ``data-record`` / ``data-mark`` / ``data-pending``, possibly in a shadow
root) or, before it, Streamlit's own elements (``.st-key-tfb-gallery``, a focus bar, keys
bound to hidden buttons).

Data (written once into ``benchmarks/data/``, then reused): 20,000 photographs of 640×480
JPEG of about 46 KB each (:mod:`benchmarks.ui_photos`), and an Object Detection dataset of
2,000 records in four GZIP shards for the table steps.

"Before" is the app at an earlier commit (default: the one before the gallery element landed,
:func:`benchmarks.ui_before.default_revision`), checked out in a temporary git worktree and
served from there, next to the working tree's app: the two are measured in turns (before,
now, before, now, ...), so the machine's load falls on both alike. Every figure is the median
of its runs (after one warm-up run), with the range.

    python -m benchmarks --only ui [--before REV|none]   # or: python -m benchmarks.bench_ui

The servers are started with the launcher (``python -m browser_app view``), each in its own
process group with its own cache folder; servers, browser and worktree are removed on the way
out, whatever happens.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# The browser tests' helpers: the same Chromium, and the same ways to act on a page that
# Streamlit redraws.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    RUN_COUNTER_JS,
    free_port,
    open_cell_editor,
    until,
)

import codec
from benchmarks import ui_before, ui_photos
from benchmarks.common import Row, table
from browser_app.sample_data import write_detection_checks

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
VIEWPORT = {"width": 1440, "height": 900}
RUNS = 9
QUICK_RUNS = 3
TIMEOUT_MS = 30_000

PHOTO_FILE = "photos.tfrecord"
OD_FOLDER = "od"
OD_SHARDS = 4
GALLERY_PAGE = 100
RECORDS_PAGE = 25

# The kinds of gallery the steps know.
ELEMENT = "element"  # the gallery element (Components v2)
STREAMLIT = "streamlit"  # Streamlit's own elements, before it


# -- data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UiData:
    """The benchmark's files: ``root`` holds the photographs (one file) and ``od`` (a folder
    of GZIP shards); ``photo_count`` and ``od_count`` are their record counts."""

    root: Path
    photo_count: int
    od_count: int
    photo_facts: dict[str, float] = field(default_factory=dict, compare=False)

    @property
    def photos(self) -> str:
        return PHOTO_FILE

    @property
    def od(self) -> str:
        return OD_FOLDER


def _od_shards(folder: Path, n: int) -> None:
    """``n`` Object Detection records with the sample's planted problems, in GZIP shards (the
    records a planted damage made unreadable are left out: GZIP would hide it anyway)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "od.tfrecord"
        write_detection_checks(plain, n)
        with codec.TFRecordDataset([str(plain)], use_cache=False) as ds:
            payloads = [s.payload for s in ds.page(0, len(ds)) if s.payload is not None]
    per = -(-len(payloads) // OD_SHARDS)
    for k in range(OD_SHARDS):
        name = folder / f"train-{k:05d}-of-{OD_SHARDS:05d}.tfrecord.gz"
        codec.write_records(name, payloads[k * per : (k + 1) * per], compression="gzip")


def make_data(quick: bool = False) -> UiData:
    """The benchmark's files (made once per size, then reused)."""
    photos, od = (2_000, 400) if quick else (20_000, 2_000)
    root = DATA / f"ui-{photos}"
    facts = ui_photos.ensure(root / PHOTO_FILE, photos)
    if not (root / OD_FOLDER).exists():
        part_dir = root / (OD_FOLDER + ".part")
        shutil.rmtree(part_dir, ignore_errors=True)
        _od_shards(part_dir, od)
        part_dir.rename(root / OD_FOLDER)
    return UiData(root, photos, od, facts)


# -- the servers and the browser ---------------------------------------------------------------


def _die_with_parent() -> None:
    """In the launcher, before it starts: be killed when this process dies, even by a signal
    that skips its clean-up (the launcher takes its server with it)."""
    if sys.platform == "linux":
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the launcher and everything it started (its own process group)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            pass
    # The server may outlive a launcher that was slow to stop it.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)


@contextlib.contextmanager
def app_server(root: Path, paths: list[str] | None = None, code: Path = REPO) -> Iterator[str]:
    """``python -m browser_app view PATHS --root ROOT --port N`` run from ``code`` (a copy of
    the repository: it imports its own ``browser_app`` and ``codec``), headless, with its own
    cache folder so review marks and edits start empty; yields the URL; stops it on the way
    out."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="tfb-ui-bench-") as tmp:
        env = dict(
            os.environ,
            PYTHONUNBUFFERED="1",
            PYTHONDONTWRITEBYTECODE="1",
            TFRECORD_BROWSER_CACHE=str(Path(tmp) / "cache"),
            PYTHONPATH=os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")]),
        )
        log_path = Path(tmp) / "server.log"
        cmd = [sys.executable, "-m", "browser_app", "view", *(paths or []), "--root", str(root)]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [*cmd, "--no-browser", "--port", str(port)],
                cwd=code,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        try:
            deadline = time.monotonic() + 60
            while f"running at {url}" not in log_path.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "the app did not start:\n" + log_path.read_text(errors="replace")
                    )
                time.sleep(0.2)
            with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as r:
                assert r.read().strip() == b"ok"
            yield url
        finally:
            _stop_group(proc)
        text = log_path.read_text(errors="replace")
        if "Traceback" in text:
            print(text[-4000:], file=sys.stderr)


# Installed in every page before Streamlit's code:
# - the time stamp of the first user input since the last reset (``input``);
# - a count of script runs that have finished (the app root's script state going back to
#   notRunning: ``done``), with the state now (``state``), and of the messages the server
#   sent, with the time of the last (``msgs``, ``lastMsg``: a fast run's messages may come in
#   one burst, drawn at once, its state never shown as running);
# - ``gallery()``: the gallery element's root, in the page or in a shadow root under it;
# - ``watchStart(conditions)``: from the next input on, on every animation frame, the first
#   time each condition holds (``[name, JS expression, needs a finished run]``), in ``watch``;
# - ``gridFirst(element)``: what a data grid (``stDataFrame``) has painted since the input in
#   its first row's first column of numbers (see below).
PROBE = (
    """
(() => {
  const t = (window.__tfb = {
    input: 0, done: 0, running: false, state: "", startDone: 0, watch: null, g: null,
    msgs: 0, startMsgs: 0, lastMsg: 0,
  });
"""
    + RUN_COUNTER_JS
    + """  const mark = (e) => {
    if (t.input) return;
    const now = performance.now();
    const stamp = e && e.timeStamp;
    t.input = stamp > 0 && stamp <= now && now - stamp < 1000 ? stamp : now;
  };
  addEventListener("pointerdown", mark, true);
  addEventListener("mousedown", mark, true);
  addEventListener("keydown", mark, true);
  const inShadow = (root, sel) => {
    for (const el of root.querySelectorAll("*")) {
      if (!el.shadowRoot) continue;
      const found = el.shadowRoot.querySelector(sel) || inShadow(el.shadowRoot, sel);
      if (found) return found;
    }
    return null;
  };
  t.gallery = () => {
    if (t.g && t.g.isConnected) return t.g;
    t.g = document.querySelector(".tfb-gallery");
    if (!t.g) {
      const main = document.querySelector('[data-testid="stMain"]');
      t.g = main ? inShadow(main, ".tfb-gallery") : null;
    }
    return t.g;
  };
  // What a data grid shows: glide-data-grid paints its cells on a canvas; the cells in its
  // DOM (glide-cell-C-R, an accessibility table) are made anew only 200 ms after the grid's
  // last change (a debounce), so they tell what the grid showed some 0.2 s before. The
  // texts painted on a grid's canvas since the input are kept with where they went; the
  // first row is the top row of numbers among them (the header has names), its first
  // column of numbers the leftmost (``#`` on the records table).
  t.drawn = new WeakMap();
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
    const c = this.canvas;
    if (t.input && c && c.isConnected && c.getAttribute("data-testid") === "data-grid-canvas") {
      let got = t.drawn.get(c);
      if (!got || got.input !== t.input) t.drawn.set(c, (got = { input: t.input, cells: [] }));
      const m = this.getTransform();
      got.cells.push([m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f, String(text)]);
    }
    return fillText.call(this, text, x, y, ...rest);
  };
  t.gridFirst = (el) => {
    const c = el && el.querySelector('canvas[data-testid="data-grid-canvas"]');
    const got = c && t.drawn.get(c);
    if (!got || got.input !== t.input) return null;
    const nums = got.cells.filter((e) => /^[0-9][0-9,]*$/.test(e[2]));
    if (!nums.length) return null;
    const top = Math.min(...nums.map((e) => e[1]));
    const row = nums.filter((e) => Math.abs(e[1] - top) < 1);
    const left = Math.min(...row.map((e) => e[0]));
    return row.filter((e) => Math.abs(e[0] - left) < 1).pop()[2].replace(/,/g, "");
  };
  t.painted = (el, text) => {
    const c = el && el.querySelector('canvas[data-testid="data-grid-canvas"]');
    const got = c && t.drawn.get(c);
    return !!got && got.input === t.input && got.cells.some((e) => e[2] === text);
  };
  t.tiles = () => { const g = t.gallery(); return g ? [...g.querySelectorAll(".tfb-tile")] : []; };
  t.decoded = (img) => !!img && img.complete && img.naturalWidth > 0;
  t.inView = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.bottom > 0 && r.top < innerHeight
      && r.right > 0 && r.left < innerWidth;
  };
  const fresh = () => !document.querySelector('[data-testid="stMain"] [data-stale="true"]');
  // A run that began after the input has finished: one seen going from running back to
  // notRunning, with no element left stale.
  t.settled = () => t.done > t.startDone && t.state === "notRunning" && fresh();
  // A run whose messages all came in one burst may be drawn in one go, its script state
  // never shown as running. Messages received since the input, the state at notRunning and
  // nothing stale: a condition holding then holds from that frame on, once the messages
  // have stopped for BURST_MS with the state still at notRunning (a run still going shows
  // running by then); the time is that of the frame it first held in.
  const BURST_MS = 60;
  t.burst = () => t.msgs > t.startMsgs && t.state === "notRunning" && fresh();
  t.watchStart = (conditions) => {
    const checks = conditions.map(([name, expr, run]) =>
      [name, new Function("return (" + expr + ");"), run]);
    const res = {};
    t.watch = res; t.error = ""; t.input = 0; t.startDone = t.done; t.startMsgs = t.msgs;
    const seen = {}; // a condition that held in a burst, by name: the frame it held in
    const tick = () => {
      if (t.watch !== res) return;
      if (t.input) {
        const now = performance.now();
        const settled = t.settled();
        const burst = !settled && t.burst();
        for (const [name, check, run] of checks) {
          if (name in res) continue;
          if (run && !settled && !burst) { delete seen[name]; continue; }
          let ok = false;
          try { ok = !!check(); } catch (e) { t.error = name + ": " + e; }
          if (!ok) { delete seen[name]; continue; }
          if (!run || settled) { res[name] = now - t.input; continue; }
          if (!(name in seen)) seen[name] = now;
          if (now - t.lastMsg >= BURST_MS) res[name] = seen[name] - t.input;
        }
      }
      if (checks.some(([name]) => !(name in res))) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  };
})();
"""
)


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium (a Playwright ``Browser``)."""
    if not os.path.exists(CHROMIUM):
        raise RuntimeError("Debian's chromium is not installed (scripts/check.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Tab:
    """One app (``side``: "before" or "now", served at ``url``) in its own 1440×900 browser
    context with the probe installed; counts the bytes its websockets carry."""

    def __init__(self, browser: Any, side: str, url: str) -> None:
        self.side = side
        self.url = url
        self.kind = ""  # the gallery's kind, once a gallery was opened
        self.sent = 0
        self.received = 0
        self.frames = 0
        self.ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
        self.ctx.add_init_script(PROBE)
        self.page = self.ctx.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.on("websocket", self._socket)
        # HTTP requests under way (pictures fetched ahead, an element's script): a step's
        # action is over when they are too.
        self.loading: set[Any] = set()
        self.page.on("request", lambda r: self.loading.add(r))
        self.page.on("requestfinished", lambda r: self.loading.discard(r))
        self.page.on("requestfailed", lambda r: self.loading.discard(r))

    def _socket(self, ws: Any) -> None:
        def sent(payload: str | bytes) -> None:
            self.sent += len(payload.encode() if isinstance(payload, str) else payload)
            self.frames += 1

        def received(payload: str | bytes) -> None:
            self.received += len(payload.encode() if isinstance(payload, str) else payload)
            self.frames += 1

        ws.on("framesent", sent)
        ws.on("framereceived", received)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ctx.close()


def timed_many(
    page: Any, action: Callable[[], object], conditions: list[tuple[str, str, bool]]
) -> dict[str, float]:
    """Do ``action`` (a click or a key press) and return, for each ``(name, JS expression,
    needs a finished run)`` of ``conditions``, the seconds from its input event until the
    first animation frame where it held."""
    page.evaluate("(c) => window.__tfb.watchStart(c)", [list(c) for c in conditions])
    action()
    try:
        page.wait_for_function(
            "(n) => Object.keys(window.__tfb.watch || {}).length >= n",
            arg=len(conditions),
            polling=50,
            timeout=TIMEOUT_MS,
        )
    except Exception as exc:
        got = page.evaluate("() => [window.__tfb.watch, window.__tfb.error, window.__tfb.state]")
        raise AssertionError(
            f"not every condition held within {TIMEOUT_MS / 1000:g} s: held {got[0]},"
            f" script {got[2]!r}, error {got[1]!r}"
        ) from exc
    held = page.evaluate("() => window.__tfb.watch")
    return {name: float(held[name]) / 1000 for name, _e, _r in conditions}


def timed(page: Any, action: Callable[[], object], ready: str = "true", run: bool = True) -> float:
    """Do ``action`` and return the seconds from its input event until ``ready`` (a JS
    expression) holds, after a finished script run when ``run``."""
    return timed_many(page, action, [("t", ready, run)])["t"]


def quiet(tab: Tab, quiet_s: float = 0.3, timeout: float = 15.0) -> None:
    """Wait until the app's script is not running, no HTTP request is under way and its
    websocket has carried nothing for ``quiet_s`` (what an action set going has ended, so it
    does not weigh on the next step, or the other side's), up to ``timeout``."""
    deadline = time.monotonic() + timeout
    frames, since = tab.frames, time.monotonic()
    while time.monotonic() < deadline:
        tab.page.wait_for_timeout(50)  # Playwright hands over the websocket events meanwhile
        busy = tab.page.evaluate(
            """() => window.__tfb.state !== "notRunning"
                 || !!document.querySelector('[data-testid="stMain"] [data-stale="true"]')"""
        )
        if busy or tab.loading or tab.frames != frames:
            frames, since = tab.frames, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return


def open_page(page: Any, url: str, ready: str) -> None:
    """Load ``url`` and wait until its first run has finished and ``ready`` holds."""
    page.goto(url)
    page.wait_for_function(
        """(ready) => { const t = window.__tfb; return t && t.done > 0
             && t.state === "notRunning" && (new Function("return (" + ready + ");"))(); }""",
        arg=ready,
        polling=50,
        timeout=60_000,
    )


# -- what the page shows: JS conditions for each kind of gallery ------------------------------


def page_decoded(kind: str, first: int, count: int) -> str:
    """The gallery's page starting at ``first`` with ``count`` tiles, every picture decoded."""
    if kind == ELEMENT:
        return f"""(() => {{
          const g = __tfb.gallery(), tiles = __tfb.tiles();
          return !!g && +g.dataset.page === {first} && tiles.length === {count}
            && +tiles[0].dataset.record === {first}
            && tiles.every(x => __tfb.decoded(x.querySelector('img:not(.tfb-layers)')));
        }})()"""
    return rf"""(() => {{
      const g = document.querySelector('.st-key-tfb-gallery');
      const caption = g && g.querySelector('.stButton');
      const imgs = g ? [...g.querySelectorAll('img:not(.tfb-layers)')] : [];
      return !!caption && /^\s*#{first}(?!\d)/.test(caption.innerText)
        && imgs.length === {count} && imgs.every(__tfb.decoded);
    }})()"""


def _window_shown(kind: str, first: int) -> str:
    """The pictures of the gallery's page starting at ``first`` that lie in the window are
    drawn (decoded, none left from the page before)."""
    if kind == ELEMENT:
        return f"""(() => {{
          const g = __tfb.gallery();
          if (!g || +g.dataset.page !== {first}) return false;
          const seen = __tfb.tiles().filter(__tfb.inView);
          return seen.length > 0 && seen.every(x => +x.dataset.record >= {first}
            && +x.dataset.record < {first + GALLERY_PAGE}
            && __tfb.decoded(x.querySelector('img:not(.tfb-layers)')));
        }})()"""
    return rf"""(() => {{
      const g = document.querySelector('.st-key-tfb-gallery');
      const caption = g && g.querySelector('.stButton');
      if (!caption || !/^\s*#{first}(?!\d)/.test(caption.innerText)) return false;
      const seen = [...g.querySelectorAll('img:not(.tfb-layers)')].filter(__tfb.inView);
      return seen.length > 0 && seen.every(i => __tfb.decoded(i)
        && !i.closest('[data-stale="true"]'));
    }})()"""


def _focused_on(kind: str, n: int) -> str:
    """Record ``n`` is the gallery's focused tile."""
    if kind == ELEMENT:
        return f"(() => {{ const g = __tfb.gallery(); return !!g && +g.dataset.focus === {n}; }})()"
    # The focus bar names it, and the URL carries it.
    return f"""(() => new URLSearchParams(location.search).get('record') === '{n}'
      && [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
        .some(e => !e.closest('button') && e.innerText.trim() === '#{n}'))()"""


def _gallery_marked(kind: str, n: int, status: str) -> str:
    """Record ``n`` is shown marked ``status``, saved."""
    if kind == ELEMENT:
        return f"""(() => {{
          const tile = __tfb.tiles().find(x => +x.dataset.record === {n});
          return !!tile && tile.dataset.mark === '{status}' && tile.dataset.pending !== '1';
        }})()"""
    # The focus bar's mark button turns primary (the bar names the focused record).
    button = f'.st-key-tfb-w-gallery-mark-{status} button[kind="primary"]'
    return f"""(() => !!document.querySelector('{button}') && {_focused_on(kind, n)})()"""


# Streamlit loads a widget's code on first use and draws a grey placeholder until then: a key
# pressed before the review bar's buttons are drawn reaches no shortcut.
_REVIEW_BAR = """[...document.querySelectorAll('[data-testid^="stBaseButton-"]')]
  .some(b => b.innerText.includes('Passed'))"""
# The record view's review keys, where an element of the page takes them: it has applied
# Python's data once (a key typed before it listens would be lost).
_REVIEW_KEYS = """(() => { const h = document.querySelector('.tfb-review-keys');
  return !h || +h.dataset.rev >= 1; })()"""
# The record view's Passed button turns primary once the mark is saved and drawn.
_PASSED = """[...document.querySelectorAll('[data-testid="stBaseButton-primary"]')]
  .some(b => b.innerText.includes('Passed'))"""


def _saved(n: int) -> str:
    """JS: the mark of record ``n`` is shown saved: by the keys element once the marks route
    has written it (``data-saved``), or, where there is no route, by the Passed button after
    a run of the script."""
    return f"""(() => {{
      const h = document.querySelector('.tfb-review-keys');
      if (h && h.dataset.saved === '{n}:passed') return true;
      return window.__tfb.settled() && ({_PASSED});
    }})()"""


def _heading(n: int) -> str:
    """JS: the record view of record ``n`` is shown (its heading)."""
    return rf"""[...document.querySelectorAll('h1,h2,h3,h4')]
      .some(h => /^\s*Record ({n}|{n:,})(?![\d,])/.test(h.innerText))"""


# -- acting on the page ------------------------------------------------------------------------


def gallery_kind(page: Any) -> str:
    return str(
        page.evaluate(
            f"""() => window.__tfb.gallery() ? "{ELEMENT}"
                 : document.querySelector('.st-key-tfb-gallery') ? "{STREAMLIT}" : "" """
        )
    )


def open_gallery(tab: Tab, spec: str, record: int, total: int) -> int:
    """The gallery, 100 tiles a page, focused on ``record``, every picture of its page
    decoded; returns the page's first position."""
    first = record - record % GALLERY_PAGE
    count = min(GALLERY_PAGE, total - first)
    ready = " || ".join(
        f"({page_decoded(k, first, count)} && {_focused_on(k, record)})"
        for k in (ELEMENT, STREAMLIT)
    )
    query = f"file={spec}&record={record}&size={GALLERY_PAGE}"
    open_page(tab.page, f"{tab.url}/gallery?{query}", ready)
    tab.kind = gallery_kind(tab.page)
    quiet(tab)  # what the page loads after its first run (an element's script) is in
    return first


def gallery_first(tab: Tab) -> int:
    """The position of the gallery page's first tile."""
    if tab.kind == ELEMENT:
        return int(tab.page.evaluate("() => +window.__tfb.gallery().dataset.page"))
    text = tab.page.locator(".st-key-tfb-gallery .stButton").first.inner_text()
    found = re.search(r"#(\d+)", text)
    assert found, "no tile caption in the gallery"
    return int(found.group(1))


def gallery_focus(tab: Tab) -> int:
    """The record of the gallery's focused tile."""
    if tab.kind == ELEMENT:
        return int(tab.page.evaluate("() => +window.__tfb.gallery().dataset.focus"))
    return int(tab.page.evaluate("() => +new URLSearchParams(location.search).get('record')") or 0)


def keys_go_to_page(tab: Tab) -> None:
    """Let the next key press reach the page's keys: the gallery element takes the focus when
    it is focusable; otherwise nothing has it (a focused text box or button keeps letters
    from Streamlit's shortcuts)."""
    tab.page.evaluate(
        """() => {
          const g = window.__tfb.gallery();
          const target = g && (g.matches('[tabindex]') ? g : g.querySelector('[tabindex="0"]'));
          const active = document.activeElement;
          if (target) {
            if (!(g.contains(active) || (g.getRootNode().activeElement || null) === target))
              target.focus({ preventScroll: true });
          } else if (active && active !== document.body) {
            active.blur();
          }
        }"""
    )


def click_next(tab: Tab) -> None:
    """The pager's "Next" button (the top one)."""
    tab.page.get_by_role("button", name="Next", exact=True).first.click()


def open_record(tab: Tab, spec: str, record: int) -> None:
    """The records page at ``record`` (its record view and review bar drawn), 25 a page."""
    open_page(
        tab.page,
        f"{tab.url}/?file={spec}&record={record}&size={RECORDS_PAGE}",
        f"({_heading(record)}) && ({_REVIEW_BAR}) && ({_REVIEW_KEYS})",
    )
    quiet(tab)  # what the page loads after its first run (an element's script) is in


def current_record(page: Any) -> int:
    for text in page.locator("h1,h2,h3,h4").all_inner_texts():
        found = re.match(r"\s*Record ([\d,]+)", text)
        if found:
            return int(found.group(1).replace(",", ""))
    raise AssertionError("no record view on the page")


def first_row(page: Any) -> int:
    cell = page.get_by_test_id("stDataFrame").first.get_by_test_id("glide-cell-1-0")
    return int(cell.inner_text().replace(",", "").strip())


_RECORDS_GRID = "document.querySelector('[data-testid=\"stDataFrame\"]')"
_EDITOR_GRID = "document.querySelector('.st-key-tfb-editor-features [data-testid=\"stDataFrame\"]')"


def _row_is(page: Any, n: int) -> None:
    got = first_row(page)
    assert got == n, f"the records table's first row is {got}, not {n}"


def _first_row_is(n: int) -> str:
    """The records table (the page's first data grid) has painted ``n`` in its first row's
    ``#`` since the input (its DOM cells say so only 0.2 s later: :data:`PROBE`)."""
    return f"window.__tfb.gridFirst({_RECORDS_GRID}) === '{n}'"


def _cell_says(grid: str, col: int, row: int, text: object) -> str:
    """Whether the DOM cell (``col``, ``row``) of the data grid ``grid`` (a JS expression;
    the cells are glide-data-grid's accessibility table) says ``text`` (thousands' commas
    aside)."""
    return f"""(() => {{
      const c = {grid}?.querySelector('[data-testid="glide-cell-{col}-{row}"]');
      return !!c && c.textContent.replace(/,/g, '').trim() === '{text}';
    }})()"""


def _cells_first_row_is(n: int) -> str:
    """The records table's DOM cells say ``n`` in the first row's ``#``."""
    return _cell_says(_RECORDS_GRID, 1, 0, n)


def _row_point(page: Any, row: int) -> tuple[float, float]:
    """Where a click selects row ``row`` of the records table (its row selection column),
    read from the table as it is now: rows are taller when the page has pictures (the
    picture column may lie beyond the table's visible columns, so the thumbnails tell)."""
    grid = page.get_by_test_id("stDataFrame").first
    grid.scroll_into_view_if_needed(timeout=5_000)
    box = grid.bounding_box(timeout=5_000)
    assert box is not None, "the records table is not on screen"
    rows = grid.locator("[data-testid^='glide-cell-1-']").count()
    # The table is sized to its rows (up to a limit): header 38 px, then the rows.
    row_h = 52.0 if rows and (box["height"] - 38) / min(rows, 14) > 43 else 35.0
    return box["x"] + 16, box["y"] + 38 + row_h * row + row_h / 2


def _edit_mode(page: Any) -> None:
    page.get_by_test_id("stMain").locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile("Edit$")
    ).first.click()
    page.wait_for_function("() => document.body.innerText.includes('Editing Record')", polling=50)


def _editor_grid(page: Any) -> Any:
    return page.locator(".st-key-tfb-editor-features [data-testid='stDataFrame']").first


# -- the steps ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measure:
    """One figure of the table: its label, goal (as text) and limit (None: no goal)."""

    key: str
    label: str
    goal: str = ""
    limit: float | None = None
    unit: str = "s"


MEASURES: list[Measure] = [
    Measure("page_all", "gallery: next page of 100 (N), every picture decoded", "<= 0.4 s", 0.4),
    Measure("page_window", "gallery: next page (N), pictures in the window shown", "<= 0.2 s", 0.2),
    Measure("page_run", "gallery: next page (N), the app's run finished", "", None),
    Measure("gallery_all", "gallery: Next button, every picture decoded", "<= 0.4 s", 0.4),
    Measure("gallery_window", "gallery: Next button, pictures in window shown", "<= 0.2 s", 0.2),
    Measure("focus", "gallery: focus to the next tile (→)", "<= 0.03 s", 0.03),
    Measure("focus_kb", "gallery: focus (→) and a rest, websocket traffic", "", None, "KB"),
    Measure("focus_runs", "gallery: focus (→) and a rest, script runs", "", None, "runs"),
    Measure("mark_gallery", "gallery: mark a record (P) until saved", "<= 0.15 s", 0.15),
    Measure("open", "gallery: open a record (Enter)", "<= 0.35 s", 0.35),
    Measure("mark_record", "record view: mark a record (P) until saved", "<= 0.15 s", 0.15),
    Measure("mark_record_page", "record view: mark (P), the review bar following", "", None),
    Measure("next_record", "record view: next record (J)", "<= 0.15 s", 0.15),
    Measure("records_next", "records page: next 25", "<= 0.25 s", 0.25),
    Measure(
        "records_next_cells",
        "records page: next 25, until the grid's DOM cells follow (200 ms after its paint)",
        "",
        None,
    ),
    Measure("select", "records table: select a row", "<= 0.3 s", 0.3),
    Measure("edit", "editor: save a value edit", "<= 0.4 s", 0.4),
    Measure(
        "edit_cells",
        "editor: save a value edit, until the grid's DOM cells follow (200 ms after its paint)",
        "",
        None,
    ),
]
_MEASURE = {m.key: m for m in MEASURES}

# A step: set up on a tab (the app's page where the step starts; ``attempt``: how many times
# it was set up before on that side, so a step that changes records starts on fresh ones) and
# return the timed action, called with its run number (-1: the warm-up) and returning figures
# by measure key.
Once = Callable[[int], dict[str, float]]
Step = Callable[[Tab, UiData, int], Once]


def _page_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """N from page 0 on: the window's pictures, every picture, and the end of the app's run
    (the gallery element shows a page it has at once, and tells Python)."""
    open_gallery(tab, data.photos, 0, data.photo_count)
    return _next_page(tab, data, "page", lambda: tab.page.keyboard.press("n"))


def _gallery_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """The pager's Next button from page 0 on: the window's pictures, then every picture."""
    open_gallery(tab, data.photos, 0, data.photo_count)
    return _next_page(tab, data, "gallery", lambda: click_next(tab))


def _next_page(tab: Tab, data: UiData, key: str, action: Callable[[], object]) -> Once:
    def once(_i: int) -> dict[str, float]:
        first = gallery_first(tab) + GALLERY_PAGE
        count = min(GALLERY_PAGE, data.photo_count - first)
        # The gallery element is done when it shows the page; Streamlit's gallery, when its
        # run is (its pictures are elements of the run).
        run = tab.kind != ELEMENT
        conditions = [
            (f"{key}_window", _window_shown(tab.kind, first), False),
            (f"{key}_all", page_decoded(tab.kind, first, count), run),
        ]
        if key == "page":
            conditions.append((f"{key}_run", "true", True))
        keys_go_to_page(tab)
        got = timed_many(tab.page, action, conditions)
        quiet(tab)
        return got

    return once


def _focus_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """→ from the first tile of a page on (the moves stay on the page)."""
    open_gallery(tab, data.photos, 2 * GALLERY_PAGE, data.photo_count)

    def once(_i: int) -> dict[str, float]:
        n = gallery_focus(tab)
        keys_go_to_page(tab)
        sent, received = tab.sent, tab.received
        took = timed(
            tab.page,
            lambda: tab.page.keyboard.press("ArrowRight"),
            _focused_on(tab.kind, n + 1),
            run=tab.kind != ELEMENT,  # the element moves it in the browser, with no run
        )
        # What the move costs once the keys rest (the gallery element tells Python the focus
        # then): everything until the websocket has been still for a second.
        quiet(tab, quiet_s=1.0)
        runs_seen = tab.page.evaluate("() => window.__tfb.done - window.__tfb.startDone")
        kb = (tab.sent - sent + tab.received - received) / 1000
        return {"focus": took, "focus_kb": kb, "focus_runs": float(runs_seen)}

    return once


def _mark_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """P on the focused tile, then (not timed) → to the next one."""
    open_gallery(tab, data.photos, 4 * GALLERY_PAGE + 20 * attempt, data.photo_count)

    def once(_i: int) -> dict[str, float]:
        n = gallery_focus(tab)
        keys_go_to_page(tab)
        took = timed(
            tab.page,
            lambda: tab.page.keyboard.press("p"),
            _gallery_marked(tab.kind, n, "passed"),
            run=tab.kind != ELEMENT,  # the element shows it saved when Python says so
        )
        quiet(tab)
        keys_go_to_page(tab)
        timed(
            tab.page,
            lambda: tab.page.keyboard.press("ArrowRight"),
            _focused_on(tab.kind, n + 1),
            run=tab.kind != ELEMENT,
        )
        quiet(tab)
        return {"mark_gallery": took}

    return once


def _open_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """Enter on a focused tile of a freshly opened gallery, until its record view."""
    base = 6 * GALLERY_PAGE + 1 + 20 * attempt

    def once(i: int) -> dict[str, float]:
        n = base + i + 1
        open_gallery(tab, data.photos, n, data.photo_count)
        keys_go_to_page(tab)
        took = timed(tab.page, lambda: tab.page.keyboard.press("Enter"), _heading(n))
        quiet(tab)
        return {"open": took}

    return once


def _review_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """Record view: P (until the mark is shown saved — by the keys element once the marks
    route wrote it, else by the Passed button —, and until the review bar shows it), then J
    (until the next record's heading)."""
    open_record(tab, data.photos, 10 * GALLERY_PAGE + 20 * attempt)

    def once(_i: int) -> dict[str, float]:
        n = current_record(tab.page)
        keys_go_to_page(tab)
        got = timed_many(
            tab.page,
            lambda: tab.page.keyboard.press("p"),
            [("mark_record", _saved(n), False), ("mark_record_page", _PASSED, True)],
        )
        quiet(tab)
        keys_go_to_page(tab)
        step = timed(tab.page, lambda: tab.page.keyboard.press("j"), _heading(n + 1))
        quiet(tab)
        return {**got, "next_record": step}

    return once


def _records_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """The records page's Next, until the table's first row is the next page's."""
    open_record(tab, data.photos, 0)

    def once(_i: int) -> dict[str, float]:
        first = first_row(tab.page)
        # Until the grid paints the next page's first record (what is seen), and until its
        # own cells in the DOM (its accessibility table, made anew 200 ms after the grid's
        # last change) say the same: the figure this step gave before it read the paint.
        got = timed_many(
            tab.page,
            lambda: click_next(tab),
            [
                ("records_next", _first_row_is(first + RECORDS_PAGE), True),
                ("records_next_cells", _cells_first_row_is(first + RECORDS_PAGE), True),
            ],
        )
        _row_is(tab.page, first + RECORDS_PAGE)
        quiet(tab)
        return got

    return once


def _select_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """A click on a row of the records table (Object Detection data), until its record."""
    open_record(tab, data.od, 0)

    def once(i: int) -> dict[str, float]:
        row = 2 + (i + 2) % 8
        first = first_row(tab.page)
        x, y = until(lambda: _row_point(tab.page, row), what=f"row {row} of the records table")
        took = timed(tab.page, lambda: tab.page.mouse.click(x, y), _heading(first + row))
        quiet(tab)
        return {"select": took}

    return once


def _edit_step(tab: Tab, data: UiData, attempt: int) -> Once:
    """Editor: a value typed into the first int64 value cell (image/height) and Enter, until
    the table shows it and the pending change is counted."""
    open_record(tab, data.od, 3)
    _edit_mode(tab.page)

    def once(i: int) -> dict[str, float]:
        value = 50 + i + 2
        page = tab.page

        def height_row() -> int:  # the editor's grid fills in after it is drawn
            names = _editor_grid(page).locator("[data-testid^='glide-cell-0-']")
            rows = [name.strip() for name in names.all_text_contents()]
            assert "image/height" in rows, "the editor's table is not filled in yet"
            return rows.index("image/height")

        row = until(height_row, what="the editor's image/height row")
        # Column 3 holds the values (feature, type, n, values, check).
        editor = open_cell_editor(page, lambda: _editor_grid(page), row, 3)
        editor.fill(str(value))
        pending = "/pending change/.test(document.body.innerText)"
        # Shown: the grid has painted the value since the input (what is seen; its DOM cells
        # follow 200 ms after its last change: timed apart), the run that saved it over and
        # the pending change counted.
        painted = f"window.__tfb.painted({_EDITOR_GRID}, '{value}') && {pending}"
        cells = f"{_cell_says(_EDITOR_GRID, 3, row, value)} && {pending}"
        got = timed_many(
            page,
            lambda: editor.press("Enter"),
            [("edit", painted, True), ("edit_cells", cells, True)],
        )
        quiet(tab)
        return got

    return once


STEPS: dict[str, Step] = {
    "page": _page_step,
    "gallery": _gallery_step,
    "focus": _focus_step,
    "mark": _mark_step,
    "open": _open_step,
    "review": _review_step,
    "records": _records_step,
    "select": _select_step,
    "edit": _edit_step,
}


# -- the runs ------------------------------------------------------------------------------------


@dataclass
class Side:
    """One app measured: ``before`` or ``now``, its code and what its gallery was."""

    name: str
    code: Path
    what: str
    url: str = ""
    kinds: set[str] = field(default_factory=set)
    values: dict[str, list[float]] = field(default_factory=dict)
    failed: dict[str, list[str]] = field(default_factory=dict)  # by step: what failed


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _run_name(i: int, runs: int) -> str:
    return "warm-up" if i < 0 else f"run {i + 1}/{runs}"


def _shot(tab: Tab, name: str) -> None:
    folder = REPO / "artifacts"
    folder.mkdir(exist_ok=True)
    with contextlib.suppress(Exception):
        tab.page.screenshot(path=str(folder / name))


def _now_what() -> str:
    head = ui_before.describe("HEAD")
    changed = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    return f"working tree on {head}" + (f" (+{len(changed)} changed files)" if changed else "")


MAX_FAILED = 2  # runs of a step that may fail on a side (each then tried again, set up anew)


def _run_step(
    browser: Any, key: str, step: Step, sides: list[Side], data: UiData, runs: int
) -> None:
    """``step`` on every side in turns: a warm-up, then ``runs`` runs each. A run that fails
    (a loaded machine can make a click miss) is noted and tried again on a page set up anew,
    up to :data:`MAX_FAILED` times; then the side's step is given up."""
    tabs: dict[str, Tab] = {}
    onces: dict[str, Once] = {}
    next_run = {side.name: -1 for side in sides}  # -1: the warm-up
    failures = {side.name: 0 for side in sides}

    def set_up(side: Side) -> None:
        if side.name in tabs:
            tabs.pop(side.name).close()
        tab = tabs[side.name] = Tab(browser, side.name, side.url)
        onces[side.name] = step(tab, data, failures[side.name])

    def failed(side: Side, what: str, exc: Exception) -> None:
        failures[side.name] += 1
        name = f"bench-ui-{key}-{side.name}-failed-{failures[side.name]}.png"
        if side.name in tabs:
            _shot(tabs[side.name], name)
        why = f"{what}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]} (artifacts/{name})"
        side.failed.setdefault(key, []).append(why)
        _say(f"  ui {key} ({side.name}) failed in {why}")
        onces.pop(side.name, None)

    try:
        while True:
            active = [
                s for s in sides if next_run[s.name] < runs and failures[s.name] <= MAX_FAILED
            ]
            if not active:
                break
            for side in active:
                i = next_run[side.name]
                try:
                    if side.name not in onces:
                        set_up(side)
                except Exception as exc:
                    failed(side, "set-up", exc)
                    continue
                tab = tabs[side.name]
                try:
                    got = onces[side.name](i)
                except Exception as exc:
                    failed(side, _run_name(i, runs), exc)
                    continue
                next_run[side.name] += 1
                if tab.kind:
                    side.kinds.add(tab.kind)
                if i >= 0:
                    for k, v in got.items():
                        side.values.setdefault(k, []).append(v)
                shown = ", ".join(
                    f"{k} {v * 1000:.0f} ms" if _MEASURE[k].unit == "s" else f"{k} {v:g}"
                    for k, v in got.items()
                )
                _say(f"  {key} {_run_name(i, runs)} {side.name}: {shown}")
        for side in sides:
            if side.name in onces:
                _shot(tabs[side.name], f"bench-ui-{key}-{side.name}.png")
    finally:
        for tab in tabs.values():
            tab.close()


def measure(
    data: UiData, runs: int = RUNS, only: set[str] | None = None, before: str | None = None
) -> list[Side]:
    """Start the app on ``data`` (and, with ``before``, the app at that revision beside it),
    run every step ``runs`` times on each in turns (after a warm-up) and return the figures.
    ``only`` limits the steps by key (see :data:`STEPS`)."""
    sides: list[Side] = []
    with contextlib.ExitStack() as stack:
        if before is not None:
            commit = ui_before.resolve(before)
            _say(f"  before: {before} = {ui_before.describe(commit)}")
            folder = stack.enter_context(ui_before.checkout(commit))
            sides.append(Side("before", folder, ui_before.describe(commit)))
        sides.append(Side("now", REPO, _now_what()))
        for side in sides:
            side.url = stack.enter_context(app_server(data.root, code=side.code))
        browser = stack.enter_context(chromium())
        for key, step in STEPS.items():
            if only is not None and key not in only:
                continue
            _say(f"  ui step {key} ...")
            _run_step(browser, key, step, sides, data, runs)
    return sides


# -- the table ---------------------------------------------------------------------------------


def _cell(values: list[float] | None, unit: str) -> str:
    if not values:
        return "–"
    med, lo, hi = statistics.median(values), min(values), max(values)
    if unit == "s":
        return f"{med:.3f} s ({lo:.3f}–{hi:.3f})"
    return f"{med:g} {unit} ({lo:g}–{hi:g})"


def _met(m: Measure, values: list[float] | None) -> str:
    if m.limit is None or not values:
        return ""
    return " ✓" if statistics.median(values) <= m.limit else " ✗"


def comparison(sides: list[Side]) -> str:
    """The figures as a Markdown table: step | before | now | goal (median, range)."""
    names = [s.name for s in sides]
    lines = [
        "| step | " + " | ".join(names) + " | goal |",
        "|---|" + "---|" * len(names) + "---|",
    ]
    for m in MEASURES:
        if not any(m.key in s.values or m.key in _failed_keys(s) for s in sides):
            continue
        cells = []
        for s in sides:
            values = s.values.get(m.key)
            cell = _cell(values, m.unit) + _met(m, values)
            if not values and m.key in _failed_keys(s):
                cell = "failed"
            cells.append(cell)
        lines.append(f"| {m.label} | " + " | ".join(cells) + f" | {m.goal or '–'} |")
    n = max((len(v) for s in sides for v in s.values.values()), default=0)
    notes = [f"median (min–max) of {n} runs after a warm-up; ✓ / ✗: goal met or not"]
    for s in sides:
        kinds = ", ".join(sorted(s.kinds)) or "not seen"
        notes.append(f"{s.name}: {s.what}; gallery: {kinds}")
        for key, whys in s.failed.items():
            for why in whys:
                notes.append(f"{s.name}: step {key} failed in {why}")
    return "\n".join(lines) + "\n\n" + "\n".join(f"- {n}" for n in notes)


def _failed_keys(side: Side) -> set[str]:
    """The measures of the steps that failed on ``side``."""
    step_measures = {
        "page": {"page_all", "page_window", "page_run"},
        "gallery": {"gallery_all", "gallery_window"},
        "focus": {"focus", "focus_kb", "focus_runs"},
        "mark": {"mark_gallery"},
        "open": {"open"},
        "review": {"mark_record", "next_record"},
        "records": {"records_next", "records_next_cells"},
        "select": {"select"},
        "edit": {"edit", "edit_cells"},
    }
    return {k for step in side.failed for k in step_measures.get(step, set())}


def rows(sides: list[Side]) -> list[Row]:
    """The figures as the benchmarks' rows: now's against the goals, before's beside them."""
    out: list[Row] = []
    for m in MEASURES:
        for s in sides:
            values = s.values.get(m.key)
            if not values:
                continue
            med = statistics.median(values)
            lo, hi = (f"{v:.3f}" if m.unit == "s" else f"{v:g}" for v in (min(values), max(values)))
            spread = f"{m.unit} ({lo}–{hi}, n={len(values)})"
            name = m.label if s.name == "now" else f"{m.label} [{s.name}]"
            ok = None if m.limit is None or s.name != "now" else med <= m.limit
            out.append(Row("ui", name, med, spread, m.goal if s.name == "now" else "", ok))
    return out


def _exit_on_term() -> None:
    """SIGTERM and SIGHUP end the benchmark like Ctrl+C, so the servers, the browser and the
    worktree are removed on the way out."""

    def stop(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


def before_revision(before: str | None) -> str | None:
    """The revision to compare with: ``none`` for none, a given one, or by default the commit
    before the gallery element landed (``HEAD`` until it has)."""
    if before is not None and before.lower() == "none":
        return None
    return before or ui_before.default_revision()


def run(quick: bool = False, before: str | None = None, runs: int | None = None) -> list[Row]:
    _exit_on_term()
    data = make_data(quick)
    load = os.getloadavg()[0]
    sides = measure(
        data, runs=runs or (QUICK_RUNS if quick else RUNS), before=before_revision(before)
    )
    facts = data.photo_facts
    print(
        f"\nApp steps in headless Chromium at {VIEWPORT['width']}×{VIEWPORT['height']},"
        f" {data.photo_count:,} photographs of {facts.get('width')}×{facts.get('height')}"
        f" JPEG (about {facts.get('mean_record_bytes', 0) / 1000:.0f} KB a record),"
        f" load {load:.1f} → {os.getloadavg()[0]:.1f}:\n"
    )
    print(comparison(sides) + "\n", flush=True)
    return rows(sides)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_ui")
    parser.add_argument("--quick", action="store_true", help="smaller data, 3 runs")
    parser.add_argument("--runs", type=int, help=f"runs of each step (default {RUNS})")
    parser.add_argument("--only", help="steps: " + ",".join(STEPS))
    parser.add_argument(
        "--before",
        metavar="REV",
        help="the revision to compare with (default: the commit before the gallery element;"
        " 'none': no comparison)",
    )
    args = parser.parse_args(argv)
    _exit_on_term()
    data = make_data(args.quick)
    only = set(args.only.split(",")) if args.only else None
    if only and only - set(STEPS):
        parser.error(f"no step {', '.join(sorted(only - set(STEPS)))} (steps: {', '.join(STEPS)})")
    sides = measure(
        data,
        runs=args.runs or (QUICK_RUNS if args.quick else RUNS),
        only=only,
        before=before_revision(args.before),
    )
    print(comparison(sides))
    print()
    print(table(rows(sides)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
