"""The server's start-up (:mod:`browser_app.ui.server`): the front end imported and what is
alive frozen, so the collection Streamlit runs after every run of the script walks only what
was made since. Run in a fresh interpreter (freezing is for the whole process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_PROBE = """
import gc, json, sys
before = len(gc.get_objects())
from browser_app.ui.server import settle_heap
frozen = settle_heap()
print(json.dumps({
    "before": before,
    "frozen": frozen,
    "tracked": len(gc.get_objects()),
    "pages": "browser_app.ui.pages.records" in sys.modules,
    "widgets": "browser_app.ui.widgets.review" in sys.modules,
    "pandas": "pandas" in sys.modules,
}))
"""


def test_settling_imports_the_front_end_and_leaves_little_for_a_collection_to_walk() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["pages"] and got["widgets"] and got["pandas"]
    # The front end's code and what its imports made: tens of thousands of objects, all
    # frozen; a full collection now walks only what is made from here on.
    assert got["frozen"] > 50_000
    assert got["tracked"] < got["frozen"] // 20
