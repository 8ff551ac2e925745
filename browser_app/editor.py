"""The record editor of the records page's detail view.

Every edit is saved into the source's journal the moment it is made (a table cell in the
``on_change`` callback, a button in its ``on_click``), so there is no unsaved state to lose when
paging away, refreshing or opening a second tab. Values are checked as they are typed
(:func:`browser_app.journal.check_value`): a rejected value is shown beside its feature with the
reason, and every other edit stands.

How values are written in the table: int64 and float lists as numbers separated by commas
(``1, 2, 3``; floats as the shortest text that reads back as the same float32); a bytes value
as UTF-8 text, or ``hex:00ff`` / ``base64:AP8=`` for binary (``text:`` keeps text that starts
with one of those prefixes); several bytes values as a JSON list of such strings
(``["cat", "hex:00ff"]``). Pictures and long binary values appear as ``‹…›`` placeholders that
stand for the stored value as it is; pictures are replaced by uploading a new one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

import codec
from browser_app import edit_session, loading, presenters, review, state, widgets
from browser_app.errors import AppError
from browser_app.journal import (
    FEATURE_TYPES,
    Change,
    ConversionError,
    Journal,
    RecordRef,
    ValueParseError,
    check_value,
    render_value,
    type_warnings,
)
from codec import example as ex
from codec.errors import CodecError
from codec.values import is_text, sniff_image

__all__ = [
    "cell_text",
    "detail",
    "parse_bytes_cell",
    "render",
    "table_name",
]

MAX_TEXT_CELL = 2000  # longer values are shown as a placeholder
MAX_PICTURES = 12  # pictures offered for replacement per record
UPLOAD_LIMIT_MB = 50
_PREFIXES = ("hex:", "base64:", "text:")

Key = tuple[str, str, int]  # (section, feature, step) of a table row; step -1 for features


# -- how values are written in a cell ---------------------------------------------------


def _placeholder(v: bytes, i: int) -> str:
    fmt = sniff_image(v)
    what = f"{fmt.upper()} picture" if fmt else ("text" if is_text(v) else "binary")
    return f"‹value {i}: {what}, {len(v):,} bytes›"


def _bytes_text(v: bytes, i: int, in_list: bool) -> str:
    if len(v) > MAX_TEXT_CELL or sniff_image(v):
        return _placeholder(v, i)
    if is_text(v):
        s = v.decode("utf-8")
        if s[:7].lower().startswith(_PREFIXES) or (not in_list and s.startswith("[")):
            return "text:" + s
        return s
    if len(v) <= 64:
        return "hex:" + v.hex()
    return _placeholder(v, i)


def cell_text(feat: ex.Feature) -> str:
    """A feature's values as they are written in the editor's table (see the module doc)."""
    if feat.type == "bytes":
        values = [bytes(v) for v in feat.values]
        if len(values) == 1:
            return _bytes_text(values[0], 0, in_list=False)
        return json.dumps(
            [_bytes_text(v, i, in_list=True) for i, v in enumerate(values)], ensure_ascii=False
        )
    if feat.type in ("int64", "float"):
        return ", ".join(render_value(feat.type, v) for v in feat.values)
    return ""


def parse_bytes_cell(text: str, old: ex.Feature | None) -> list[bytes]:
    """The bytes values a cell stands for. Placeholders of ``old``'s values keep those values
    as stored. Raises :class:`ValueParseError` naming the bad value."""
    keep: dict[str, bytes] = {}
    if old is not None and old.type == "bytes":
        keep = {_placeholder(bytes(v), i): bytes(v) for i, v in enumerate(old.values)}
    parts: list[str] = [text]
    is_list = False
    if text.strip().startswith("["):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError:
            loaded = None
        if isinstance(loaded, list) and all(isinstance(x, str) for x in loaded):
            parts = loaded
            is_list = True
    out: list[bytes] = []
    for i, part in enumerate(parts):
        if part in keep:
            out.append(keep[part])
            continue
        try:
            out.append(bytes(check_value("bytes", part).value))  # type: ignore[arg-type]
        except ValueParseError as exc:
            where = f"value {i}: " if is_list else ""
            raise ValueParseError("bytes", part, where + exc.reason) from None
    return out


# -- session values of the editor -------------------------------------------------------


def _sid(src: loading.Source) -> str:
    return src.spec


def table_name(src: loading.Source, j: Journal, ref: RecordRef, part: str) -> str:
    """The widget name of one of the editor's tables (its key is ``state.widget_key(name)``);
    it changes after every saved edit, so the table redraws with the saved values."""
    ids = [c.id for c in j.changes_for(ref)]
    return (
        f"edit:{part}:{_sid(src)}:{ref}:{edit_session.revision()}:{len(ids)}:{max(ids, default=0)}"
    )


def _rejected(src: loading.Source, ref: RecordRef) -> dict[Key, tuple[str, str]]:
    value = state.get(f"edit:rejected:{_sid(src)}:{ref}")
    return value if isinstance(value, dict) else {}


def _set_rejected(
    src: loading.Source, ref: RecordRef, key: Key, item: tuple[str, str] | None
) -> None:
    current = dict(_rejected(src, ref))
    if item is None:
        current.pop(key, None)
    else:
        current[key] = item
    state.put(f"edit:rejected:{_sid(src)}:{ref}", current)


def _notes(src: loading.Source, ref: RecordRef) -> dict[Key, list[str]]:
    value = state.get(f"edit:notes:{_sid(src)}:{ref}")
    return value if isinstance(value, dict) else {}


def _set_notes(src: loading.Source, ref: RecordRef, key: Key, notes: list[str]) -> None:
    current = dict(_notes(src, ref))
    if notes:
        current[key] = notes
    else:
        current.pop(key, None)
    state.put(f"edit:notes:{_sid(src)}:{ref}", current)


def _say(src: loading.Source, kind: str, text: str, undo: int | None = None) -> None:
    """A message for the top of the editor (shown on the next run), with an Undo button for
    the change ``undo``."""
    msgs = list(state.get(f"edit:msgs:{_sid(src)}", []))
    msgs.append((kind, text, undo))
    state.put(f"edit:msgs:{_sid(src)}", msgs[-6:])


def _show_messages(src: loading.Source, j: Journal) -> None:
    msgs = list(state.get(f"edit:msgs:{_sid(src)}", []))
    state.put(f"edit:msgs:{_sid(src)}", [])
    for n, (kind, text, undo) in enumerate(msgs):
        show = {"error": st.error, "warning": st.warning, "success": st.success}.get(kind, st.info)
        if undo is not None and not j.is_undone(undo):
            c = st.columns([6, 1], vertical_alignment="center")
            with c[0]:
                show(text)
            c[1].button(
                "Undo",
                key=state.widget_key(f"edit:undo-msg:{undo}:{n}"),
                icon=":material/undo:",
                on_click=_undo,
                args=(src, undo),
            )
        else:
            show(text)


def _undo(src: loading.Source, change_id: int) -> None:
    j = edit_session.journal(src, quiet=True)
    if j is None:
        return
    try:
        ids = j.undo(change_id)
    except (AppError, CodecError) as exc:
        _say(src, "error", f"Could not undo: {exc}")
        return
    edit_session.bump()
    _say(src, "info", f"Undone ({presenters.plural(len(ids), 'change')}).")


def _target_name(src: loading.Source, record_no: int) -> str:
    return f"edit:target:{_sid(src)}:{record_no}"


# -- saving ------------------------------------------------------------------------------


def _journal_call(src: loading.Source, what: Callable[[Journal], Any]) -> tuple[Any, str | None]:
    """Run an edit; ``(result, None)`` or ``(None, reason)``. Nothing is recorded on error."""
    j = edit_session.journal(src, quiet=True)
    if j is None:
        return None, "the pending edits cannot be opened (see the message above the editor)"
    try:
        return what(j), None
    except ConversionError as exc:
        return None, str(exc)
    except ValueParseError as exc:
        return None, exc.reason if exc.reason else str(exc)
    except (AppError, CodecError) as exc:
        return None, str(exc)
    except (IndexError, OSError) as exc:
        return None, str(exc)


def _change_notes(ch: Any) -> list[str]:
    if isinstance(ch, list):
        return [w for c in ch for w in _change_notes(c)]
    return list(ch.warnings) if isinstance(ch, Change) else []


def _save_cell(src: loading.Source, ref: RecordRef, key: Key, text: str) -> None:
    section, name, step = key

    def do(j: Journal) -> Any:
        rec = j.effective_record(ref)
        if rec is None:
            raise codec.CodecError(f"record {ref} is deleted")
        if section == "features":
            old = rec.features.get(name)
            if old is None:
                raise codec.CodecError(f"record {ref} has no feature {name!r}")
            if old.type == "bytes":
                return j.set_feature(ref, name, ("bytes", parse_bytes_cell(text, old)))
            return j.set_values(ref, name, text)
        steps = rec.feature_lists.get(name)
        if steps is None or not 0 <= step < len(steps):
            raise codec.CodecError(f"record {ref} has no step {step} of {name!r}")
        type_ = steps[step].type
        if type_ == "none":
            type_ = next((s.type for s in steps if s.type != "none"), "none")
        if type_ == "bytes":
            new = list(steps)
            new[step] = ex.Feature("bytes", parse_bytes_cell(text, steps[step]))
            return j.set_feature_list(ref, name, new)
        return j.set_step(ref, name, step, text)

    ch, err = _journal_call(src, do)
    if err is not None:
        if err.startswith("value 0: ") and len(text.replace(",", " ").split()) <= 1:
            err = err[len("value 0: ") :]
        _set_rejected(src, ref, key, (text, err))
        return
    _set_rejected(src, ref, key, None)
    _set_notes(src, ref, key, _change_notes(ch))


_TABLES = "edit:tables"  # widget name -> (rows drawn, saved already)


def _remember_rows(name: str, rows: list[tuple[Key, str]]) -> None:
    tables = dict(state.get(_TABLES, {}))
    if name not in tables:
        tables[name] = (rows, False)
    while len(tables) > 40:  # tables of earlier runs
        tables.pop(next(iter(tables)))
    state.put(_TABLES, tables)


def _pending_edits(name: str) -> bool:
    """Edits of the table ``name`` that were not saved yet (the callback did not run)."""
    tables = state.get(_TABLES, {})
    value = state.widget_value(name)
    return bool(
        isinstance(value, dict)
        and value.get("edited_rows")
        and name in tables
        and not tables[name][1]
    )


def _apply_table(src: loading.Source, ref: RecordRef, name: str) -> None:
    """Save the edited cells of the table ``name`` (its ``on_change``; also called when a
    table's edits are found in the session without the callback having run)."""
    tables = dict(state.get(_TABLES, {}))
    if name not in tables or tables[name][1]:
        return
    rows: list[tuple[Key, str]] = tables[name][0]
    tables[name] = (rows, True)
    state.put(_TABLES, tables)
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
    edit_session.bump()


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
    if key[1] in edited and key[0] == "features" and not parts:
        parts.append("✎ edited")
    return " · ".join(parts)


def _type_warnings(
    src: loading.Source, j: Journal, ref: RecordRef, rec: ex.Record
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
    feats, lists = edit_session.known_types(src)
    out: dict[str, list[str]] = {}
    for w in type_warnings(rec, feats, lists):
        for name in changed:
            if repr(name) in w:
                out.setdefault(name, []).append(w)
    return out


def _features_table(
    src: loading.Source, j: Journal, ref: RecordRef, rec: ex.Record, warn: dict[str, list[str]]
) -> None:
    name = table_name(src, j, ref, "features")
    if _pending_edits(name):
        _apply_table(src, ref, name)  # edits that arrived without the callback
        st.rerun()
    rejected = _rejected(src, ref)
    notes = _notes(src, ref)
    try:
        edited = {d.feature for d in j.diff(ref)}
    except (AppError, CodecError):
        edited = set()
    rows: list[tuple[Key, str]] = []
    data = []
    for fname, feat in rec.features.items():
        key: Key = ("features", fname, -1)
        text = cell_text(feat)
        rows.append((key, text))
        data.append(
            {
                "feature": fname,
                "type": feat.type,
                "n": len(feat.values),
                "values": text,
                "check": _check_text(key, rejected, notes, warn, edited),
            }
        )
    _remember_rows(name, rows)
    if not data:
        st.caption("(no features)")
        return
    df = pd.DataFrame(data, columns=["feature", "type", "n", "values", "check"])
    st.container(key="tfb-editor-features").data_editor(
        df,
        key=state.widget_key(name),
        on_change=_apply_table,
        args=(src, ref, name),
        hide_index=True,
        width="stretch",
        height=min(len(df), 16) * 35 + 38,
        disabled=["feature", "type", "n", "check"],
        column_config={
            "feature": st.column_config.TextColumn("feature", width="medium"),
            "type": st.column_config.TextColumn("type", width="small"),
            "n": st.column_config.NumberColumn("n", width="small", help="number of values"),
            "values": st.column_config.TextColumn(
                "values (edit here)",
                width="large",
                help="Numbers separated by commas; text for bytes, or hex:… / base64:… for"
                " binary; several bytes values as a JSON list. Saved as soon as you press"
                " Enter; a value that does not fit the feature's type is not saved and the"
                " reason is shown in “check”.",
            ),
            "check": st.column_config.TextColumn("check", width="large"),
        },
    )


def _list_table(
    src: loading.Source,
    j: Journal,
    ref: RecordRef,
    lname: str,
    steps: list[ex.Feature],
    warn: dict[str, list[str]],
) -> None:
    name = table_name(src, j, ref, f"list:{lname}")
    if _pending_edits(name):
        _apply_table(src, ref, name)
        st.rerun()
    rejected = _rejected(src, ref)
    notes = _notes(src, ref)
    rows: list[tuple[Key, str]] = []
    data = []
    for k, feat in enumerate(steps):
        key: Key = ("feature_lists", lname, k)
        text = cell_text(feat)
        rows.append((key, text))
        data.append(
            {
                "step": k,
                "type": feat.type,
                "n": len(feat.values),
                "values": text,
                "check": _check_text(key, rejected, notes, {}, set()),
            }
        )
    _remember_rows(name, rows)
    types = sorted({f.type for f in steps}) or ["none"]
    head = (
        f"**{lname}** · feature list · {'/'.join(types)} · {presenters.plural(len(steps), 'step')}"
    )
    for w in warn.get(lname, []):
        head += f" · :orange[⚠ {w}]"
    st.markdown(head)
    if not data:
        st.caption("(no steps)")
        return
    df = pd.DataFrame(data, columns=["step", "type", "n", "values", "check"])
    st.data_editor(
        df,
        key=state.widget_key(name),
        on_change=_apply_table,
        args=(src, ref, name),
        hide_index=True,
        width="stretch",
        height=min(len(df), 10) * 35 + 38,
        disabled=["step", "type", "n", "check"],
        column_config={
            "step": st.column_config.NumberColumn("step", width="small"),
            "type": st.column_config.TextColumn("type", width="small"),
            "n": st.column_config.NumberColumn("n", width="small"),
            "values": st.column_config.TextColumn("values (edit here)", width="large"),
            "check": st.column_config.TextColumn("check", width="large"),
        },
    )


# -- feature actions -----------------------------------------------------------------------


def _after_change(src: loading.Source, ch: Any, text: str) -> None:
    edit_session.bump()
    cid = ch.id if isinstance(ch, Change) else (ch[-1].id if isinstance(ch, list) and ch else None)
    notes = _change_notes(ch)
    _say(
        src,
        "warning" if notes else "success",
        text + ("" if not notes else " — " + "; ".join(notes)),
        cid,
    )


def _on_add(src: loading.Source, ref: RecordRef, form: str) -> None:
    fname = str(state.widget_value(f"{form}:name") or "").strip()
    ftype = str(state.widget_value(f"{form}:type") or "int64")
    values = str(state.widget_value(f"{form}:values") or "")

    def do(j: Journal) -> Change:
        if ftype == "bytes":
            return j.add_feature(
                ref, fname, "bytes", parse_bytes_cell(values, None) if values else []
            )
        return j.add_feature(ref, fname, ftype, values)

    if not fname:
        _say(src, "error", "A new feature needs a name.")
        return
    ch, err = _journal_call(src, do)
    if err is not None:
        _say(src, "error", f"Feature {fname!r} was not added: {err}")
        return
    for k in ("name", "values"):
        state.set_widget_value(f"{form}:{k}", "")
    _after_change(src, ch, f"Added feature {fname!r} ({ftype}).")


def _on_delete_feature(src: loading.Source, ref: RecordRef, widget: str) -> None:
    fname = state.widget_value(widget)
    if not fname:
        return
    ch, err = _journal_call(src, lambda j: j.delete_feature(ref, str(fname)))
    if err is not None:
        _say(src, "error", f"Feature {fname!r} was not deleted: {err}")
        return
    _after_change(src, ch, f"Deleted feature {fname!r}.")


def _on_convert(src: loading.Source, ref: RecordRef, fw: str, tw: str) -> None:
    fname, to = state.widget_value(fw), state.widget_value(tw)
    if not fname or not to:
        return
    ch, err = _journal_call(src, lambda j: j.convert_feature(ref, str(fname), str(to)))
    if err is not None:
        _say(src, "error", f"Not converted (nothing changed): {err}")
        return
    _after_change(src, ch, f"Converted {fname!r} to {to}; every value checked.")


def _feature_actions(src: loading.Source, j: Journal, ref: RecordRef, rec: ex.Record) -> None:
    base = f"edit:act:{_sid(src)}:{ref}"
    names = list(rec.features)
    c = st.columns(3)
    with c[0].popover("Add a feature", icon=":material/add:", width="stretch"):
        form = f"{base}:add"
        st.text_input("Name", key=state.widget_key(f"{form}:name"))
        st.selectbox("Type", FEATURE_TYPES, key=state.widget_key(f"{form}:type"))
        st.text_input(
            "Values",
            key=state.widget_key(f"{form}:values"),
            help="As in the table: 1, 2, 3 · 0.5 · text · hex:00ff · a JSON list for several"
            " bytes values. Empty for no values.",
        )
        st.button(
            "Add feature",
            key=state.widget_key(f"{form}:go"),
            type="primary",
            on_click=_on_add,
            args=(src, ref, form),
        )
    with c[1].popover("Delete a feature", icon=":material/remove:", width="stretch"):
        w = f"{base}:del"
        st.selectbox("Feature", names, key=state.widget_key(w), index=None)
        st.button(
            "Delete feature",
            key=state.widget_key(f"{w}:go"),
            on_click=_on_delete_feature,
            args=(src, ref, w),
            disabled=not names,
        )
    with c[2].popover("Change a type", icon=":material/swap_horiz:", width="stretch"):
        fw, tw = f"{base}:conv:f", f"{base}:conv:t"
        st.selectbox(
            "Feature",
            names,
            key=state.widget_key(fw),
            index=None,
            format_func=lambda n: f"{n} ({rec.features[n].type})" if n in rec.features else n,
        )
        st.selectbox("New type", FEATURE_TYPES, key=state.widget_key(tw), index=None)
        st.caption(
            "Every value is checked: the conversion is refused when any value would change"
            " (e.g. 2.5 to int64, or 16777217 to float32)."
        )
        st.button(
            "Convert",
            key=state.widget_key(f"{base}:conv:go"),
            on_click=_on_convert,
            args=(src, ref, fw, tw),
        )


# -- pictures ------------------------------------------------------------------------------


def _on_upload(src: loading.Source, ref: RecordRef, widget: str, fname: str, index: int) -> None:
    up = state.widget_value(widget)
    if up is None:
        return
    try:
        data = up.getvalue()
        label = getattr(up, "name", "upload")
    except Exception as exc:
        _set_rejected(src, ref, ("picture", fname, index), ("(upload)", str(exc)))
        return
    ch, err = _journal_call(src, lambda j: j.replace_image(ref, fname, index, data))
    key: Key = ("picture", fname, index)
    if err is not None:
        _set_rejected(src, ref, key, (label, err))
        edit_session.bump()  # clears the uploader
        return
    _set_rejected(src, ref, key, None)
    text = f"Replaced picture {fname}[{index}] with {label}."
    fmt = sniff_image(data)
    j = edit_session.journal(src, quiet=True)
    rec = j.effective_record(ref) if j is not None else None
    declared = rec.features.get(_format_feature(fname)) if rec is not None else None
    if fmt and declared is not None and declared.type == "bytes" and declared.values:
        said = bytes(declared.values[0]).decode("utf-8", "replace").lower()
        if said.replace("jpg", "jpeg") != fmt:
            text += f" Note: {_format_feature(fname)!r} still says {said!r}; the picture is {fmt}."
    _after_change(src, ch, text)


def _format_feature(name: str) -> str:
    """The feature that names the format of the picture in ``name`` (``image/format`` for
    ``image/encoded``)."""
    return name.rsplit("/", 1)[0] + "/format" if "/" in name else "format"


def _pictures(src: loading.Source, j: Journal, ref: RecordRef, rec: ex.Record) -> None:
    found = []
    for fname, feat in rec.features.items():
        if feat.type != "bytes":
            continue
        for i, v in enumerate(feat.values):
            if sniff_image(bytes(v)):
                found.append((fname, i, bytes(v)))
    if not found:
        return
    st.markdown("**Pictures** · replace one by uploading an image file")
    rejected = _rejected(src, ref)
    box = st.container(key="tfb-editor-pictures")
    for fname, i, data in found[:MAX_PICTURES]:
        c = box.columns([1, 4], vertical_alignment="center")
        with c[0]:
            try:
                thumb = codec.images.thumbnail_bytes(data, 160)
                st.image(thumb, output_format="PNG" if thumb[:4] == b"\x89PNG" else "JPEG")
            except (AppError, CodecError):
                st.caption("(cannot be shown)")
        with c[1]:
            widget = f"edit:upload:{_sid(src)}:{ref}:{fname}:{i}:{edit_session.revision()}"
            st.file_uploader(
                f"Replace {fname}[{i}] ({(sniff_image(data) or '').upper()}, {len(data):,} bytes)",
                key=state.widget_key(widget),
                on_change=_on_upload,
                args=(src, ref, widget, fname, i),
                max_upload_size=UPLOAD_LIMIT_MB,
            )
            bad = rejected.get(("picture", fname, i))
            if bad is not None:
                st.error(f"**{bad[0]}** was not used: {bad[1]}", icon=":material/broken_image:")
    if len(found) > MAX_PICTURES:
        st.caption(f"… and {len(found) - MAX_PICTURES} more pictures")


# -- whole records -------------------------------------------------------------------------


def _on_delete_record(src: loading.Source, ref: RecordRef) -> None:
    ch, err = _journal_call(src, lambda j: j.delete_record(ref))
    if err is not None:
        _say(src, "error", f"Record {ref} was not deleted: {err}")
        return
    _after_change(src, ch, f"Record {ref} is deleted (left out of exports until you undo it).")


def _on_duplicate(src: loading.Source, ref: RecordRef, record_no: int) -> None:
    new_id, err = _journal_call(src, lambda j: j.duplicate_record(ref))
    if err is not None:
        _say(src, "error", f"Record {ref} was not duplicated: {err}")
        return
    j = edit_session.journal(src, quiet=True)
    ch = j.changes_for(new_id)[0] if j is not None else None
    _after_change(src, ch, f"Duplicated record {ref} as new record {new_id}, placed after it.")


def _on_new_from_copy(src: loading.Source, ref: RecordRef, widget: str) -> None:
    after = state.widget_value(widget)
    anchor: RecordRef = ref if after is None else int(after)
    new_id, err = _journal_call(src, lambda j: j.add_record(anchor, copy_of=ref))
    if err is not None:
        _say(src, "error", f"No new record: {err}")
        return
    root = anchor
    j = edit_session.journal(src, quiet=True)
    if isinstance(root, str) and j is not None:
        root = j.anchor(root) or 0
    state.set_record(int(root))
    state.set_widget_value(_target_name(src, int(root)), new_id)
    ch = j.changes_for(new_id)[0] if j is not None else None
    _after_change(
        src,
        ch,
        f"New record {new_id}: a copy of record {ref}, after record {anchor}. Edit it below.",
    )


def _on_undo_delete(src: loading.Source, ref: RecordRef) -> None:
    j = edit_session.journal(src, quiet=True)
    if j is None:
        return
    for ch in reversed(j.changes_for(ref)):
        if ch.op == "delete_record":
            _undo(src, ch.id)
            return


def _record_actions(
    src: loading.Source, j: Journal, ref: RecordRef, record_no: int, editable: bool
) -> None:
    base = f"edit:rec:{_sid(src)}:{ref}"
    c = st.columns([1, 1.3, 1, 2.5])
    c[0].button(
        "Duplicate",
        key=state.widget_key(f"{base}:dup"),
        icon=":material/content_copy:",
        on_click=_on_duplicate,
        args=(src, ref, record_no),
        disabled=not editable,
        help="Insert a copy of this record right after it",
        width="stretch",
    )
    with c[1].popover(
        "New from copy", icon=":material/note_add:", width="stretch", disabled=not editable
    ):
        w = f"{base}:after"
        total = src.dataset.indexed if src.dataset.index_complete else None
        if state.widget_value(w) is None:
            state.set_widget_value(w, record_no)
        st.number_input(
            "Insert after record",
            min_value=0,
            max_value=max(0, total - 1) if total else None,
            step=1,
            key=state.widget_key(w),
        )
        st.button(
            "Create and edit it",
            key=state.widget_key(f"{base}:new"),
            type="primary",
            on_click=_on_new_from_copy,
            args=(src, ref, w),
        )
    c[2].button(
        "Delete record",
        key=state.widget_key(f"{base}:del"),
        icon=":material/delete:",
        on_click=_on_delete_record,
        args=(src, ref),
        width="stretch",
    )


# -- the editor ----------------------------------------------------------------------------


def _choose_target(src: loading.Source, j: Journal, record_no: int) -> RecordRef:
    children = edit_session.new_children(j, record_no)
    if not children:
        return record_no
    name = _target_name(src, record_no)
    options: list[RecordRef] = [record_no, *children]
    if state.widget_value(name) not in options:
        state.set_widget_value(name, record_no)
    picked = st.segmented_control(
        "Edit",
        options,
        key=state.widget_key(name),
        format_func=lambda r: f"Record {r}" if isinstance(r, int) else f"New record {r}",
        help="New records placed after this one are edited here",
    )
    return picked if picked is not None else record_no


def render(src: loading.Source, record_no: int, ref: RecordRef | None = None) -> None:
    """The editor for record ``record_no`` (and the new records placed after it: a switch
    chooses which one, unless ``ref`` says)."""
    j = edit_session.journal(src)
    if j is None:
        return
    if ref is None:
        ref = _choose_target(src, j, record_no)
    _show_messages(src, j)
    try:
        rec = j.effective_record(ref)
    except codec.CorruptRecordError as exc:
        st.error(
            f"Record {ref} is damaged ({exc}); it cannot be edited, only left out of the"
            " export by deleting it.",
            icon=":material/error:",
        )
        _record_actions(src, j, ref, record_no, editable=False)
        return
    except (IndexError, CodecError) as exc:
        st.error(f"Record {ref} cannot be edited: {exc}")
        return
    if rec is None:
        c = st.columns([5, 1.2], vertical_alignment="center")
        with c[0]:
            st.warning(
                f"{j.label(ref)} is deleted: it is left out of exports.",
                icon=":material/delete:",
            )
        c[1].button(
            "Undo the deletion",
            key=state.widget_key(f"edit:undel:{_sid(src)}:{ref}"),
            icon=":material/undo:",
            on_click=_on_undo_delete,
            args=(src, ref),
        )
        return
    n = len(j.changes_for(ref))
    kind = {"example": "Example", "sequence_example": "SequenceExample"}.get(
        rec.kind, "raw payload"
    )
    status = f" · :blue[✎ {presenters.plural(n, 'pending change')}]" if n else ""
    st.markdown(f"**Editing {j.label(ref)}** · {kind}{status}")
    _record_actions(src, j, ref, record_no, editable=True)
    if rec.kind == "raw":
        st.info(
            "This record is not an Example or SequenceExample: it can be deleted or"
            " duplicated, not edited feature by feature.",
            icon=":material/info:",
        )
        return
    warn = _type_warnings(src, j, ref, rec)
    if warn:
        st.warning(
            "**This record now disagrees with the rest of the dataset:** "
            + "; ".join(w for ws in warn.values() for w in ws)
            + ".",
            icon=":material/rule:",
        )
    rejected = _rejected(src, ref)
    table_rejects = [(k, v) for k, v in rejected.items() if k[0] != "picture"]
    if table_rejects:
        st.error(
            "**Not saved:** "
            + "; ".join(
                f"{k[1]}{'' if k[2] < 0 else f' step {k[2]}'}: “{t}” — {r}"
                for k, (t, r) in table_rejects
            )
            + ". Everything else is saved; type a corrected value to replace it.",
            icon=":material/block:",
        )
    title = "Context features" if rec.kind == "sequence_example" else "Features"
    st.markdown(f"**{title}** · edits are saved as you make them")
    _features_table(src, j, ref, rec, warn)
    _feature_actions(src, j, ref, rec)
    _pictures(src, j, ref, rec)
    if rec.kind == "sequence_example":
        st.markdown("**Feature lists** · the values of each step")
        if not rec.feature_lists:
            st.caption("(no feature lists)")
        for lname, steps in rec.feature_lists.items():
            _list_table(src, j, ref, lname, list(steps), warn)


# -- the records page's detail view ------------------------------------------------------

MODES = ("View", "Edit")


def detail(src: loading.Source, slot: presenters.Slot, boxes: bool) -> None:
    """The records page's detail of one record: "View" (the record with its pending edits
    applied) or "Edit" (this editor), with the review bar on top in both."""
    if slot.index is None:
        widgets.record_detail(src, slot, boxes)
        return
    record_no = slot.index
    j = edit_session.journal(src, quiet=True)
    if state.widget_value("detail:mode") not in MODES:
        state.set_widget_value("detail:mode", "View")
    mode = st.segmented_control(
        "Record view",
        MODES,
        key=state.widget_key("detail:mode"),
        format_func=lambda m: {
            "View": ":material/visibility: View",
            "Edit": ":material/edit: Edit",
        }[m],
        label_visibility="collapsed",
    )
    if j is None:
        if mode == "Edit":
            edit_session.journal(src)  # explains why, with the choices
        widgets.record_detail(src, slot, boxes)
        return
    if mode == "Edit":
        ref = _choose_target(src, j, record_no)
        review.render_marks(src, ref)
        render(src, record_no, ref)
        return
    review.render_marks(src, record_no)
    if j.is_deleted(record_no):
        st.warning(
            f"Record {record_no:,} is deleted (pending): it is left out of exports. Undo it in"
            " the Edit view or on the Changes page.",
            icon=":material/delete:",
        )
    elif j.is_touched(record_no):
        st.info(
            f"Shown with {presenters.plural(len(j.changes_for(record_no)), 'pending change')}"
            " applied (the file itself is unchanged until you export).",
            icon=":material/edit_note:",
        )
    news = edit_session.new_children(j, record_no)
    if news:
        st.caption(
            "New records placed after this one: " + ", ".join(news) + " (the Edit view shows them)."
        )
    widgets.record_detail(src, edit_session.edited_slot(j, slot), boxes)
