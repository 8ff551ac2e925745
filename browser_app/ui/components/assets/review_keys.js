// The record view's review keys of tfrecord-browser (Streamlit Components v2): P passed,
// F flagged, J next record, K previous record.
//
// Each key is an action with a sequence number; the queue of actions not yet acknowledged
// goes to Python, whole, as the trigger value "act" (so an action lost between two runs is
// sent again, and Python applies each number once, in order). A key typed while the app runs
// its script waits for the run to end (keys typed meanwhile join the same message): a
// message sent during a run would carry the values some widgets had before it, and the
// server would take a stale one (the pager's "Go to record") as a change. An
// action names the record it acts on, or none when a move before it in the queue has not
// been drawn yet: Python applies it where that move landed. So keys typed faster than the
// page is drawn each act once, on the record they were meant for. Text is only ever set
// with textContent.
//
// Each key runs only the record view. What the rest of the page shows of the review (the
// table's row and review column, the sidebar's counts) catches up once the keys rest: when
// Python says the page is behind (data.behind, a token), the element sends the trigger
// "rest" after data.rest_ms without a key, once per token. A key typed while that run is
// under way is sent at once (its run takes that run's place; what it left undone is asked
// for again at the next rest), unless Python says the run waits (data.rest_waits: it draws
// widgets the server sets itself, whose old values a message sent meanwhile would carry).
//
// Where the server has the marks route (data.mark: its URL and this session's token), a mark
// on a record the element knows (no move waits before it) is posted there first: the route
// writes it into the journal and answers, and the element says "saved" at once; only then
// does the action go to Python (the page follows on that run; Python sees the route wrote it
// and does not write it again). The posts go one at a time, in the order typed: two posts
// under way at once are two requests the server may take in either order, and the journal's
// last mark of a record is its mark. A mark the route refused, or that could not reach it,
// goes to Python as before, and so does every mark typed after it (Python writes them in
// order after it). Nothing else is ever posted; the token is never put in the page.
//
// The host element (class tfb-review-keys) says what is shown, for tests: data-record (the
// record Python drew), data-queue (actions not yet acknowledged), data-behind (what Python
// said the page has not drawn yet), data-rev (one more each time data from Python is
// applied), data-saved (the last mark the route saved, "RECORD:STATUS"), data-rest (the
// state whose catching-up was last asked for, set as it is sent).

const KEYS = {
  p: ["mark", "passed"],
  f: ["mark", "flagged"],
  j: ["move", 1],
  k: ["move", -1],
};
const RESEND_MS = 1500;
const POST_MS = 10000; // a mark the route has not answered by then goes to Python
const LABELS = { passed: "\u2713 passed", flagged: "\u2691 flagged" };
const BUSY_WAIT_MS = 3000; // how long a message waits for the app's run to end, at most
const CATCH_UP_MS = 2000; // a run under way this soon after a rest was sent is that one

/** Whether the app is running its script. */
function appBusy() {
  const app = document.querySelector('[data-testid="stApp"]');
  const s = app ? app.getAttribute("data-test-script-state") : null;
  return s === "running" || s === "rerunRequested";
}
const HELP = [
  ["P", "passed"],
  ["F", "flagged"],
  ["J", "next record"],
  ["K", "previous record"],
];
// Where a key is typing, not a command.
const TEXT_ENTRY =
  'input, textarea, select, [contenteditable]:not([contenteditable="false"]),' +
  ' [role="textbox"], [role="combobox"], [role="spinbutton"], [role="slider"],' +
  ' [role="listbox"], [role="option"], [role="menu"], [role="menuitem"], [role="dialog"]';
// Tables: only the records table's keys are the review's (a letter typed in the editor's
// tables starts editing a cell).
const TABLE = '[data-testid="stDataFrame"]';
const RECORDS_TABLE = ".st-key-tfb-records-table";

/** Whether a key event is one of the review's commands (not typing, not a shortcut of the
 * browser, not held down). */
export function isCommand(e) {
  if (e.defaultPrevented || e.repeat || e.isComposing) return false;
  if (e.ctrlKey || e.metaKey || e.altKey) return false;
  if (!KEYS[(e.key || "").toLowerCase()]) return false;
  const t = e.target;
  if (t && t.closest) {
    if (t.closest(TEXT_ENTRY)) return false;
    const table = t.closest(TABLE);
    if (table && !table.closest(RECORDS_TABLE)) return false;
  }
  return true;
}

/** The action of key `key` when `record` is shown and `queue` waits: null when the key does
 * nothing here. */
