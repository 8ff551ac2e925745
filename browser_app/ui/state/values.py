"""What the router, pages and widgets hand to each other in a session: the pages of this
session's router (the targets of links between pages), how pictures are drawn (boxes on
or off, classes hidden, the label map), the filter's last result that the export and the
selection read, the last export, the records table's columns, the review report's record
names, the edit revision, and what the person asked for once per source (a full CRC check,
facet counts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

import streamlit as st

from browser_app.ui.state.store import read, write
from browser_app.view import ExportOutcome
from codec.detection import ClassKey
from codec.labelmap import LabelMap

__all__ = [
    "FILTER_SELECTION",
    "FilterSelection",
    "TableColumns",
    "ask_facets",
    "ask_verify",
    "bump_edit_revision",
    "edit_revision",
    "export_outcome",
    "facets_asked",
    "filter_selection",
    "hidden_classes",
    "label_map",
    "label_map_beside_off",
    "label_map_refused",
    "page_table",
    "review_id_feature",
    "set_class_shown",
    "set_export_outcome",
    "set_filter_selection",
    "set_label_map",
    "set_label_map_beside_off",
    "set_label_map_refused",
    "set_page_table",
    "set_review_id_feature",
    "set_show_boxes",
    "set_table_columns",
    "show_all_classes",
    "show_boxes",
    "table_columns",
    "verify_asked",
]

_BOXES = "tfb:boxes"
_PAGE_TABLE = "tfb:pages"

FILTER_SELECTION = "filter:selection"
_EXPORT_REPORT = "export:report"
_COMPARE_RESULT = "compare:kept"
_DUPLICATES_RESULT = "duplicates:kept"
_DUPLICATES_ASKED = "duplicates:asked"
_EDIT_REVISION = "edit:rev"


def show_boxes() -> bool:
    """Whether pictures are drawn with their Object Detection boxes."""
    return bool(st.session_state.get(_BOXES, True))


def set_show_boxes(value: bool) -> None:
    """Turn the boxes on or off, on every page."""
    st.session_state[_BOXES] = bool(value)


class _FilterSelectionBase(TypedDict):
    spec: str
    key: str
    expression: str
    records: list[int]
    complete: bool


class FilterSelection(_FilterSelectionBase, total=False):
    """The filter's last result: the source ``spec`` and identity ``key`` (a repr) it was run
    on, the ``expression``, the matching ``records`` (the first ones when not ``complete``),
    and ``for_export`` while the Export page has yet to pick it up."""

    for_export: bool


def filter_selection(source_key: str) -> FilterSelection | None:
    """The filter's last result of this session, when it was made on the source whose
    identity has the repr ``source_key``; else None."""
    value = read(FILTER_SELECTION, dict)
    if value is None or value.get("key") != source_key:
        return None
    if not isinstance(value.get("records"), list):
        return None
    return cast(FilterSelection, value)


def set_filter_selection(value: FilterSelection) -> None:
    write(FILTER_SELECTION, value)


def export_outcome() -> ExportOutcome | None:
    """What the last export of this session did, or None."""
    return read(_EXPORT_REPORT, ExportOutcome)


def set_export_outcome(value: ExportOutcome | None) -> None:
    write(_EXPORT_REPORT, value)


def compare_result(ident: Any) -> dict[str, Any] | None:
    """The session's last comparison on the Compare page when it was of ``ident`` (both
    sides' identities and the options), or None."""
    got = read(_COMPARE_RESULT, dict)
    return got if got is not None and got.get("id") == ident else None


def set_compare_result(value: dict[str, Any]) -> None:
    """Keep the Compare page's comparison (a dict with its ``id``) for the session."""
    write(_COMPARE_RESULT, value)


def duplicates_result(setting: tuple[Any, ...]) -> Any | None:
    """The session's last duplicate search when it was made with ``setting`` (the sources
    and the options), or None."""
    got = read(_DUPLICATES_RESULT, tuple)
    return got[1] if got is not None and len(got) == 2 and got[0] == setting else None


def set_duplicates_result(setting: tuple[Any, ...], result: Any) -> None:
    write(_DUPLICATES_RESULT, (setting, result))


def patches_table(tag: str) -> Any | None:
    """The patches view's table of the source ``tag`` (an evaluation's objects), kept for the
    session, or None."""
    return read(f"patches:table:{tag}", object)


def set_patches_table(tag: str, table: Any) -> None:
    write(f"patches:table:{tag}", table)


def duplicates_asked(setting: tuple[Any, ...]) -> bool:
    """Whether the person asked for the duplicate search with ``setting`` (a search the
    page then runs again after a rerun stopped it)."""
    return read(_DUPLICATES_ASKED, tuple) == setting


