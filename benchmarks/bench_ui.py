"""The app as a person uses it: the real server in headless Chromium at 1440×900, timed from
the action (a click or a key) until the page has settled.

"Settled" is measured in the page, on every animation frame: Streamlit's script state on the
app root (``data-test-script-state``) has gone back to ``notRunning`` after a run that began
after the action, no element is left stale from the previous run, and the step's own content
is there (the pictures of the new page decoded, the new first row of the table, the record's
heading, ...). The time is ``performance.now()`` at that frame minus the time of the
``mousedown`` / ``keydown`` that started the action, so Playwright's round trips are not in it.

Steps (one function each, usable on their own; see :data:`STEPS`):

- gallery, next page of 100 thumbnails (20,000 JPEGs);
- gallery, one screenful of small tiles: how many pictures are fully visible, and the wait
  for a new screenful of them;
- review: mark a record passed (P) and go to the next one (J) in the record view;
- records page: the next page of 25;
- records table: selecting a row (the record view follows);
- saving a value edit in the record's editor table.

Data (made with the project's writer into ``benchmarks/data/``, then reused): a file of
20,000 small JPEGs and an Object Detection dataset of 2,000 records in four GZIP shards.
Every step reports the median of its runs (after one warm-up run) with the range.

    python -m benchmarks --only ui          # or: python -m benchmarks.bench_ui [--quick]

The server is started with the launcher (``python -m browser_app view``) in its own process
group with its own cache folder; both the server and the browser are stopped on the way out,
whatever happens.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# The browser tests' helpers: the same Chromium, and the same ways to act on a page that
# Streamlit redraws.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from browser_support import CHROMIUM, CHROMIUM_ARGS, free_port, open_cell_editor, until

import codec
from benchmarks.common import Row, table
from browser_app.sample_data import detection_payload, write_detection_checks

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
VIEWPORT = {"width": 1440, "height": 900}
RUNS = 7
TIMEOUT_MS = 30_000

JPEG_FILE = "jpegs.tfrecord"
OD_FOLDER = "od"
OD_SHARDS = 4
GALLERY_PAGE = 100
RECORDS_PAGE = 25
# The gallery's densest tile size, as the tile size control names it.
DENSE_TILES = "Dense"


# -- data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UiData:
    """The benchmark's files: ``root`` holds ``jpegs`` (one file) and ``od`` (a folder of
    GZIP shards); ``jpeg_count`` and ``od_count`` are their record counts."""

    root: Path
    jpeg_count: int
    od_count: int

    @property
    def jpegs(self) -> str:
        return JPEG_FILE

    @property
    def od(self) -> str:
        return OD_FOLDER


def _jpeg_file(path: Path, n: int) -> None:
    rng = random.Random(n)
    with codec.TFRecordWriter(path) as w:
        for i in range(n):
            size = (rng.choice((64, 80, 96)), rng.choice((48, 64, 72)))
            w.write(detection_payload(rng, i, "jpeg", size))


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
    jpegs, od = (2_000, 400) if quick else (20_000, 2_000)
    root = DATA / f"ui-{jpegs}"
    if not (root / JPEG_FILE).exists():
        root.mkdir(parents=True, exist_ok=True)
        part = root / (JPEG_FILE + ".part")
        _jpeg_file(part, jpegs)
        part.rename(root / JPEG_FILE)
    if not (root / OD_FOLDER).exists():
        part_dir = root / (OD_FOLDER + ".part")
        shutil.rmtree(part_dir, ignore_errors=True)
        _od_shards(part_dir, od)
        part_dir.rename(root / OD_FOLDER)
    return UiData(root, jpegs, od)


# -- the server and the browser ----------------------------------------------------------------


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
def app_server(root: Path, paths: list[str] | None = None) -> Iterator[str]:
    """``python -m browser_app view PATHS --root ROOT --port N`` (headless, its own cache
    folder, so review marks and edits start empty); yields the URL; stops it on the way out."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="tfb-ui-bench-") as tmp:
        env = dict(
            os.environ,
            PYTHONUNBUFFERED="1",
            TFRECORD_BROWSER_CACHE=str(Path(tmp) / "cache"),
            PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        )
        log_path = Path(tmp) / "server.log"
        cmd = [sys.executable, "-m", "browser_app", "view", *(paths or []), "--root", str(root)]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [*cmd, "--no-browser", "--port", str(port)],
                cwd=REPO,
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


