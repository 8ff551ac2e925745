"""Links between pages without pages importing each other.

The router (:mod:`browser_app.ui.app`) builds the ``st.Page`` objects each run and registers
them for its session (:func:`browser_app.ui.state.set_page_table`); a page or widget links
to another page with :func:`page` (for ``st.page_link``) or sends the person there with
:func:`goto`. Each session sees only the pages its own router made: nothing is shared
between the sessions of a server.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st
from streamlit.navigation.page import StreamlitPage

from browser_app.ui import state

__all__ = ["goto", "page", "register"]


def register(pages: Mapping[str, StreamlitPage]) -> None:
    """Called by the router: ``url_path -> st.Page`` for this session."""
    state.set_page_table(pages)


def page(url_path: str) -> StreamlitPage | None:
    """The ``st.Page`` registered for ``url_path`` (for ``st.page_link``), or None."""
    target = state.page_table().get(url_path)
    return target if isinstance(target, StreamlitPage) else None


def goto(url_path: str) -> None:
    """Switch to the page at ``url_path`` (ends this run)."""
    target = page(url_path)
    if target is not None:
        st.switch_page(target)
