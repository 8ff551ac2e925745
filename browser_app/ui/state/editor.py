"""What the record editor remembers between runs: per record, the texts that were not saved
and the warnings of those that were, an uploaded picture waiting for the choice about its
boxes, whether the box table is open; per source, the messages for the top of the editor;
and the rows each of its tables was drawn with."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar, cast

from browser_app.ui.state.store import read, write

if TYPE_CHECKING:
    from browser_app.edits import RecordRef

__all__ = [
    "EditorMessage",
    "EditorRow",
    "EditorTables",
    "box_editor_open",
    "editor_messages",
    "editor_tables",
    "rejected_texts",
    "saved_warnings",
    "set_box_editor_open",
    "set_editor_messages",
    "set_editor_tables",
    "set_rejected_texts",
    "set_saved_warnings",
    "set_waiting_picture",
    "waiting_picture",
]

T = TypeVar("T")

EditorRow = tuple[str, str, int]
"""A row of the editor's tables: ``(section, feature, step)`` (see
:data:`browser_app.ui.widgets.editor.saving.Key`)."""

EditorMessage = tuple[str, str, int | tuple[int, ...] | None]
"""A message for the top of the editor: ``(kind, text, the change(s) its Undo undoes)``."""

EditorTables = dict[str, tuple[list[tuple[EditorRow, str]], bool]]
"""The editor's tables by widget name: the rows each was drawn with, and whether its edits
were saved already."""


def rejected_texts(tag: str, ref: RecordRef) -> dict[EditorRow, tuple[str, str]]:
    """``{row: (text typed, why it was not saved)}`` for record ``ref`` of the source
    ``tag``."""
    return cast(dict[EditorRow, tuple[str, str]], read(f"edit:rejected:{tag}:{ref}", dict) or {})


def set_rejected_texts(tag: str, ref: RecordRef, value: dict[EditorRow, tuple[str, str]]) -> None:
    write(f"edit:rejected:{tag}:{ref}", value)


def saved_warnings(tag: str, ref: RecordRef) -> dict[EditorRow, list[str]]:
    """``{row: warnings}`` of the changes saved from the rows of record ``ref``."""
    return cast(dict[EditorRow, list[str]], read(f"edit:notes:{tag}:{ref}", dict) or {})


def set_saved_warnings(tag: str, ref: RecordRef, value: dict[EditorRow, list[str]]) -> None:
    write(f"edit:notes:{tag}:{ref}", value)


def editor_messages(tag: str) -> list[EditorMessage]:
    """The messages said in the editor of the source ``tag`` since they were last shown."""
    return cast(list[EditorMessage], list(read(f"edit:msgs:{tag}", list) or []))


def set_editor_messages(tag: str, value: list[EditorMessage]) -> None:
    write(f"edit:msgs:{tag}", value)


def editor_tables() -> EditorTables:
    """The rows of the editor's tables of recent runs (a copy: set it back to change it)."""
    return cast(EditorTables, dict(read("edit:tables", dict) or {}))


def set_editor_tables(value: EditorTables) -> None:
    write("edit:tables", value)


def waiting_picture(tag: str, ref: RecordRef, kind: type[T]) -> T | None:
    """The picture uploaded for record ``ref`` that waits for the choice about its boxes, when
    it is a ``kind`` (the editor's own type: this package does not import the widgets)."""
    return read(f"edit:replace:{tag}:{ref}", kind)


def set_waiting_picture(tag: str, ref: RecordRef, value: object | None) -> None:
    write(f"edit:replace:{tag}:{ref}", value)


def box_editor_open(tag: str, ref: RecordRef) -> bool:
    """Whether the table of the boxes of record ``ref`` is open in the editor."""
    return read(f"edit:boxes:{tag}:{ref}", bool) is True


def set_box_editor_open(tag: str, ref: RecordRef, value: bool) -> None:
    write(f"edit:boxes:{tag}:{ref}", value)