# Installed in every page before Streamlit's code: the time of the last user input, and a count
# of script runs that have finished (the app root's script state going back to notRunning).
_PROBE = """
(() => {
  const t = (window.__tfb = { input: 0, done: 0, running: false, state: "" });
  const mark = () => { if (!t.input) t.input = performance.now(); };
  addEventListener("pointerdown", mark, true);
  addEventListener("mousedown", mark, true);
  addEventListener("keydown", mark, true);
  // Every state the app root passes through, in order: a fast run (a fragment, a callback)
  // may start and finish between two looks, so the mutation records' old values count too.
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
})();
"""

# True once the run started by the last input has finished and nothing is stale; `ready` is the
# step's own condition (a JS expression over `document`).
_SETTLED = """
(ready) => {
  const t = window.__tfb;
  if (!t || !t.input || t.done <= t.startDone || t.state !== "notRunning") return false;
  if (document.querySelector('[data-testid="stMain"] [data-stale="true"]')) return false;
  if (!(new Function("return (" + ready + ");"))()) return false;
  return performance.now() - t.input;
}
"""

# Every picture of the gallery decoded, and the first tile is the given record.
GALLERY_READY = r"""
(() => {
  const imgs = [...document.querySelectorAll('.st-key-tfb-gallery img')];
  return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0)
    && /#%d(?!\d)/.test(document.querySelector('.st-key-tfb-gallery').innerText);
})()
"""


@contextlib.contextmanager
def browser_page() -> Iterator[Any]:
    """A 1440×900 page in Debian's headless Chromium, with the settle probe installed."""
    if not os.path.exists(CHROMIUM):
        raise RuntimeError("Debian's chromium is not installed (scripts/check.sh installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            ctx = b.new_context(viewport=VIEWPORT, accept_downloads=True)
            ctx.add_init_script(_PROBE)
            page = ctx.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            yield page
        finally:
            b.close()


def timed(page: Any, action: Callable[[], object], ready: str = "true") -> float:
    """Do ``action`` (a click or a key press) and return the seconds from its input event
    until the page has settled with ``ready`` (a JS expression) true."""
    page.evaluate("() => { window.__tfb.input = 0; window.__tfb.startDone = window.__tfb.done; }")
    action()
    handle = page.wait_for_function(_SETTLED, arg=ready, polling="raf", timeout=TIMEOUT_MS)
    return float(handle.json_value()) / 1000


def open_page(page: Any, url: str, ready: str) -> None:
    """Load ``url`` and wait until its first run has finished and ``ready`` holds."""
    page.goto(url)
    page.wait_for_function(
        """(ready) => { const t = window.__tfb; return t && t.done > 0
             && t.state === "notRunning" && (new Function("return (" + ready + ");"))(); }""",
        arg=ready,
        polling="raf",
        timeout=60_000,
    )


# -- the steps -------------------------------------------------------------------------------


def _gallery_ready(first: int) -> str:
    return GALLERY_READY % first


def open_gallery(page: Any, url: str, spec: str, start: int = 0) -> None:
    """The gallery at record ``start``, 100 tiles a page."""
    query = f"file={spec}&record={start}&size={GALLERY_PAGE}"
    open_page(page, f"{url}/gallery?{query}", _gallery_ready(start))


def _gallery_first(page: Any) -> int:
    text = page.locator(".st-key-tfb-gallery").inner_text()
    import re

    found = re.search(r"#([\d,]+)", text)
    assert found, "no tile caption in the gallery"
    return int(found.group(1).replace(",", ""))


def gallery_next_page(page: Any) -> float:
    """Gallery: the next page of tiles (the top "Next" button)."""
    first = _gallery_first(page)
    nxt = page.get_by_role("button", name="Next", exact=True).first
    return timed(page, nxt.click, _gallery_ready(first + GALLERY_PAGE))


# Dense tiles have no review buttons (a tile's ✓ / ⚑ pair is a button group).
_DENSE_READY = """(() => {
  const g = document.querySelector('.st-key-tfb-gallery');
  return g && g.querySelectorAll('[data-testid="stButtonGroup"]').length === 0
    && [...g.querySelectorAll('img')].every(i => i.complete && i.naturalWidth > 0);
})()"""


def dense_tiles(page: Any) -> None:
    """Switch the gallery to its densest tiles, and wait until they are drawn."""
    import re

    button = page.locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile(f"^{DENSE_TILES}$")
    )
    timed(page, button.first.click, _DENSE_READY)


