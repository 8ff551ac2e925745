// The gallery grid of tfrecord-browser, drawn in the browser (Streamlit Components v2).
//
// Python sends a page of tiles (and the next page's, to show at once and whose pictures are
// fetched ahead); everything on screen is drawn here: tiles, captions, badges, marks, the
// focus ring. Text from the data is only ever set with textContent or as an attribute value.
//
// Moving the focus (arrows, J/K) happens here without a run of the script. Marks (P/F, the
// tile buttons), page turns (N/B, or a move past the page's end) and opening a record (Enter,
// a click) are actions: each gets a sequence number, joins a queue, and the whole queue of
// actions not yet acknowledged goes to Python as the trigger value "act" (so an action lost
// between two runs is sent again, and Python applies each number once), once the app's run
// is over (see appBusy). Python writes the
// journal, then acknowledges the number it applied; until then a mark shows as pending.
// The focus is the state value "focus", told to Python with every action, and before a
// pointer goes down on another widget of the page (its run then knows it); a move alone
// sends nothing.
//
// Where the server has the marks route (data.mark: its URL and this session's token), a mark
// passed or flagged is posted there first, one post at a time in the order made, and only
// while every mark before it in the queue was saved there (else the journal would not keep
// the order the marks were made in): the route writes the journal line and answers, and the
// tile leaves its pending state at once. The queue goes to Python once no post is under way
// (Python sees the route wrote the mark and does not write it again). A mark the route
// refused or could not reach, and a cleared mark, go to Python as before. Nothing else is
// ever posted; the token is never put in the page.
//
// The host element (class tfb-gallery) says what is shown, for tests and benchmarks:
// data-focus (the focused record), data-page (the position of the page's first tile),
// data-rev (one more each time data from Python is applied); each tile (class tfb-tile) has
// data-record (absent for a tile without record), data-mark (passed, flagged or ""),
// data-pending="1" while a mark typed is not yet confirmed, and data-layers ("drawing",
// "drawn" or "failed") when its layers are drawn here over its picture (see below); the host's
// data-ahead counts the pictures of the next page's layers drawn ahead, off the page.

const MARK_ICONS = { passed: "\u2713", flagged: "\u2691" };
// Actions not acknowledged this long after they were sent are sent again (then twice as
// long, up to the cap): a message lost between two runs costs a wait, never an action.
const RESEND_MS = 4000;
const RESEND_CAP_MS = 30000;
const DETACHED_MS = 5000; // keys typed this soon after the element went away wait for it
const BUSY_WAIT_MS = 3000; // how long a message waits for the app's run to end, at most
const SETTLED_MS = 250; // data older than this, and no run going: the page's widgets are set
const POST_MS = 10000; // a mark the route has not answered by then goes to Python

/** Whether the app is running its script (a message sent now would carry the values some
 * widgets had before that run set theirs: a stale "Go to record" would move the page). */
function appBusy() {
  const app = document.querySelector('[data-testid="stApp"]');
  const s = app ? app.getAttribute("data-test-script-state") : null;
  return s === "running" || s === "rerunRequested";
}
const KEYS = {
  ArrowLeft: ["move", -1],
  ArrowRight: ["move", 1],
  k: ["move", -1],
  j: ["move", 1],
  ArrowUp: ["row", -1],
  ArrowDown: ["row", 1],
  p: ["mark", "passed"],
  f: ["mark", "flagged"],
  n: ["page", 1],
  b: ["page", -1],
  Enter: ["open", 0],
};
// Where a key is typing, not a command.
const TEXT_ENTRY =
  'input, textarea, select, [contenteditable]:not([contenteditable="false"]),' +
  ' [role="textbox"], [role="combobox"], [role="spinbutton"], [role="slider"],' +
  ' [role="listbox"], [role="option"], [role="menu"], [role="menuitem"]';
// Where Enter presses what has the keyboard focus.
const PRESSABLE = 'button, a[href], summary, [role="button"], [role="link"], [role="tab"]';

/** Where a move of `step` tiles from record `current` lands among `records` (a page's
 * tiles in order; null for a tile without record, which is stepped over): [position,
 * overflow], overflow -1 / +1 when the move leaves the page (the position is then -1). */
export function moveTarget(records, current, step) {
  const positions = [];
  records.forEach((r, i) => {
    if (r !== null && r !== undefined) positions.push(i);
  });
  if (!positions.length) return [-1, step > 0 ? 1 : -1];
  const here = records.indexOf(current);
  let target = (here >= 0 ? here : positions[0]) + step;
  while (target >= 0 && target < records.length && records[target] == null) {
    target += step > 0 ? 1 : -1;
  }
  if (target < 0) return [-1, -1];
  if (target >= records.length) return [-1, 1];
  return [target, 0];
}

/** The mark a record shows: the last one queued for it (pending, unless the marks route
 * saved it) or the saved one. */
export function shownMark(queue, record, saved) {
  for (let i = queue.length - 1; i >= 0; i--) {
    const a = queue[i];
    if (a.kind === "mark" && a.record === record) return [a.status || "", !a.saved];
  }
  return [saved || "", false];
}

/** Whether the mark `a` can go to the marks route: passed or flagged on a record it names
 * by number, with every mark before it in `queue` saved there already (or, `posting`
 * true, being posted there: the posts go one after the other, each asking again). */
export function routable(a, route, queue, posting = false) {
  if (!route || typeof route.url !== "string" || typeof route.token !== "string") return false;
  if (a.kind !== "mark" || (a.status !== "passed" && a.status !== "flagged")) return false;
  if (!Number.isInteger(a.record) || a.record < 0) return false;
  const before = (b) => b !== a && b.seq < a.seq && b.kind === "mark";
  return queue.every((b) => !before(b) || b.saved || (posting && b.posting));
}

/** An action as Python reads it (what the element keeps beside it stays here). */
export function wire(a) {
  const out = {};
  for (const k of ["seq", "kind", "record", "status", "start", "at"]) if (k in a) out[k] = a[k];
  return out;
}

function el(tag, cls, parent) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
}

function records(tiles) {
  return tiles.map((t) => (t.record === null || t.record === undefined ? null : t.record));
}

// -- layers drawn over a tile's picture ---------------------------------------------------------
//
// A tile whose record has layers (Python's codec.layers.browser_overlay) gets a picture of them
// over its photograph (img.tfb-layers, a BMP the size of the photograph's pixels: bmpOf); they
// are drawn on a canvas kept for it as the server draws them
// (codec.layers.draw_layers): class maps and instance masks from their stored PNGs (the page's
// pack of them fetched once from the app's own media URL, their values read as stored — see
// pngValues —, sampled at the tile's size by nearest neighbour, tinted and outlined pixel by
// pixel), predictions dashed, boxes with their captions (text from the data drawn with
// fillText, never as HTML), keypoints. The sampled values of a PNG are kept per address and
// size (the next page's pack is fetched and read ahead). The
// tile says how far it is: data-layers="drawing", "drawn" or "failed" (a PNG that could not
// be read: the rest is drawn).

const SAMPLE_SHIFT = 1 / 256;
const VALUES_KEPT = 2500; // sampled PNGs kept (a page of 100 tiles with 11 PNGs each: 1,100)
const valuesKept = new Map(); // `${address} ${kind} ${size}` -> Promise of a Part (or null)
let scratch = null;
let layerScratch = null; // where a layer's pixels go before they are drawn over the tile's
let keptPixels = null; // the last tile's ImageData of masks or class map, for the next
const AHEAD_KEPT = 400; // pictures of the next page's layers drawn ahead, kept until shown
const AHEAD_WAIT_MS = 10000; // the next page is asked for once this one is shown, or after this

function canvas2d(w, h) {
  const c = document.createElement("canvas");
  c.width = w;
  c.height = h;
  return c;
}

function scratchContext(w, h) {
  if (!scratch) scratch = canvas2d(w, h);
  if (scratch.width !== w) scratch.width = w;
  if (scratch.height !== h) scratch.height = h;
  const ctx = scratch.getContext("2d", { willReadFrequently: true });
  ctx.imageSmoothingEnabled = false;
  ctx.clearRect(0, 0, w, h);
  return ctx;
}

/** The colours of a PNG's PLTE chunk, (r << 16 | g << 8 | b) -> index; null without one. */
export function paletteOf(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8;
  while (pos + 8 <= bytes.length) {
    const length = view.getUint32(pos);
    const name = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    if (name === "PLTE") {
      const out = new Map();
      for (let i = 0; i + 2 < length; i += 3) {
        const at = pos + 8 + i;
        out.set((bytes[at] << 16) | (bytes[at + 1] << 8) | bytes[at + 2], i / 3);
      }
      return out;
    }
    if (name === "IDAT" || name === "IEND") return null;
    pos += 12 + length;
  }
  return null;
}

// The values of a mask or a class map are read here from its stored bytes, which the page's
// pack holds (one request for the page: a ZIP archive of codec's PNGs stored as they are,
// each tile given the address `PACK_URL#at=OFFSET,LENGTH` of each of its PNGs). A PNG of
// instance masks is mostly zeros: a 640×480 one inflates to 300 KB of which a few thousand
// bytes are the object, and a page has 1,000 of them; the browser's own decoder writes every
// pixel in RGBA, then a canvas samples them. So the zlib stream is inflated here, never
// writing a run of zeros (its copies of zeros are skipped; what is not 0 is listed), each row
// the tile shows (and each one its filter reads) is unfiltered in place from the bytes the
// stream holds (sampledRows), and the rows are sampled at the very pixels the server samples
// (codec.layers._draw_masks; `fw` × `fh` is the picture's size). An interlaced PNG is left to
// the browser's decoder (createImageBitmap, sampled on a canvas).

const RAW_KEPT = 1 << 24; // inflated rows up to this size use one buffer, kept all 0
const MAX_SIDE = 1 << 15;
let rawScratch = null;
let rowScratch = null; // the row being unfiltered, and the row above it
let allScratch = null; // a tile's values, all 0 between two PNGs
let neededScratch = null; // which rows of a PNG are unfiltered (sampledRows)

const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
const FAST = 9; // bits looked up at once

/** A canonical Huffman code from code lengths: a table of FAST bits (symbol << 4 | length;
 * 0: longer, decoded bit by bit) and counts/symbols for the longer codes. */
function huffman(lengths) {
  const counts = new Uint16Array(16);
  for (const l of lengths) counts[l]++;
  counts[0] = 0;
  const offs = new Uint16Array(16);
  for (let i = 1; i < 16; i++) offs[i] = offs[i - 1] + counts[i - 1];
  const symbols = new Uint16Array(lengths.length);
  for (let s = 0; s < lengths.length; s++) if (lengths[s]) symbols[offs[lengths[s]]++] = s;
  const fast = new Uint16Array(1 << FAST);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= FAST; len++) {
    for (let i = 0; i < counts[len]; i++, k++, code++) {
      // codes are stored bit-reversed in the stream
      let rev = 0;
      for (let b = 0; b < len; b++) rev |= ((code >> b) & 1) << (len - 1 - b);
      for (let f = rev; f < 1 << FAST; f += 1 << len) fast[f] = (symbols[k] << 4) | len;
    }
    code <<= 1;
  }
  return { counts, symbols, fast };
}

