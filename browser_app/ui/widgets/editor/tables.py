"""The editor's tables: a record's features (an Example's, a SequenceExample's context) and
each feature list's steps, one row each with its values written as text
(:mod:`browser_app.view.cells`) and a "check" column saying what was not saved and why. A
cell's new text is saved as one edit (:meth:`browser_app.edits.Journal.set_cell`).

Cells are saved in the table's ``on_change``; edits found in the session without the callback
having run (a rerun that came first) are saved when the table is drawn.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from browser_app.edits import FEATURE_LISTS, FEATURES, Journal, RecordRef, type_warnings
from browser_app.errors import AppError
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets.editor.saving import (
    Key,
    change_notes,
    journal_call,
    rejected_cells,
    saved_notes,
    set_notes,
    set_rejected,
    sid,
)
from browser_app.view import cell_reason, cell_text, plural
from codec import example as ex
from codec.errors import CodecError
from codec.kinds import NONE

__all__ = ["features_table", "list_table", "table_name", "type_warnings_of"]

_TABLES_KEPT = 40  # tables of earlier runs remembered


def table_name(src: Source, j: Journal, ref: RecordRef, part: str) -> str:
    """The widget name of one of the editor's tables (its key is ``state.widget_key(name)``);
    it changes after every saved edit, so the table redraws with the saved values."""
    ids = [c.id for c in j.changes_for(ref)]
    return f"edit:{part}:{sid(src)}:{ref}:{state.edit_revision()}:{len(ids)}:{max(ids, default=0)}"


def _save_cell(src: Source, ref: RecordRef, key: Key, text: str) -> None:
    section, name, step = key
    at = None if section == FEATURES else step
    ch, err = journal_call(src, lambda j: j.set_cell(ref, name, text, step=at))
    if err is not None:
        set_rejected(src, ref, key, (text, cell_reason(text, err)))
        return
    set_rejected(src, ref, key, None)
    set_notes(src, ref, key, change_notes(ch))


def _remember_rows(name: str, rows: list[tuple[Key, str]]) -> None:
    tables = state.editor_tables()
    if name not in tables:
        tables[name] = (rows, False)
    while len(tables) > _TABLES_KEPT:
        tables.pop(next(iter(tables)))
    state.set_editor_tables(tables)


def _pending_edits(name: str) -> bool:
    """Edits of the table ``name`` that were not saved yet (the callback did not run)."""
    tables = state.editor_tables()
    value = state.widget_value(name)
    return bool(
        isinstance(value, dict)
        and value.get("edited_rows")
        and name in tables
        and not tables[name][1]
    )


def _apply_table(src: Source, ref: RecordRef, name: str) -> None:
    """Save the edited cells of the table ``name`` (its ``on_change``; also called when a
    table's edits are found in the session without the callback having run)."""
    tables = state.editor_tables()
    if name not in tables or tables[name][1]:
        return
    rows: list[tuple[Key, str]] = tables[name][0]
    tables[name] = (rows, True)
    state.set_editor_tables(tables)
    edits = state.widget_value(name) or {}
    edited = edits.get("edited_rows", {}) if isinstance(edits, dict) else {}
    for pos, change in sorted(edited.items(), key=lambda kv: int(kv[0])):
        p = int(pos)
        if not isinstance(change, dict) or "values" not in change or not 0 <= p < len(rows):
            continue
        key, old_text = rows[p]
        new = change["values"]
        new_text = "" if new is None else str(new)
        if new_text == old_text:
            continue
        _save_cell(src, ref, key, new_text)
    state.bump_edit_revision()


# -- the tables ----------------------------------------------------------------------------


def _check_text(
    key: Key,
    rejected: dict[Key, tuple[str, str]],
    notes: dict[Key, list[str]],
    warn: dict[str, list[str]],
    edited: set[str],
) -> str:
    parts = []
    if key in rejected:
        text, reason = rejected[key]
        shown = text if len(text) <= 40 else text[:37] + "…"
        parts.append(f"✗ not saved: “{shown}” — {reason}")
    for n in notes.get(key, []):
        parts.append(f"⚠ {n}")
    for w in warn.get(key[1], []):
        if not any(w in p for p in parts):
            parts.append(f"⚠ {w}")
    if key[1] in edited and key[0] == FEATURES and not parts:
        parts.append("✎ edited")
    return " · ".join(parts)


def type_warnings_of(
    src: Source, j: Journal, ref: RecordRef, rec: ex.Record
) -> dict[str, list[str]]:
    """Warnings for the features an edit touched whose type disagrees with the dataset."""
    try:
        changed = {d.feature for d in j.diff(ref)}
    except (AppError, CodecError):
        changed = set()
    if isinstance(ref, str):
        changed |= set(rec.features) | set(rec.feature_lists)
    if not changed:
        return {}
    feats, lists = services.usual_types(src)
    out: dict[str, list[str]] = {}
    for w in type_warnings(rec, feats, lists):
        for name in changed:
            if repr(name) in w:
                out.setdefault(name, []).append(w)
    return out


def _catch_up(src: Source, ref: RecordRef, name: str) -> None:
    """Save the edits of table ``name`` that arrived without its callback, and rerun."""
    if _pending_edits(name):
        _apply_table(src, ref, name)
        st.rerun()


def _frame(
    src: Source,
    ref: RecordRef,
    name: str,
    first: str,
    items: list[tuple[str | int, Key, ex.Feature]],
    warn: dict[str, list[str]],
    edited: set[str],
) -> pd.DataFrame:
    """The rows of table ``name`` (remembered, to save its edits): for each ``(label, row
    key, feature)`` the label in column ``first``, the type, the number of values, the values
    as text and the check."""
    rejected = rejected_cells(src, ref)
    notes = saved_notes(src, ref)
    rows: list[tuple[Key, str]] = []
    data = []
    for label, key, feat in items:
        text = cell_text(feat)
        rows.append((key, text))
        data.append(
            {
                first: label,
                "type": feat.type,
                "n": len(feat.values),
                "values": text,
                "check": _check_text(key, rejected, notes, warn, edited),
            }
        )
    _remember_rows(name, rows)
    return pd.DataFrame(data, columns=[first, "type", "n", "values", "check"])


def _editor(
    src: Source,
    ref: RecordRef,
    name: str,
    df: pd.DataFrame,
    max_rows: int,
    columns: dict[str, Any],
    empty: str,
    container: str | None = None,
) -> None:
    """Table ``name`` as a data editor whose "values" column alone can be edited (inside a
    container with the key ``container``, when given); ``empty`` when it has no rows."""
    if df.empty:
        st.caption(empty)
        return
    draw = st.container(key=container).data_editor if container else st.data_editor
    draw(
        df,
        key=state.widget_key(name),
        on_change=_apply_table,
        args=(src, ref, name),
        hide_index=True,
        width="stretch",
        height=min(len(df), max_rows) * 35 + 38,
        disabled=[c for c in df.columns if c != "values"],
        column_config={
            **columns,
            "type": st.column_config.TextColumn("type", width="small"),
            "check": st.column_config.TextColumn("check", width="large"),
        },
    )


def features_table(
    src: Source, j: Journal, ref: RecordRef, rec: ex.Record, warn: dict[str, list[str]]
) -> None:
    """The table of ``rec``'s features, ``warn`` beside the features it names."""
    name = table_name(src, j, ref, FEATURES)
    _catch_up(src, ref, name)
    try:
        edited = {d.feature for d in j.diff(ref)}
    except (AppError, CodecError):
        edited = set()
    items: list[tuple[str | int, Key, ex.Feature]] = [
        (fname, (FEATURES, fname, -1), feat) for fname, feat in rec.features.items()
    ]
    df = _frame(src, ref, name, "feature", items, warn, edited)
    _editor(
        src,
        ref,
        name,
        df,
        16,
        {
            "feature": st.column_config.TextColumn("feature", width="medium"),
            "n": st.column_config.NumberColumn("n", width="small", help="number of values"),
            "values": st.column_config.TextColumn(
                "values (edit here)",
                width="large",
                help="Numbers separated by commas; text for bytes, or hex:… / base64:… for"
                " binary; several bytes values as a JSON list. Saved as soon as you press"
                " Enter; a value that does not fit the feature's type is not saved and the"
                " reason is shown in “check”.",
            ),
        },
        empty="(no features)",
        container="tfb-editor-features",
    )


def list_table(
    src: Source,
    j: Journal,
    ref: RecordRef,
    lname: str,
    steps: list[ex.Feature],
    warn: dict[str, list[str]],
) -> None:
    """The table of feature list ``lname``'s steps, with its warnings in its heading."""
    name = table_name(src, j, ref, f"list:{lname}")
    _catch_up(src, ref, name)
    items: list[tuple[str | int, Key, ex.Feature]] = [
        (k, (FEATURE_LISTS, lname, k), feat) for k, feat in enumerate(steps)
    ]
    df = _frame(src, ref, name, "step", items, {}, set())
    types = sorted({f.type for f in steps}) or [NONE]
    head = f"**{lname}** · feature list · {'/'.join(types)} · {plural(len(steps), 'step')}"
    for w in warn.get(lname, []):
        head += f" · :orange[⚠ {w}]"
    st.markdown(head)
    _editor(
        src,
        ref,
        name,
        df,
        10,
        {
            "step": st.column_config.NumberColumn("step", width="small"),
            "n": st.column_config.NumberColumn("n", width="small"),
            "values": st.column_config.TextColumn("values (edit here)", width="large"),
        },
        empty="(no steps)",
    )
