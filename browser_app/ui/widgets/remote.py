"""Remote sources on screen: where the data is read from and what reading it has cost so far
(requests, bytes, the block cache against its cap), and what went wrong with a remote
object, with the one thing to do about it: an object replaced on the server is opened again
as it is now ("Open the new version"); one that could not be reached after retries is tried
again ("Try again"). What was already drawn stays on the page.

:func:`guard` wraps anything that reads records (a page's body, a fragment) so that a
:class:`codec.RemoteError` raised inside becomes that message instead of a broken page."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import streamlit as st

from browser_app.ui import opening, services, state
from browser_app.ui.source import Source
from browser_app.view import md_text, plural
from codec.errors import RemoteError
from codec.locations import protocol
from codec.remote import remote_usage
from codec.settings import default_cache_dir, remote_cache_cap
from codec.values import format_bytes

__all__ = ["block_cache", "changes", "guard", "status", "trouble"]


def status(src: Source) -> None:
    """One line under the header of a remote source: the protocol, requests made and bytes
    read by its readers so far, and the block cache's use."""
    if not src.remote:
        return
    protocols = sorted({protocol(p) or "" for p in src.paths} - {""})
    requests = read = 0
    for f in src.dataset.files:
        source = services.remote_source(f)
        if source is not None:
            requests += source.requests
            read += source.bytes_read
    anon = " · anonymous access" if src.anon else ""
    st.caption(
        f":material/cloud: Remote ({', '.join(p + '://' for p in protocols)}){anon}  ·  "
        f"{plural(requests, 'request')}, {format_bytes(read)} read so far",
        help="Records are read in blocks fetched with ranged requests, read ahead while you"
        " page, and kept in the block cache on this machine.",
    )
    block_cache()


def block_cache() -> None:
    """What the remote block cache takes on disk, against its cap."""
    used, objects = remote_usage(default_cache_dir())
    st.caption(
        f"Remote block cache: {format_bytes(used)} of {format_bytes(remote_cache_cap())}"
        f" ({plural(objects, 'object')}); the least recently used make room for new blocks.",
        help="Set TFRECORD_BROWSER_REMOTE_CACHE_CAP (for example 20G) to change the cap.",
    )


def changes(src: Source) -> bool:
    """Say so when an object of ``src`` that this process has read was replaced on the
    server since it was opened (asked a few seconds apart), with the button that reopens it.
    Returns whether one was."""
    if not src.remote:
        return False
    changed = services.remote_changes(src)
    if changed:
        more = f" and {len(changed) - 3:,} more" if len(changed) > 3 else ""
        _changed_box(
            src,
            f"{', '.join(changed[:3])}{more}: replaced on the server since it was opened.",
            "header",
        )
    return bool(changed)


def _changed_box(src: Source | None, message: str, where: str) -> None:
    with st.container(border=True):
        st.warning(
            md_text(message)
            + "\n\nWhat is shown was read from the version opened; nothing of the new version"
            " is mixed in.",
            icon=":material/sync_problem:",
        )
        st.button(
            "Open the new version",
            key=state.widget_key(f"remote:reopen:{where}"),
            icon=":material/refresh:",
            type="primary",
            on_click=opening.reopen,
            args=(src,),
        )


def trouble(
    found: opening.RemoteTrouble,
    src: Source | None = None,
    where: str = "open",
    on_retry: Callable[[], None] | None = None,
) -> None:
    """The trouble met opening or reading a remote source, with what to do about it
    (``where``: which part of the page met it, one box each; ``on_retry``: what "Try
    again" does besides running the page again)."""
    if found.changed:
        _changed_box(src, found.message, where)
        return
    with st.container(border=True):
        st.error(
            md_text(found.message)
            + "\n\nWhat was already read is still shown. Check the connection, then try again.",
            icon=":material/cloud_off:",
        )
        st.button(
            "Try again",
            key=state.widget_key(f"remote:retry:{where}"),
            icon=":material/refresh:",
            on_click=on_retry or opening.try_again,
        )


@contextlib.contextmanager
def guard(src: Source | None, where: str) -> Iterator[None]:
    """Run the block; a :class:`codec.RemoteError` raised in it is shown as trouble (with its
    button) below what the block drew. The next run reads again."""
    try:
        yield
    except RemoteError as exc:
        spec = src.spec if src is not None else state.source_spec()
        trouble(opening.as_trouble(spec or "", exc), src, where)
