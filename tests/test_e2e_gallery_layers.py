"""End to end, in headless Chromium at 1440×900: the gallery's tiles draw their layers in the
browser (``assets/gallery.js``) over the photograph's own thumbnail, as the server draws them
(:func:`browser_app.view.pictures.thumbnail`, the reference).

On records with every layer (a class map with its void border, 10 PNG instance masks, boxes,
20 predictions, COCO keypoints: the benchmark's records), the layers the browser drew (its
canvas over black) are compared with the server's drawing of the same layers (over black):
close overall (captions are set in another font), the masks' and the class map's pixels,
void included, equal to the server's, and no prediction under the threshold drawn. The
whole tile (picture and layers) is close to the server's thumbnail. A record with N·H·W float
masks, which a browser cannot be given as PNGs, keeps the server's drawing (its very bytes);
a record with boxes only is drawn by the browser as the server draws it. A screenshot of the
page goes to ``artifacts/gallery-layers.png``."""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot, until
from PIL import Image

from benchmarks.bench_layers import record as every_layer
from browser_app import generators as G
from browser_app.view import pictures as P
from codec import example as ex
from codec import layers as L
from codec import roles as R

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAYERED = 4  # records 0-3: every layer
FLOAT = 4  # record 4: N·H·W float masks (drawn by the server)
BOXES = 5  # record 5: boxes only
TILE = 160  # the Medium tiles' thumbnails
TILES = ".tfb-gallery .tfb-tile"


def _payloads() -> list[bytes]:
    return [
        *(every_layer(seed) for seed in range(LAYERED)),
        G.coco_float_masks(3, photo="astronaut", keypoints=False),
        G.pascal(2),
    ]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("gallery-layers")
    G.write(r / "every.tfrecord", _payloads())
    return r


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(root / "every.tfrecord"), "--root", str(root)])


browser = browser_fixture()

# The tile's picture and, over it, its layers (a canvas drawn in place, or a picture of them
# drawn ahead), read back: [picture with layers, layers alone over black], each as base64
# RGBA, the size, and what the layers are shown by.
READ_TILE = """([record]) => {
  const tile = document.querySelector(`.tfb-gallery .tfb-tile[data-record="${record}"]`);
  const img = tile.querySelector('img:not(.tfb-layers)');
  const layers = tile.querySelector('.tfb-layers');
  const canvas = layers && layers.tagName === 'CANVAS';
  const size = layers && (canvas ? [layers.width, layers.height]
                                 : [layers.naturalWidth, layers.naturalHeight]);
  const drawn = size && size[0] > 0;  // a picture of layers where none are drawn has no pixels
  const [w, h] = drawn ? size : [img.naturalWidth, img.naturalHeight];
  const read = (under) => {
    const c = document.createElement('canvas');
    c.width = w; c.height = h;
    const ctx = c.getContext('2d');
    if (under) ctx.drawImage(img, 0, 0, w, h);
    else { ctx.fillStyle = '#000'; ctx.fillRect(0, 0, w, h); }
    if (drawn) ctx.drawImage(layers, 0, 0);
    const px = ctx.getImageData(0, 0, w, h).data;
    let s = '';
    for (let i = 0; i < px.length; i += 8192) s += String.fromCharCode(...px.subarray(i, i + 8192));
    return btoa(s);
  };
  const by = layers ? layers.tagName.toLowerCase() : '';
  return {w, h, whole: read(true), layers: read(false), state: tile.dataset.layers || '', by};
}"""

FETCH = """async (url) => {
  const b = new Uint8Array(await (await fetch(url)).arrayBuffer());
  let s = '';
  for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode(...b.subarray(i, i + 8192));
  return btoa(s);
}"""


def _rgb(b64: str, w: int, h: int) -> np.ndarray:
    px = np.frombuffer(base64.b64decode(b64), dtype=np.uint8).reshape(h, w, 4)
    return px[:, :, :3].astype(np.int16)


def _server_layers(payload: bytes, options: L.LayerOptions, over: Image.Image) -> np.ndarray:
    """The server's drawing of the record's layers at tile size over ``over``."""
    rec = ex.decode(payload, "auto")
    roles = R.picture_roles(rec)
    main = roles[0][0]
    fw, fh = main.image().size
    layers = L.record_layers(rec, main, fw, fh, options, roles)
    scale = (over.width / fw, over.height / fh)
    drawn = L.draw_layers(over, layers, options, scale, captions=True)
    return np.asarray(drawn.convert("RGB")).astype(np.int16)


def _server_tile(payload: bytes) -> np.ndarray:
    thumb = P.thumbnail(ex.decode(payload, "auto"), TILE, True, captions=True)
    assert thumb is not None
    return np.asarray(Image.open(io.BytesIO(thumb.data)).convert("RGB")).astype(np.int16)


