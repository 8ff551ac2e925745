"""Layers over the main picture (issue 25):

- every layer (class map, 10 PNG masks, boxes, 20 predictions, COCO keypoints) read and drawn
  on a 640×480 record, cold (nothing decoded before) and again (the record view redrawn
  after a switch, the threshold or the opacity changed);
- the server's work for a gallery page of 100 such records (160-pixel tiles: each the
  photograph's own thumbnail and the description of the layers the browser draws over it,
  nothing decoded before) against a page of the same 100 photographs alone, and against the
  same records with boxes only; the same page without masks; every layer drawn into the tiles
  on the server (as before the browser drew them; the record view's way), cold and with the
  masks decoded before;
- in Chromium (``--only layers`` with the browser there): the time from opening the gallery
  until a page of 100 tiles with every layer is fully drawn (pictures loaded, every picture of
  layers drawn) against the same page of 100 photographs alone; until the tiles in the window
  are (what a reviewer sees before scrolling); and from N until the next page is. The issue's
  goal compares the layered page with the gallery of its day: the same 100 photographs alone
  are also opened in the app as the issue found it (:data:`FILED`, checked out in a git
  worktree and served beside today's, in the same rounds). The ratio to today's photographs
  alone, a stricter bar of our own, is given beside it.

The records are the generators' (``browser_app.generators``: ``infer_detections`` output over
a COCO record with masks and keypoints, and a DeepLab class map), scaled to 640×480.

Each gallery step runs 7 times, the steps taking turns (so that a change of load on the shared
machine falls on all of them); the table gives each step's median, its name the range.
"""

from __future__ import annotations

import io
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from benchmarks import ui_photos
from benchmarks.common import Row
from browser_app import generators as G
from browser_app import view as V
from codec import example as ex
from codec import layers as L
from codec import roles as R
from codec.dataset import Slot

SIZE = (640, 480)
GROUP = "layers"
# The app as issue 25 found it: the commit before the first (ab113f6, pictures of more
# than 8 bits and tensor pictures). Its gallery was Streamlit's own elements.
FILED = "ab113f6~1"
PHOTO_QUALITY = 85  # about the app benchmark's 46 KB a picture


def _png(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def record(seed: int, n_objects: int = 10, n_detections: int = 20) -> bytes:
    """A 640×480 record with every layer. Its photograph is its own (a window of a packaged
    photograph, as the app benchmark's: :func:`benchmarks.ui_photos.picture`), so that a page
    of them is a page of 100 pictures, as a dataset's is, not of one picture 100 times."""
    payload = G.predictions(
        seed, n_detections, masks=True, keypoints=True, photo="rocket", n_objects=n_objects
    )
    feats = dict(ex.decode(payload).features)
    _name, photo = ui_photos.picture(random.Random(seed), ui_photos.sources())
    out = io.BytesIO()
    photo.save(out, format="JPEG", quality=PHOTO_QUALITY)
    masks = [
        _png(Image.open(io.BytesIO(m)).resize(SIZE, Image.Resampling.NEAREST))
        for m in feats["image/object/mask"].values
    ]
    labels = G.class_map(seed, n_objects, photo="rocket")
    spec = {name: (f.type, list(f.values)) for name, f in feats.items()}
    spec["image/encoded"] = ("bytes", [out.getvalue()])
    spec["image/width"] = ("int64", [SIZE[0]])
    spec["image/height"] = ("int64", [SIZE[1]])
    spec["image/object/mask"] = ("bytes", masks)
    class_map = Image.fromarray(labels).resize(SIZE, Image.Resampling.NEAREST)
    spec["image/segmentation/class/encoded"] = ("bytes", [_png(class_map)])
    spec["image/segmentation/class/format"] = ("bytes", [b"png"])
    return ex.encode_example(spec)


def plain(payload: bytes) -> bytes:
    """The same record's photograph alone."""
    photo = ex.decode(payload).features["image/encoded"].values[0]
    return ex.encode_example({"image/encoded": ("bytes", [photo])})


@dataclass(frozen=True)
class Timing:
    """Repeated runs of one step, in seconds: wall ``times`` and ``cpu`` (the process's CPU
    time, every thread's). The median is the figure, the range says how loaded the shared
    machine was; CPU time moves much less with the load than wall time does."""

    times: tuple[float, ...]
    cpu: tuple[float, ...] = ()

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)

    def words(self) -> str:
        return f"[{min(self.times) * 1000:,.0f}–{max(self.times) * 1000:,.0f} ms]"


def _timed(
    fn: Callable[[], object], repeat: int, before: Callable[[], object] = lambda: None
) -> Timing:
    times, cpu = [], []
    for _ in range(repeat):
        before()
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return Timing(tuple(times), tuple(cpu))


