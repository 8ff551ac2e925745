// The patches grid of tfrecord-browser, drawn in the browser (Streamlit Components v2).
//
// Python sends a page of tiles, one per object (its key "t:<record>:<index>" or
// "p:<record>:<index>", its record, caption, crop URL and its record's saved mark); everything
// on screen is drawn here. Text from the data is only ever set with textContent or as an
// attribute value.
//
// The focus is a tile (an object); a mark is its record's, so every tile of that record shows
// it. Moving the focus (arrows, J/K) happens here with no run of the script; ←/→/J/K past the
// page's last (first) tile turn to the next (previous) page and land on its first (last)
// tile. Marks (P/F, the tiles' buttons), opening (Enter/O, a click on a crop) and page turns
// (N/B) are actions:
// numbered, queued, and the whole queue not yet acknowledged goes to Python as the trigger
// value "act" once the app's run is over; Python writes the journal, then acknowledges the
// number; until then a mark shows as pending. Actions not acknowledged are sent again.
// The focus is the state value "focus", told with every action and before a pointer goes down
// on another widget of the page.
//
// The host element (class tfb-patches) says what is shown, for tests: data-focus (the focused
// tile's key), data-page, data-rev (one more each time data from Python is applied); each tile
// (class tfb-tile) has data-key, data-record, data-mark (passed, flagged or "") and
// data-pending="1" while a mark typed is not yet confirmed.

const MARK_ICONS = { passed: "\u2713", flagged: "\u2691" };
const RESEND_MS = 4000;
const RESEND_CAP_MS = 30000;
const BUSY_WAIT_MS = 3000;
const SETTLED_MS = 250;

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
  o: ["open", 0],
};
const TEXT_ENTRY =
  'input, textarea, select, [contenteditable]:not([contenteditable="false"]),' +
  ' [role="textbox"], [role="combobox"], [role="spinbutton"], [role="slider"],' +
  ' [role="listbox"], [role="option"], [role="menu"], [role="menuitem"]';
const PRESSABLE = 'button, a[href], summary, [role="button"], [role="link"], [role="tab"]';

/** The position a move of `step` from position `here` lands on among `n` tiles (clamped to
 * the page: the page turns with N/B). */
export function movedTo(n, here, step) {
  if (n <= 0) return -1;
  const at = here < 0 ? 0 : here + step;
  return Math.max(0, Math.min(n - 1, at));
}

/** The page a move of one tile (`step` ±1) from position `here` among `n` tiles turns to:
 * +1 past the last tile when a next page exists, -1 before the first when a previous one
 * does, else 0 (the move stays on this page). */
export function crossing(n, here, step, page, pages) {
  if (n <= 0 || here < 0) return 0;
  if (step > 0 && here + step > n - 1 && page < pages) return 1;
  if (step < 0 && here + step < 0 && page > 1) return -1;
  return 0;
}

/** The mark a record shows: the last one queued for it (pending) or the saved one. */
export function shownMark(queue, record, saved) {
  for (let i = queue.length - 1; i >= 0; i--) {
    const a = queue[i];
    if (a.kind === "mark" && a.record === record) return [a.status || "", true];
  }
  return [saved || "", false];
}

function el(tag, cls, parent) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
}

class Grid {
  constructor(id) {
    this.id = id;
    this.client = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
    this.seq = 0;
    this.queue = [];
    this.buffer = []; // keys typed while a page is awaited
    this.awaiting = 0; // the number of a page turn not yet acknowledged
    this.landLast = false; // the page awaited is entered at its last tile (a move back)
    this.data = null;
    this.focus = null;
    this.told = null;
    this.told_n = 0;
    this.pendingAct = false;
    this.flushTimer = 0;
    this.appliedAt = 0;
    this.rev = 0;
    this.resendTimer = 0;
    this.resendMs = RESEND_MS;
    this.parent = null;
    this.setStateValue = null;
    this.setTriggerValue = null;
    this.onKey = (e) => this.key(e);
    this.onDown = (e) => {
      const t = e.target instanceof Element ? e.target : null;
      if (!this.parent || !t || this.root.contains(t) || t.closest("a[href]")) return;
      if (t.closest('[data-testid="stMain"]') && this.focus !== this.told) this.tell();
    };
    this.onClick = (e) => this.click(e);
    this.onMouseDown = (e) => {
      if (e.target instanceof Element && e.target.closest("button")) e.preventDefault();
    };
    document.addEventListener("keydown", this.onKey);
    document.addEventListener("pointerdown", this.onDown, true);
  }