def _plain_tile(payload: bytes) -> Image.Image:
    """The photograph's thumbnail alone, as the tile's picture is."""
    thumb = P.thumbnail(ex.decode(payload, "auto"), TILE, False)
    assert thumb is not None
    return Image.open(io.BytesIO(thumb.data)).convert("RGB")


def _open(browser: Any, server: str, init: str | None = None) -> Any:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    if init:
        page.add_init_script(init)
    page.goto(f"{server}/gallery?file=every.tfrecord")
    tiles = page.locator(f"{TILES}[data-record]")
    from playwright.sync_api import expect

    expect(tiles).to_have_count(BOXES + 1, timeout=60_000)

    def drawn() -> None:
        states = tiles.evaluate_all("ts => ts.map(t => t.dataset.layers || '')")
        assert states[:LAYERED] == ["drawn"] * LAYERED, states
        assert states[FLOAT] == "", states  # drawn by the server: no canvas
        assert states[BOXES] == "drawn", states
        assert page.locator(f"{TILES} img").evaluate_all(
            "is => is.every(i => i.complete && i.naturalWidth > 0)"
        )

    until(drawn, timeout=60, what="every tile's layers drawn")
    return page


def test_the_browser_draws_every_layer_as_the_server_does(server: str, browser: Any) -> None:
    payloads = _payloads()
    page = _open(browser, server)
    no_errors(page)
    shot(page, "gallery-layers.png")
    everything = L.LayerOptions()
    for record in range(LAYERED):
        got = page.evaluate(READ_TILE, [record])
        w, h = got["w"], got["h"]
        assert (w, h) == (TILE, TILE * 3 // 4)
        mine = _rgb(got["layers"], w, h)
        black = Image.new("RGB", (w, h))
        theirs = _server_layers(payloads[record], everything, black)
        diff = np.abs(mine - theirs).max(axis=2)
        # Close overall: only captions (another font) and the edges of keypoints differ.
        assert diff.mean() < 10, (record, diff.mean())
        assert (diff > 40).mean() < 0.06, (record, (diff > 40).mean())
        # Where only masks and the class map are drawn, the pixels are the server's: each
        # mask in its class colour at the opacity with its outline, the void border hatched.
        fills = L.LayerOptions(boxes=False, predictions=False, keypoints=False)
        only_fills = _server_layers(payloads[record], fills, black)
        alone = (np.abs(only_fills - theirs).max(axis=2) == 0) & (only_fills.max(axis=2) > 0)
        assert alone.sum() > 500, record  # masks and the class map cover much of the tile
        close = diff[alone] <= 3
        assert close.mean() > 0.99, (record, close.mean())
        void = _class_values_at_tile(payloads[record], w, h) == L.VOID
        only_map = _server_layers(payloads[record], replace(fills, masks=False), black)
        void_alone = void & (np.abs(only_map - theirs).max(axis=2) == 0)
        assert void_alone.sum() > 50, record
        assert (diff[void_alone] <= 3).mean() > 0.99, record
        # Hatched: stripes of white and of void's colour (#e0e0c0), both at 60 % over black.
        px = mine[void_alone]
        white = (np.abs(px - 153) <= 3).all(axis=1)
        tint = (np.abs(px - np.array([134, 134, 115])) <= 3).all(axis=1)
        assert 0.2 < white.mean() < 0.8 and (white | tint).mean() > 0.99, record
        # No prediction under the threshold: along their outlines nothing of theirs.
        for x0, y0, x1, y1 in _below(payloads[record], everything, w, h):
            edge = _outline(x0, y0, x1, y1, w, h) & (theirs.max(axis=2) == 0)
            if edge.sum() > 10:
                assert (mine[edge].max(axis=1) <= 3).mean() > 0.95, (record, x0, y0)
        # The whole tile: the photograph's own thumbnail with the layers over it, close to
        # the server's drawing over that very picture, and to the server's tile (a JPEG of
        # the picture with its layers, whose thin lines the JPEG blurs).
        whole = _rgb(got["whole"], w, h)
        over_photo = _server_layers(payloads[record], everything, _plain_tile(payloads[record]))
        assert np.abs(whole - over_photo).mean() < 8, record
        assert np.abs(whole - _server_tile(payloads[record])).mean() < 16, record
    page.close()


# A browser without workers, and one whose worker cannot load (it fails as a module worker
# whose script is refused does).
NO_WORKERS = "window.Worker = undefined;"
BROKEN_WORKER = """window.Worker = class extends EventTarget {
  constructor() {
    super();
    setTimeout(() => this.onerror && this.onerror(new ErrorEvent('error')), 200);
  }
  postMessage() {}
  terminate() {}
};"""


def test_the_pngs_are_read_by_a_worker_and_by_the_page_alike(server: str, browser: Any) -> None:
    """The page's PNGs are read on a thread of their own (a worker: this module loaded as
    one); without one (no workers, or one that fails to load after it was asked), the page
    reads them itself: the same pixels in every tile, and no error."""
    page = _open(browser, server)
    loaded = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    workers = [w.url for w in page.workers]
    assert len(workers) == 1 and workers[0] in loaded, (workers, loaded)  # the element's module
    read = {r: page.evaluate(READ_TILE, [r]) for r in range(LAYERED)}
    no_errors(page)
    page.close()
    for init in (NO_WORKERS, BROKEN_WORKER):
        other = _open(browser, server, init)
        assert other.workers == []
        for r in range(LAYERED):
            got = other.evaluate(READ_TILE, [r])
            assert (got["w"], got["h"], got["by"]) == (read[r]["w"], read[r]["h"], "canvas")
            assert got["layers"] == read[r]["layers"], (init, r)
        no_errors(other)
        other.close()


def test_the_next_page_s_layers_are_drawn_ahead_and_n_shows_them_drawn(
    root: Path, server: str, browser: Any
) -> None:
    """The next page's layers are drawn while this page is looked at, each into a picture (a
    page of pictures is painted as its photographs are; a page of canvases is 100 layers for
    the compositor): N shows them drawn at once (in the same task as the key), the very
    pixels a canvas drawn in place shows, and the layers the server draws."""
    first = [G.pascal(seed) for seed in range(10)]  # a page of 10 with boxes only
    layered = [every_layer(seed) for seed in range(10, 13)]
    G.write(root / "ahead.tfrecord", first + layered)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{server}/gallery?file=ahead.tfrecord&size=10")
    grid = page.locator(".tfb-gallery")
    from playwright.sync_api import expect

    expect(page.locator(f"{TILES}[data-record]")).to_have_count(10, timeout=60_000)
    # The next page's three tiles with layers, drawn ahead (off the page).
    expect(grid).to_have_attribute("data-ahead", "3", timeout=60_000)
    settled(page)
    page.get_by_role("heading", name="Gallery").click()  # the keys go to the page
    states = page.evaluate(
        """() => {
          document.dispatchEvent(new KeyboardEvent('keydown', {key: 'n', bubbles: true}));
          return [...document.querySelectorAll('.tfb-gallery .tfb-tile[data-record]')]
            .map(t => [t.dataset.record, t.dataset.layers || '']);
        }"""
    )
    assert states == [["10", "drawn"], ["11", "drawn"], ["12", "drawn"]]
    ahead = {n: page.evaluate(READ_TILE, [n]) for n in (10, 11, 12)}
    assert {n: got["by"] for n, got in ahead.items()} == {10: "img", 11: "img", 12: "img"}
    settled(page)
    no_errors(page)
    shot(page, "gallery-layers-ahead.png")
    page.close()
    # The very pixels of the page opened there (its canvases drawn in place), and close to
    # the server's drawing (captions are in another font).
    again = browser.new_page(viewport={"width": 1440, "height": 900})
    again.goto(f"{server}/gallery?file=ahead.tfrecord&size=10&record=10")
    tiles = again.locator(f"{TILES}[data-record]")

    def drawn() -> None:
        states = tiles.evaluate_all("ts => ts.map(t => t.dataset.layers || '')")
        assert states == ["drawn"] * 3, states

    until(drawn, timeout=60, what="the page's layers drawn in place")
    everything = L.LayerOptions()
    for n, payload in zip((10, 11, 12), layered):
        got = again.evaluate(READ_TILE, [n])
        assert got["by"] == "canvas", n
        w, h = got["w"], got["h"]
        assert (ahead[n]["w"], ahead[n]["h"]) == (w, h)
        assert ahead[n]["layers"] == got["layers"], n
        black = Image.new("RGB", (w, h))
        diff = np.abs(_rgb(got["layers"], w, h) - _server_layers(payload, everything, black))
        assert diff.max(axis=2).mean() < 10, (n, diff.mean())
    again.close()


def test_float_masks_keep_the_server_drawing_and_boxes_alone_look_the_same(
    server: str, browser: Any
) -> None:
    payloads = _payloads()
    page = _open(browser, server)
    # The float-mask tile is the server's drawing itself, masks and all.
    src = page.locator(f'{TILES}[data-record="{FLOAT}"] img').get_attribute("src")
    assert src
    data = base64.b64decode(page.evaluate(FETCH, src))
    want = P.thumbnail(ex.decode(payloads[FLOAT], "auto"), TILE, True, captions=True)
    assert want is not None and data == want.data
    plain = P.thumbnail(ex.decode(payloads[FLOAT], "auto"), TILE, False)
    assert plain is not None and data != plain.data  # its layers are in it
    # Boxes alone: drawn by the browser over the photograph as the server draws them.
    got = page.evaluate(READ_TILE, [BOXES])
    w, h = got["w"], got["h"]
    mine = _rgb(got["layers"], w, h)
    theirs = _server_layers(payloads[BOXES], L.LayerOptions(), Image.new("RGB", (w, h)))
    diff = np.abs(mine - theirs).max(axis=2)
    lines = theirs.max(axis=2) > 0
    assert lines.sum() > 100
    assert diff.mean() < 4 and (diff > 40).mean() < 0.03, diff.mean()
    whole = _rgb(got["whole"], w, h)
    over_photo = _server_layers(payloads[BOXES], L.LayerOptions(), _plain_tile(payloads[BOXES]))
    assert np.abs(whole - over_photo).mean() < 4
    assert np.abs(whole - _server_tile(payloads[BOXES])).mean() < 8
    no_errors(page)
    page.close()


def _class_values_at_tile(payload: bytes, w: int, h: int) -> np.ndarray:
    """The record's class map sampled at the tile's pixels as the server samples it."""
    feats = ex.decode(payload, "auto").features
    data = feats["image/segmentation/class/encoded"].values[0]
    values = np.asarray(Image.open(io.BytesIO(data)))
    mh, mw = values.shape
    rows = np.floor((np.arange(h) + 0.5) * mh / h).astype(int)
    cols = np.floor((np.arange(w) + 0.5) * mw / w).astype(int)
    return values[rows][:, cols]  # type: ignore[no-any-return]


def _below(
    payload: bytes, options: L.LayerOptions, w: int, h: int
) -> list[tuple[int, int, int, int]]:
    """The boxes (tile pixels) of the record's predictions scoring under the threshold."""
    feats = ex.decode(payload, "auto").features
    scores = list(feats["image/detection/score"].values)
    coords = [
        list(feats[f"image/detection/bbox/{k}"].values) for k in ("xmin", "ymin", "xmax", "ymax")
    ]
    out = []
    for i, s in enumerate(scores):
        if s < options.score_threshold:
            x0, y0, x1, y1 = (c[i] for c in coords)
            out.append((int(x0 * w), int(y0 * h), int(x1 * w), int(y1 * h)))
    assert out, "the records have predictions under the threshold"
    return out


def _outline(x0: int, y0: int, x1: int, y1: int, w: int, h: int) -> np.ndarray:
    out = np.zeros((h, w), dtype=bool)
    x0, x1 = max(0, x0), min(w - 1, x1)
    y0, y1 = max(0, y0), min(h - 1, y1)
    if x1 <= x0 or y1 <= y0:
        return out
    out[y0, x0 : x1 + 1] = out[y1, x0 : x1 + 1] = True
    out[y0 : y1 + 1, x0] = out[y0 : y1 + 1, x1] = True
    return out


def test_a_pack_that_cannot_be_fetched_marks_its_tiles_failed_and_the_pictures_show(
    server: str, browser: Any
) -> None:
    """The page's layer PNGs come in one pack (one request, ``.zip``): when it cannot be
    fetched, every tile whose layers need it says so (``data-layers="failed"``) and still
    shows its picture; a tile whose layers need no PNG (boxes only) is drawn."""
    import re

    page = browser.new_page(viewport={"width": 1440, "height": 900})
    packs: list[str] = []

    def refuse(route: Any) -> None:
        packs.append(route.request.url)
        route.abort()

    page.route(re.compile(r"/media/[^/?#]+\.zip$"), refuse)
    page.goto(f"{server}/gallery?file=every.tfrecord")
    tiles = page.locator(f"{TILES}[data-record]")

    def failed() -> None:
        states = tiles.evaluate_all("ts => ts.map(t => t.dataset.layers || '')")
        assert states == ["failed"] * LAYERED + ["", "drawn"], states
        assert page.locator(f"{TILES} img").evaluate_all(
            "is => is.length === 6 && is.every(i => i.complete && i.naturalWidth > 0)"
        )

    until(failed, timeout=60, what="the layered tiles marked failed, every picture shown")
    # And each says so on its picture.
    notes = tiles.evaluate_all(
        "ts => ts.map(t => getComputedStyle(t.querySelector('.tfb-pic'), '::after').content)"
    )
    assert notes == ['"some layers could not be read"'] * LAYERED + ["none", "none"], notes
    assert packs and len(set(packs)) == 1  # one pack for the page, asked for again, not per PNG
    shot(page, "gallery-layers-pack-failed.png")
    page.close()