def draw_all(payload: bytes, options: L.LayerOptions) -> Image.Image:
    rec = ex.decode(payload)
    roles = R.picture_roles(rec)
    main = roles[0][0]
    img = main.image()
    layers = L.record_layers(rec, main, img.width, img.height, options, roles)
    return L.draw_layers(img, layers, options)


def gallery_page(
    payloads: list[bytes],
    options: L.LayerOptions | None,
    size: int = 160,
    in_browser: bool = True,
) -> None:
    """A gallery page's work on the server as the app does it
    (:func:`browser_app.view.gallery_items`: the tiles of a page on several threads): with
    ``in_browser`` (the app's way) each tile's picture and the description of the layers the
    browser draws; without, the layers drawn into the tiles on the server."""
    slots = [Slot(i, "bench.tfrecord", i * 1000, len(p), p, None) for i, p in enumerate(payloads)]
    items = V.gallery_items(
        slots, size=size, boxes=options is not None, options=options, in_browser=in_browser
    )
    assert all(it.data is not None for it in items)
    if in_browser and options is not None and options.masks:
        assert all(it.overlay is not None for it in items)


# Whether the gallery shows its page (its first tile record ``first``): every tile there,
# every picture loaded, every tile's layers drawn (data-layers is "drawn" wherever there is a
# picture of layers).
_PAGE_DRAWN = """([n, first]) => {
  const tiles = [...document.querySelectorAll('.tfb-gallery .tfb-tile[data-record]')];
  if (tiles.length !== n || tiles[0].dataset.record !== String(first)) return false;
  return tiles.every((t) => {
    const img = t.querySelector('img:not(.tfb-layers)');
    if (!img || !img.complete || !img.naturalWidth) return false;
    return !t.querySelector('.tfb-layers') || t.dataset.layers === 'drawn';
  });
}"""


# When the tiles in the window are first all drawn (their pictures loaded, their layers
# drawn), in ms from the start of the navigation: what a reviewer sees before scrolling.
_WINDOW_WATCH = """(() => {
  window.__tfbWindow = null;
  const look = () => {
    const tiles = [...document.querySelectorAll('.tfb-gallery .tfb-tile[data-record]')];
    const seen = tiles.filter((t) => {
      const r = t.getBoundingClientRect();
      return r.bottom > 0 && r.top < innerHeight;
    });
    const drawn = (t) => {
      const img = t.querySelector('img:not(.tfb-layers)');
      if (!img || !img.complete || !img.naturalWidth) return false;
      return !t.querySelector('.tfb-layers') || t.dataset.layers === 'drawn';
    };
    if (tiles.length >= %d && seen.length && seen.every(drawn)) {
      window.__tfbWindow = performance.now();
    } else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})();"""


def _quiet(page: Any, busy: set[Any], quiet: float = 0.5, timeout: float = 120) -> None:
    """Wait until the page has had no HTTP request under way for ``quiet`` seconds and the
    app runs nothing (what it fetches ahead is in)."""
    deadline = time.monotonic() + timeout
    calm_since = None
    while time.monotonic() < deadline:
        state = page.evaluate(
            "() => document.querySelector('[data-testid=stApp]')"
            "?.getAttribute('data-test-script-state')"
        )
        if busy or state in ("running", "rerunRequested"):
            calm_since = None
        elif calm_since is None:
            calm_since = time.monotonic()
        elif time.monotonic() - calm_since >= quiet:
            return
        page.wait_for_timeout(50)
    raise RuntimeError("the page did not settle")


