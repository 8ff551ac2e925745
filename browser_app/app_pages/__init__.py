"""The app's pages: one module per page, each with a ``render()`` function.

The router (``browser_app/streamlit_app.py``) lists them and registers the ``st.Page`` objects
here each run, so a page can send the person to another one with :func:`goto` without
importing the router (which runs as ``__main__``).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

__all__ = ["goto", "page", "register"]

_PAGES: dict[str, Any] = {}


def register(pages: dict[str, Any]) -> None:
    """Called by the router: ``url_path -> st.Page``."""
    _PAGES.clear()
    _PAGES.update(pages)


def page(url_path: str) -> Any:
    """The ``st.Page`` registered for ``url_path`` (for ``st.page_link``), or None."""
    return _PAGES.get(url_path)


def goto(url_path: str) -> None:
    """Switch to the page at ``url_path`` (ends this run)."""
    target = _PAGES.get(url_path)
    if target is not None:
        st.switch_page(target)
