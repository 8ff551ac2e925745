"""The top of every page with a source open: the title, what is open (files, records, size,
compression; for remote data, where it is read from and what reading it has cost) and, while
the index is still being built, its progress. Indexing a remote source pauses when the
network fails (after retries), until the person tries again."""

from __future__ import annotations

import time

import streamlit as st

import codec
from browser_app.ui import opening, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import remote
from browser_app.view import md_text, plural
from codec.cache import inflated_usage
from codec.errors import RemoteError
from codec.kinds import NO_COMPRESSION
from codec.settings import default_cache_dir
from codec.values import format_bytes

__all__ = ["index_progress", "inflated_copies", "source_header"]

_INDEX_STEP = 1 << 16  # records indexed per step
_STEP_SECONDS = 0.25  # indexing time per tick, so the page stays responsive


def _resume() -> None:
    state.set_indexing_paused(None)


def source_header(src: Source, title: str) -> None:
    """Page title, what is open, and indexing progress while the index grows."""
    ds = src.dataset
    st.subheader(f"{title}", anchor=False)
    size = sum(f.file_size for f in ds.files)
    comps = sorted({f.compression for f in ds.files})
    parts = [f"**{md_text(src.label)}**"]
    if len(ds.files) > 1:
        parts.append(plural(len(ds.files), "file"))
    if ds.index_complete:
        parts.append(plural(ds.indexed, "record"))
    else:
        parts.append(f"{ds.indexed:,}+ records (counting…)")
    parts.append(format_bytes(size))
    if comps != [NO_COMPRESSION]:
        parts.append(", ".join(comps))
    st.caption("  ·  ".join(parts))
    if comps != [NO_COMPRESSION]:
        inflated_copies()
    remote.status(src)
    index_progress(src)


def inflated_copies() -> None:
    """What the inflated copies of GZIP/ZLIB files take in the cache, against their cap."""
    use = inflated_usage(default_cache_dir())
    st.caption(
        f"Inflated copies in the cache: {format_bytes(use.bytes)} of {format_bytes(use.cap)}"
        f" ({plural(use.copies, 'copy', 'copies')}, {use.open:,} open); the least recently"
        " used make room for new ones, open ones never.",
        help="Set TFRECORD_BROWSER_INFLATED_CAP (for example 20G) to change the cap.",
    )


def index_progress(src: Source) -> None:
    """While the index is incomplete: index more in short steps (a fragment that reruns on
    its own) and show the count filling in; rerun the page once it is complete."""
    ds = src.dataset
    if ds.index_complete:
        return
    paused = state.indexing_paused()
    if paused is not None and paused.spec == src.spec:
        remote.trouble(paused, src, "index", on_retry=_resume)
        return

    @st.fragment(run_every=0.5)
    def _tick() -> None:
        deadline = time.monotonic() + _STEP_SECONDS
        try:
            while not ds.index_complete and time.monotonic() < deadline:
                ds.index_more(_INDEX_STEP)
        except codec.ReaderClosedError:
            return
        except RemoteError as exc:
            found = opening.as_trouble(src.spec, exc)
            message = f"Indexing paused: {found.message}"
            state.set_indexing_paused(state.RemoteTrouble(found.spec, message, found.changed))
            st.rerun(scope="app")
        if ds.index_complete:
            st.rerun(scope="app")
        st.progress(
            min(1.0, ds.index_progress),
            text=f"Indexing… {plural(ds.indexed, 'record')} so far"
            f" ({ds.index_progress:.0%} of the file)",
        )

    _tick()