def browser_rows(
    payloads: list[bytes],
    photos: list[bytes],
    repeat: int,
    second: tuple[list[bytes], list[bytes]],
    filed: str | None = FILED,
) -> list[Row]:
    """In Chromium at 1440×900, for the records with every layer and for their photographs
    alone, taking turns: the time from opening the gallery (a fresh browser context: nothing
    cached) until its page of ``len(payloads)`` tiles is fully drawn, and, once the page is
    settled (the next page sent ahead, its pictures and pack fetched), the time from N until
    the next page (``second``: other records, layered and alone) is fully drawn. The first
    round of each includes the server's work for the page; later rounds are served from its
    cache, so the median is mostly the browser's. With ``filed`` (a revision), the
    photographs alone are also opened, in the same rounds, in the app at that revision (its
    gallery: Streamlit's own elements) until every picture of the page is decoded."""
    import contextlib
    import tempfile
    from pathlib import Path

    from benchmarks import ui_before
    from benchmarks.bench_ui import PROBE, STREAMLIT, app_server, chromium, page_decoded
    from browser_app import generators as G

    n = len(payloads)
    with tempfile.TemporaryDirectory(prefix="tfb-layers-bench-") as tmp:
        root = Path(tmp)
        G.write(root / "layers.tfrecord", payloads + second[0])
        G.write(root / "photos.tfrecord", photos + second[1])
        times: dict[str, list[float]] = {"layers": [], "photos": []}
        seen: dict[str, list[float]] = {"layers": [], "photos": []}
        turns: dict[str, list[float]] = {"layers": [], "photos": []}
        then: list[float] = []  # the photographs alone in the app at ``filed``
        with contextlib.ExitStack() as stack:
            url = stack.enter_context(app_server(root, [str(root / "layers.tfrecord")]))
            old = filed_commit = ""  # the filed app's URL and short hash
            if filed is not None:
                filed_commit = ui_before.describe(filed).split()[0]
                code = stack.enter_context(ui_before.checkout(filed))
                old = stack.enter_context(app_server(root, [str(root / "photos.tfrecord")], code))
            browser = stack.enter_context(chromium())
            for _ in range(repeat):
                if old:
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    context.add_init_script(PROBE)
                    page = context.new_page()
                    t0 = time.perf_counter()
                    page.goto(f"{old}/gallery?file=photos.tfrecord&size={n}")
                    page.wait_for_function(
                        f"() => {page_decoded(STREAMLIT, 0, n)}", polling="raf", timeout=120_000
                    )
                    then.append(time.perf_counter() - t0)
                    context.close()
                for name in times:
                    context = browser.new_context(viewport={"width": 1440, "height": 900})
                    context.add_init_script(_WINDOW_WATCH % n)
                    page = context.new_page()
                    busy: set[Any] = set()
                    page.on("request", lambda r, b=busy: b.add(r))
                    page.on("requestfinished", lambda r, b=busy: b.discard(r))
                    page.on("requestfailed", lambda r, b=busy: b.discard(r))
                    t0 = time.perf_counter()
                    page.goto(f"{url}/gallery?file={name}.tfrecord&size={n}")
                    page.wait_for_function(_PAGE_DRAWN, arg=[n, 0], polling="raf", timeout=120_000)
                    times[name].append(time.perf_counter() - t0)
                    seen[name].append(page.evaluate("() => window.__tfbWindow") / 1000)
                    _quiet(page, busy)
                    t0 = time.perf_counter()
                    page.keyboard.press("n")
                    page.wait_for_function(_PAGE_DRAWN, arg=[n, n], polling="raf", timeout=120_000)
                    turns[name].append(time.perf_counter() - t0)
                    context.close()
    rows = []
    if then:
        layers, before = Timing(tuple(times["layers"])), Timing(tuple(then))
        ratio = layers.median / before.median
        rows += [
            Row(
                GROUP,
                f"Chromium: gallery page of {n} photographs alone, opened until drawn, in the app"
                f" as issue 25 found it ({filed_commit})"
                f" {before.words()}",
                before.median * 1000,
                "ms",
            ),
            Row(
                GROUP,
                "Chromium, opened: every layer / the photographs alone as the issue found them",
                ratio,
                "×",
                "<= 1.25",
                ratio <= 1.25,
            ),
        ]
    for what, got in (
        ("opened", times),
        ("opened, the tiles in the window (from the navigation's start)", seen),
        ("N pressed", turns),
    ):
        layers, photos_t = Timing(tuple(got["layers"])), Timing(tuple(got["photos"]))
        ratio = layers.median / photos_t.median
        rows += [
            Row(
                GROUP,
                f"Chromium: gallery page of {n} photographs alone, {what} until drawn"
                f" {photos_t.words()}",
                photos_t.median * 1000,
                "ms",
            ),
            Row(
                GROUP,
                f"Chromium: gallery page of {n}, every layer, {what} until drawn {layers.words()}",
                layers.median * 1000,
                "ms",
            ),
            # The goal is the whole page's; the window's is what a reviewer sees.
            Row(GROUP, f"Chromium, {what}: every layer / photographs alone", ratio, "×")
            if got is seen
            else Row(
                GROUP,
                f"Chromium, {what}: every layer / today's photographs alone",
                ratio,
                "×",
                "<= 1.25 (ours)",
                ratio <= 1.25,
            ),
        ]
    return rows


def browser_only(quick: bool = False) -> list[Row]:
    """The Chromium rows alone (``python -m benchmarks.bench_layers --browser``): the
    browser's side measured before and after a change without the server's steps."""
    count = 25 if quick else 100  # a page size the app offers (state.url.PAGE_SIZES)
    payloads = [record(seed) for seed in range(count)]
    second = [record(seed) for seed in range(count, 2 * count)]
    return browser_rows(
        payloads,
        [plain(p) for p in payloads],
        3 if quick else 7,
        (second, [plain(p) for p in second]),
    )


