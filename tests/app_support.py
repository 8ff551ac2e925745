"""What the in-process app tests (AppTest, no browser) share: the router script, one way to
start it as the launcher does, a single page run on its own, what the Gallery's grid element
was sent, and the check that a run did not crash. The tests import this module as
``app_support``."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from browser_app.ui.components import gallery

APP = str(Path(__file__).resolve().parent.parent / "browser_app" / "streamlit_app.py")

_PAGE = """
from browser_app.ui import state
from browser_app.ui.pages import {page}
state.init()
{page}.render()
"""


def page_script(page: str) -> str:
    """A script that does what the router does before a page runs (``state.init()``) and
    then draws the page ``browser_app.ui.pages.<page>`` alone."""
    return _PAGE.format(page=page)


def start_app(
    monkeypatch: pytest.MonkeyPatch,
    root: str | Path,
    *args: str,
    params: Mapping[str, Any] | None = None,
    timeout: float = 60,
    run: bool = True,
    script: str | Callable[[], None] | None = None,
) -> AppTest:
    """A fresh app (every ``st.cache_*`` emptied) with ``sys.argv`` as the launcher sets it
    (``--root root`` and then ``args``) and the URL query parameters ``params``: run once
    unless ``run`` is false. It is the router script, or ``script``: a script's source (see
    ``page_script``) or a function (``AppTest.from_function``)."""
    st.cache_resource.clear()
    st.cache_data.clear()
    monkeypatch.setattr(sys, "argv", ["streamlit_app.py", "--root", str(root), *args])
    if script is None:
        at = AppTest.from_file(APP, default_timeout=timeout)
    elif isinstance(script, str):
        at = AppTest.from_string(script, default_timeout=timeout)
    else:
        at = AppTest.from_function(script, default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run() if run else at


def gallery_data(at: AppTest) -> dict[str, Any]:
    """What the Gallery page sent its grid, the one element that draws the tiles
    (:func:`browser_app.ui.components.gallery.page_data`): ``tiles`` (each with its
    ``record``, ``caption``, the URL ``src`` of its picture in the app's media files or the
    reason ``why`` it has none, ``damaged`` / ``recovered``, ``badges``, ``mark``), ``next``,
    ``focus``, ``page``, ``size``... Exactly one such element is on the page."""
    grids = [e for e in at.get("bidi_component") if e.proto.component_name == gallery.NAME]
    assert len(grids) == 1, f"{len(grids)} gallery grids on the page"
    return dict(json.loads(grids[0].proto.json))


def gallery_tiles(at: AppTest) -> list[dict[str, Any]]:
    """The tiles of the page the Gallery shows (see :func:`gallery_data`), in order."""
    return list(gallery_data(at)["tiles"])


def table_pictures(at: AppTest, media: dict[str, tuple[bytes, str, str]]) -> list[bytes | None]:
    """The pictures of the records table's rows, as the browser gets them: by URL from the
    app's server (``media``, the test's media store), or inline (a data URL)."""
    out: list[bytes | None] = []
    for cell in at.dataframe[0].value["picture"].tolist():
        if not isinstance(cell, str):
            out.append(None)
        elif cell.startswith("data:"):
            out.append(base64.b64decode(cell.partition(",")[2]))
        else:
            out.append(media[cell][0])
    return out


def tile_layers(tile: dict[str, Any]) -> str:
    """The layers a gallery tile has the browser draw over its picture, as comparable text
    (without the URLs they are fetched by): "" for a tile whose picture holds them all."""
    layers = {k: v for k, v in (tile.get("layers") or {}).items() if k != "urls"}
    return json.dumps(layers, sort_keys=True) if layers else ""


def go_to_record(at: AppTest) -> Any:
    """The pager's "Go to record" box (its key names the record it shows)."""
    return next(w for w in at.number_input if w.label == "Go to record")


def no_crash(at: AppTest, unshown: str | None = "could not be shown") -> None:
    """No exception in the run and, unless ``unshown`` is None, no error message containing
    ``unshown`` (a page or a part of one that could not be shown)."""
    assert not at.exception, [e.value for e in at.exception]
    if unshown is not None:
        bad = [e.value for e in at.error if unshown in e.value]
        assert not bad, bad
