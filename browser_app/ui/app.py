"""tfrecord-browser's Streamlit app: the router.

Run by ``tfrecord-browser view`` (see :mod:`browser_app.cli.launch`) as
``streamlit run browser_app/streamlit_app.py -- --root ROOT [PATH...]``, which calls
:func:`main`. It sets up the page, adopts the URL or the command line into session state,
draws the sidebar (navigation, file picker, pending edits) and runs the chosen page.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from PIL import Image, ImageDraw

from browser_app.ui import navigation, opening, state
from browser_app.ui.widgets import jobs, journal, messages, picker, remote, selection
from browser_app.view import md_text

__all__ = ["PAGES", "PageSpec", "main"]

log = logging.getLogger("tfrecord-browser")

_GLYPH = (
    '<rect x="2" y="6" width="26" height="6" rx="2" fill="#2563eb"/>'
    '<rect x="2" y="15" width="26" height="6" rx="2" fill="#60a5fa"/>'
    '<rect x="2" y="24" width="26" height="6" rx="2" fill="#f59e0b"/>'
)
LOGO = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="230" height="36" viewBox="0 0 230 36">'
    # The name is dark on a light page and light on a dark one, as the browser prefers.
    "<style>text{fill:#1f2937}@media (prefers-color-scheme:dark){text{fill:#e5e7eb}}</style>"
    + _GLYPH
    + '<text x="38" y="25" font-family="Source Sans Pro, Helvetica, Arial, sans-serif"'
    ' font-size="20" font-weight="600">TFRecord Browser</text></svg>'
)
ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="36" viewBox="0 0 32 36">'
    + _GLYPH
    + "</svg>"
)

CSS = """
<style>
/* Compact, product-like spacing. */
.block-container { padding-top: 2.2rem; padding-bottom: 2rem; }
[data-testid="stSidebar"] [data-testid="stCaptionContainer"] { margin-bottom: -0.4rem; }
/* Small pictures are shown enlarged with their pixels visible, not blurred. */
.st-key-tfb-pictures img, .st-key-tfb-tensor img { image-rendering: pixelated; }
.st-key-tfb-gallery img { image-rendering: auto; border-radius: 4px; }
.st-key-tfb-gallery [data-testid="stCaptionContainer"] { text-align: center; }
</style>
"""

HERE = Path(__file__).resolve().parent


def page_icon() -> Image.Image:
    """The page icon: the logo's three bars, drawn here and served by the app itself (a
    ``:material/…:`` icon would be fetched from a font CDN on every load)."""
    img = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    for top, color in ((8, "#2563eb"), (26, "#60a5fa"), (44, "#f59e0b")):
        draw.rounded_rectangle((4, top, 60, top + 12), radius=4, fill=color)
    return img


@dataclass(frozen=True)
class PageSpec:
    """One page: its file (relative to this folder, with a ``render()`` it runs as a script),
    title, icon, URL path and navigation section."""

    file: str
    title: str
    icon: str
    url_path: str
    section: str = "Browse"
    default: bool = False


# The app's pages, in navigation order. Add a page by adding a line.
PAGES: list[PageSpec] = [
    PageSpec("pages/records.py", "Records", ":material/table_rows:", "records", default=True),
    PageSpec("pages/gallery.py", "Gallery", ":material/photo_library:", "gallery"),
    PageSpec("pages/overview.py", "Overview", ":material/analytics:", "overview"),
    PageSpec("pages/schema.py", "Schema", ":material/schema:", "schema", section="Quality"),
    PageSpec(
        "pages/statistics.py",
        "Statistics",
        ":material/bar_chart:",
        "statistics",
        section="Quality",
    ),
    PageSpec("pages/filter.py", "Filter", ":material/filter_alt:", "filter", section="Quality"),
    PageSpec(
        "pages/duplicates.py",
        "Duplicates",
        ":material/content_copy:",
        "duplicates",
        section="Quality",
    ),
    PageSpec(
        "pages/compare.py", "Compare", ":material/compare_arrows:", "compare", section="Quality"
    ),
    PageSpec("pages/sql.py", "SQL", ":material/database:", "sql", section="Quality"),
    PageSpec("pages/patches.py", "Patches", ":material/crop:", "patches", section="Quality"),
    PageSpec("pages/changes.py", "Changes", ":material/edit_note:", "changes", section="Edit"),
    PageSpec("pages/export.py", "Export", ":material/file_export:", "export", section="Edit"),
]


def main() -> None:
    """One run of the app: page set-up, session state, sidebar, then the chosen page."""
    st.set_page_config(
        page_title="TFRecord Browser",
        page_icon=page_icon(),
        layout="wide",
        initial_sidebar_state="expanded",
    )
    st.html(CSS)
    state.init()
    sections: dict[str, list[st.Page]] = {}
    by_path: dict[str, st.Page] = {}
    for spec in PAGES:
        page = st.Page(
            HERE / spec.file,
            title=spec.title,
            icon=spec.icon,
            url_path=spec.url_path,
            default=spec.default,
        )
        sections.setdefault(spec.section, []).append(page)
        by_path[spec.url_path] = page
    navigation.register(by_path)
    current = st.navigation(sections, position="sidebar")
    st.logo(LOGO, size="large", icon_image=ICON)
    src = None
    try:
        picker.file_picker()
        src = opening.current_source()  # opens (or reports) what the session has open
        journal.sidebar_status(src)  # pending changes and review marks
        selection.sidebar_selection(src)  # which records the views go through; facets
    except Exception as exc:
        log.exception("sidebar failed")
        st.sidebar.error(f"The file picker failed: {type(exc).__name__}: {md_text(str(exc))}")
    messages.show_flashes()
    try:
        with remote.guard(src, "page"):
            current.run()
    except Exception as exc:  # the last line of defence; Streamlit's reruns pass through
        log.exception("page %s failed", current.url_path)
        st.error(
            f"This page could not be shown: {type(exc).__name__}: {md_text(str(exc))}. The rest"
            " of the app keeps working; the details are in the server log.",
            icon=":material/error:",
        )
    try:
        selection.sidebar_facets(src)
    except Exception:
        log.exception("facets failed")
        st.sidebar.error("The facets could not be counted; the details are in the server log.")
    try:
        jobs.sidebar_setting()
    except Exception:
        log.exception("the jobs setting failed")
        st.sidebar.error("Where jobs run cannot be shown; the details are in the server log.")
