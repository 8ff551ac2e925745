// The clip player of tfrecord-browser, drawn in the browser (Streamlit Components v2).
//
// Python sends the clip's frames by URL with their boxes as numbers; this draws the frame, its
// boxes (an SVG laid over the picture), the slider, the buttons and a film strip, and plays
// the frames at the clip's rate on its own: no run of the script per frame. Text from the
// data is only ever set with textContent or as an attribute value.
//
// A clip longer than the window Python sends is asked for a window at a time: the trigger
// value "want" ({frame, seq}) names the frame needed; playback waits until it is there.
//
// The host element (class tfb-player) says what is shown, for tests: data-frame (the frame
// shown, from 1), data-count, data-first (the first frame, from 0, of the window it was sent),
// data-playing ("1" while it plays), data-rev (one more each time data from Python is applied).

const SVG = "http://www.w3.org/2000/svg";
const STRIP = 9; // frames on the film strip
const AHEAD = 12; // frames fetched ahead of the one shown
const EDGE = "#1f1f1f";

// Where each clip was, by its key: a clip drawn again (a run of the page) goes on from there.
const places = new Map();

function el(tag, cls, parent) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
}

function svg(tag, attrs, parent) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

/** The font size of box captions on a w × h picture (as the server's drawing picks it), or 0
 * when a caption would take too much of the picture. */
export function captionSize(w, h) {
  const side = Math.min(w, h);
  const size = Math.min(16, Math.max(9, Math.floor(side / 30)));
  return (size + 2) * 8 <= side ? size : 0;
}

/** Where a caption of tw × th goes for a box at (x0, y0) on a pw × ph picture: above the box
 * when there is room, else just inside its top; always inside the picture. */
export function captionPlace(x0, y0, tw, th, pw, ph) {
  tw = Math.min(tw, pw);
  th = Math.min(th, ph);
  let top = y0 - th >= 0 ? Math.floor(y0) - th : Math.floor(Math.max(0, Math.min(y0, ph - th)));
  if (top < 0 || top + th > ph) top = Math.max(0, ph - th);
  const left = Math.floor(Math.min(Math.max(0, x0), pw - tw));
  return [left, top, tw, th];
}

/** The frame a clip playing at `fps` from frame `from` shows `ms` milliseconds later, and
 * whether it has reached its last (`count` frames). */
export function frameAt(from, ms, fps, count) {
  const f = from + Math.floor((ms / 1000) * fps);
  return f >= count - 1 ? [count - 1, true] : [Math.max(0, f), false];
}

class Player {
  constructor(parent) {
    this.root = parent.querySelector(".tfb-player");
    this.stage = this.root.querySelector(".tfb-stage");
    this.captionEl = this.root.querySelector(".tfb-caption");
    this.problemsEl = this.root.querySelector(".tfb-problems");
    this.strip = this.root.querySelector(".tfb-strip");
    const bar = this.root.querySelector(".tfb-controls");
    this.img = el("img", "", this.stage);
    this.img.alt = "";
    this.overlay = svg("svg", { "aria-hidden": "true" }, this.stage);
    this.missing = el("div", "tfb-missing", null);
    this.playBtn = el("button", "tfb-play", bar);
    this.playBtn.type = "button";
    this.prevBtn = el("button", "tfb-prev", bar);
    this.prevBtn.type = "button";
    this.prevBtn.textContent = "\u2039";
    this.prevBtn.setAttribute("aria-label", "Previous frame");
    this.prevBtn.title = "The previous frame";
    this.nextBtn = el("button", "tfb-next", bar);
    this.nextBtn.type = "button";
    this.nextBtn.textContent = "\u203a";
    this.nextBtn.setAttribute("aria-label", "Next frame");
    this.nextBtn.title = "The next frame";
    this.slider = el("input", "", bar);
    this.slider.type = "range";
    this.slider.min = "1";
    this.slider.step = "1";
    this.slider.setAttribute("aria-label", "Frame");
    this.slider.title = "Every frame of the clip; the film strip shows the ones around it";
    this.at = el("span", "tfb-at", bar);
    this.data = null;
    this.rev = 0;
    this.frame = 0;
    this.playing = false;
    this.from = 0;
    this.t0 = 0;
    this.raf = 0;
    this.seq = 0;
    this.asked = -1;
    this.stripFirst = -1;
    this.fetched = new Set();
    this.playBtn.addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    this.prevBtn.addEventListener("click", () => this.step(-1));
    this.nextBtn.addEventListener("click", () => this.step(1));
    this.slider.addEventListener("input", () => {
      this.stop();
      this.show(Number(this.slider.value) - 1);
    });
    this.img.addEventListener("error", () => {
      if (!this.img.getAttribute("src")) return;
      this.img.hidden = true;
      this.overlay.style.display = "none";
      this.missing.textContent = "cannot show this frame: the browser could not decode it";
      if (!this.missing.isConnected) this.stage.appendChild(this.missing);
    });
    this.tick = this.tick.bind(this);
  }

