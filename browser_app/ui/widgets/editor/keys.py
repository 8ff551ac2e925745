"""A quick Enter in an editor cell is not lost.

The cell editor of Streamlit's data editor (glide-data-grid's overlay editor) starts a
zero-delay timer on every key. Enter sets the "move down" motion and its own timer saves the
cell; but when Enter comes before the timer of the key typed just before it has run (a quick
hand, or a page busy drawing, which queues both keys), that earlier timer finds the motion set
and ends the edit without saving, and the cell silently keeps its old value: no message
reaches the app. Upstream: glideapps/glide-data-grid pull request 1201 (open).

Until the grid fixes it, a key listener on the page holds such an Enter (or Tab, or Escape)
back until those timers have run, and then sends it again; an Enter with no key waiting, and
an input method's keys (an Enter that ends a composition), go through untouched. The
listener is installed once per page load.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["keep_quick_enter"]

_JS = """<script>(() => {
  if (window.__tfbQuickEnter) return;
  window.__tfbQuickEnter = true;
  const motion = new Set(["Enter", "Tab", "Escape"]);
  let waiting = 0; // typed keys whose zero-delay timer in the grid has not run yet
  window.addEventListener("keydown", (e) => {
    const t = e.target;
    if (!(t instanceof HTMLElement) || !t.classList.contains("gdg-input")) return;
    if (e.isComposing || e.keyCode === 229) return; // an input method's keys are its own
    if (!motion.has(e.key)) {
      waiting++; // this timer runs just before the grid's own for the same key
      setTimeout(() => { waiting--; }, 0);
      return;
    }
    if (!e.isTrusted || waiting === 0) return;
    e.stopImmediatePropagation();
    e.preventDefault();
    const again = new KeyboardEvent("keydown", {
      key: e.key, code: e.code, shiftKey: e.shiftKey, ctrlKey: e.ctrlKey,
      altKey: e.altKey, metaKey: e.metaKey, bubbles: true, cancelable: true,
    });
    setTimeout(() => t.dispatchEvent(again), 0); // after the waiting keys' timers
  }, true);
})();</script>"""


def keep_quick_enter() -> None:
    """Install, on the page, the listener that keeps a quick Enter's edit (see the module)."""
    st.html(_JS, unsafe_allow_javascript=True)