def run(quick: bool = False, browser: bool = True) -> list[Row]:
    """Each step's median wall time, its range in the measure's name; without ``browser``
    (``python -m benchmarks.bench_layers --server``) the server's rows alone."""
    repeat = 3 if quick else 7
    count = 25 if quick else 100  # a page size the app offers (state.url.PAGE_SIZES)
    one = record(7)
    everything = L.LayerOptions()
    rows = []
    cold = _timed(lambda: draw_all(one, everything), repeat * 3, L.clear_decoded)
    warm = _timed(lambda: draw_all(one, everything), repeat * 3)
    rows.append(
        Row(
            GROUP,
            f"every layer on a 640×480 record, cold {cold.words()}",
            cold.median * 1000,
            "ms",
            "<= 30",
            cold.median <= 0.030,
        )
    )
    rows.append(
        Row(
            GROUP,
            f"every layer on a 640×480 record, redrawn {warm.words()}",
            warm.median * 1000,
            "ms",
        )
    )
    payloads = [record(seed) for seed in range(count)]
    photos = [plain(p) for p in payloads]
    boxes_only = L.LayerOptions(predictions=False, masks=False, class_map=False, keypoints=False)
    no_masks = L.LayerOptions(masks=False)
    # Interleaved, so that a change of load on the machine falls on every step alike.
    steps: dict[str, list[Timing]] = {
        k: [] for k in ("plain", "boxes", "layers", "no masks", "server", "again")
    }
    for _ in range(repeat):
        steps["plain"].append(_timed(lambda: gallery_page(photos, None), 1))
        steps["boxes"].append(
            _timed(lambda: gallery_page(payloads, boxes_only), 1, L.clear_decoded)
        )
        steps["layers"].append(
            _timed(lambda: gallery_page(payloads, everything), 1, L.clear_decoded)
        )
        steps["no masks"].append(
            _timed(lambda: gallery_page(payloads, no_masks), 1, L.clear_decoded)
        )
        steps["server"].append(
            _timed(lambda: gallery_page(payloads, everything, in_browser=False), 1, L.clear_decoded)
        )
        steps["again"].append(
            _timed(lambda: gallery_page(payloads, everything, in_browser=False), 1)
        )
    t = {
        k: Timing(tuple(x.times[0] for x in v), tuple(x.cpu[0] for x in v))
        for k, v in steps.items()
    }
    page = f"gallery page of {count}"
    for key, what in (
        ("plain", "photographs alone"),
        ("boxes", "boxes only, drawn by the browser"),
        ("layers", "every layer, drawn by the browser"),
        ("no masks", "every layer but masks, drawn by the browser"),
        ("server", "every layer drawn on the server (the record view's way)"),
        ("again", "every layer drawn on the server, masks decoded before"),
    ):
        rows.append(Row(GROUP, f"{page}, {what} {t[key].words()}", t[key].median * 1000, "ms"))
        rows.append(Row(GROUP, f"{page}, {what}: CPU time", t[key].cpu_median * 1000, "ms"))
    ratio = t["layers"].median / t["plain"].median
    rows.append(
        Row(
            GROUP,
            "every layer (server's work: pictures and descriptions) / photographs alone",
            ratio,
            "×",
            "<= 1.25",
            ratio <= 1.25,
        )
    )
    rows.append(
        Row(
            GROUP,
            "every layer drawn on the server / photographs alone",
            t["server"].median / t["plain"].median,
            "×",
        )
    )
    rows.append(
        Row(
            GROUP,
            "every layer / photographs alone, CPU time",
            t["layers"].cpu_median / t["plain"].cpu_median,
            "×",
        )
    )
    to_boxes = t["layers"].median / t["boxes"].median
    rows.append(Row(GROUP, "every layer / boxes only", to_boxes, "×", "<= 1.25", to_boxes <= 1.25))
    rows.append(
        Row(
            GROUP,
            "every layer but masks / boxes only",
            t["no masks"].median / t["boxes"].median,
            "×",
        )
    )
    if not browser:
        return rows
    try:
        second = [record(seed) for seed in range(count, 2 * count)]
        rows += browser_rows(
            payloads, photos, 3 if quick else 7, (second, [plain(p) for p in second])
        )
    except RuntimeError as exc:  # no Chromium here: the server's figures stand alone
        rows.append(Row(GROUP, f"Chromium: not measured ({exc})", float("nan"), ""))
    return rows


if __name__ == "__main__":
    from benchmarks.common import table

    argv = __import__("sys").argv
    quick = "--quick" in argv
    if "--browser" in argv:
        print(table(browser_only(quick)))
    else:
        print(table(run(quick, browser="--server" not in argv)))
    _ = np  # numpy is imported for the generators' arrays
