"""Links between pages without pages importing each other.

The router (:mod:`browser_app.ui.app`) builds the ``st.Page`` objects each run and registers
them here by URL path; a page or widget links to another page with :func:`page` (for
``st.page_link``) or sends the person there with :func:`goto`.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st
from streamlit.navigation.page import StreamlitPage

__all__ = ["goto", "page", "register"]

_PAGES: dict[str, StreamlitPage] = {}


def register(pages: Mapping[str, StreamlitPage]) -> None:
    """Called by the router: ``url_path -> st.Page``."""
    _PAGES.clear()
    _PAGES.update(pages)


def page(url_path: str) -> StreamlitPage | None:
    """The ``st.Page`` registered for ``url_path`` (for ``st.page_link``), or None."""
    return _PAGES.get(url_path)


def goto(url_path: str) -> None:
    """Switch to the page at ``url_path`` (ends this run)."""
    target = _PAGES.get(url_path)
    if target is not None:
        st.switch_page(target)
