"""What the Patches page sent its grid element, read in AppTest (no browser): the one element
that draws the tiles (:func:`browser_app.ui.components.patches.page_data`). The tests import
this module as ``patches_support``."""

from __future__ import annotations

import json
from typing import Any

from streamlit.testing.v1 import AppTest

from browser_app.ui.components import patches


def patches_data(at: AppTest) -> dict[str, Any]:
    """What the grid was sent: ``tiles`` (each with its ``key``, ``record``, ``caption``,
    the URL ``src`` of its crop or ``why`` there is none, ``mark``), ``focus``, ``page``,
    ``pages``, ``per_row``, ``can_mark``, ``ack``. Exactly one such element is on the page."""
    grids = [e for e in at.get("bidi_component") if e.proto.component_name == patches.NAME]
    assert len(grids) == 1, f"{len(grids)} patches grids on the page"
    return dict(json.loads(grids[0].proto.json))


def patches_tiles(at: AppTest) -> list[dict[str, Any]]:
    """The tiles the Patches page shows (see :func:`patches_data`), in order."""
    return list(patches_data(at)["tiles"])
