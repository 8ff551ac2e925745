"""What every cached result about a source is keyed by: the identity of its files (sizes,
mtimes, versions: :class:`codec.identity.FileIdentity`), and whether a shared reader still
has the files it was opened on."""

from __future__ import annotations

import codec
from codec.identity import FileIdentity

__all__ = ["Key", "unchanged"]

Key = tuple[FileIdentity, ...]
"""The identity of a source's files: the key of every cached result about them."""


def unchanged(ds: codec.TFRecordDataset) -> bool:
    """Whether every file of ``ds`` is open and (a local one) has the size and mtime it was
    opened with. Remote objects are checked when read, not here: asking would cost a request
    per object at every run (see :func:`browser_app.ui.services.remote_changes`)."""
    return all(not f.closed and (f.identity.remote or f.identity.unchanged()) for f in ds.files)