let fixedCodes = null;

/** Inflate the zlib stream `src` into `out` (its exact size: a PNG's filtered rows, which
 * must fill it). `out` is all 0 to begin with, and a run of zeros is never written: what is
 * not 0 is listed as spans [start, end, start, end, …] in order. Throws on a damaged stream. */
export function inflate(src, out) {
  const n = src.length;
  if (n < 2 || (src[0] & 15) !== 8 || ((src[0] << 8) | src[1]) % 31 !== 0 || src[1] & 32) {
    throw new Error("not a zlib stream");
  }
  const size = out.length;
  const spans = [];
  let pos = 2;
  let bits = 0;
  let nbits = 0;
  let op = 0;
  const fill = () => {
    while (nbits <= 24 && pos < n) {
      bits |= src[pos++] << nbits;
      nbits += 8;
    }
  };
  const take = (k) => {
    if (nbits < k) {
      fill();
      if (nbits < k) throw new Error("the stream ends early");
    }
    const v = bits & ((1 << k) - 1);
    bits >>>= k;
    nbits -= k;
    return v;
  };
  const symbol = (h) => {
    if (nbits < 15) fill();
    const e = h.fast[bits & ((1 << FAST) - 1)];
    if (e) {
      const l = e & 15;
      if (l > nbits) throw new Error("the stream ends early");
      bits >>>= l;
      nbits -= l;
      return e >> 4;
    }
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len < 16; len++) {
      if (!nbits) throw new Error("the stream ends early");
      code |= bits & 1;
      bits >>>= 1;
      nbits--;
      const count = h.counts[len];
      if (code - count < first) return h.symbols[index + (code - first)];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    throw new Error("a code that is not in the table");
  };
  const mark = (s, e) => {
    const k = spans.length;
    if (k && spans[k - 1] === s) spans[k - 1] = e;
    else spans.push(s, e);
  };
  let final = 0;
  while (!final) {
    final = take(1);
    const type = take(2);
    if (type === 0) {
      // stored: the bytes left in the bit buffer go back to the input
      const skip = nbits & 7;
      bits >>>= skip;
      nbits -= skip;
      pos -= nbits >> 3;
      bits = 0;
      nbits = 0;
      if (pos + 4 > n) throw new Error("the stream ends early");
      const len = src[pos] | (src[pos + 1] << 8);
      if ((len ^ (src[pos + 2] | (src[pos + 3] << 8))) !== 0xffff) throw new Error("a bad stored block");
      pos += 4;
      if (pos + len > n) throw new Error("the stream ends early");
      if (op + len > size) throw new Error("more data than the picture holds");
      for (let i = 0; i < len; i++) {
        const v = src[pos + i];
        if (v) {
          out[op + i] = v;
          mark(op + i, op + i + 1);
        }
      }
      pos += len;
      op += len;
      continue;
    }
    let lit;
    let dist;
    if (type === 1) {
      if (!fixedCodes) {
        const l = new Uint8Array(288);
        l.fill(8, 0, 144);
        l.fill(9, 144, 256);
        l.fill(7, 256, 280);
        l.fill(8, 280, 288);
        fixedCodes = [huffman(l), huffman(new Uint8Array(30).fill(5))];
      }
      [lit, dist] = fixedCodes;
    } else if (type === 2) {
      const nlit = take(5) + 257;
      const ndist = take(5) + 1;
      const ncl = take(4) + 4;
      if (nlit > 286 || ndist > 30) throw new Error("bad code counts");
      const cl = new Uint8Array(19);
      for (let i = 0; i < ncl; i++) cl[CL_ORDER[i]] = take(3);
      const clh = huffman(cl);
      const lengths = new Uint8Array(nlit + ndist);
      for (let i = 0; i < nlit + ndist; ) {
        const s = symbol(clh);
        if (s < 16) lengths[i++] = s;
        else {
          let v = 0;
          let r;
          if (s === 16) {
            if (!i) throw new Error("a repeat with nothing before");
            v = lengths[i - 1];
            r = 3 + take(2);
          } else if (s === 17) r = 3 + take(3);
          else r = 11 + take(7);
          if (i + r > nlit + ndist) throw new Error("too many lengths");
          lengths.fill(v, i, i + r);
          i += r;
        }
      }
      if (!lengths[256]) throw new Error("no end of block");
      lit = huffman(lengths.subarray(0, nlit));
      dist = huffman(lengths.subarray(nlit));
    } else throw new Error("a bad block type");
    for (;;) {
      let s = symbol(lit);
      if (s < 256) {
        if (op >= size) throw new Error("more data than the picture holds");
        if (s) {
          out[op] = s;
          mark(op, op + 1);
        }
        op++;
        continue;
      }
      if (s === 256) break;
      s -= 257;
      if (s >= 29) throw new Error("a bad length");
      const len = LENGTH_BASE[s] + take(LENGTH_EXTRA[s]);
      const d = symbol(dist);
      if (d >= 30) throw new Error("a bad distance");
      const back = DIST_BASE[d] + take(DIST_EXTRA[d]);
      if (back > op) throw new Error("a distance too far back");
      if (op + len > size) throw new Error("more data than the picture holds");
      const from = op - back;
      const to = from + Math.min(len, back); // the bytes repeated
      // The first span that ends after `from` (spans are in order): looked for from the end,
      // a few steps, then halved.
      let k = spans.length;
      if (k >= 16 && spans[k - 15] > from) {
        let lo = 0;
        let hi = (k >> 1) - 8;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (spans[2 * mid + 1] > from) hi = mid;
          else lo = mid + 1;
        }
        k = 2 * lo;
      } else while (k > 0 && spans[k - 1] > from) k -= 2;
      if (k < spans.length && spans[k] < to) {
        if (back >= len) {
          out.copyWithin(op, from, from + len);
          const last = spans.length;
          for (; k < last && spans[k] < to; k += 2) {
            mark(Math.max(spans[k], from) + back, Math.min(spans[k + 1], to) + back);
          }
        } else {
          // The last `back` bytes repeated: copied in runs that double, each a whole
          // number of repeats.
          if (back === 1) out.fill(out[from], op, op + len);
          else {
            for (let done = 0; done < len; ) {
              const n = Math.min(len - done, back + done);
              out.copyWithin(op + done, from, from + n);
              done += n;
            }
          }
          mark(op, op + len);
        }
      }
      op += len;
    }
  }
  if (op !== size) throw new Error("less data than the picture holds");
  return spans;
}

/** The values of a stored PNG (of the kinds codec.png.browser_values allows) under each pixel
 * of a w × h tile showing a fw × fh picture, sampled as the server samples them (the value
 * under each tile pixel's centre, codec.layers._draw_masks), as the part that holds those
 * other than 0: {x, y, cw, ch, values}; null when every one is 0; undefined for a PNG this
 * reader leaves to the browser's decoder (interlaced). Rows of zeros are never written, and
 * only the rows the tile shows (and those their filters read) are unfiltered. */
export function pngValues(bytes, w, h, fw, fh) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 8;
  let head = null;
  const idat = [];
  let total = 0;
  while (pos + 8 <= bytes.length) {
    const length = view.getUint32(pos);
    const name = view.getUint32(pos + 4);
    if (pos + 12 + length > bytes.length) throw new Error("a chunk past the end");
    if (name === 0x49484452) {
      head = {
        mw: view.getUint32(pos + 8),
        mh: view.getUint32(pos + 12),
        depth: bytes[pos + 16],
        colour: bytes[pos + 17],
        interlace: bytes[pos + 20],
      };
    } else if (name === 0x49444154) {
      idat.push(bytes.subarray(pos + 8, pos + 8 + length));
      total += length;
    } else if (name === 0x49454e44) break;
    pos += 12 + length;
  }
  if (!head) throw new Error("no header");
  if (head.interlace) return undefined;
  const { mw, mh, depth, colour } = head;
  const known = colour === 2 ? depth === 8 : (colour === 0 || colour === 3) && [1, 2, 4, 8].includes(depth);
  if (!known || !mw || !mh || mw > MAX_SIDE || mh > MAX_SIDE) return undefined;
  const channels = colour === 2 ? 3 : 1;
  const bpp = Math.max(1, (channels * depth) >> 3); // bytes a filter looks back
  const rowBytes = Math.ceil((mw * channels * depth) / 8);
  const stride = rowBytes + 1;
  let zdata = idat[0] || new Uint8Array(0);
  if (idat.length > 1) {
    zdata = new Uint8Array(total);
    let at = 0;
    for (const part of idat) {
      zdata.set(part, at);
      at += part.length;
    }
  }
  const size = stride * mh;
  let raw;
  if (size > RAW_KEPT) raw = new Uint8Array(size);
  else {
    if (!rawScratch || rawScratch.length < size) rawScratch = new Uint8Array(Math.max(size, 1 << 16));
    raw = rawScratch.subarray(0, size);
    rawScratch = null; // in use: a damaged PNG (an exception) leaves it, not all 0
  }
  const spans = inflate(zdata, raw);
  try {
    return sampledRows(raw, spans, head, stride, rowBytes, channels, bpp, w, h, fw, fh);
  } finally {
    if (size <= RAW_KEPT) {
      for (let k = 0; k < spans.length; k += 2) raw.fill(0, spans[k], spans[k + 1]);
      rawScratch = new Uint8Array(raw.buffer); // all 0 again, for the next PNG
    }
  }
}

let sampling = null; // the last samplingOf, for the next PNG of the same sizes (a page's are)

/** Where a w × h tile samples a PNG of mw × mh stored for a fw × fh picture, as the server
 * computes it: the source row and column under each tile pixel's centre, the last row a tile
 * pixel falls on, the tile's columns inside the picture (i0..i1) and the first byte of each
 * one's pixel. */
function samplingOf(w, h, fw, fh, mw, mh, depth, channels) {
  const key = `${w} ${h} ${fw} ${fh} ${mw} ${mh} ${depth} ${channels}`;
  if (sampling && sampling.key === key) return sampling;
  const sx = w / fw;
  const sy = h / fh;
  const rows = new Int32Array(h);
  const cols = new Int32Array(w);
  for (let j = 0; j < h; j++) rows[j] = Math.floor(((j + 0.5) / sy) * (mh / fh));
  for (let i = 0; i < w; i++) cols[i] = Math.floor(((i + 0.5) / sx) * (mw / fw));
  let lastRow = -1;
  for (let j = 0; j < h; j++) if (rows[j] < mh && rows[j] > lastRow) lastRow = rows[j];
  let i0 = 0;
  while (i0 < w && cols[i0] < 0) i0++;
  let i1 = w - 1;
  while (i1 >= i0 && cols[i1] >= mw) i1--;
  const firstByte = new Int32Array(w);
  for (let i = i0; i <= i1; i++) firstByte[i] = depth === 8 ? cols[i] * channels : (cols[i] * depth) >> 3;
  sampling = { key, rows, cols, lastRow, i0, i1, firstByte };
  return sampling;
}