  attach(parent) {
    this.parent = parent;
    this.root = parent.querySelector(".tfb-patches");
    if (!this.root) {
      this.root = el("div", "tfb-patches", parent);
      this.root.dataset.testid = "tfb-patches";
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
  }

  buildHead() {
    const h = this.head;
    h.textContent = "";
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
      b.title =
        act === "open"
          ? "Open the focused object's record (Enter or O)"
          : `Mark the focused object's record ${label.toLowerCase()} (${act[0].toUpperCase()})`;
      this.buttons[act] = b;
    }
    this.pageEl = el("span", "tfb-what", h);
    this.stateEl = el("span", "tfb-saving", h);
  }

  apply(data) {
    const pageBefore = this.data ? this.data.page : null;
    this.data = data;
    const ack = data.ack;
    if (ack && ack.client === this.client) {
      this.queue = this.queue.filter((a) => a.seq > ack.seq);
      if (this.awaiting && ack.seq >= this.awaiting) this.awaiting = 0;
    }
    this.watch(false);
    const keys = data.tiles.map((t) => t.key);
    if (pageBefore !== data.page || !keys.includes(this.focus)) {
      this.focus = data.focus;
      this.told = data.focus;
      // A move back past the first tile lands on the previous page's last one.
      if (pageBefore !== data.page && this.landLast && keys.length) {
        this.focus = keys[keys.length - 1];
      }
    }
    if (pageBefore !== data.page) this.landLast = false;
    this.rev += 1;
    this.appliedAt = performance.now();
    this.render();
    if (this.pendingAct) this.flushSoon();
    if (!this.awaiting && this.buffer.length) {
      const typed = this.buffer;
      this.buffer = [];
      typed.forEach((k) => (this.awaiting ? this.buffer.push(k) : this.handle(k)));
    }
  }

  render() {
    const v = this.data;
    this.root.style.setProperty("--tfb-per-row", String(v.per_row));
    const box = this.tilesEl;
    while (box.children.length > v.tiles.length) box.lastChild.remove();
    v.tiles.forEach((t, i) => this.fill(box.children[i] || this.makeTile(box), t, i));
    this.root.dataset.page = String(v.page);
    this.root.dataset.rev = String(this.rev);
    this.decorate();
  }