  apply(data) {
    const first = this.data === null || this.data.key !== data.key;
    this.data = data;
    this.asked = -1; // new frames came: a frame still missing is asked for again
    this.rev += 1;
    this.root.dataset.rev = String(this.rev);
    this.root.dataset.count = String(data.count);
    this.root.dataset.first = String(data.first); // the first frame of the window sent
    this.slider.max = String(Math.max(1, data.count));
    this.playBtn.title = `Play the frames at ${data.fps} frames a second`;
    let resumed = false;
    if (first) {
      const was = places.get(data.key);
      this.frame = was ? Math.min(was.frame, data.count - 1) : 0;
      this.fetched.clear();
      this.stripFirst = -1;
      if (was && was.playing && !this.playing) {
        // drawn again while it played (a run of the page): it plays on, in time
        this.playing = true;
        this.from = was.from;
        this.t0 = was.t0;
        resumed = true;
      }
    }
    if (this.playing && !resumed) {
      // the frames asked for came: time goes on from the frame waited at
      this.from = this.frame;
      this.t0 = performance.now();
    }
    this.show(this.frame, true);
    this.buttons();
    if (this.playing && !this.raf) this.raf = requestAnimationFrame(this.tick);
  }

  remember() {
    if (!this.data) return;
    places.set(this.data.key, {
      frame: this.frame, playing: this.playing, from: this.from, t0: this.t0,
    });
  }

  has(i) {
    const d = this.data;
    return i >= d.first && i < d.first + d.frames.length;
  }

  want(i) {
    if (this.asked === i || !this.setTriggerValue) return;
    this.asked = i;
    this.seq += 1;
    this.setTriggerValue("want", { frame: i, seq: this.seq });
  }

  show(i, again = false) {
    const d = this.data;
    if (!d || !d.count) return;
    i = Math.max(0, Math.min(d.count - 1, i));
    const moved = i !== this.frame;
    this.frame = i;
    this.remember();
    this.root.dataset.frame = String(i + 1);
    this.slider.value = String(i + 1);
    this.at.textContent = `${i + 1} / ${d.count}`;
    this.prevBtn.disabled = i === 0;
    this.nextBtn.disabled = i >= d.count - 1;
    if (!this.has(i)) {
      this.captionEl.textContent = `frame ${i + 1} of ${d.count} \u00b7 loading\u2026`;
      this.want(i);
      return;
    }
    if (!moved && !again && this.drawn === i) return;
    const f = d.frames[i - d.first];
    this.drawn = i;
    this.captionEl.textContent = f.caption;
    this.problemsEl.textContent = f.problems.length
      ? `Boxes with problems (drawn dashed): ${f.problems.join("; ")}`
      : "";
    if (f.src) {
      if (this.missing.isConnected) this.missing.remove();
      this.img.hidden = false;
      this.overlay.style.display = "";
      if (this.img.getAttribute("src") !== f.src) this.img.src = f.src;
      this.img.width = f.w;
      this.img.height = f.h;
      // a small frame is shown enlarged by a whole factor (to about 480 pixels), as sharp
      // as the browser draws it; never wider than the page
      const k = Math.max(1, Math.min(4, Math.floor(480 / Math.max(f.w, f.h, 1))));
      this.img.style.width = `${f.w * k}px`;
      this.boxes(f);
    } else {
      this.img.hidden = true;
      this.overlay.style.display = "none";
      this.missing.textContent = `cannot show this frame: ${f.error || "no picture"}`;
      if (!this.missing.isConnected) this.stage.appendChild(this.missing);
    }
    this.drawStrip();
    this.ahead();
  }