def visible_pictures(page: Any) -> int:
    """Gallery pictures fully inside the window, decoded."""
    return int(
        page.evaluate(
            """() => [...document.querySelectorAll('.st-key-tfb-gallery img')].filter(i => {
                 const r = i.getBoundingClientRect();
                 return i.complete && i.naturalWidth > 0 && r.width > 0 && r.top >= 0
                   && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
               }).length"""
        )
    )


def gallery_screenful(page: Any) -> float:
    """Gallery in dense tiles: the next page, until every picture in the window is decoded."""
    first = _gallery_first(page)
    nxt = page.get_by_role("button", name="Next", exact=True).first
    ready = rf"""(() => {{
      const g = document.querySelector('.st-key-tfb-gallery');
      if (!g || !/#{first + GALLERY_PAGE}(?!\d)/.test(g.innerText)) return false;
      return [...g.querySelectorAll('img')].every(i => {{
        const r = i.getBoundingClientRect();
        return r.top >= innerHeight || (i.complete && i.naturalWidth > 0);
      }});
    }})()"""
    return timed(page, nxt.click, ready)


# Streamlit loads a widget's code on first use and draws a grey placeholder until then: a key
# pressed before the review bar's buttons are drawn reaches no shortcut.
_REVIEW_BAR = """[...document.querySelectorAll('[data-testid^="stBaseButton-"]')]
  .some(b => b.innerText.includes('Passed'))"""


def open_record(page: Any, url: str, spec: str, record: int) -> None:
    """The records page at ``record`` (its record view and review bar drawn), 25 a page."""
    open_page(
        page,
        f"{url}/?file={spec}&record={record}&size={RECORDS_PAGE}",
        f"({_heading(record)}) && ({_REVIEW_BAR})",
    )


def _heading(n: int) -> str:
    """JS: the record view of record ``n`` is shown (its heading)."""
    return rf"""[...document.querySelectorAll('h1,h2,h3,h4')]
      .some(h => /^\s*Record {n}(?!\d)/.test(h.innerText))"""


def _current_record(page: Any) -> int:
    import re

    for text in page.locator("h1,h2,h3,h4").all_inner_texts():
        found = re.match(r"\s*Record ([\d,]+)", text)
        if found:
            return int(found.group(1).replace(",", ""))
    raise AssertionError("no record view on the page")


def review_step(page: Any) -> float:
    """Record view: mark the record passed (P), then go to the next record (J); the sum of
    both waits."""
    n = _current_record(page)
    # Focus the page (not a widget) so the letters reach the buttons' shortcuts: the page's
    # title takes the click.
    page.get_by_role("heading", name="Records", exact=True).click()
    # The Passed button turns primary once the mark is saved and drawn.
    passed = """[...document.querySelectorAll('[data-testid="stBaseButton-primary"]')]
      .some(b => b.innerText.includes('Passed'))"""
    mark = timed(page, lambda: page.keyboard.press("p"), passed)
    step = timed(page, lambda: page.keyboard.press("j"), _heading(n + 1))
    return mark + step


def _first_row(page: Any) -> int:
    cell = page.get_by_test_id("stDataFrame").first.get_by_test_id("glide-cell-1-0")
    return int(cell.inner_text().replace(",", "").strip())