export function actionOf(key, record, queue, can, seq) {
  const what = KEYS[key.toLowerCase()];
  if (!what || record === null || record === undefined) return null;
  const [kind, arg] = what;
  if (kind === "mark" && !can.mark) return null;
  if (kind === "move" && !can.move) return null;
  const moving = queue.some((a) => a.kind === "move");
  const a = { seq, kind, record: moving ? null : record };
  if (kind === "mark") a.status = arg;
  else a.step = arg;
  return a;
}

/** The action as Python reads it (what the element keeps beside it stays here). */
export function wire(a) {
  const out = { seq: a.seq, kind: a.kind, record: a.record };
  if (a.kind === "mark") out.status = a.status;
  else out.step = a.step;
  return out;
}

/** Whether the mark `a` can go to the marks route: a mark on a record it names by number,
 * with every mark before it in `queue` saved there already (or, `posting` true, being posted
 * there: the posts go one after the other, each asking again when its turn comes). */
export function routable(a, route, queue, posting = false) {
  if (!route || typeof route.url !== "string" || typeof route.token !== "string") return false;
  if (a.kind !== "mark" || !Number.isInteger(a.record) || a.record < 0) return false;
  const before = (b) => b !== a && b.seq < a.seq && b.kind === "mark";
  return queue.every((b) => !before(b) || b.saved || (posting && b.posting));
}