  boxes(f) {
    const o = this.overlay;
    o.replaceChildren();
    o.setAttribute("viewBox", `0 0 ${f.w} ${f.h}`);
    o.setAttribute("preserveAspectRatio", "none");
    const width = Math.max(1, Math.round(Math.min(f.w, f.h) / 100));
    const size = captionSize(f.w, f.h);
    for (const b of f.boxes) {
      const x = Math.min(b.x0, b.x1);
      const y = Math.min(b.y0, b.y1);
      const w = Math.abs(b.x1 - b.x0);
      const h = Math.abs(b.y1 - b.y0);
      const common = { x, y, width: w, height: h, fill: "none" };
      if (b.bad) {
        svg("rect", { ...common, stroke: b.color, "stroke-width": width,
          "stroke-dasharray": `${width * 4} ${width * 3}` }, o);
      } else {
        svg("rect", { ...common, stroke: EDGE, "stroke-width": width + 2 }, o);
        svg("rect", { ...common, stroke: b.color, "stroke-width": width }, o);
      }
      if (!size || !b.text) continue;
      const tw = Math.ceil(b.text.length * size * 0.6) + 4;
      const th = size + 4;
      const [left, top, cw, ch] = captionPlace(x, y, tw, th, f.w, f.h);
      svg("rect", { x: left, y: top, width: cw, height: ch, fill: b.color }, o);
      const t = svg("text", { x: left + 2, y: top + size, fill: b.ink,
        "font-size": size, "font-family": "sans-serif" }, o);
      t.textContent = b.text;
    }
  }

  drawStrip() {
    const d = this.data;
    const count = d.frames.length;
    const n = Math.min(STRIP, count);
    let first = this.frame - d.first - Math.floor(n / 2);
    first = Math.max(0, Math.min(first, count - n));
    if (first !== this.stripFirst) {
      this.stripFirst = first;
      this.strip.replaceChildren();
      for (let k = first; k < first + n; k++) {
        const f = d.frames[k];
        const b = el("button", "", this.strip);
        b.type = "button";
        b.dataset.frame = String(d.first + k + 1);
        b.setAttribute("aria-label", `Frame ${d.first + k + 1}`);
        b.title = `frame ${d.first + k + 1}`;
        b.addEventListener("click", () => {
          this.stop();
          this.show(d.first + k);
        });
        if (f.src) {
          const im = el("img", "", b);
          im.alt = "";
          im.src = f.src;
        } else {
          b.textContent = "\u00d7";
        }
      }
    }
    for (const b of this.strip.children) {
      b.setAttribute("aria-current", b.dataset.frame === String(this.frame + 1) ? "true" : "false");
    }
  }

  ahead() {
    const d = this.data;
    for (let i = this.frame + 1; i <= this.frame + AHEAD && this.has(i); i++) {
      const src = d.frames[i - d.first].src;
      if (src && !this.fetched.has(src)) {
        this.fetched.add(src);
        new Image().src = src;
      }
    }
  }

  buttons() {
    this.playBtn.textContent = this.playing ? "Pause" : "Play";
    this.playBtn.setAttribute("aria-label", this.playing ? "Pause" : "Play");
    this.root.dataset.playing = this.playing ? "1" : "";
    this.remember();
  }

  play() {
    const d = this.data;
    if (!d || d.count < 2) return;
    if (this.frame >= d.count - 1) this.show(0); // at the end: play from the start
    this.playing = true;
    this.from = this.frame;
    this.t0 = performance.now();
    this.buttons();
    this.raf = requestAnimationFrame(this.tick);
  }

  tick(now) {
    if (!this.playing) return;
    const d = this.data;
    const [f, end] = frameAt(this.from, now - this.t0, d.fps, d.count);
    if (!this.has(f)) {
      this.show(f); // asks for the window holding it; time waits until it comes
      this.from = this.frame;
      this.t0 = now;
    } else if (f !== this.frame) {
      this.show(f);
    }
    if (end) {
      this.stop();
      return;
    }
    this.raf = requestAnimationFrame(this.tick);
  }

  pause() {
    this.stop();
  }

  stop() {
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
    this.playing = false;
    this.buttons();
  }

  step(by) {
    this.stop();
    this.show(this.frame + by);
  }

  destroy() {
    // the element is taken off the page: its place (and whether it played) is kept for the
    // next time the clip is drawn
    if (this.raf) cancelAnimationFrame(this.raf);
    this.raf = 0;
  }
}

const players = new WeakMap();

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let player = players.get(parentElement);
  if (!player || !player.root.isConnected) {
    player = new Player(parentElement);
    players.set(parentElement, player);
  }
  player.setTriggerValue = setTriggerValue;
  if (data) player.apply(data);
  return () => {
    player.destroy();
    players.delete(parentElement);
  };
}