def records_next_page(page: Any) -> float:
    """Records page: the next page of 25 (the table's first row is the page's first record)."""
    first = _first_row(page)
    nxt = page.get_by_role("button", name="Next", exact=True).first
    ready = f"""(() => {{
      const c = document.querySelector(
        '[data-testid="stDataFrame"] [data-testid="glide-cell-1-0"]');
      return !!c && c.textContent.replace(/,/g, '').trim() === '{first + RECORDS_PAGE}';
    }})()"""
    return timed(page, nxt.click, ready)


def select_row(page: Any, row: int) -> float:
    """Records table: click row ``row`` of the page; its record view opens."""
    first = _first_row(page)
    x, y = until(lambda: _row_point(page, row), what=f"row {row} of the records table")
    return timed(page, lambda: page.mouse.click(x, y), _heading(first + row))


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
    import re

    page.get_by_test_id("stMain").locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile("Edit$")
    ).first.click()
    page.wait_for_function(_SETTLED, arg="document.body.innerText.includes('Editing Record')")


def _editor_grid(page: Any) -> Any:
    return page.locator(".st-key-tfb-editor-features [data-testid='stDataFrame']").first


def save_edit(page: Any, value: int) -> float:
    """Editor: type ``value`` into the first int64 value cell (image/height) and press Enter;
    settled when the table shows it and the pending change is counted."""

    def height_row() -> int:  # the editor's grid fills in after it is drawn
        names = _editor_grid(page).locator("[data-testid^='glide-cell-0-']").all_text_contents()
        rows = [name.strip() for name in names]
        assert "image/height" in rows, "the editor's table is not filled in yet"
        return rows.index("image/height")

    row = until(height_row, what="the editor's image/height row")
    # Column 3 holds the values (feature, type, n, values, check).
    editor = open_cell_editor(page, lambda: _editor_grid(page), row, 3)
    editor.fill(str(value))
    ready = f"""(() => {{
      const g = document.querySelector(
        '.st-key-tfb-editor-features [data-testid="stDataFrame"]');
      const c = g && g.querySelector('[data-testid="glide-cell-3-{row}"]');
      return !!c && c.textContent.trim() === '{value}'
        && /pending change/.test(document.body.innerText);
    }})()"""
    return timed(page, lambda: editor.press("Enter"), ready)


# -- the table -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One step's figures: seconds per run (warm-up excluded), the goal and its limit."""

    step: str
    times: list[float]
    goal: str
    limit: float
    count: int | None = None  # the screenful step: pictures fully visible
    count_goal: int | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def ok(self) -> bool:
        count_ok = self.count is None or self.count_goal is None or self.count >= self.count_goal
        return self.median <= self.limit and count_ok

    def rows(self) -> list[Row]:
        spread = f"s ({min(self.times):.3f}–{max(self.times):.3f}, n={len(self.times)})"
        out = [Row("ui", self.step, self.median, spread, self.goal, self.median <= self.limit)]
        if self.count is not None:
            out.append(
                Row(
                    "ui",
                    self.step + ": pictures fully visible",
                    self.count,
                    "pictures",
                    f">= {self.count_goal}",
                    self.count >= (self.count_goal or 0),
                )
            )
        return out


def _repeat(fn: Callable[[int], float], runs: int) -> list[float]:
    fn(-1)  # warm-up
    return [fn(i) for i in range(runs)]