  makeTile(box) {
    const tile = el("div", "tfb-tile", box);
    tile.setAttribute("role", "listitem");
    const pic = el("div", "tfb-pic", tile);
    el("div", "tfb-why", pic);
    el("span", "tfb-markicon", pic);
    const cap = el("button", "tfb-cap", tile);
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
    tile.dataset.key = t.key;
    tile.dataset.record = String(t.record);
    const pic = tile.querySelector(".tfb-pic");
    const why = tile.querySelector(".tfb-why");
    let img = pic.querySelector("img");
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
      if (img) img.remove();
      why.hidden = false;
      why.textContent = t.why || "no picture";
    }
    const cap = tile.querySelector(".tfb-cap");
    cap.textContent = t.caption || "";
    tile.title = t.caption || "";
    tile.querySelector(".tfb-marks").hidden = !this.data.can_mark;
  }

  tileOf(key) {
    return this.data ? this.data.tiles.find((t) => t.key === key) : undefined;
  }

  decorate() {
    const v = this.data;
    for (const tile of this.tilesEl.children) {
      const t = v.tiles[Number(tile.dataset.pos)];
      const [mark, pending] = shownMark(this.queue, t.record, t.mark);
      tile.dataset.mark = mark;
      if (pending) tile.dataset.pending = "1";
      else tile.removeAttribute("data-pending");
      const icon = tile.querySelector(".tfb-markicon");
      icon.textContent = MARK_ICONS[mark] || "";
      icon.title = mark ? (pending ? `record ${mark}: saving` : `record ${mark}`) : "";
      for (const b of tile.querySelectorAll(".tfb-set")) {
        b.setAttribute("aria-pressed", String(b.dataset.set === mark));
        b.title = `${b.dataset.set === mark ? "Clear the mark of" : `Mark ${b.dataset.set}:`} record ${t.record}`;
      }
      const focused = t.key === this.focus;
      tile.classList.toggle("tfb-focus", focused);
      if (focused) tile.setAttribute("aria-current", "true");
      else tile.removeAttribute("aria-current");
    }
    this.root.dataset.focus = this.focus === null ? "" : String(this.focus);
    const t = this.tileOf(this.focus);
    this.whatEl.textContent = t ? t.caption || "" : "no object here";
    const [mark] = t ? shownMark(this.queue, t.record, t.mark) : [""];
    for (const s of ["passed", "flagged"]) {
      this.buttons[s].setAttribute("aria-pressed", String(mark === s));
      this.buttons[s].disabled = !t || !v.can_mark;
    }
    this.buttons.open.disabled = !t;
    this.pageEl.textContent = `page ${v.page} of ${v.pages}`;
    this.stateEl.textContent = this.queue.some((a) => a.kind === "mark") ? "saving\u2026" : "";
  }

  key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const name = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    if (!(name in KEYS) || !this.data || !this.parent || !this.root.isConnected) return;
    const target = e.target instanceof Element ? e.target : null;
    if (target && target.closest(TEXT_ENTRY)) return;
    if (name === "Enter" && target && target.closest(PRESSABLE)) return;
    e.preventDefault();
    const what = KEYS[name][0];
    if (e.repeat && what !== "move" && what !== "row") return;
    if (this.awaiting) this.buffer.push(name);
    else this.handle(name);
  }

  handle(name) {
    const [what, arg] = KEYS[name];
    if (what === "move") this.step(arg);
    else if (what === "row") this.move(arg * this.data.per_row);
    else if (what === "mark") {
      const t = this.tileOf(this.focus);
      if (t) this.mark(t.record, arg);
    } else if (what === "page") this.turn(arg);
    else if (what === "open") {
      const t = this.tileOf(this.focus);
      if (t) this.open(t.record);
    }
  }

  click(e) {
    const target = e.target instanceof Element ? e.target : null;
    if (!target || !this.data) return;
    const act = target.closest(".tfb-act");
    const focused = this.tileOf(this.focus);
    if (act) {
      if (!focused) return;
      if (act.dataset.act === "open") this.open(focused.record);
      else this.mark(focused.record, act.dataset.act);
      return;
    }
    const tile = target.closest(".tfb-tile");
    if (!tile) return;
    const t = this.data.tiles[Number(tile.dataset.pos)];
    if (!t) return;
    this.setFocus(t.key);
    const set = target.closest(".tfb-set");
    if (set) {
      const [mark] = shownMark(this.queue, t.record, t.mark);
      this.mark(t.record, mark === set.dataset.set ? null : set.dataset.set);
      return;
    }
    this.open(t.record);
  }

  setFocus(key) {
    if (key === this.focus) return;
    this.focus = key;
    this.decorate();
    const tile = this.tilesEl.querySelector(".tfb-tile.tfb-focus");
    if (tile) tile.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  move(step) {
    const keys = this.data.tiles.map((t) => t.key);
    const to = movedTo(keys.length, keys.indexOf(this.focus), step);
    if (to >= 0) this.setFocus(keys[to]);
  }

  step(dir) {
    // One tile on; past the page's edge, on to the next (or previous) page's first (or last).
    const v = this.data;
    const keys = v.tiles.map((t) => t.key);
    const turn = crossing(keys.length, keys.indexOf(this.focus), dir, v.page, v.pages);
    if (turn) this.turn(turn, turn < 0);
    else this.move(dir);
  }

  turn(dir, landLast = false) {
    const v = this.data;
    const to = v.page + dir;
    if (to < 1 || to > v.pages) return;
    this.landLast = landLast;
    this.awaiting = this.seq + 1; // keys typed until the page comes wait for it
    this.act({ kind: "page", step: dir });
  }

  mark(record, status) {
    if (!this.data.can_mark) return;
    this.act({ kind: "mark", record, status });
  }

  open(record) {
    this.act({ kind: "open", record });
  }

  act(action) {
    this.seq += 1;
    this.queue.push({ seq: this.seq, ...action });
    this.decorate();
    this.pendingAct = true;
    this.flushSoon();
  }

  flushSoon() {
    if (this.flushTimer) return;
    const started = performance.now();
    if (!appBusy() && started - this.appliedAt > SETTLED_MS) {
      this.flushNow();
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
    this.pendingAct = false;
    if (!this.queue.length) return;
    this.tell();
    this.setTriggerValue("act", { client: this.client, actions: this.queue });
    this.watch(true);
  }

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
      if (this.queue.length && this.parent) {
        this.setTriggerValue("act", { client: this.client, actions: this.queue });
      }
      this.watch(false);
    }, this.resendMs);
  }

  tell() {
    this.told_n += 1;
    this.told = this.focus;
    this.setStateValue("focus", { tile: this.focus, n: this.told_n });
  }
}

const grids = new Map(); // Python's name of a patches grid -> its grid, for the page's life

export default function (component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  const id = (data && data.grid) || "patches";
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
