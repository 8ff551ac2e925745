"""Messages every page may show: the ones queued for this run, "no source open", and why an
open source has no records."""

from __future__ import annotations

import streamlit as st

from browser_app.ui import state
from browser_app.ui.source import Source
from browser_app.view import md_text
from codec.kinds import NO_COMPRESSION
from codec.values import format_bytes

__all__ = ["empty_source", "no_source", "show", "show_flashes"]

_SHOW = {"error": st.error, "warning": st.warning, "info": st.info, "success": st.success}


def show(kind: str, message: str) -> None:
    """``message`` as an error, warning, info or success box (a warning for another kind).
    Messages are plain text (they often quote a file name or a value): never Markdown."""
    _SHOW.get(kind, st.warning)(md_text(message))


def show_flashes() -> None:
    """Messages queued by callbacks and by opening a source, shown once."""
    for kind, message in state.pop_flashes():
        show(kind, message)


def no_source(message: str = "") -> None:
    """How to open something, when nothing is open."""
    st.info(
        message
        or "Open a TFRecord file from the sidebar: pick one under the root, type a path or a"
        " pattern, or upload a small file.",
        icon=":material/folder_open:",
    )


def empty_source(src: Source) -> bool:
    """Say clearly why a source has no records. Returns True when it has none."""
    ds = src.dataset
    if not ds.index_complete or ds.indexed:
        return False
    problems = ds.problems
    size = sum(f.file_size for f in ds.files)
    if size == 0:
        st.warning(
            f"{src.label} is empty (0 bytes): there are no records to show.",
            icon=":material/draft:",
        )
    elif problems:
        skipped = sum(p.skipped for p in problems)
        inflated = [f for f in ds.files if f.compression != NO_COMPRESSION]
        if inflated:
            # Sizes of the inflated stream, never mixed with sizes on disk.
            stream = sum(f.size for f in ds.files)
            where = f"{format_bytes(skipped)} of the {format_bytes(stream)} it inflates to"
        else:
            where = f"{format_bytes(skipped)} of {format_bytes(size)}"
        said = list(dict.fromkeys(p.message for p in problems))
        lines = "\n".join(f"- {md_text(m)}" for m in said[:3])
        if len(said) > 3:
            lines += f"\n- … and {len(said) - 3:,} more"
        st.error(
            f"**No records found in {md_text(src.label)}**: this does not look like a TFRecord"
            f" file ({where} could not be read as records).\n\n" + lines,
            icon=":material/block:",
        )
    else:
        st.warning(f"{src.label} holds no records.")
    return True
