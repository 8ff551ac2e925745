"""What a widget remembers between runs of a session: about opening the source (a note
shown once, the inflate limits allowed and the one offered, a remote source's trouble), and
about what the views drew (the tile size, the record the records table shows, the picture in
the full view, a tensor decoded in full, a jump's records, the export's confirmations, the
notices already read)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import codec
from browser_app.ui.state.store import read, write

__all__ = [
    "FullView",
    "InflateOffer",
    "RemoteTrouble",
    "full_view",
    "indexing_paused",
    "inflate_caps",
    "inflate_offer",
    "keep_landing",
    "kept_landing",
    "open_note",
    "overwrite_confirmed_for",
    "remote_trouble",
    "replace_confirm_reset",
    "set_full_view",
    "set_indexing_paused",
    "set_inflate_cap",
    "set_inflate_offer",
    "set_open_note",
    "set_overwrite_confirmed_for",
    "set_remote_trouble",
    "set_replace_confirm_reset",
    "set_sidebar_counts",
    "set_table_generation",
    "set_table_shows",
    "set_tile_size_name",
    "set_torn_seen",
    "set_uploaded_spec",
    "show_tensor_in_full",
    "sidebar_counts",
    "table_generation",
    "table_shows",
    "tensor_in_full",
    "tile_size_name",
    "torn_seen",
    "uploaded_specs",
]

# -- opening the source ----------------------------------------------------------------------


@dataclass(frozen=True)
class InflateOffer:
    """A source refused because a file of it would inflate past ``limit`` bytes, and the
    higher limit this session may allow for it (``raise_to``; None when the cache disk has
    no room for more)."""

    spec: str
    label: str
    name: str
    limit: int
    raise_to: int | None


@dataclass(frozen=True)
class RemoteTrouble:
    """Why the session's remote source could not be opened or read: the message (URLs as
    shown), and whether the object was replaced on the server (``changed``: it must be
    opened again) or could not be reached (the same read may be tried again)."""

    spec: str
    message: str
    changed: bool


def open_note() -> tuple[str, str] | None:
    """The last note shown about opening a source: ``(spec, note)``."""
    value = read("open:noted", tuple)
    return cast(tuple[str, str], value) if value is not None and len(value) == 2 else None


def set_open_note(spec: str, note: str) -> None:
    write("open:noted", (spec, note))


def inflate_caps() -> dict[str, int]:
    """The inflate limits allowed in this session, by source spec."""
    return cast(dict[str, int], read("inflate:caps", dict) or {})


def set_inflate_cap(spec: str, limit: int) -> None:
    """Allow the files of the source ``spec`` to inflate up to ``limit`` bytes."""
    write("inflate:caps", {**inflate_caps(), spec: limit})


def inflate_offer() -> InflateOffer | None:
    """The higher inflate limit offered for the last source refused by it, if any."""
    return read("inflate:offer", InflateOffer)


def set_inflate_offer(value: InflateOffer | None) -> None:
    write("inflate:offer", value)


def remote_trouble() -> RemoteTrouble | None:
    """The trouble met opening or reading the session's remote source, kept until the person
    tries again or reopens (whichever source it was met on)."""
    return read("open:trouble", RemoteTrouble)


def set_remote_trouble(value: RemoteTrouble | None) -> None:
    write("open:trouble", value)


def indexing_paused() -> RemoteTrouble | None:
    """The trouble that paused indexing a remote source (whichever source it was), if any."""
    return read("index:paused", RemoteTrouble)


def set_indexing_paused(value: RemoteTrouble | None) -> None:
    write("index:paused", value)


def uploaded_specs() -> dict[str, str]:
    """The specs of this session's uploads by the uploader's file id (an upload seen again is
    not stored twice)."""
    return cast(dict[str, str], read("uploaded", dict) or {})


def set_uploaded_spec(file_id: str, spec: str) -> None:
    write("uploaded", {**uploaded_specs(), file_id: spec})


# -- what the views drew ---------------------------------------------------------------------


def sidebar_counts() -> tuple[int, int] | None:
    """What the sidebar showed about the journal on the last full run of the Records page:
    ``(pending changes, review marks)``, or None."""
    value = read("records:sidebar-facts", tuple)
    return cast(tuple[int, int], value) if value is not None else None


def set_sidebar_counts(value: tuple[int, int] | None) -> None:
    write("records:sidebar-facts", value)


def tile_size_name() -> str | None:
    """The gallery's tile size as last chosen, or None."""
    return read("tile", str)


def set_tile_size_name(name: str) -> None:
    write("tile", name)


def table_shows(tag: str) -> int | None:
    """The record the records table of the source ``tag`` (:attr:`Source.tag
    <browser_app.ui.source.Source.tag>`) last showed selected, or None."""
    value = read(f"table:{tag}:shows", int)
    return None if isinstance(value, bool) else value


def set_table_shows(tag: str, record: int) -> None:
    write(f"table:{tag}:shows", record)


def table_generation(name: str) -> int:
    """How many times the records table ``name`` was given a new key (to select the current
    record when it was chosen elsewhere)."""
    return read(f"{name}:gen", int) or 0


def set_table_generation(name: str, generation: int) -> None:
    write(f"{name}:gen", generation)


FullView = tuple[str, int, str, int]
"""A picture in the full view: ``(source spec, record, feature, index)``."""


def full_view() -> FullView | None:
    """The picture open in the full view, or None."""
    value = read("fullview:open", tuple)
    return cast(FullView, value) if value is not None else None


def set_full_view(which: FullView | None) -> None:
    """Open ``which`` in the full view (None: close it)."""
    write("fullview:open", which)


def tensor_in_full(key: str) -> bool:
    """Whether the tensor ``key`` (a value's widget key) was asked to be decoded in full."""
    return read(f"tensor:full:{key}", bool) is True


def show_tensor_in_full(key: str) -> None:
    write(f"tensor:full:{key}", True)


def kept_landing(tag: tuple[object, ...]) -> codec.DatasetLanding | None:
    """The records a jump found, when it was made for ``tag`` (source, identity, percentage,
    page size): kept so the records shown stay those while their numbers are filled in."""
    value = read("landing:kept", tuple)
    if value is not None and len(value) == 2 and value[0] == tag:
        return value[1] if isinstance(value[1], codec.DatasetLanding) else None
    return None


def keep_landing(tag: tuple[object, ...], got: codec.DatasetLanding) -> None:
    write("landing:kept", (tag, got))


def overwrite_confirmed_for() -> tuple[str, ...] | None:
    """The existing outputs the export's "replace" box was last shown for, or None."""
    value = read("export:overwrite_for", tuple)
    return cast(tuple[str, ...], value) if value is not None else None


def set_overwrite_confirmed_for(paths: tuple[str, ...]) -> None:
    write("export:overwrite_for", paths)


def replace_confirm_reset() -> bool:
    """Whether "replace the source file" was just done (its confirmation is to be unticked
    before it is drawn again)."""
    return read("export:reset_confirm", bool) is True


def set_replace_confirm_reset(value: bool) -> None:
    write("export:reset_confirm", value)


def torn_seen(torn: str) -> bool:
    """Whether the notice about the journal line cut short (kept as ``torn``) was read."""
    return read(f"torn-seen:{torn}", bool) is True


def set_torn_seen(torn: str) -> None:
    write(f"torn-seen:{torn}", True)
