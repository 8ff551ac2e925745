"""The one frame every page starts with: the session's source, the queued messages, "no
source open" (or why a remote source could not be opened, with what to do), the header with
the indexing progress, an object replaced on the server, and why an open source has no
records.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from browser_app.ui import opening
from browser_app.ui.source import Source
from browser_app.ui.widgets import header, messages, remote

__all__ = ["start"]


def start(
    title: str,
    *,
    needs_records: bool = True,
    on_empty: Callable[[Source], None] | None = None,
) -> Source | None:
    """Open the page called ``title`` and return its source, or None when the page has
    nothing more to show: no source is open (said, with how to open one), or the page
    ``needs_records`` and the source has none (said why; ``on_empty`` may add to it)."""
    src = opening.current_source()
    messages.show_flashes()
    if src is None:
        st.subheader(title, anchor=False)
        trouble = opening.trouble()
        if trouble is not None:
            remote.trouble(trouble)
        else:
            messages.no_source()
        return None
    header.source_header(src, title)
    remote.changes(src)
    if needs_records and messages.empty_source(src):
        if on_empty is not None:
            on_empty(src)
        return None
    return src