def ask_duplicates(setting: tuple[Any, ...]) -> None:
    write(_DUPLICATES_ASKED, setting)


def label_map(spec: str) -> tuple[str, LabelMap] | None:
    """The label map chosen for the source ``spec`` in this session: ``(where it came from,
    the map)``, or None."""
    value = read(f"label_map:{spec}", tuple)
    if value is not None and len(value) == 2 and isinstance(value[1], LabelMap):
        return cast(tuple[str, LabelMap], value)
    return None


def set_label_map(spec: str, name: str | None, value: LabelMap | None) -> None:
    """Use ``value`` (read from ``name``) as the label map of ``spec``; None forgets it."""
    write(f"label_map:{spec}", None if value is None or name is None else (name, value))


def label_map_refused(upload: str) -> str | None:
    """Why the label map upload ``upload`` (its file id) could not be used, once it was
    read and refused: it is not read again on every run while it stays in the uploader."""
    return read(f"label_map_refused:{upload}", str)


def set_label_map_refused(upload: str, why: str) -> None:
    write(f"label_map_refused:{upload}", why)


def label_map_beside_off(spec: str) -> bool:
    """Whether the person turned off the label map found beside the files of ``spec``."""
    return read(f"label_map_off:{spec}", bool) is True


def set_label_map_beside_off(spec: str, off: bool) -> None:
    write(f"label_map_off:{spec}", True if off else None)


def review_id_feature(spec: str) -> str | None:
    """The feature the review report identifies records of the source ``spec`` by, as picked
    in this session; None for the usual choice (``image/source_id``, else
    ``image/filename``)."""
    return read(f"review:id:{spec}", str) or None


def set_review_id_feature(spec: str, name: str | None) -> None:
    """Identify the records of ``spec`` in the review report by ``name`` (None: the usual
    choice)."""
    write(f"review:id:{spec}", name or None)


class TableColumns(TypedDict):
    """The records table's columns chosen for a dataset: the ``shown`` ones in order (None:
    all of them) and the ``pinned`` ones (kept in view on the left)."""

    shown: list[str] | None
    pinned: list[str]


def table_columns(source_key: str) -> TableColumns | None:
    """The records table's columns chosen in this session for the dataset whose identity has
    the repr ``source_key``, or None."""
    value = read(f"columns:{source_key}", dict)
    return cast(TableColumns, value) if value is not None else None


def set_table_columns(source_key: str, value: TableColumns) -> None:
    write(f"columns:{source_key}", value)


def edit_revision() -> int:
    """A counter bumped after every edit of this session (the editor's widget keys include
    it, so its tables and uploaders redraw with the saved values)."""
    return read(_EDIT_REVISION, int) or 0


def bump_edit_revision() -> None:
    write(_EDIT_REVISION, edit_revision() + 1)


# -- classes of boxes left out of the drawing, per source ------------------------------------


def hidden_classes(spec: str) -> frozenset[ClassKey]:
    """The classes of boxes hidden on the source ``spec`` in this session (record view,
    full view and gallery)."""
    return read(f"hidden_classes:{spec}", frozenset) or frozenset()


def set_class_shown(spec: str, key: ClassKey, shown: bool) -> None:
    """Show (or hide) the boxes of class ``key`` on the source ``spec``."""
    now = hidden_classes(spec)
    write(f"hidden_classes:{spec}", now - {key} if shown else now | {key})


def show_all_classes(spec: str) -> None:
    write(f"hidden_classes:{spec}", frozenset())


# -- what the person asked for, once per source ----------------------------------------------


def verify_asked(spec: str) -> bool:
    """Whether the person asked for the full CRC check of the source ``spec`` in this session
    (on the Overview page; the Export page then lists the damage it found)."""
    return read(f"verified:{spec}", bool) is True


def ask_verify(spec: str) -> None:
    write(f"verified:{spec}", True)


def facets_asked(spec: str) -> bool:
    """Whether the person asked for the facets of the source ``spec`` to be counted (a large
    or remote dataset's are not counted without asking)."""
    return read(f"facets:{spec}", bool) is True


def ask_facets(spec: str) -> None:
    write(f"facets:{spec}", True)


# -- the pages of this session's router ---------------------------------------------------


def page_table() -> dict[str, Any]:
    """The pages this session's router made in its last run (``url_path -> st.Page``): the
    targets of links between pages. Empty where no router runs (a page drawn alone)."""
    value = st.session_state.get(_PAGE_TABLE)
    return dict(value) if isinstance(value, dict) else {}


def set_page_table(pages: Mapping[str, Any]) -> None:
    """Called by the router each run: this session's pages, never another session's."""
    st.session_state[_PAGE_TABLE] = dict(pages)
