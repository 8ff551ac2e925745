"""tfrecord-browser's Streamlit app: the router.

Run by ``tfrecord-browser view`` (see :mod:`browser_app.launch`) as
``streamlit run streamlit_app.py -- --root ROOT [PATH...]``. It sets up the page, adopts the
URL or the command line into session state, draws the sidebar (navigation and file picker)
and runs the chosen page. Streamlit executes this file as ``__main__``: imports are absolute.
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__ in (None, ""):
    # `streamlit run browser_app/streamlit_app.py` from a checkout without an install.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import streamlit as st

from browser_app import app_pages, edit_session, loading, state, widgets

log = logging.getLogger("tfrecord-browser")

_GLYPH = (
    '<rect x="2" y="6" width="26" height="6" rx="2" fill="#2563eb"/>'
    '<rect x="2" y="15" width="26" height="6" rx="2" fill="#60a5fa"/>'
    '<rect x="2" y="24" width="26" height="6" rx="2" fill="#f59e0b"/>'
)
LOGO = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="230" height="36" viewBox="0 0 230 36">'
    + _GLYPH
    + '<text x="38" y="25" font-family="Source Sans Pro, Helvetica, Arial, sans-serif"'
    ' font-size="20" font-weight="600" fill="#1f2937">TFRecord Browser</text></svg>'
)
ICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="32" height="36" viewBox="0 0 32 36">'
    + _GLYPH
    + "</svg>"
)


HERE = Path(__file__).resolve().parent


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
    PageSpec("app_pages/records.py", "Records", ":material/table_rows:", "records", default=True),
    PageSpec("app_pages/gallery.py", "Gallery", ":material/photo_library:", "gallery"),
    PageSpec("app_pages/overview.py", "Overview", ":material/analytics:", "overview"),
    PageSpec("app_pages/schema.py", "Schema", ":material/schema:", "schema", section="Quality"),
    PageSpec(
        "app_pages/statistics.py",
        "Statistics",
        ":material/bar_chart:",
        "statistics",
        section="Quality",
    ),
    PageSpec("app_pages/filter.py", "Filter", ":material/filter_alt:", "filter", section="Quality"),
    PageSpec("app_pages/changes.py", "Changes", ":material/edit_note:", "changes", section="Edit"),
    PageSpec("app_pages/export.py", "Export", ":material/file_export:", "export", section="Edit"),
]


def main() -> None:
    st.set_page_config(
        page_title="TFRecord Browser",
        page_icon=":material/dataset:",
        layout="wide",
        initial_sidebar_state="expanded",
    )
    widgets.page_css()
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
    app_pages.register(by_path)
    current = st.navigation(sections, position="sidebar")
    st.logo(LOGO, size="large", icon_image=ICON)
    try:
        widgets.file_picker()
        src = loading.current_source()  # opens (or reports) what the session has open
        edit_session.sidebar_status(src)  # pending changes and review marks
    except Exception as exc:
        log.exception("sidebar failed")
        st.sidebar.error(f"The file picker failed: {type(exc).__name__}: {exc}")
    widgets.show_flashes()
    try:
        current.run()
    except Exception as exc:  # the last line of defence; Streamlit's reruns pass through
        log.exception("page %s failed", current.url_path)
        st.error(
            f"This page could not be shown: {type(exc).__name__}: {exc}. The rest of the app"
            " keeps working; the details are in the server log.",
            icon=":material/error:",
        )


main()
