"""The groups of a duplicate search, side by side: each member's picture, its split (or
dataset), its record as a link, its file, and how it relates to the group's first record
with the distance; a button per member keeps it and drops the others through the edit
journal of their source (undoable), and a group's drops can be undone at once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from urllib.parse import quote

import streamlit as st

from browser_app.edits import Journal
from browser_app.ui import services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import journal as shared_journal
from browser_app.ui.widgets.schema import record_link
from browser_app.view import md_text, plural
from browser_app.view.duplicates import (
    GroupView,
    MemberView,
    keep_copy,
    member_state,
    undo_drops,
)
from browser_app.view.pictures import thumbnail
from codec.errors import CodecError
from codec.example import decode

__all__ = ["groups"]

PER_ROW = 4  # members side by side
THUMB = 200  # pixels of a member's picture's longer side


def _journals(sources: Sequence[Source]) -> dict[int, Journal] | None:
    """Every source's shared journal, by source number; None when one cannot be opened."""
    out: dict[int, Journal] = {}
    for i, src in enumerate(sources):
        j = services.shared_journal(src)
        if j is None:
            return None
        out[i] = j
    return out


def _act(sources: Sequence[Source], action: Callable[[Mapping[int, Journal]], str]) -> None:
    journals = _journals(sources)
    if journals is None:
        state.flash(
            "The pending edits of a split cannot be opened (see its Changes page).", "error"
        )
        return
    # the journal of the first source runs it (a failure said, nothing more done), then
    # every journal's pages are redrawn
    done = shared_journal.act(
        sources[0],
        lambda _j: action(journals),
        lambda why: state.flash(f"Could not change the records: {why}", "error"),
    )
    if done:
        state.flash(done, "success")


def _keep(sources: Sequence[Source], group: GroupView, keep: MemberView) -> None:
    def go(journals: Mapping[int, Journal]) -> str:
        n = keep_copy(journals, group, keep)
        return (
            f"Kept {keep.source_label} record {keep.number:,}; dropped"
            f" {plural(n, 'other copy', 'other copies')} (undo below or on the Changes page;"
            " an export leaves them out)."
        )

    _act(sources, go)


def _undo(sources: Sequence[Source], group: GroupView) -> None:
    def go(journals: Mapping[int, Journal]) -> str:
        n = undo_drops(journals, group)
        return f"Group {group.number}: {plural(n, 'drop')} undone."

    _act(sources, go)


def _link(src: Source, number: int) -> str:
    """A link to record ``number`` of ``src`` on the Records page; for a split of a dataset
    folder, the split named in the link (the folder alone opens its default split)."""
    if src.split is not None and src.split_folder is not None:
        spec = quote(state.link_spec(src.split_spec(src.split)), safe="")
        return f"[{number}](./?file={spec}&record={number})"
    return record_link(src)(number)


def _picture(src: Source, number: int) -> bytes | None:
    try:
        payload = src.dataset[number]
        thumb = thumbnail(decode(payload), size=THUMB, boxes=False)
    except (CodecError, IndexError, OSError):
        return None
    return thumb.data if thumb is not None else None


def _member(
    col: st.delta_generator.DeltaGenerator,
    sources: Sequence[Source],
    gv: GroupView,
    m: MemberView,
    decided: str,
) -> None:
    src = sources[m.source]
    data = _picture(src, m.number)
    if data is not None:
        col.image(data, width="stretch")
    else:
        col.caption("(picture not shown)")
    link = _link(src, m.number)
    col.markdown(f"**{md_text(m.source_label)}** · record {link}")
    col.caption(f"{md_text(src.rel(m.file))} [{m.local:,}] · {m.width}×{m.height}")
    col.markdown(md_text(m.text))
    if decided == "dropped":
        col.markdown(":red-badge[:material/delete: dropped]")
    elif decided == "kept":
        col.markdown(":green-badge[:material/check: kept]")
    col.button(
        "Keep this one",
        key=state.widget_key(f"dups:keep:{gv.number}:{m.record}"),
        icon=":material/check_circle:",
        on_click=partial(_keep, sources, gv, m),
        disabled=decided == "kept",
        help="Keep this copy and drop the others of the group (pending edits: undoable)",
    )


def groups(sources: Sequence[Source], views: Sequence[GroupView]) -> None:
    """The groups ``views`` (members of ``sources``, by source number), side by side."""
    journals = _journals(sources) or {}
    for gv in views:
        with st.container(border=True, key=f"tfb-dups-group-{gv.number}"):
            head = st.columns([5, 1], vertical_alignment="center")
            spans = ", ".join(md_text(s) for s in gv.sources)
            leak = " · :orange-badge[in more than one split]" if gv.leak else ""
            head[0].markdown(f"**Group {gv.number}** · {md_text(gv.kind_text)} · {spans}{leak}")
            states = [member_state(journals, m) for m in gv.members]
            if any(s == "dropped" for s in states):
                head[1].button(
                    "Undo drops",
                    key=state.widget_key(f"dups:undo:{gv.number}"),
                    icon=":material/undo:",
                    on_click=partial(_undo, sources, gv),
                )
            for row in range(0, len(gv.members), PER_ROW):
                cols = st.columns(PER_ROW)
                for col, m, decided in zip(
                    cols, gv.members[row : row + PER_ROW], states[row : row + PER_ROW]
                ):
                    _member(col, sources, gv, m, decided)
