"""What the app's server does besides serving Streamlit: its own routes
(:mod:`browser_app.ui.routes`) and, once at start-up, the heap settled (:func:`lifespan`).

Streamlit collects garbage after every run of the script (``runner.postScriptGC``: a full
``gc.collect(2)``), holding the GIL while it does: the run's last messages wait for it, so
its time is in every step a person waits for. A full collection walks every object the
collector tracks — about 140,000 once the app is loaded, nearly all of them the code itself
(functions, classes, modules: Streamlit, pandas, pyarrow, this package) — and took 80–130 ms
on a loaded 2-core machine, more than half of a record view's run. So at start-up the server
imports what the runs will import (every module of the front end, and pandas, which its
tables load on first use), collects once, and moves everything alive then into the permanent
generation (``gc.freeze``), which no collection walks again. A collection after a run then
walks only what was made since (sessions, caches, the run's garbage): ~10–25 ms. Objects
frozen are the code and what the imports made, alive for the life of the server anyway.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import pkgutil
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["lifespan", "settle_heap"]


def settle_heap() -> int:
    """Import every module of the front end (and pandas), collect, and freeze what is alive
    (:func:`gc.freeze`); the number of objects frozen."""
    import browser_app.ui as ui

    for found in pkgutil.walk_packages(ui.__path__, ui.__name__ + "."):
        with contextlib.suppress(ImportError):
            importlib.import_module(found.name)
    with contextlib.suppress(ImportError):
        importlib.import_module("pandas")
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


@contextlib.asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """The ``st.App`` lifespan: the heap settled once Streamlit's runtime has started (its
    caches can be made then), before the first request."""
    settle_heap()
    yield