/** The tile's values from a PNG's inflated rows (`raw`, what is not 0 in it listed in
 * `spans`): see pngValues. Each row the tile shows, and each row above one worked that it
 * reads through its filter, is unfiltered into one buffer, in place, from the bytes the spans
 * list: a None row is the row's own bytes (the buffer cleared, the spans copied),
 * an Up row adds its bytes other than 0 to the row above (already in the buffer); only Sub,
 * Average and Paeth rows are worked through byte by byte. So the work is what the stream
 * holds, not the picture's size: a mask's rows are mostly 0, or Up rows equal to the row
 * above. The tile's rows are read from the buffer at the columns under its pixels. */
function sampledRows(raw, spans, head, stride, rowBytes, channels, bpp, w, h, fw, fh) {
  const { mw, mh, depth } = head;
  const { rows, cols, lastRow, i0, i1, firstByte } = samplingOf(w, h, fw, fh, mw, mh, depth, channels);
  // The first tile column whose pixel has a byte at or after `b` (i1 + 1: none).
  const columnFrom = (b) => {
    let lo = i0;
    let hi = i1 + 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (firstByte[mid] + (depth === 8 ? channels - 1 : 0) < b) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  if (!rowScratch || rowScratch.length < 2 * rowBytes) rowScratch = new Uint8Array(2 * rowBytes);
  const cur = rowScratch.subarray(0, rowBytes);
  const above = rowScratch.subarray(rowBytes, 2 * rowBytes); // the row above, for Paeth
  cur.fill(0);
  if (!allScratch || allScratch.length < w * h) allScratch = new Uint8Array(w * h);
  const all = allScratch;
  let x0 = w;
  let y0 = h;
  let x1 = -1;
  let y1 = -1;
  let clear = true; // whether the buffer is all 0
  let lo = 0; // the buffer's bytes other than 0 lie in lo..hi (when it is not clear)
  let hi = -1;
  let k = 0; // the first span not wholly before this row
  let j = 0;
  while (j < h && rows[j] < 0) j++;
  // The rows worked: those the tile shows, and each row above one worked that is read
  // through its filter (Up, Average, Paeth); the others are skipped (None and Sub rows read
  // nothing above them).
  if (!neededScratch || neededScratch.length < lastRow + 1) neededScratch = new Uint8Array(lastRow + 1);
  const needed = neededScratch;
  needed.fill(0, 0, lastRow + 1);
  for (let q = j; q < h; q++) if (rows[q] >= 0 && rows[q] <= lastRow) needed[rows[q]] = 1;
  for (let r = lastRow; r > 0; r--) {
    const f = raw[r * stride];
    if (needed[r] && f >= 2 && f <= 4) needed[r - 1] = 1;
  }
  for (let r = 0; r <= lastRow && j < h; r++) {
    const at = r * stride + 1;
    const end = at + rowBytes;
    const f = raw[at - 1];
    if (f > 4) {
      all.fill(0); // left all 0 for the next PNG
      throw new Error(`filter type ${f}`);
    }
    if (!needed[r]) continue;
    while (k < spans.length && spans[k + 1] <= at) k += 2;
    if (f === 0 || f === 2) {
      if (f === 0 && !clear) {
        cur.fill(0, lo, hi + 1);
        clear = true;
      }
      for (let q = k; q < spans.length && spans[q] < end; q += 2) {
        const s = Math.max(spans[q], at);
        const e = Math.min(spans[q + 1], end);
        if (f === 0) cur.set(raw.subarray(s, e), s - at);
        else for (let x = s; x < e; x++) cur[x - at] = (cur[x - at] + raw[x]) & 255;
        if (clear || s - at < lo) lo = s - at;
        if (clear || e - 1 - at > hi) hi = e - 1 - at;
        clear = false;
      }
    } else if (f === 1 && bpp === 1) {
      // Each byte adds to the one before: between the bytes other than 0, the value holds.
      let x = 0;
      let v = 0;
      for (let q = k; q < spans.length && spans[q] < end; q += 2) {
        const s = Math.max(spans[q], at) - at;
        const e = Math.min(spans[q + 1], end) - at;
        if (s > x) cur.fill(v, x, s);
        for (x = s; x < e; x++) {
          v = (v + raw[at + x]) & 255;
          cur[x] = v;
        }
      }
      cur.fill(v, x, rowBytes);
      clear = false;
      lo = 0;
      hi = rowBytes - 1;
    } else if (f === 1) {
      for (let x = 0; x < rowBytes; x++) cur[x] = (raw[at + x] + (x >= bpp ? cur[x - bpp] : 0)) & 255;
      clear = false;
      lo = 0;
      hi = rowBytes - 1;
    } else if (f === 3) {
      for (let x = 0; x < rowBytes; x++) {
        cur[x] = (raw[at + x] + (((x >= bpp ? cur[x - bpp] : 0) + cur[x]) >> 1)) & 255;
      }
      clear = false;
      lo = 0;
      hi = rowBytes - 1;
    } else if (bpp === 1) {
      // Paeth, in place: b (above) is read before it is written over, c carried along.
      let a = 0;
      let c = 0;
      for (let x = 0; x < rowBytes; x++) {
        const b = cur[x];
        const pa = b > c ? b - c : c - b;
        const pb = a > c ? a - c : c - a;
        const d = a + b - 2 * c;
        const pc = d < 0 ? -d : d;
        a = (raw[at + x] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
        cur[x] = a;
        c = b;
      }
      clear = false;
      lo = 0;
      hi = rowBytes - 1;
    } else {
      above.set(cur);
      for (let x = 0; x < rowBytes; x++) {
        const a = x >= bpp ? cur[x - bpp] : 0;
        const b = above[x];
        const c = x >= bpp ? above[x - bpp] : 0;
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        cur[x] = (raw[at + x] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
      }
      clear = false;
      lo = 0;
      hi = rowBytes - 1;
    }
    if (j >= h || rows[j] !== r) continue;
    // The tile columns whose pixels may hold something other than 0.
    const from = clear ? i1 + 1 : columnFrom(lo);
    const to = clear ? i0 - 1 : columnFrom(hi + 1) - 1;
    if (from > to) {
      while (j < h && rows[j] === r) j++;
      continue;
    }
    const o = j * w;
    let first = -1; // the row's first and last tile pixel other than 0
    let last = -1;
    if (depth === 8 && channels === 1) {
      for (let i = from; i <= to; i++) {
        const v = cur[cols[i]];
        if (!v) continue;
        all[o + i] = v;
        if (first < 0) first = i;
        last = i;
      }
    } else {
      for (let i = from; i <= to; i++) {
        const c = cols[i];
        let v;
        if (depth === 8) v = cur[c * 3] | cur[c * 3 + 1] | cur[c * 3 + 2] ? 1 : 0;
        else {
          const bit = c * depth;
          v = (cur[bit >> 3] >> (8 - depth - (bit & 7))) & ((1 << depth) - 1);
        }
        if (!v) continue;
        all[o + i] = v;
        if (first < 0) first = i;
        last = i;
      }
    }
    if (first >= 0) {
      if (first < x0) x0 = first;
      if (last > x1) x1 = last;
      if (j < y0) y0 = j;
    }
    // The tile's other rows on this one (a picture smaller than the tile): the same values.
    for (j++; j < h && rows[j] === r; j++) {
      if (first >= 0) all.copyWithin(j * w + first, o + first, o + last + 1);
    }
    if (first >= 0) y1 = j - 1;
  }
  if (x1 < 0) return null;
  const cw = x1 - x0 + 1;
  const ch = y1 - y0 + 1;
  const values = new Uint8Array(cw * ch);
  for (let y = 0; y < ch; y++) values.set(all.subarray((y0 + y) * w + x0, (y0 + y) * w + x1 + 1), y * cw);
  all.fill(0, y0 * w, (y1 + 1) * w); // all 0 again, for the next PNG
  return { x: x0, y: y0, cw, ch, values };
}

const PACKS_KEPT = 4; // a page's, the next one's, and those just left
const PACK_MAGIC = "PK\x03\x04"; // a ZIP archive of the PNGs, stored (view/gallery.py)
const packs = new Map(); // URL of a pack -> Promise of the pack, read as it comes (packBytes)

const PACK_MAX = 1 << 30; // a pack said to be larger is refused, nothing allocated for it

function checkPack(bytes, url) {
  if (String.fromCharCode(...bytes.subarray(0, PACK_MAGIC.length)) !== PACK_MAGIC) {
    throw new Error(`${url} is not a pack of PNGs`);
  }
}

const wholeUrls = new Map(); // a pack's URL as written -> whole

/** A pack's URL whole (as the worker, whose own URL is another, reads it too): one key per
 * pack however its address is written; worked out once per pack, not per PNG. */
function wholeUrl(url) {
  if (typeof location === "undefined") return url;
  let got = wholeUrls.get(url);
  if (got === undefined) {
    if (wholeUrls.size >= 64) wholeUrls.clear();
    got = new URL(url, location.href).href;
    wholeUrls.set(url, got);
  }
  return got;
}

/** `URL#at=OFFSET,LENGTH` split: [the pack's URL whole, offset, length]; null for another. */
function packPart(address) {
  const m = /^(.*)#at=(\d+),(\d+)$/.exec(address);
  return m && [wholeUrl(m[1]), Number(m[2]), Number(m[3])];
}

/** A page's pack, read as it comes: resolves, once its length is known, to `{bytes,
 * received, failed, arrived}` (`bytes` of that length, filled in as they arrive; `arrived(end)`
 * resolves once the first `end` are in, and rejects when the pack fails before). So the PNGs
 * at its start are read while the rest is on its way. One cut short, longer than its length
 * says, or not a ZIP archive fails, and is fetched again when next asked. */
function packBytes(url) {
  let got = packs.get(url);
  if (got) {
    packs.delete(url); // most recently used last
    packs.set(url, got);
    return got;
  }
  got = fetch(url, { priority: "high" }).then(async (response) => {
    if (!response.ok) throw new Error(`${response.status} for ${url}`);
    const said = Number(response.headers.get("content-length"));
    const coded = (response.headers.get("content-encoding") || "identity") !== "identity";
    if (coded || !response.body || !Number.isSafeInteger(said) || !said) {
      // Its length unknown (or that of other bytes than the pack's): read whole.
      const bytes = new Uint8Array(await response.arrayBuffer());
      checkPack(bytes, url);
      return { bytes, received: bytes.length, failed: null, arrived: () => Promise.resolve() };
    }
    if (said > PACK_MAX) throw new Error(`${url}: a pack of ${said} bytes is too large`);
    const pack = { bytes: new Uint8Array(said), received: 0, failed: null, waits: [] };
    const settle = () => {
      pack.waits = pack.waits.filter(([end, done]) => {
        if (pack.failed || end <= pack.received) done();
        return !(pack.failed || end <= pack.received);
      });
    };
    pack.arrived = (end) =>
      new Promise((done) => {
        pack.waits.push([end, done]);
        settle();
      }).then(() => {
        if (pack.failed) throw pack.failed;
      });
    (async () => {
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (pack.received + value.length > said) throw new Error(`${url}: longer than said`);
        pack.bytes.set(value, pack.received);
        const before = pack.received;
        pack.received += value.length;
        if (before < PACK_MAGIC.length && pack.received >= PACK_MAGIC.length) checkPack(pack.bytes, url);
        settle();
      }
      if (pack.received < said) throw new Error(`${url}: shorter than said`);
    })().catch((err) => {
      pack.failed = err instanceof Error ? err : new Error(String(err));
      packs.delete(url); // fetched again next time
      settle();
    });
    return pack;
  });
  got.catch(() => packs.delete(url)); // tried again next time
  packs.set(url, got);
  while (packs.size > PACKS_KEPT) packs.delete(packs.keys().next().value);
  return got;
}

/** A PNG's stored bytes from its address: a part of a pack (`URL#at=OFFSET,LENGTH`), or a
 * URL of its own. */
export async function pngBytes(address) {
  const part = packPart(address);
  if (!part) {
    const response = await fetch(address);
    if (!response.ok) throw new Error(`${response.status} for ${address}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  const [url, at, length] = part;
  const pack = await packBytes(url);
  const end = at + length;
  if (end > pack.bytes.length) throw new Error(`${address}: past the end of the pack`);
  await pack.arrived(end);
  return pack.bytes.subarray(at, end);
}

/** Let the page paint and take keys between two PNGs read. */
function yieldToPage() {
  const s = globalThis.scheduler;
  return s && s.yield ? s.yield() : new Promise((done) => setTimeout(done, 0));
}

/** A PNG's values at the tile's size (L.w × L.h, nearest neighbour, as the server samples
 * them), as the part that holds those other than 0: {x, y, cw, ch, values}; null when every
 * value is 0. Read by the page's reader (a worker: pngReader) or here (pngValues), unless
 * the PNG is one left to the browser's decoder. */
function readValues(address, kind, L) {
  if (L.fw && L.fh && pngReader()) return readElsewhere(address, kind, L);
  return readHere(address, kind, L);
}

async function readHere(address, kind, L) {
  const bytes = await pngBytes(address);
  await yieldToPage();
  if (L.fw && L.fh) {
    const got = pngValues(bytes, L.w, L.h, L.fw, L.fh);
    if (got !== undefined) return got;
  }
  return decodedValues(bytes, kind, L.w, L.h);
}

// -- the PNGs read on a thread of their own ---------------------------------------------------
//
// Reading a page's PNGs is most of what its layers cost the page's own thread (a page of 100
// tiles has 1,100 of them: ~200 ms), and that thread also runs the app, lays the page out and
// draws. So they are read by a worker: this very module, loaded as one, which fetches the
// page's pack itself and answers with the PNGs' sampled values, several to a message, in the
// order asked (the page's first). The page's thread only draws. Where no worker can be made
// (or it fails to load), they are read on the page's thread.

const IN_WORKER =
  typeof WorkerGlobalScope !== "undefined" && globalThis instanceof globalThis.WorkerGlobalScope;
const READER_SLICE_MS = 4; // a worker's answers go at least this often while it reads
let reader = null; // the worker and what it was asked
let noReader = IN_WORKER || typeof Worker === "undefined";

function pngReader() {
  if (reader || noReader) return reader;
  try {
    const worker = new Worker(import.meta.url, { type: "module", name: "tfb-png-reader" });
    reader = {
      worker,
      waiting: new Map(), // id of an ask -> {address, kind, L, resolve, reject}
      next: 0,
      batch: null, // the asks of this task, sent at its end
    };
    worker.onmessage = (e) => {
      for (const [id, how, value] of e.data) {
        const request = reader && reader.waiting.get(id);
        if (!request) continue;
        reader.waiting.delete(id);
        if (how === "values") request.resolve(value);
        else if (how === "browser") request.resolve(readHere(request.address, request.kind, request.L));
        else request.reject(new Error(value));
      }
    };
    worker.onerror = (e) => {
      // No worker after all (it could not load, or broke): what it was asked is read here.
      e.preventDefault();
      const left = reader ? [...reader.waiting.values()] : [];
      reader = null;
      noReader = true;
      worker.terminate();
      for (const r of left) r.resolve(readHere(r.address, r.kind, r.L));
    };
  } catch {
    noReader = true;
  }
  return reader;
}

/** A PNG's values (readValues) asked of the worker: the asks of one task go in one message. */
function readElsewhere(address, kind, L) {
  return new Promise((resolve, reject) => {
    const id = reader.next++;
    reader.waiting.set(id, { address, kind, L, resolve, reject });
    if (!reader.batch) {
      reader.batch = [];
      queueMicrotask(() => {
        const batch = reader && reader.batch;
        if (!batch) return;
        reader.batch = null;
        reader.worker.postMessage(batch);
      });
    }
    const part = packPart(address);
    const whole = part ? `${part[0]}#at=${part[1]},${part[2]}` : new URL(address, location.href).href;
    reader.batch.push([id, whole, L.w, L.h, L.fw, L.fh]);
  });
}

let warmed = ""; // the packs the worker was last told to fetch

/** The packs of a page's tiles fetched by the worker now, as the page comes: before its
 * pictures are asked for (they would hold the browser's few connections to the server), and
 * by the worker, whose thread is free to take them in (the page's is busy drawing the page).
 * A page without layer PNGs makes no worker. */
function warmPacks(tiles) {
  const found = new Set();
  for (const t of tiles) {
    for (const url of (t.layers && t.layers.urls) || []) {
      const part = packPart(url);
      if (part) found.add(part[0]);
    }
  }
  if (!found.size) return; // no PNG to read: no worker
  const urls = [...found];
  const key = urls.join(" ");
  if (key === warmed || !pngReader()) return;
  warmed = key;
  reader.worker.postMessage({ packs: urls });
}

/** The worker's side: each PNG asked read from its pack (fetched here), its values sent
 * back (their buffers moved, not copied), "browser" for one left to the browser's decoder,
 * "error" with the reason for one that cannot be read. */
function serveReads() {
  const asked = [];
  let at = 0;
  let reading = false;
  globalThis.onmessage = (e) => {
    if (e.data.packs) {
      for (const url of e.data.packs) packBytes(url).catch(() => {}); // asked for below
      return;
    }
    for (const a of e.data) asked.push(a);
    if (!reading) read();
  };
  async function read() {
    reading = true;
    let out = [];
    let moved = [];
    let since = performance.now();
    while (at < asked.length) {
      const [id, address, w, h, fw, fh] = asked[at];
      asked[at++] = null;
      try {
        const got = pngValues(await pngBytes(address), w, h, fw, fh);
        if (got === undefined) out.push([id, "browser", null]);
        else {
          out.push([id, "values", got]);
          if (got) moved.push(got.values.buffer);
        }
      } catch (err) {
        out.push([id, "error", String((err && err.message) || err)]);
      }
      if (at === asked.length || performance.now() - since >= READER_SLICE_MS) {
        globalThis.postMessage(out, moved);
        out = [];
        moved = [];
        since = performance.now();
      }
    }
    asked.length = 0;
    at = 0;
    reading = false;
  }
}

if (IN_WORKER) serveReads();

/** A PNG's values at w × h as readValues gives them, from the browser's decoding of it
 * (without colour management) sampled on a canvas. */
async function decodedValues(bytes, kind, w, h) {
  const blob = new Blob([bytes], { type: "image/png" });
  const palette = kind === "palette" ? paletteOf(bytes) : null;
  const bitmap = await createImageBitmap(blob, {
    colorSpaceConversion: "none",
    premultiplyAlpha: "none",
  });
  const ctx = scratchContext(w, h);
  // Nearest neighbour as the server samples: the value under each pixel's centre. Chromium
  // takes the lower of two source pixels when a centre falls on their border (as it does
  // at every pixel when a side shrinks by a whole factor); a shift of a 256th of a pixel
  // makes it take the one the server takes.
  ctx.drawImage(bitmap, -SAMPLE_SHIFT, -SAMPLE_SHIFT, w, h);
  bitmap.close();
  const px = ctx.getImageData(0, 0, w, h).data;
  const all = new Uint8Array(w * h);
  let x0 = w;
  let y0 = h;
  let x1 = -1;
  let y1 = -1;
  for (let p = 0, y = 0; y < h; y++) {
    for (let x = 0; x < w; x++, p++) {
      const q = p * 4;
      let v;
      if (kind === "grey") v = px[q];
      else if (kind === "rgb") v = px[q] | px[q + 1] | px[q + 2] ? 1 : 0;
      else v = palette ? palette.get((px[q] << 16) | (px[q + 1] << 8) | px[q + 2]) || 0 : 0;
      if (!v) continue;
      all[p] = v;
      if (x < x0) x0 = x;
      if (x > x1) x1 = x;
      if (y < y0) y0 = y;
      if (y > y1) y1 = y;
    }
  }
  if (x1 < 0) return null;
  const cw = x1 - x0 + 1;
  const ch = y1 - y0 + 1;
  const values = new Uint8Array(cw * ch);
  for (let y = 0; y < ch; y++) values.set(all.subarray((y0 + y) * w + x0, (y0 + y) * w + x1 + 1), y * cw);
  return { x: x0, y: y0, cw, ch, values };
}

function sampled(url, kind, L) {
  const key = `${url} ${kind} ${L.w}x${L.h} ${L.fw}x${L.fh}`;
  let got = valuesKept.get(key);
  if (got) {
    valuesKept.delete(key); // most recently used last
    valuesKept.set(key, got);
    return got;
  }
  got = readValues(url, kind, L);
  got.catch(() => valuesKept.delete(key)); // tried again next time
  valuesKept.set(key, got);
  while (valuesKept.size > VALUES_KEPT) valuesKept.delete(valuesKept.keys().next().value);
  return got;
}

/** Python's round (halves to even), as the server rounds an opacity to a byte. */
export function pyRound(x) {
  const r = Math.round(x);
  return Math.abs(x - Math.trunc(x)) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

const rgbKept = new Map(); // "#rrggbb" -> [r, g, b]

function rgbOf(hex) {
  let got = rgbKept.get(hex);
  if (!got) {
    got = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
    rgbKept.set(hex, got);
  }
  return got;
}

let maskIndex = null; // which object each tile pixel shows, for maskPixels (all 0 between)

/** `out` (an ImageData of w × h, to be used again) all clear, or a new one. What a layer
 * wrote lies in its `tfbDirty` rectangle [x0, y0, x1, y1] (null: nothing): only that is
 * cleared, and only that is drawn (composite). */
function cleared(out, w, h) {
  if (out && out.width === w && out.height === h) {
    const r = out.tfbDirty;
    if (r) out.data.fill(0, r[1] * w * 4, (r[3] + 1) * w * 4);
    out.tfbDirty = null;
    return out;
  }
  const fresh = new ImageData(w, h);
  fresh.tfbDirty = null;
  return fresh;
}

/** Instance masks blended as one layer (codec.layers._draw_masks): larger objects first, an
 * object's pixels tinted at the opacity, its outline (pixels next to another object's or to
 * none) opaque. Only the rectangle the objects' parts cover is worked through. */
export function maskPixels(parts, colors, w, h, opacity, out = null) {
  const counts = new Array(parts.length).fill(0);
  const order = [];
  let x0 = w;
  let y0 = h;
  let x1 = -1;
  let y1 = -1;
  parts.forEach((p, k) => {
    if (!p) return;
    let n = 0;
    const v = p.values;
    for (let q = 0; q < v.length; q++) if (v[q]) n++;
    counts[k] = n;
    order.push(k);
    x0 = Math.min(x0, p.x);
    y0 = Math.min(y0, p.y);
    x1 = Math.max(x1, p.x + p.cw - 1);
    y1 = Math.max(y1, p.y + p.ch - 1);
  });
  order.sort((a, b) => counts[b] - counts[a] || a - b);
  out = cleared(out, w, h);
  if (!order.length) return out;
  if (!maskIndex || maskIndex.length < w * h) maskIndex = new Uint16Array(w * h);
  const index = maskIndex;
  order.forEach((k, rank) => {
    const { x, y, cw, ch, values } = parts[k];
    for (let r = 0; r < ch; r++) {
      for (let c = 0; c < cw; c++) if (values[r * cw + c]) index[(y + r) * w + x + c] = rank + 1;
    }
  });
  const a = pyRound(opacity * 255);
  const d = out.data;
  const rgb = order.map((k) => rgbOf(colors[k]));
  for (let y = y0; y <= y1; y++) {
    for (let x = x0, p = y * w + x0; x <= x1; x++, p++) {
      const i = index[p];
      if (!i) continue;
      const edge =
        x === 0 || x === w - 1 || y === 0 || y === h - 1 ||
        index[p - 1] !== i || index[p + 1] !== i || index[p - w] !== i || index[p + w] !== i;
      const [cr, cg, cb] = rgb[i - 1];
      d[p * 4] = cr;
      d[p * 4 + 1] = cg;
      d[p * 4 + 2] = cb;
      d[p * 4 + 3] = edge ? 255 : a;
    }
  }
  index.fill(0, y0 * w, (y1 + 1) * w); // all 0 again, for the next tile
  out.tfbDirty = [x0, y0, x1, y1];
  return out;
}

/** A class map blended over the picture (codec.layers._draw_class_map): 0 clear, each value
 * in the palette's colour at the opacity, 255 ("void") at least 60 % and hatched with white
 * in diagonal stripes three pixels wide, hidden values clear. */
export function classMapPixels(part, palette, hidden, w, h, opacity, out = null) {
  const a = pyRound(opacity * 255);
  const alphaOf = new Uint8Array(256).fill(a);
  alphaOf[0] = 0;
  alphaOf[255] = Math.max(a, 153);
  for (const v of hidden) alphaOf[v] = 0;
  out = cleared(out, w, h);
  if (!part) return out;
  const d = out.data;
  const { x, y, cw, ch, values } = part;
  out.tfbDirty = [x, y, x + cw - 1, y + ch - 1];
  for (let r = 0; r < ch; r++) {
    for (let c = 0; c < cw; c++) {
      const v = values[r * cw + c];
      const al = alphaOf[v];
      if (!al) continue;
      const row = y + r;
      const col = x + c;
      const q = (row * w + col) * 4;
      const white = v === 255 && Math.floor((row + col) / 3) % 2 === 0;
      d[q] = white ? 255 : palette[v * 3];
      d[q + 1] = white ? 255 : palette[v * 3 + 1];
      d[q + 2] = white ? 255 : palette[v * 3 + 2];
      d[q + 3] = al;
    }
  }
  return out;
}

/** A rectangle's outline `width` pixels wide inside it, as Pillow draws one (corners
 * truncated to whole pixels). */
function outline(ctx, x0, y0, x1, y1, width, color) {
  [x0, y0, x1, y1] = [x0, y0, x1, y1].map(Math.trunc);
  if (x1 < x0 || y1 < y0) return;
  ctx.fillStyle = color;
  const w = x1 - x0 + 1;
  const h = y1 - y0 + 1;
  ctx.fillRect(x0, y0, w, Math.min(width, h));
  ctx.fillRect(x0, Math.max(y0, y1 - width + 1), w, Math.min(width, h));
  ctx.fillRect(x0, y0, Math.min(width, w), h);
  ctx.fillRect(Math.max(x0, x1 - width + 1), y0, Math.min(width, w), h);
}

const CAPTIONS_KEPT = 500;
const captionsKept = new Map(); // a caption's text, size, colours -> a canvas of it drawn

/** A caption: its band in the object's colour (edged in black for a prediction), its text
 * over it. Drawn once on a canvas of its own and copied from there at each use (a page of 100
 * tiles captions 1,000 boxes with a few dozen class names; text is slow to draw). */
function caption(ctx, font, text, band, color, paint, edged) {
  if (!text || !band || !font) return;
  const [l, t, r, b] = band;
  const bw = r - l;
  const bh = b - t;
  if (bw <= 0 || bh <= 0) return;
  const key = `${font} ${bw}x${bh} ${color} ${paint} ${edged ? 1 : 0} ${text}`;
  let art = captionsKept.get(key);
  if (!art) {
    art = canvas2d(bw, bh);
    const c = art.getContext("2d");
    c.fillStyle = color;
    c.fillRect(0, 0, bw, bh);
    if (edged) outline(c, 0, 0, bw - 1, bh - 1, 1, "#000000");
    c.fillStyle = paint;
    c.font = `${font}px sans-serif`;
    c.textBaseline = "top";
    c.fillText(text, 2, 0, bw - 2);
    captionsKept.set(key, art);
    while (captionsKept.size > CAPTIONS_KEPT) captionsKept.delete(captionsKept.keys().next().value);
  }
  ctx.drawImage(art, l, t);
}

/** Dashes as Pillow's lines make them (codec.images._dashed_rectangle). */
function dashedOutline(ctx, x0, y0, x1, y1, width, color) {
  const dash = Math.max(3, width * 3);
  ctx.fillStyle = color;
  const sides = [
    [x0, y0, x1, y0],
    [x1, y0, x1, y1],
    [x0, y1, x1, y1],
    [x0, y0, x0, y1],
  ];
  const off = Math.floor((width - 1) / 2);
  for (const [ax, ay, bx, by] of sides) {
    const length = Math.max(Math.abs(bx - ax), Math.abs(by - ay));
    const steps = Math.max(1, Math.floor(length / (2 * dash)));
    for (let k = 0; k <= steps; k++) {
      const t0 = length ? Math.min(1, (2 * k * dash) / length) : 0;
      const t1 = length ? Math.min(1, ((2 * k + 1) * dash) / length) : 0;
      const px = [ax + (bx - ax) * t0, ax + (bx - ax) * t1].map(Math.trunc);
      const py = [ay + (by - ay) * t0, ay + (by - ay) * t1].map(Math.trunc);
      const lx = Math.min(...px);
      const ly = Math.min(...py);
      if (ay === by) ctx.fillRect(lx, ly - off, Math.abs(px[1] - px[0]) + 1, width);
      else ctx.fillRect(lx - off, ly, width, Math.abs(py[1] - py[0]) + 1);
    }
  }
}

/** `pixels` drawn over what `ctx` holds (through one canvas kept for it: a canvas made per
 * layer and tile is garbage a page turn waits for). */
function composite(ctx, pixels) {
  const r = pixels.tfbDirty;
  if (r === null) return; // nothing written
  const { width: w, height: h } = pixels;
  const [x0, y0, x1, y1] = r || [0, 0, w - 1, h - 1];
  const cw = x1 - x0 + 1;
  const ch = y1 - y0 + 1;
  if (!layerScratch) layerScratch = canvas2d(w, h);
  if (layerScratch.width < w) layerScratch.width = w;
  if (layerScratch.height < h) layerScratch.height = h;
  layerScratch.getContext("2d", { willReadFrequently: true }).putImageData(pixels, 0, 0, x0, y0, cw, ch);
  ctx.drawImage(layerScratch, x0, y0, cw, ch, x0, y0, cw, ch);
}

let dashScratch = null; // where a tile's predictions are drawn before their dashes are cut
const dashPatterns = new Map(); // stripe width -> the pattern of the gaps

/** The gaps between dashes as a pattern: opaque where floor((x + y) / dash) is odd (one tile
 * of 2·dash × 2·dash repeats them exactly, as (x + y) mod 2·dash does). */
function dashGaps(ctx, dash) {
  let got = dashPatterns.get(dash);
  if (got) return got;
  const side = 2 * dash;
  const tile = canvas2d(side, side);
  const tc = tile.getContext("2d");
  const px = tc.createImageData(side, side);
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) if (Math.floor((x + y) / dash) % 2 !== 0) px.data[(y * side + x) * 4 + 3] = 255;
  }
  tc.putImageData(px, 0, 0);
  got = ctx.createPattern(tile, "repeat");
  dashPatterns.set(dash, got);
  return got;
}

function drawPredictions(ctx, L) {
  const { w, h, line } = L;
  if (!dashScratch) dashScratch = canvas2d(w, h);
  if (dashScratch.width < w) dashScratch.width = w;
  if (dashScratch.height < h) dashScratch.height = h;
  const lc = dashScratch.getContext("2d", { willReadFrequently: true });
  lc.globalCompositeOperation = "source-over";
  lc.clearRect(0, 0, w, h);
  for (const [x0, y0, x1, y1] of L.predictions) outline(lc, x0 - 1, y0 - 1, x1 + 1, y1 + 1, line + 2, "#000000");
  for (const [x0, y0, x1, y1, color] of L.predictions) outline(lc, x0, y0, x1, y1, line, color);
  // The gaps cut out (their pixels made clear), with no pixel read back.
  lc.globalCompositeOperation = "destination-out";
  lc.fillStyle = dashGaps(lc, L.dash || 4);
  lc.fillRect(0, 0, w, h);
  lc.globalCompositeOperation = "source-over";
  ctx.drawImage(dashScratch, 0, 0, w, h, 0, 0, w, h);
  for (const [, , , , color, text, band, paint] of L.predictions) {
    caption(ctx, L.font, text, band, color, paint, true);
  }
}

function drawBoxes(ctx, L) {
  const width = L.line;
  for (const [x0, y0, x1, y1, color, dashed, text, band, paint] of L.boxes) {
    if (dashed) dashedOutline(ctx, x0, y0, x1, y1, width, color);
    else {
      outline(ctx, x0 - 1, y0 - 1, x1 + 1, y1 + 1, width + 2, "#000000");
      outline(ctx, x0, y0, x1, y1, width, color);
    }
    caption(ctx, L.font, text, band, color, paint, false);
  }
}

function drawKeypoints(ctx, L) {
  const width = L.line;
  for (const group of L.keypoints) {
    const r = group.r;
    for (const [color, flat] of group.objects) {
      const at = (j) => (flat[j * 3] === null ? null : [flat[j * 3] + 0.5, flat[j * 3 + 1] + 0.5]);
      ctx.lineCap = "butt";
      for (const [a, b] of group.skeleton) {
        const p = at(a);
        const q = at(b);
        if (!p || !q) continue;
        for (const [stroke, lw] of [["#000000", width + 2], [color, width]]) {
          ctx.strokeStyle = stroke;
          ctx.lineWidth = lw;
          ctx.beginPath();
          ctx.moveTo(p[0], p[1]);
          ctx.lineTo(q[0], q[1]);
          ctx.stroke();
        }
      }
      for (let j = 0; j * 3 < flat.length; j++) {
        const p = at(j);
        if (!p) continue;
        ctx.beginPath();
        ctx.arc(p[0], p[1], r + 0.5, 0, 2 * Math.PI);
        if (flat[j * 3 + 2]) {
          ctx.fillStyle = color;
          ctx.fill();
          ctx.strokeStyle = "#000000";
          ctx.lineWidth = 1;
          ctx.stroke();
        } else {
          ctx.strokeStyle = color;
          ctx.lineWidth = Math.max(1, width);
          ctx.stroke();
        }
      }
    }
  }
}

/** The PNGs a tile's layers read, sampled at its size (started, not awaited: ahead). */
function readAhead(L) {
  const urls = L.urls;
  const maps = (L.class_maps || []).map((m) => sampled(urls[m.src], m.kind, L));
  const masks = (L.masks || []).map((g) => g.map(([src, kind]) => sampled(urls[src], kind, L)));
  return { maps, masks };
}

let tileScratch = null; // where a tile's layers are drawn, then read out as a BMP

/** A BMP of RGBA pixels as they are, rows top down (a BITMAPV4HEADER whose bit fields say
 * which byte is red, green, blue and alpha): made with no work per pixel, and decoded by the
 * browser with next to none. Null when every pixel is clear: a browser shows a 32-bit BMP
 * whose alpha is 0 everywhere as opaque (the BMPs of old wrote 0 there). */
export function bmpOf(px, w, h) {
  const words = new Uint32Array(px.buffer, px.byteOffset, w * h);
  let seen = false;
  for (let i = 0; i < words.length; i++) {
    if (words[i] >>> 24) {
      seen = true;
      break;
    }
  }
  if (!seen) return null;
  const head = new ArrayBuffer(14 + 108);
  const v = new DataView(head);
  v.setUint16(0, 0x4d42, true); // "BM"
  v.setUint32(2, head.byteLength + w * h * 4, true);
  v.setUint32(10, head.byteLength, true); // where the pixels start
  v.setUint32(14, 108, true); // BITMAPV4HEADER
  v.setInt32(18, w, true);
  v.setInt32(22, -h, true); // top down
  v.setUint16(26, 1, true); // planes
  v.setUint16(28, 32, true); // bits a pixel
  v.setUint32(30, 3, true); // BI_BITFIELDS
  v.setUint32(34, w * h * 4, true);
  v.setUint32(38, 2835, true); // 72 dpi
  v.setUint32(42, 2835, true);
  // Bytes R, G, B, A read as a little-endian word: 0xAABBGGRR.
  v.setUint32(54, 0x000000ff, true);
  v.setUint32(58, 0x0000ff00, true);
  v.setUint32(62, 0x00ff0000, true);
  v.setUint32(66, 0xff000000, true);
  v.setUint32(70, 0x73524742, true); // "sRGB", as the canvas it was drawn on
  return new Blob([head, px], { type: "image/bmp" });
}

/** Draw a tile's layers on `canvas`; `current()` says whether they are still wanted.
 * Resolves to whether every PNG could be read (null when they are no longer wanted), or,
 * given `read`, to what `read(ctx)` gives once they are drawn (in the same task: a canvas
 * kept for drawing one tile after another can be read there). */
export async function drawLayers(canvas, L, palette, current, read = null) {
  const { w, h } = L;
  const reads = readAhead(L);
  let complete = true;
  const settle = (p) =>
    p.catch(() => {
      complete = false;
      return null;
    });
  const maps = await Promise.all(reads.maps.map(settle));
  const masks = await Promise.all(reads.masks.map((g) => Promise.all(g.map(settle))));
  if (!current()) return null;
  canvas.width = w;
  canvas.height = h;
  // In memory, not on the GPU: a page holds 100 of these small canvases, and one on the GPU
  // is a layer of its own for the page's compositor to draw at each frame.
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  ctx.clearRect(0, 0, w, h);
  // One ImageData for the class maps and masks, each drawn over the canvas in turn (kept for
  // the next tile: a page would make 100 of 77 KB for the collector).
  let px = keptPixels;
  (L.class_maps || []).forEach((m, i) => {
    px = classMapPixels(maps[i], palette, m.hidden || [], w, h, L.opacity, px);
    composite(ctx, px);
  });
  (L.masks || []).forEach((group, i) => {
    const colors = group.map((m) => m[2]);
    if (!masks[i].some(Boolean)) return;
    px = maskPixels(masks[i], colors, w, h, L.opacity, px);
    composite(ctx, px);
  });
  keptPixels = px;
  if (L.predictions) drawPredictions(ctx, L);
  if (L.boxes) drawBoxes(ctx, L);
  if (L.keypoints) drawKeypoints(ctx, L);
  return read ? { complete, value: read(ctx) } : complete;
}

/** The layers `L` of a tile of the next page drawn ahead, as a picture: `{complete, blob}`
 * (a BMP of them, null where nothing is drawn), or null when no longer wanted. A page's
 * canvases are each a layer the compositor copies to the screen when the page turns (40 ms
 * for 100 tiles); pictures are painted as the photographs under them are, so N shows a page
 * drawn ahead as fast as a page of photographs alone. */
async function layersAhead(L, palette, current) {
  if (!tileScratch) tileScratch = canvas2d(L.w, L.h);
  const read = (ctx) => bmpOf(ctx.getImageData(0, 0, L.w, L.h).data, L.w, L.h);
  const got = await drawLayers(tileScratch, L, palette, current, read);
  return got && { complete: got.complete, blob: got.value };
}

/** The picture of a tile's layers drawn ahead: an <img> (class tfb-layers) that shows
 * `blob`, once decoded (resolved then); an <img> without one shows nothing. Its URL is let
 * go by dropLayers. */
function layersPicture(img, blob) {
  dropLayers(img);
  if (!blob) return Promise.resolve();
  img.src = URL.createObjectURL(blob);
  return img.decode().catch(() => {});
}

/** The URL of a picture of layers let go (the picture left the page, or shows others). */
function dropLayers(el) {
  if (el.tagName !== "IMG") return;
  const url = el.getAttribute("src");
  el.removeAttribute("src");
  if (!url || !url.startsWith("blob:")) return;
  // Let go once the page is idle: a page turn drops 100 of them.
  revoking.push(url);
  if (revoking.length === 1) {
    const later = globalThis.requestIdleCallback || ((f) => setTimeout(f, 50));
    later(() => {
      for (const u of revoking.splice(0)) URL.revokeObjectURL(u);
    });
  }
}

const revoking = []; // URLs of pictures of layers no longer shown, let go soon

const layerKeys = new WeakMap(); // a tile's layers (as Python sent them) -> their key

/** What a tile's layers are, as a string: the same layers drawn ahead are found by it at N.
 * Made once per layers object (a page's are made when the page is drawn ahead). */
function layersKey(L) {
  let key = layerKeys.get(L);
  if (key === undefined) {
    key = JSON.stringify(L);
    layerKeys.set(L, key);
  }
  return key;
}

function layersImg() {
  const img = document.createElement("img");
  img.className = "tfb-layers";
  img.alt = "";
  img.decoding = "sync";
  img.draggable = false;
  return img;
}

function paletteBytes(hex) {
  const out = new Uint8Array(768);
  if (hex) for (let i = 0; i < 768; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

class Grid {
  // One per gallery (Python's "grid" name), for the life of the page: when Streamlit draws
  // the element afresh (a new host element), the same grid attaches to it and keeps its
  // focus, its actions not yet acknowledged and its numbering.
  constructor(id) {
    this.id = id;
    this.client = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    this.seq = 0;
    this.queue = []; // actions sent, not yet acknowledged, oldest first
    this.buffer = []; // keys typed while a page is awaited, or while the element is redrawn
    this.awaiting = 0; // the number of a page turn whose page only Python can send
    this.view = null; // what is shown: {page, size, has_next, per_row, dense, tiles, next}
    this.focus = null;
    this.told = null; // the focus Python knows
    this.epoch = null;
    this.told_n = 0;
    this.ahead = null; // the page whose next page was asked for
    this.outbox = { act: false, ahead: null }; // what goes to Python once the app is idle
    this.flushTimer = 0;
    this.appliedAt = 0; // when data from Python was last applied
    this.rev = 0;
    this.prefetched = [];
    this.prefetchedKey = "";
    this.drawnAhead = new Map(); // layers' key -> {img, done, complete}: the next page's
    this.aheadDrawn = 0; // pictures of layers drawn ahead so far (data-ahead, for tests)
    this.palette = paletteBytes("");
    this.paletteHex = "";
    this.resendTimer = 0;
    this.resendMs = RESEND_MS;
    this.route = null; // the marks route: { url, token }
    this.posts = Promise.resolve(); // the marks posted to it, one after the other
    this.parent = null;
    this.detached = null; // {at, path}: when and on which page the element went away
    this.opened = false; // an opening was sent: the page is about to change
    this.setStateValue = null;
    this.setTriggerValue = null;
    this.onKey = (e) => this.key(e);
    this.onDown = (e) => {
      // A widget of the page is about to run the script: it runs knowing the focus. Not for
      // a link or the sidebar (another page: a run of this page's part would race it).
      const t = e.target instanceof Element ? e.target : null;
      if (!this.parent || !t || this.root.contains(t) || t.closest("a[href]")) return;
      if (t.closest('[data-testid="stMain"]')) this.tellNow();
    };
    this.onClick = (e) => this.click(e);
    // A click on a button of the grid leaves the keyboard where it was: Enter then opens
    // the focused record instead of pressing that button again.
    this.onMouseDown = (e) => {
      if (e.target instanceof Element && e.target.closest("button")) e.preventDefault();
    };
    document.addEventListener("keydown", this.onKey);
    document.addEventListener("pointerdown", this.onDown, true);
  }

  attach(parent) {
    this.parent = parent;
    this.detached = null;
    this.opened = false;
    this.root = parent.querySelector(".tfb-gallery");
    if (!this.root) {
      // gallery.html not there (yet): the same elements, made here.
      this.root = el("div", "tfb-gallery", parent);
      this.root.dataset.testid = "tfb-gallery";
      el("div", "tfb-head", this.root);
      el("div", "tfb-tiles", this.root);
    }
    this.head = this.root.querySelector(".tfb-head");
    this.tilesEl = this.root.querySelector(".tfb-tiles");
    this.buildHead();
    this.root.addEventListener("click", this.onClick);
    this.root.addEventListener("mousedown", this.onMouseDown);
  }

  detach(parent) {
    if (this.parent !== parent) return;
    this.root.removeEventListener("click", this.onClick);
    this.root.removeEventListener("mousedown", this.onMouseDown);
    this.parent = null;
    this.detached = { at: performance.now(), path: location.pathname };
    this.prefetched = [];
    this.prefetchedKey = "";
  }

  buildHead() {
    const h = this.head;
    h.textContent = "";
    this.recEl = el("span", "tfb-rec", h);
    this.whatEl = el("span", "tfb-what", h);
    this.buttons = {};
    for (const [act, label] of [
      ["passed", "Passed"],
      ["flagged", "Flagged"],
      ["open", "Open"],
    ]) {
      const b = el("button", `tfb-act tfb-act-${act}`, h);
      b.type = "button";
      b.dataset.act = act;
      b.textContent = act === "open" ? "Open \u2197" : `${MARK_ICONS[act]} ${label}`;
      b.title = act === "open" ? "Open the focused record (Enter)" : `Mark the focused record ${label.toLowerCase()} (${act[0].toUpperCase()})`;
      this.buttons[act] = b;
    }
    this.stateEl = el("span", "tfb-saving", h);
  }

  // -- data from Python ---------------------------------------------------------------------

  apply(data) {
    this.data = data;
    if (data.palette && data.palette !== this.paletteHex) {
      this.paletteHex = data.palette;
      this.palette = paletteBytes(data.palette);
    }
    const ack = data.ack;
    if (ack && ack.client === this.client) {
      this.queue = this.queue.filter((a) => a.seq > ack.seq);
    }
    const route = data.mark;
    this.route =
      route && typeof route.url === "string" && typeof route.token === "string" ? route : null;
    this.watch(false);
    const turning = this.queue.some((a) => a.kind === "page");
    const fresh = !turning; // data older than a page turn made here keeps the page shown
    if (fresh) {
      const before = this.view;
      this.view = {
        page: data.page,
        size: data.size,
        has_next: data.has_next,
        per_row: data.per_row,
        dense: data.dense,
        can_mark: data.can_mark,
        badge_help: data.badge_help,
        tiles: data.tiles,
        next: data.next,
      };
      const recs = records(this.view.tiles);
      const moved = data.epoch !== this.epoch; // the current record changed outside the grid
      this.epoch = data.epoch;
      if (moved || !before || !recs.includes(this.focus)) {
        this.focus = recs.includes(data.focus) ? data.focus : recs.find((r) => r !== null) ?? null;
        this.told = data.focus;
      }
      this.awaiting = 0;
    }
    const replay = !this.awaiting && this.buffer.length > 0;
    this.rev += 1;
    this.appliedAt = performance.now();
    this.render();
    this.prefetch();
    this.askAhead();
    if (this.outbox.act) this.flushSoon();
    if (replay) {
      const keys = this.buffer;
      this.buffer = [];
      // Each key as if typed now; after one that awaits a page, the rest wait again.
      keys.forEach((k) => {
        if (this.awaiting) this.buffer.push(k);
        else this.handle(k);
      });
    }
  }

  /** Whether the page's tiles are all shown: each picture loaded (or failed) and its layers
   * drawn (or failed). */
  pageShown() {
    for (const tile of this.tilesEl.children) {
      const img = tile.querySelector(".tfb-pic img:not(.tfb-layers)");
      if (img && !img.complete) return false;
      if (tile.dataset.layers === "drawing") return false;
    }
    return true;
  }

  /** Once a page is shown, ask Python for the next one (once a page): not before, so that
   * the server's work for the next page and its pictures never slow this one's (at most
   * AHEAD_WAIT_MS after the page came). */
  askAhead() {
    const v = this.view;
    if (!v || !v.has_next || v.next || this.ahead === v.page) return;
    // A page's answer is on the way, or the record opened: no next page wanted.
    if (this.queue.some((a) => a.kind === "page" || a.kind === "open")) return;
    if (!this.parent) return; // the grid left the page: asked again when it is back
    if (!this.pageShown() && performance.now() - this.appliedAt < AHEAD_WAIT_MS) {
      clearTimeout(this.aheadTimer);
      this.aheadTimer = setTimeout(() => this.askAhead(), 50);
      return;
    }
    this.ahead = v.page;
    this.outbox.ahead = v.page;
    this.flushSoon();
  }

  prefetch() {
    const next = this.view && this.view.next;
    for (const t of next ? next.tiles : []) if (t.src && t.layers) this.drawAhead(t.layers);
    const urls = next ? next.tiles.map((t) => t.src).filter(Boolean) : [];
    const key = urls.join(" ");
    if (key === this.prefetchedKey) return; // the same pictures: fetched already
    this.prefetchedKey = key;
    this.prefetched = urls.map((u) => {
      const im = new Image();
      im.decoding = "async";
      im.src = u;
      im.decode().catch(() => {});
      return im;
    });
  }

  /** Draw the layers `L` of a tile of the next page into a picture of their own, off the
   * page and decoded, so that N only puts it in its tile (fillLayers). */
  drawAhead(L) {
    const key = layersKey(L);
    if (this.drawnAhead.has(key)) return;
    const img = layersImg();
    img.dataset.key = key;
    const entry = { img, complete: null, done: null };
    const done = (complete) => {
      entry.complete = complete;
      this.root.dataset.ahead = String(++this.aheadDrawn);
      return complete;
    };
    entry.done = layersAhead(L, this.palette, () => img.dataset.key === key)
      .then((got) => (got ? layersPicture(img, got.blob).then(() => got.complete) : false))
      .then(done, () => done(false));
    this.drawnAhead.set(key, entry);
    while (this.drawnAhead.size > AHEAD_KEPT) {
      const [first, old] = this.drawnAhead.entries().next().value;
      this.drawnAhead.delete(first);
      if (!old.img.isConnected) dropLayers(old.img);
    }
  }

  // -- drawing ------------------------------------------------------------------------------

  render() {
    const v = this.view;
    warmPacks(v.tiles);
    const r = this.root;
    r.style.setProperty("--tfb-per-row", String(v.per_row));
    r.classList.toggle("tfb-dense", !!v.dense);
    const box = this.tilesEl;
    while (box.children.length > v.tiles.length) box.lastChild.remove();
    v.tiles.forEach((t, i) => {
      const tile = box.children[i] || this.makeTile(box);
      this.fill(tile, t, i);
    });
    r.dataset.page = String(v.page);
    r.dataset.rev = String(this.rev);
    this.decorate();
  }

  makeTile(box) {
    const tile = el("div", "tfb-tile", box);
    tile.setAttribute("role", "listitem");
    const pic = el("div", "tfb-pic", tile);
    el("div", "tfb-why", pic);
    el("div", "tfb-badges", pic);
    el("span", "tfb-markicon", pic);
    const cap = el("button", "tfb-cap", tile); // a click on it, or on the picture, opens
    cap.type = "button";
    const marks = el("div", "tfb-marks", tile);
    for (const status of ["passed", "flagged"]) {
      const b = el("button", "tfb-set", marks);
      b.type = "button";
      b.dataset.set = status;
      b.textContent = MARK_ICONS[status];
    }
    return tile;
  }

  fill(tile, t, i) {
    tile.dataset.pos = String(i);
    if (t.record === null || t.record === undefined) delete tile.dataset.record;
    else tile.dataset.record = String(t.record);
    tile.classList.toggle("tfb-damaged", !!t.damaged);
    tile.classList.toggle("tfb-norecord", t.record === null || t.record === undefined);
    const pic = tile.querySelector(".tfb-pic");
    const why = tile.querySelector(".tfb-why");
    let img = pic.querySelector("img:not(.tfb-layers)");
    if (t.src) {
      if (!img) {
        img = document.createElement("img");
        img.decoding = "async";
        img.draggable = false;
        pic.prepend(img);
      }
      if (img.getAttribute("src") !== t.src) img.src = t.src;
      img.alt = t.caption || "";
      why.hidden = true;
      why.textContent = "";
    } else {
      if (img) img.remove(); // a tile without picture has none, only why
      why.hidden = false;
      why.textContent = t.why || "no picture";
    }
    this.fillLayers(tile, pic, t.src ? t.layers : null);
    const badges = tile.querySelector(".tfb-badges");
    badges.textContent = "";
    for (const b of t.badges || []) el("span", "tfb-badge", badges).textContent = b;
    badges.title = t.badges && t.badges.length ? this.view.badge_help || "" : "";
    const cap = tile.querySelector(".tfb-cap");
    cap.textContent = t.caption || "";
    cap.disabled = t.record === null || t.record === undefined;
    tile.title = t.caption || "";
    const canMark = this.view.can_mark && t.record !== null && t.record !== undefined;
    tile.querySelector(".tfb-marks").hidden = !canMark;
  }

  /** The layers of a tile, drawn afresh when they (or the picture) changed: a picture drawn
   * ahead put in place, or a canvas drawn here. */
  fillLayers(tile, pic, L) {
    let cv = pic.querySelector(".tfb-layers"); // a canvas drawn here, or a picture drawn ahead
    if (!L) {
      if (cv) {
        dropLayers(cv);
        cv.remove();
      }
      delete tile.dataset.layers;
      return;
    }
    const key = layersKey(L);
    if (cv && cv.dataset.key === key) return; // drawn already, or being drawn
    const ahead = this.drawnAhead.get(key);
    if (ahead && !ahead.img.isConnected) {
      // Drawn ahead (or being drawn): put in place of the tile's picture of layers.
      this.drawnAhead.delete(key);
      const drawn = ahead.img;
      this.placeLayers(pic, drawn, cv);
      const show = (complete) => {
        if (drawn.dataset.key !== key || drawn.parentNode !== pic) return;
        drawn.hidden = false;
        tile.dataset.layers = complete ? "drawn" : "failed";
      };
      if (ahead.complete !== null) show(ahead.complete);
      else {
        drawn.hidden = true;
        tile.dataset.layers = "drawing";
        ahead.done.then(show);
      }
      return;
    }
    if (!cv || cv.tagName !== "CANVAS") {
      // Drawn here, in place: a canvas (a picture drawn ahead is not drawn on again).
      const fresh = document.createElement("canvas");
      fresh.className = "tfb-layers";
      this.placeLayers(pic, fresh, cv);
      cv = fresh;
    }
    cv.dataset.key = key;
    cv.hidden = true; // never the previous tile's layers over this picture
    tile.dataset.layers = "drawing";
    const current = () => cv.dataset.key === key && cv.isConnected;
    drawLayers(cv, L, this.palette, current)
      .then((complete) => {
        if (complete === null || !current()) return;
        cv.hidden = false;
        tile.dataset.layers = complete ? "drawn" : "failed";
      })
      .catch(() => {
        if (current()) tile.dataset.layers = "failed";
      });
  }

  /** The layers `cv` (a canvas or a picture) put over the picture of `pic`, in place of
   * `old` (its URL let go) when there is one. */
  placeLayers(pic, cv, old = null) {
    if (old) {
      dropLayers(old);
      old.replaceWith(cv);
      return;
    }
    const img = pic.querySelector("img:not(.tfb-layers)");
    if (img) img.after(cv);
    else pic.prepend(cv);
  }

  decorate() {
    const v = this.view;
    const byRecord = new Map();
    v.tiles.forEach((t) => byRecord.set(t.record, t));
    for (const tile of this.tilesEl.children) {
      const t = v.tiles[Number(tile.dataset.pos)];
      if (!t || t.record === null || t.record === undefined) {
        tile.dataset.mark = "";
        tile.removeAttribute("data-pending");
        tile.classList.remove("tfb-focus");
        tile.removeAttribute("aria-current");
        continue;
      }
      const [mark, pending] = shownMark(this.queue, t.record, t.mark);
      tile.dataset.mark = mark;
      if (pending) tile.dataset.pending = "1";
      else tile.removeAttribute("data-pending");
      const icon = tile.querySelector(".tfb-markicon");
      icon.textContent = MARK_ICONS[mark] || "";
      icon.title = mark ? (pending ? `${mark}: saving` : mark) : "";
      for (const b of tile.querySelectorAll(".tfb-set")) {
        b.setAttribute("aria-pressed", String(b.dataset.set === mark));
        b.title = `${b.dataset.set === mark ? "Clear the mark of" : `Mark ${b.dataset.set}:`} record ${t.record}`;
      }
      tile.classList.toggle("tfb-focus", t.record === this.focus);
      if (t.record === this.focus) tile.setAttribute("aria-current", "true");
      else tile.removeAttribute("aria-current");
    }
    this.root.dataset.focus = this.focus === null ? "" : String(this.focus);
    const t = byRecord.get(this.focus);
    this.recEl.textContent = this.focus === null ? "no record here" : `#${this.focus}`;
    const caption = t ? t.caption || "" : "";
    // A caption starts with the record's number: the rest of it beside the number.
    this.whatEl.textContent = caption.startsWith(`#${this.focus} · `)
      ? caption.slice(`#${this.focus} · `.length)
      : caption;
    const [mark] = t ? shownMark(this.queue, t.record, t.mark) : [""];
    for (const s of ["passed", "flagged"]) {
      this.buttons[s].setAttribute("aria-pressed", String(mark === s));
      this.buttons[s].disabled = !t || !v.can_mark;
    }
    this.buttons.open.disabled = !t;
    const marks = this.queue.filter((a) => a.kind === "mark");
    this.stateEl.textContent = !marks.length ? "" : marks.every((a) => a.saved) ? "saved" : "saving\u2026";
  }

  focusTile() {
    const tile = this.tilesEl.querySelector(".tfb-tile.tfb-focus");
    if (tile) tile.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  // -- input --------------------------------------------------------------------------------

  key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const name = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (!(name in KEYS) || !this.view) return;
    const target = e.target instanceof Element ? e.target : null;
    if (target && target.closest(TEXT_ENTRY)) return;
    if (name === "Enter" && target && target.closest(PRESSABLE)) return;
    if (!this.parent || !this.root.isConnected) {
      // The element is being drawn afresh (the same page, a moment ago): its keys wait. Its
      // node may leave the page before the element is told it went away: that is the moment.
      if (!this.detached && this.parent) {
        this.detached = { at: performance.now(), path: location.pathname };
      }
      const d = this.detached;
      if (!d || this.opened || d.path !== location.pathname) return;
      if (performance.now() - d.at > DETACHED_MS) return;
      e.preventDefault();
      if (!e.repeat || KEYS[name][0] === "move" || KEYS[name][0] === "row") this.buffer.push(name);
      return;
    }
    e.preventDefault();
    if (e.repeat && KEYS[name][0] !== "move" && KEYS[name][0] !== "row") return;
    if (this.awaiting) this.buffer.push(name);
    else this.handle(name);
  }

  handle(name) {
    const [what, arg] = KEYS[name];
    const v = this.view;
    if (what === "move") this.move(arg);
    else if (what === "row") this.move(arg * v.per_row);
    else if (what === "mark") this.mark(this.focus, arg);
    else if (what === "page") this.turn(arg, arg > 0 ? "first" : "first");
    else if (what === "open") this.open(this.focus);
  }

  click(e) {
    const target = e.target instanceof Element ? e.target : null;
    if (!target || !this.view) return;
    const act = target.closest(".tfb-act");
    if (act) {
      if (act.dataset.act === "open") this.open(this.focus);
      else this.mark(this.focus, act.dataset.act);
      return;
    }
    const tile = target.closest(".tfb-tile");
    if (!tile || tile.dataset.record === undefined) return;
    const record = Number(tile.dataset.record);
    const set = target.closest(".tfb-set");
    if (set) {
      const [mark] = shownMark(this.queue, record, this.view.tiles[Number(tile.dataset.pos)].mark);
      this.setFocus(record);
      this.mark(record, mark === set.dataset.set ? null : set.dataset.set);
      return;
    }
    this.setFocus(record);
    this.open(record);
  }

  setFocus(record) {
    if (record === this.focus) return;
    this.focus = record;
    this.decorate();
    this.focusTile(); // Python is told with the next action, or before a click elsewhere
  }

  move(step) {
    const recs = records(this.view.tiles);
    const [pos, over] = moveTarget(recs, this.focus, step);
    if (over === 0) this.setFocus(recs[pos]);
    else if (over > 0) this.turn(1, "first");
    else this.turn(-1, "last");
  }

  turn(dir, at) {
    const v = this.view;
    const start = v.page + dir * v.size;
    if (start < 0 || (dir > 0 && !v.has_next)) return;
    const next = dir > 0 ? v.next : null;
    if (next && next.page === start && next.tiles.some((t) => t.record != null)) {
      // The next page is here already: shown at once, Python told.
      this.view = { ...v, page: next.page, tiles: next.tiles, has_next: next.has_next, next: null };
      const recs = records(next.tiles).filter((r) => r !== null);
      this.focus = at === "last" ? recs[recs.length - 1] : recs[0];
      this.render();
      this.focusTile();
      this.act({ kind: "page", start, at, record: this.focus });
      return;
    }
    // A page only Python can send: keys typed until it comes wait for it, and the focus is
    // not told (Python puts it on the page's first or last tile).
    this.awaiting = this.seq + 1;
    this.act({ kind: "page", start, at, record: null });
  }

  mark(record, status) {
    if (record === null || record === undefined || !this.view.can_mark) return;
    const a = { seq: this.seq + 1, kind: "mark", record, status };
    if (routable(a, this.route, this.queue, true)) {
      // Posted once the posts before it are answered; the queue waits for it.
      a.posting = true;
      const route = this.route;
      this.posts = this.posts.then(() => this.post(a, route));
    }
    this.act(a);
  }

  /** Post the mark `a` to the marks route (unless a mark before it went to Python
   * meanwhile); once it answers, the queue goes to Python. */
  async post(a, route) {
    let got = null;
    if (routable(a, route, this.queue)) {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), POST_MS);
      const body = {
        token: route.token,
        client: this.client,
        seq: a.seq,
        record: a.record,
        status: a.status,
      };
      got = await fetch(route.url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
        credentials: "same-origin",
        cache: "no-store",
        signal: abort.signal,
      })
        .then((r) => (r.ok ? r.json() : null))
        .catch(() => null);
      clearTimeout(timer);
    }
    a.posting = false;
    if (got && got.saved === true && got.record === a.record && got.status === a.status) {
      a.saved = true;
    }
    if (this.parent && this.view) this.decorate();
    this.outbox.act = true;
    this.flushSoon();
  }

  open(record) {
    if (record === null || record === undefined) return;
    this.opened = true;
    this.act({ kind: "open", record });
  }

  act(action) {
    this.seq += 1;
    action.seq = this.seq; // the object itself: a post under way marks it saved
    this.queue.push(action);
    this.decorate();
    this.outbox.act = true;
    this.flushSoon();
  }

  /** Send what waits once the app's run is over and its widgets hold their new values
   * (keys typed meanwhile join the same message). */
  flushSoon() {
    if (this.flushTimer) return;
    const started = performance.now();
    if (!appBusy() && started - this.appliedAt > SETTLED_MS) {
      this.flushNow(); // the usual case: a key typed while nothing runs goes at once
      return;
    }
    const attempt = () => {
      if (appBusy() && performance.now() - started < BUSY_WAIT_MS) {
        this.flushTimer = setTimeout(attempt, 15);
        return;
      }
      requestAnimationFrame(() => {
        this.flushTimer = setTimeout(() => {
          this.flushTimer = 0;
          if (appBusy() && performance.now() - started < BUSY_WAIT_MS) this.flushSoon();
          else this.flushNow();
        }, 0);
      });
    };
    this.flushTimer = -1;
    attempt();
  }

  flushNow() {
    if (!this.parent) return; // drawn afresh meanwhile: sent once it is back
    const o = this.outbox;
    this.outbox = { act: false, ahead: null };
    if (o.ahead !== null) this.setStateValue("ahead", o.ahead);
    if (!o.act || !this.queue.length) return;
    if (this.queue.some((a) => a.posting)) {
      this.outbox.act = true; // sent once the route has answered
      return;
    }
    // The focus goes with the actions, in the same run; not while a page is awaited (Python
    // puts the focus on it).
    if (!this.awaiting) this.tell();
    this.setTriggerValue("act", { client: this.client, actions: this.queue.map(wire) });
    this.watch(true);
  }

  /** Look again later at the actions not acknowledged (none: stop looking). */
  watch(sent) {
    clearTimeout(this.resendTimer);
    this.resendTimer = 0;
    if (!this.queue.length) {
      this.resendMs = RESEND_MS;
      return;
    }
    if (sent) this.resendMs = RESEND_MS;
    this.resendTimer = setTimeout(() => {
      this.resendMs = Math.min(this.resendMs * 2, RESEND_CAP_MS);
      if (this.queue.length && this.parent && !this.queue.some((a) => a.posting)) {
        this.setTriggerValue("act", { client: this.client, actions: this.queue.map(wire) });
        this.watch(false);
      }
    }, this.resendMs);
  }

  tell() {
    this.told_n += 1;
    this.told = this.focus;
    this.setStateValue("focus", { record: this.focus, n: this.told_n });
  }

  tellNow() {
    if (this.focus !== this.told && !this.awaiting) this.tell();
  }
}

const grids = new Map(); // Python's name of a gallery -> its grid, for the life of the page

export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  const id = (data && data.grid) || "gallery";
  let grid = grids.get(id);
  if (!grid) {
    grid = new Grid(id);
    grids.set(id, grid);
  }
  if (grid.parent !== parentElement) {
    if (grid.parent) grid.detach(grid.parent);
    grid.attach(parentElement);
  }
  grid.setStateValue = setStateValue;
  grid.setTriggerValue = setTriggerValue;
  if (data) grid.apply(data);
  return () => grid.detach(parentElement);
}