def measure(data: UiData, runs: int = RUNS, only: set[str] | None = None) -> list[Result]:
    """Start the app on ``data``, run every step ``runs`` times (after a warm-up) and return
    the figures. ``only`` limits the steps by key (gallery, dense, review, records, select,
    edit)."""

    def want(key: str) -> bool:
        return only is None or key in only

    out: list[Result] = []
    with app_server(data.root) as url:
        for key, step in STEPS.items():
            if not want(key):
                continue
            try:
                with browser_page() as page:
                    try:
                        out.append(step(page, url, data, runs))
                    except Exception:
                        _shot(page, f"bench-ui-{key}-failed.png")  # what the step saw
                        raise
            except Exception as exc:  # one broken step must not hide the others' figures
                print(f"ui step {key} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return out


def _gallery_step(page: Any, url: str, data: UiData, runs: int) -> Result:
    open_gallery(page, url, data.jpegs)
    times = _repeat(lambda _i: gallery_next_page(page), runs)
    return Result("gallery: next page of 100 thumbnails", times, "<= 0.5 s", 0.5)


def _dense_step(page: Any, url: str, data: UiData, runs: int) -> Result:
    # Far into the file, with a next page for the warm-up and every run (the quick data has
    # 2,000 records).
    start = min(GALLERY_PAGE * 50, data.jpeg_count - GALLERY_PAGE * (runs + 2))
    open_gallery(page, url, data.jpegs, max(0, start // GALLERY_PAGE * GALLERY_PAGE))
    dense_tiles(page)
    times = _repeat(lambda _i: gallery_screenful(page), runs)
    count = visible_pictures(page)
    _shot(page, "bench-ui-dense.png")
    return Result(
        "gallery: one screenful of small tiles", times, "<= 0.3 s", 0.3, count=count, count_goal=48
    )


def _intact_run(data: UiData, length: int) -> int:
    """The first record of the Object Detection data followed by ``length`` intact ones (the
    review step walks through them; a damaged record has no review bar)."""
    import codec
    from browser_app.selection import record_facts

    with codec.TFRecordDataset(str(data.root / data.od)) as ds:
        status = record_facts(ds).status.tolist()
    for i in range(len(status) - length):
        if not any(status[i : i + length + 1]):
            return i
    return 0


def _review_step(page: Any, url: str, data: UiData, runs: int) -> Result:
    open_record(page, url, data.od, _intact_run(data, runs + 2))
    times = _repeat(lambda _i: review_step(page), runs)
    return Result("review: mark (P) and next record (J)", times, "<= 0.25 s", 0.25)


def _records_step(page: Any, url: str, data: UiData, runs: int) -> Result:
    open_record(page, url, data.od, 0)
    times = _repeat(lambda _i: records_next_page(page), runs)
    return Result("records: next page of 25", times, "<= 0.25 s", 0.25)


def _select_step(page: Any, url: str, data: UiData, runs: int) -> Result:
    open_record(page, url, data.od, 0)
    times = _repeat(lambda i: select_row(page, 2 + (i + 1) % 8), runs)
    return Result("records table: select a row", times, "<= 0.3 s", 0.3)


def _edit_step(page: Any, url: str, data: UiData, runs: int) -> Result:
    open_record(page, url, data.od, 3)
    _edit_mode(page)
    times = _repeat(lambda i: save_edit(page, 50 + i + 2), runs)
    return Result("editor: save a value edit", times, "<= 0.4 s", 0.4)


# Each step: a fresh page, opened where the step starts, then the action timed ``runs`` times.
STEPS: dict[str, Callable[[Any, str, UiData, int], Result]] = {
    "gallery": _gallery_step,
    "dense": _dense_step,
    "review": _review_step,
    "records": _records_step,
    "select": _select_step,
    "edit": _edit_step,
}


def _shot(page: Any, name: str) -> None:
    folder = REPO / "artifacts"
    folder.mkdir(exist_ok=True)
    page.screenshot(path=str(folder / name))


def _exit_on_term() -> None:
    """SIGTERM and SIGHUP end the benchmark like Ctrl+C, so the server and the browser are
    stopped on the way out."""

    def stop(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


def run(quick: bool = False) -> list[Row]:
    _exit_on_term()
    data = make_data(quick)
    rows: list[Row] = []
    for r in measure(data, runs=5 if quick else RUNS):
        rows.extend(r.rows())
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_ui")
    parser.add_argument("--quick", action="store_true", help="smaller data")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--only", help="steps: gallery,dense,review,records,select,edit")
    args = parser.parse_args(argv)
    _exit_on_term()
    data = make_data(args.quick)
    only = set(args.only.split(",")) if args.only else None
    rows: list[Row] = []
    for r in measure(data, runs=max(5, args.runs), only=only):
        rows.extend(r.rows())
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
