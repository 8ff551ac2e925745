"""The files uploaded in this session: only those registered here can be opened as uploads,
and they are never put in a URL."""

from __future__ import annotations

import weakref
from collections.abc import Callable

import streamlit as st

__all__ = ["UPLOAD_PREFIX", "add_upload", "is_upload", "upload_path"]

UPLOAD_PREFIX = "upload:"

_UPLOADS = "tfb:uploads"
_UPLOAD_FILES = "tfb:upload_files"


def is_upload(spec: str | None) -> bool:
    """Whether ``spec`` names an upload of this session (never put in a URL)."""
    return bool(spec) and str(spec).startswith(UPLOAD_PREFIX)


class _SessionUploads:
    """The files uploaded in one session. When Streamlit lets go of the session's state (it
    keeps it a little while after the browser goes away, for a reconnect, then drops it),
    this object goes with it and ``on_end`` is called with the files; also when the server
    stops. Nothing else marks the end of a session."""

    def __init__(self, on_end: Callable[[list[str]], object]) -> None:
        self.paths: list[str] = []
        weakref.finalize(self, on_end, self.paths)


def add_upload(
    name: str, path: str, on_end: Callable[[list[str]], object] | None = None
) -> tuple[str, str | None]:
    """Register an uploaded file stored at ``path`` (a private file) under ``name`` and
    return its spec and the file it replaces (an earlier upload of the same name), if any.
    Only files registered here in this session can be opened as uploads. ``on_end`` is
    called with every file of the session when the session's state is dropped."""
    spec = f"{UPLOAD_PREFIX}{name}"
    uploads = st.session_state.setdefault(_UPLOADS, {})
    replaced = uploads.get(spec)
    uploads[spec] = path
    if on_end is not None:
        files = st.session_state.get(_UPLOAD_FILES)
        if not isinstance(files, _SessionUploads):
            files = st.session_state[_UPLOAD_FILES] = _SessionUploads(on_end)
        files.paths.append(path)
    return spec, (str(replaced) if replaced and replaced != path else None)


def upload_path(spec: str) -> str | None:
    """The temporary file behind an upload spec of this session, else None."""
    value = st.session_state.get(_UPLOADS, {}).get(spec)
    return str(value) if value else None