function newClient() {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

class Keys {
  constructor(parent) {
    this.root = parent.querySelector(".tfb-review-keys");
    this.help = this.root.querySelector(".tfb-keys-help");
    this.stateEl = this.root.querySelector(".tfb-keys-state");
    this.client = newClient();
    this.scope = null;
    this.seq = 0;
    this.queue = []; // actions sent, not yet acknowledged, oldest first
    this.record = null;
    this.can = { mark: false, move: false };
    this.rev = 0;
    this.setTriggerValue = null;
    this.timer = 0;
    this.sendTimer = 0;
    this.behind = "";
    this.restMs = 600;
    this.restSent = "";
    this.restTimer = 0;
    this.restWaits = false;
    this.catchingUp = 0; // when a rest was sent whose run a key need not wait for
    this.route = null; // the marks route: { url, token }
    this.saved = ""; // the last mark the route saved, "RECORD:STATUS"
    this.posts = Promise.resolve(); // the marks posted to the route, one after the other
    this.buildHelp();
    this.onKey = (e) => this.key(e);
    this.listening = false;
  }

  // On the window, before anything else sees the key: the review bar's buttons keep their
  // keyboard shortcuts (for the moment before this code runs), which must not act as well.
  listen() {
    if (!this.listening) window.addEventListener("keydown", this.onKey, true);
    this.listening = true;
  }

  destroy() {
    window.removeEventListener("keydown", this.onKey, true);
    this.listening = false;
    clearTimeout(this.timer);
    clearTimeout(this.restTimer);
    clearTimeout(this.sendTimer);
    this.sendTimer = 0;
  }

  /** Take over from the element drawn before this one (the page drew the review bar anew):
   * its actions not yet acknowledged are this one's, if for the same source. */
  adopt(before) {
    this.client = before.client;
    this.seq = before.seq;
    this.scope = before.scope;
    this.queue = before.queue;
    this.restSent = before.restSent;
    this.saved = before.saved;
    this.posts = before.posts;
  }

  buildHelp() {
    this.help.textContent = "";
    const title = document.createElement("span");
    title.textContent = "Keys:";
    this.help.appendChild(title);
    for (const [key, what] of HELP) {
      const item = document.createElement("span");
      const k = document.createElement("kbd");
      k.textContent = key;
      item.appendChild(k);
      item.appendChild(document.createTextNode(` ${what}`));
      this.help.appendChild(item);
    }
  }

  apply(data) {
    if (data.scope !== this.scope) {
      // Another source: what waited was for the one before.
      this.scope = data.scope;
      this.queue = [];
      this.client = newClient();
      this.seq = 0;
    }
    const ack = data.ack;
    if (ack && ack.client === this.client) {
      this.queue = this.queue.filter((a) => a.seq > ack.seq);
    }
    this.record = data.record === undefined ? null : data.record;
    this.can = { mark: !!data.can_mark, move: !!data.can_move };
    this.behind = typeof data.behind === "string" ? data.behind : "";
    if (typeof data.rest_ms === "number") this.restMs = data.rest_ms;
    this.restWaits = !!data.rest_waits;
    const route = data.mark;
    this.route =
      route && typeof route.url === "string" && typeof route.token === "string" ? route : null;
    this.catchingUp = 0;
    this.rev += 1;
    this.render();
    // Actions a run did not see (sent while it ran, and lost): once more, if still not
    // acknowledged after a while (sent at once, they would make a run more in the usual case).
    clearTimeout(this.timer);
    if (this.queue.length) this.timer = setTimeout(() => this.send(), RESEND_MS);
    this.restLater();
  }

  // Once the keys rest, the rest of the page catches up (once per state Python says).
  restLater() {
    clearTimeout(this.restTimer);
    if (this.queue.length || !this.behind || this.behind === this.restSent) return;
    this.restTimer = setTimeout(() => {
      if (this.queue.length || !this.behind || this.behind === this.restSent) return;
      if (appBusy()) {
        this.restLater(); // later, once the app is idle
        return;
      }
      this.restSent = this.behind;
      this.catchingUp = this.restWaits ? 0 : performance.now();
      if (this.setTriggerValue) this.setTriggerValue("rest", this.behind);
      this.root.dataset.rest = this.restSent;
    }, this.restMs);
  }

  key(e) {
    if (!this.root.isConnected || !isCommand(e)) return;
    const a = actionOf(e.key, this.record, this.queue, this.can, this.seq + 1);
    if (!a) return;
    e.preventDefault();
    e.stopImmediatePropagation(); // the buttons' own shortcuts never see it
    clearTimeout(this.restTimer);
    this.seq = a.seq;
    this.queue.push(a);
    if (routable(a, this.route, this.queue, true)) {
      // Posted once the posts before it are answered; the queue waits for it.
      a.posting = true;
      const route = this.route;
      this.posts = this.posts.then(() => this.post(a, route));
    }
    this.send();
    this.render();
  }

  /** Post the mark `a` to the marks route (unless a mark before it went to Python
   * meanwhile); once it answers, the queue goes to Python. */
  async post(a, route) {
    // The element whose queue holds the action now (the page may have drawn a new one).
    const owner = () => (active && active.queue.includes(a) ? active : this);
    let got = null;
    if (routable(a, route, owner().queue)) {
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
    const keys = owner();
    if (got && got.saved === true && got.record === a.record && got.status === a.status) {
      a.saved = true;
      keys.saved = `${a.record}:${a.status}`;
    }
    keys.send();
    keys.render();
  }

  /** Send what waits: at once when the app is idle, else once its run is over and a frame
   * has passed (its widgets then hold their new values). */
  whenIdle(go) {
    // The run under way is the one catching up, which the key's own run takes the place of.
    const catching = this.catchingUp && performance.now() - this.catchingUp < CATCH_UP_MS;
    if (!appBusy() || catching) {
      this.catchingUp = 0;
      go();
      return;
    }
    const started = performance.now();
    const attempt = () => {
      if (appBusy() && performance.now() - started < BUSY_WAIT_MS) {
        this.sendTimer = setTimeout(attempt, 15);
        return;
      }
      requestAnimationFrame(() => {
        this.sendTimer = setTimeout(go, 0);
      });
    };
    this.sendTimer = setTimeout(attempt, 15);
  }

  send() {
    clearTimeout(this.timer);
    if (this.sendTimer) return; // a message waits already: it will carry the whole queue
    this.whenIdle(() => {
      this.sendTimer = 0;
      // A mark on its way to the route: the queue goes once it has answered.
      if (this.queue.some((a) => a.posting)) return;
      if (this.setTriggerValue && this.queue.length && this.listening) {
        this.setTriggerValue("act", { client: this.client, actions: this.queue.map(wire) });
      }
    });
  }

  render() {
    const r = this.root;
    r.dataset.record = this.record === null ? "" : String(this.record);
    r.dataset.queue = String(this.queue.length);
    r.dataset.behind = this.behind;
    r.dataset.rev = String(this.rev);
    r.dataset.saved = this.saved;
    r.dataset.rest = this.restSent;
    let text = "";
    if (this.queue.length) {
      // Saved when every action waiting is a mark the route saved (the page follows).
      const last = this.queue[this.queue.length - 1];
      const done = this.queue.every((a) => a.saved);
      text = done ? `Record ${last.record} ${LABELS[last.status]} \u00b7 saved` : "saving\u2026";
    }
    this.stateEl.textContent = text;
  }
}

const all = new WeakMap();
let active = null; // the element whose keys these are: one review bar on a page

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let keys = all.get(parentElement);
  if (!keys || !keys.root.isConnected) {
    if (keys) keys.destroy();
    keys = new Keys(parentElement);
    all.set(parentElement, keys);
  }
  let adopted = false;
  if (active !== keys) {
    // One listener only: a key must never act twice.
    if (active) {
      keys.adopt(active);
      active.destroy();
      adopted = true;
    }
    active = keys;
  }
  keys.listen();
  keys.setTriggerValue = setTriggerValue;
  if (data) keys.apply(data);
  if (adopted && keys.queue.length) keys.send(); // what the element before had not sent
  return () => {
    keys.destroy();
    all.delete(parentElement);
    if (active === keys) active = null;
  };
}
