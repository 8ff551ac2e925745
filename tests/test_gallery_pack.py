"""A gallery page's layer PNGs in one pack (:func:`browser_app.view.gallery.layer_pack`): the
server lays the stored bytes end to end (never decoding one), the browser fetches the pack
once and reads each PNG's values itself (``assets/gallery.js``: ``pngValues``, run here in
Node) at the very pixels the server samples. Drawing them in Chromium, and a pack that cannot
be fetched: tests/test_e2e_gallery_layers.py."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import random
import shutil
import subprocess
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from benchmarks.bench_layers import record as every_layer
from browser_app.ui.components import gallery as g
from browser_app.view import pictures as P
from browser_app.view.gallery import PACK_MAGIC, layer_pack
from codec import example as ex
from codec import png

JS = Path(g.__file__).parent / "assets" / "gallery.js"


def _unpack(data: bytes, parts: Any) -> list[list[bytes]]:
    return [[data[o : o + n] for o, n in tile] for tile in parts]


def test_a_pack_holds_each_png_once_at_the_offsets_it_gives() -> None:
    a, b, c = b"\x89PNG a", b"\x89PNG bb", b"\x89PNG ccc"
    tiles = [[a, b], [], [b, c, a], [c]]
    pack = layer_pack(tiles)
    assert pack is not None
    assert _unpack(pack.data, pack.parts) == tiles  # offsets round-trip
    assert pack.parts[1] == ()
    assert pack.data.startswith(PACK_MAGIC)
    # A ZIP archive any tool reads: the digest's entry, then each PNG once, stored as it is.
    with zipfile.ZipFile(io.BytesIO(pack.data)) as z:
        assert z.testzip() is None  # every entry's CRC checks
        infos = z.infolist()
        assert [i.filename for i in infos] == [
            hashlib.blake2b(a + b + c, digest_size=16).hexdigest(),
            "0.png",
            "1.png",
            "2.png",
        ]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        assert [z.read(i) for i in infos[1:]] == [a, b, c]
    assert layer_pack([[], []]) is None and layer_pack([]) is None
    assert layer_pack(tiles) == pack  # the same PNGs, the same bytes (and the same URL)


def test_packs_that_differ_differ_in_their_first_bytes() -> None:
    """Streamlit names a media file over 1 MiB by its length, head, middle and tail only: two
    packs of one length differing elsewhere must still differ at their head (the digest)."""
    rng = random.Random(5)
    big = [bytes(rng.randrange(256) for _ in range(1000)) for _ in range(3)]
    one = layer_pack([[big[0] + b"x" * 600_000 + big[1]]])
    two = layer_pack([[big[0] + b"y" * 600_000 + big[1]]])
    assert one is not None and two is not None and len(one.data) == len(two.data)
    assert one.data[:64] != two.data[:64]


def test_a_page_pack_is_built_without_decoding_a_png(monkeypatch: pytest.MonkeyPatch) -> None:
    payloads = [every_layer(seed) for seed in range(3)]

    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a mask or a class map was decoded")

    opened = Image.open

    def only_photos(fp: Any, *a: Any, **k: Any) -> Image.Image:
        img = opened(fp, *a, **k)
        if img.format == "PNG":
            refuse()
        return img

    monkeypatch.setattr(png, "nonzero_part", refuse)
    monkeypatch.setattr(png, "values", refuse)
    monkeypatch.setattr(Image, "open", only_photos)
    thumbs = [
        P.thumbnail(ex.decode(p, "auto"), 160, True, captions=True, in_browser=True)
        for p in payloads
    ]
    blobs = [t.blobs for t in thumbs if t is not None]
    assert all(len(b) == 11 for b in blobs)  # 10 masks and the class map, each
    pack = layer_pack(blobs)
    assert pack is not None
    assert _unpack(pack.data, pack.parts) == [list(b) for b in blobs]
    for p, t in zip(payloads, thumbs):
        feats = ex.decode(p, "auto").features
        assert t is not None and set(t.blobs) == {
            *feats["image/object/mask"].values,
            *feats["image/segmentation/class/encoded"].values,
        }


# -- the browser's reading of a PNG (Node) ------------------------------------------------------

_NODE = """
import {{ pngValues }} from {module};
import {{ readFileSync }} from "fs";
const cases = JSON.parse(readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map(([b64, w, h, fw, fh]) => {{
  let got;
  try {{
    got = pngValues(new Uint8Array(Buffer.from(b64, "base64")), w, h, fw, fh);
  }} catch (e) {{
    return "error";
  }}
  if (got === undefined) return "browser";
  if (got === null) return null;
  return [got.x, got.y, got.cw, got.ch, Buffer.from(got.values).toString("base64")];
}})));
"""


def _in_node(script: str, data: Any, why: str) -> Any:
    """What ``script`` (a module importing ``gallery.js`` as ``{module}``) prints, as JSON,
    given ``data`` as JSON on its standard input."""
    node = shutil.which("node")
    if node is None:
        pytest.skip(f"Node.js is not installed: {why}")
    out = subprocess.run(
        [node, "--input-type=module", "-e", script.format(module=json.dumps(JS.as_uri()))],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def _read_in_node(cases: list[tuple[bytes, int, int, int, int]]) -> list[Any]:
    data = [[base64.b64encode(d).decode(), *rest] for d, *rest in cases]
    return list(_in_node(_NODE, data, "the PNGs are read in Chromium's test"))


def _tile(got: Any, w: int, h: int) -> np.ndarray:
    out = np.zeros((h, w), dtype=np.uint8)
    if got is None:
        return out
    x, y, cw, ch, b64 = got
    out[y : y + ch, x : x + cw] = np.frombuffer(base64.b64decode(b64), np.uint8).reshape(ch, cw)
    return out


def _server_sampled(data: bytes, w: int, h: int, fw: int, fh: int) -> np.ndarray:
    """The PNG's values under each tile pixel as the server samples them
    (codec.layers._draw_masks: the picture's coordinate at each pixel's centre)."""
    img = Image.open(io.BytesIO(data))
    a = np.asarray(img)
    if a.ndim == 3:
        a = (a.max(axis=2) > 0).astype(np.uint8)
    a = a.astype(np.uint8)
    mh, mw = a.shape
    xs = (np.arange(w, dtype=np.float64) + 0.5) / (w / fw)
    ys = (np.arange(h, dtype=np.float64) + 0.5) / (h / fh)
    cols = np.floor(xs * (mw / fw)).astype(np.int64)
    rows = np.floor(ys * (mh / fh)).astype(np.int64)
    return a[rows][:, cols]  # type: ignore[no-any-return]


def _png(img: Image.Image, **kw: Any) -> bytes:
    out = io.BytesIO()
    img.save(out, format="PNG", **kw)
    return out.getvalue()


def _cases() -> list[tuple[str, bytes, int, int, int, int]]:
    feats = ex.decode(every_layer(4), "auto").features
    masks = [bytes(m) for m in feats["image/object/mask"].values]
    class_map = bytes(feats["image/segmentation/class/encoded"].values[0])
    m = np.asarray(Image.open(io.BytesIO(masks[0])))
    cmap = np.asarray(Image.open(io.BytesIO(class_map)))
    rng = np.random.default_rng(3)
    noise = rng.integers(0, 256, (97, 131), dtype=np.uint8)
    blobs = (rng.random((480, 640)) < 0.02).astype(np.uint8)
    out = [(f"mask {i}", d, 160, 120, 640, 480) for i, d in enumerate(masks)]
    out += [
        ("class map", class_map, 160, 120, 640, 480),
        ("class map, Large tiles", class_map, 224, 168, 640, 480),
        ("mask, Dense tiles", masks[1], 96, 72, 640, 480),
        ("1-bit", _png(Image.fromarray(m > 0).convert("1")), 160, 120, 640, 480),
        ("RGB", _png(Image.fromarray(np.stack([m * 200, m * 0, m * 0], -1))), 160, 120, 640, 480),
        (
            "palette 4-bit",
            _png(Image.fromarray(cmap % 16).convert("P"), bits=4),
            160,
            120,
            640,
            480,
        ),
        ("half size", _png(Image.fromarray(m * 5).resize((320, 240))), 160, 120, 640, 480),
        ("noise, every filter", _png(Image.fromarray(noise)), 100, 75, 131, 97),
        ("noise, stored", _png(Image.fromarray(noise), compress_level=0), 100, 75, 131, 97),
        ("noise, fixed codes", _png(Image.fromarray(noise), compress_level=1), 50, 40, 131, 97),
        ("scattered pixels", _png(Image.fromarray(blobs)), 160, 120, 640, 480),
        ("empty", _png(Image.new("L", (640, 480))), 160, 120, 640, 480),
        ("larger tile", _png(Image.fromarray(noise)), 262, 194, 131, 97),
    ]
    return out


def test_the_browser_reads_a_png_s_values_as_the_server_samples_them() -> None:
    cases = _cases()
    got = _read_in_node([c[1:] for c in cases])
    for (name, data, w, h, fw, fh), mine in zip(cases, got):
        assert mine not in ("error", "browser"), name
        want = _server_sampled(data, w, h, fw, fh)
        tile = _tile(mine, w, h)
        if name == "1-bit":
            tile, want = tile > 0, want > 0  # a mask: only "not 0" is read
        assert np.array_equal(tile, want), (name, int((tile != want).sum()))
        if mine is not None:  # the part is the one that holds every value other than 0
            x, y, cw, ch, _ = mine
            assert tile[y, x : x + cw].any() and tile[y + ch - 1, x : x + cw].any(), name
            assert tile[y : y + ch, x].any() and tile[y : y + ch, x + cw - 1].any(), name
        else:
            assert not want.any(), name


def test_what_the_browser_cannot_read_here_is_left_to_its_decoder_or_fails() -> None:
    m = (np.random.default_rng(1).random((48, 64)) < 0.3).astype(np.uint8)
    good = _png(Image.fromarray(m))
    interlaced = _interlaced(m)
    damaged = bytearray(good)
    idat = good.index(b"IDAT")
    damaged[idat + 4 : idat + 40] = bytes(36)  # the zlib stream broken (CRCs not checked here)
    grey16 = _png(Image.fromarray(m.astype(np.uint16) * 300))
    got = _read_in_node(
        [(interlaced, 16, 12, 64, 48), (bytes(damaged), 16, 12, 64, 48), (grey16, 16, 12, 64, 48)]
    )
    assert got == ["browser", "error", "browser"]


def _interlaced(values: np.ndarray) -> bytes:
    """An Adam7-interlaced 8-bit grey PNG (Pillow does not write them): its header alone is
    read here before the browser's decoder is handed it."""
    h, w = values.shape
    raw = b"".join(b"\x00" + values[y].tobytes() for y in range(h))  # not really interlaced
    head = (w).to_bytes(4, "big") + (h).to_bytes(4, "big") + bytes([8, 0, 0, 0, 1])

    def chunk(name: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(name + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + name + body + crc

    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


# -- generated PNGs: every filter on any row, every kind of copy in the stream -----------------


def _paeth(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    a, b, c = (x.astype(np.int16) for x in (a, b, c))
    p = a + b - c
    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
    return np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))


def _encoded(rows: np.ndarray, bpp: int, filters: list[int], level: int, strategy: int) -> bytes:
    """Packed rows (one byte array per row) filtered with the given filter type per row (PNG's
    rules, the bytes ``bpp`` to the left), compressed at ``level`` with ``strategy``."""
    out = []
    prev = np.zeros(rows.shape[1], np.uint8)
    for line, f in zip(rows, filters):
        a = np.concatenate([np.zeros(bpp, np.uint8), line[:-bpp]])
        c = np.concatenate([np.zeros(bpp, np.uint8), prev[:-bpp]])
        pred = [
            np.zeros_like(line, dtype=np.int16),
            a.astype(np.int16),
            prev.astype(np.int16),
            (a.astype(np.int16) + prev) // 2,
            _paeth(a, prev, c),
        ][f]
        out.append(bytes([f]) + ((line.astype(np.int16) - pred) & 255).astype(np.uint8).tobytes())
        prev = line
    z = zlib.compressobj(level, zlib.DEFLATED, 15, 9, strategy)
    return z.compress(b"".join(out)) + z.flush()


def _generated_png(rng: np.random.Generator) -> tuple[str, bytes, np.ndarray]:
    """A PNG of one of the kinds the browser reads (8-bit grey, RGB, palette of 1, 2, 4 or 8
    bits), its values blocky, striped, noisy or a mix, each row filtered at random; with the
    values the server reads from it."""
    mh, mw = (int(x) for x in rng.integers(1, 200, 2))
    kind = str(rng.choice(["grey", "rgb", "p1", "p2", "p4", "p8"]))
    depth = 8 if kind in ("grey", "rgb") else int(kind[1:])
    top = 255 if depth == 8 else (1 << depth) - 1
    v = np.zeros((mh, mw), np.uint8)
    for _ in range(int(rng.integers(0, 8))):  # blocks
        y0, x0 = int(rng.integers(0, mh)), int(rng.integers(0, mw))
        v[y0 : y0 + int(rng.integers(1, mh + 1)), x0 : x0 + int(rng.integers(1, mw + 1))] = (
            rng.integers(0, top + 1)
        )
    if rng.random() < 0.3:  # stripes: repeats at short distances
        period = int(rng.integers(1, 9))
        v[:, ::period] = rng.integers(0, top + 1)
    if rng.random() < 0.3:  # noise in a corner
        y, x = int(rng.integers(0, mh)), int(rng.integers(0, mw))
        v[y:, x:] = rng.integers(0, top + 1, (mh - y, mw - x))
    if kind == "rgb":
        pix = np.stack([v, v // 2, (v > 0).astype(np.uint8) * 7], -1)
        rows, bpp = pix.reshape(mh, mw * 3), 3
        want = (v > 0).astype(np.uint8)
    elif depth == 8:
        rows, bpp, want = v, 1, v
    else:
        per = 8 // depth
        padded = np.zeros((mh, -(-mw // per) * per), np.uint8)
        padded[:, :mw] = v
        shifts = (8 - depth * (np.arange(per) + 1)).astype(np.uint8)
        rows = (padded.reshape(mh, -1, per) << shifts).sum(axis=2).astype(np.uint8)
        bpp, want = 1, v
    filters = [int(f) for f in rng.integers(0, 5, mh)]
    level = int(rng.integers(0, 10))
    strategy = int(rng.choice([zlib.Z_DEFAULT_STRATEGY, zlib.Z_FILTERED, zlib.Z_RLE]))
    data = _encoded(rows, bpp, filters, level, strategy)
    colour = 2 if kind == "rgb" else 0 if kind == "grey" else 3
    head = mw.to_bytes(4, "big") + mh.to_bytes(4, "big") + bytes([depth, colour, 0, 0, 0])

    def chunk(name: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(name + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + name + body + crc

    greys = bytes(i for i in range(1 << depth) for _ in range(3))  # index i is grey i
    plte = chunk(b"PLTE", greys) if colour == 3 else b""
    cut = int(rng.integers(1, len(data) + 1))  # the stream in one IDAT chunk or two
    png_bytes = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", head)
        + plte
        + chunk(b"IDAT", data[:cut])
        + (chunk(b"IDAT", data[cut:]) if cut < len(data) else b"")
        + chunk(b"IEND", b"")
    )
    name = f"{kind} {mw}×{mh}, level {level}, strategy {strategy}"
    return name, png_bytes, want


def test_generated_pngs_read_in_the_browser_as_the_server_samples_them() -> None:
    rng = np.random.default_rng(2026)
    cases = []
    for _ in range(120):
        name, data, want = _generated_png(rng)
        mh, mw = want.shape
        w, h = int(rng.integers(1, 240)), int(rng.integers(1, 180))
        cases.append((name, data, want, w, h, mw, mh))
    got = _read_in_node([(d, w, h, fw, fh) for _, d, _, w, h, fw, fh in cases])
    for (name, data, want, w, h, fw, fh), mine in zip(cases, got):
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(data)).convert("L")) > 0, want > 0)
        rows = np.floor((np.arange(h) + 0.5) / (h / fh)).astype(np.int64)
        cols = np.floor((np.arange(w) + 0.5) / (w / fw)).astype(np.int64)
        expected = want[rows][:, cols]
        assert mine not in ("error", "browser"), name
        tile = _tile(mine, w, h)
        assert np.array_equal(tile, expected), (name, w, h, int((tile != expected).sum()))


_STREAMED = """
import {{ pngBytes }} from {module};
import {{ readFileSync }} from "fs";
const input = JSON.parse(readFileSync(0, "utf8"));
const pack = Uint8Array.from(Buffer.from(input.pack, "base64"));
let fetched = 0;
let serve = null;  // how the next fetch answers: (url) -> Response
globalThis.fetch = async (url) => {{ fetched++; return serve(url); }};
// A body that comes in pieces of 1 to 5,000 bytes (a seeded sequence), cut short or not.
function body(bytes, seed) {{
  let at = 0, s = seed;
  return new ReadableStream({{
    pull(c) {{
      if (at >= bytes.length) return c.close();
      s = (s * 1103515245 + 12345) % 2147483648;
      const n = 1 + (s % 5000);
      c.enqueue(bytes.slice(at, at + n));
      at += n;
    }},
  }});
}}
const response = (bytes, headers, seed = 7) =>
  new Response(body(bytes, seed), {{ status: 200, headers }});
const hex = (b) => Buffer.from(b).toString("base64");
const out = {{}};
const parts = input.parts;
let n = 0;
async function read(name, make, at = parts) {{
  serve = make;
  const url = `http://127.0.0.1/p${{n++}}.zip`;
  const got = await Promise.allSettled(at.map(([o, l]) => pngBytes(`${{url}}#at=${{o}},${{l}}`)));
  const said = (g) => (g.status === "fulfilled" ? hex(g.value) : "error: " + g.reason.message);
  out[name] = got.map(said);
}}
const whole = {{ "content-length": String(pack.length) }};
await read("streamed", () => response(pack, whole));
await read("streamed again", () => response(pack, whole, 99));
await read("encoded", () => response(pack, {{ "content-encoding": "gzip" }}));
const last = parts[parts.length - 1];
const lastEnd = last[0] + last[1];  // the pack's PNGs end there (its ZIP directory follows)
await read("short", () => response(pack.slice(0, lastEnd - 10), whole));
await read("long", () => response(pack, {{ "content-length": String(lastEnd) }}));
const bad = pack.slice(); bad[0] = 0x50; bad[2] = 0x4e;
await read("not a pack", () => response(bad, whole));
await read("too large", () => response(pack, {{ "content-length": String(2 ** 31) }}));
// A pack that failed is fetched again when next asked; one that came is not.
fetched = 0;
serve = () => response(pack, whole);
const url = "http://127.0.0.1/again.zip";
const [o, l] = parts[0];
await pngBytes(`${{url}}#at=${{o}},${{l}}`);
await pngBytes(`${{url}}#at=${{o}},${{l}}`);
out.fetched = fetched;
console.log(JSON.stringify(out));
"""


def test_a_pack_is_read_as_it_comes_and_a_bad_one_refused() -> None:
    """The browser reads a page's pack as it arrives (a PNG is read once its bytes are in,
    not once the whole pack is): each PNG's bytes are the pack's at its offset, whatever
    pieces the body comes in; a pack said to be compressed is read whole; one cut short, one
    longer than its length says, one that is not a ZIP archive, and one said to be larger
    than a pack may be (nothing allocated for it) are refused with the reason."""
    pngs = [
        [b for b in ex.decode(every_layer(seed)).features["image/object/mask"].values[:3]]
        for seed in range(4)
    ]
    pack = layer_pack(pngs)
    assert pack is not None
    parts = [p for tile in pack.parts for p in tile]
    want = [base64.b64encode(pack.data[o : o + n]).decode() for o, n in parts]
    data = {"pack": base64.b64encode(pack.data).decode(), "parts": parts}
    got = _in_node(_STREAMED, data, "the pack is read in Chromium's tests")
    assert got["streamed"] == want
    assert got["streamed again"] == want
    assert got["encoded"] == want
    # Cut short in its last PNG: that PNG never comes whole, and the reason is given; the
    # PNGs before it were read as they came.
    assert got["short"][-1] == "error: http://127.0.0.1/p3.zip: shorter than said"
    assert got["short"][0] == want[0]
    # Longer than its length says (which ends with the last PNG): refused there.
    assert got["long"][-1] == "error: http://127.0.0.1/p4.zip: longer than said"
    assert all(x.endswith("is not a pack of PNGs") for x in got["not a pack"])
    assert all(x.endswith("bytes is too large") for x in got["too large"])
    assert got["fetched"] == 1
