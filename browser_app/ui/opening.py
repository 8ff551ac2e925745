"""Turning what the person asked for into an open source.

A spec is a path, folder, glob or shard pattern relative to the root folder (confined to it
by :mod:`browser_app.paths`), or an upload of this session (``upload:<name>``, a private
temporary file). :func:`open_source` opens it through the shared reader cache
(:func:`browser_app.ui.services.open_dataset`) or raises :class:`~browser_app.errors.InputError`
with a message for the person; :func:`current_source` opens the session's source and falls
back to none, with the message shown once.
"""

from __future__ import annotations

import os
import tempfile
from typing import BinaryIO

import codec
from browser_app.errors import InputError, PathRefused
from browser_app.paths import expand_inside, relative_to_root
from browser_app.ui import services, state
from browser_app.ui.source import Source

__all__ = [
    "UPLOAD_LIMIT_MB",
    "current_source",
    "open_source",
    "store_upload",
]

UPLOAD_LIMIT_MB = 200


def _upload_name(spec: str) -> str:
    return spec[len(state.UPLOAD_PREFIX) :]


def _not_found(root: str, exc: FileNotFoundError) -> str:
    """The message of a pattern or path that matches nothing, its path relative to the root."""
    msg = str(exc).strip("'\"")
    head = msg.split(":")[0]
    try:
        shown = relative_to_root(root, head)
        if os.path.isabs(head) and not shown.startswith("/"):
            msg = shown + msg[len(head) :]
    except (OSError, ValueError):
        pass
    return f"Not found: {msg}."


def _resolve(spec: str, root: str) -> tuple[list[str], str]:
    """``(files, label)`` of ``spec``."""
    if state.is_upload(spec):
        path = state.upload_path(spec)
        if not path or not os.path.isfile(path):
            raise InputError(f"{_upload_name(spec)}: the uploaded copy is gone; upload it again.")
        return [path], _upload_name(spec)
    try:
        files = expand_inside(root, spec)
    except PathRefused as exc:
        raise InputError(f"Refused: {exc}.") from exc
    except FileNotFoundError as exc:
        raise InputError(_not_found(root, exc)) from exc
    except OSError as exc:
        raise InputError(f"{spec}: cannot be read: {exc.strerror or exc}.") from exc
    return files, spec


def open_source(spec: str, root: str | None = None) -> Source:
    """Open ``spec`` (path, folder, glob or shard pattern relative to the root, or an upload
    of this session). Raises :class:`~browser_app.errors.InputError` with a message for the
    person."""
    root = root or state.app_args().root
    files, label = _resolve(spec, root)
    for p in files:
        if os.path.isdir(p):
            raise InputError(f"{relative_to_root(root, p)} is a folder, not a file.")
    try:
        ds = services.open_dataset(tuple(files))
    except PermissionError as exc:
        raise InputError(f"{label}: permission denied.") from exc
    except IsADirectoryError as exc:
        raise InputError(f"{label} is a folder, not a file.") from exc
    except OSError as exc:
        raise InputError(f"{label}: cannot be opened: {exc.strerror or exc}.") from exc
    except codec.CodecError as exc:
        raise InputError(f"{label}: {exc}") from exc
    return Source(spec=spec, label=label, root=root, paths=tuple(files), dataset=ds)


def current_source() -> Source | None:
    """The source of this session (see :func:`state.source_spec`), or None.

    An error opening it is shown once, and the session falls back to no source."""
    spec = state.source_spec()
    if not spec:
        return None
    try:
        return open_source(spec)
    except InputError as exc:
        state.flash(str(exc), "error")
        state.forget_recent(spec)
        state.clear_source()
        return None


def _upload_dir() -> str:
    folder = os.path.join(tempfile.gettempdir(), "tfrecord-browser-uploads")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def store_upload(name: str, chunks: BinaryIO) -> str:
    """Copy an uploaded file to a private temporary file (then memory-mapped like any other
    file, never kept in session memory) and register it; return its spec."""
    base = os.path.basename(name.replace("\\", "/")) or "upload.tfrecord"
    fd, path = tempfile.mkstemp(dir=_upload_dir(), prefix="up-", suffix="-" + base)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = chunks.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
    return state.add_upload(base, path)
