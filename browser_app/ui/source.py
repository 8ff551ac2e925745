"""The open source of a session: what was asked for, and the shared reader of its files."""

from __future__ import annotations

from dataclasses import dataclass

import codec
from browser_app.paths import relative_to_root
from browser_app.ui import state
from codec.cache import FileIdentity

__all__ = ["Source"]


@dataclass(frozen=True)
class Source:
    """An open source: the spec the person gave, a label, the root folder, the files (real
    paths) and the shared reader."""

    spec: str
    label: str
    root: str
    paths: tuple[str, ...]
    dataset: codec.TFRecordDataset

    @property
    def key(self) -> tuple[FileIdentity, ...]:
        """The files' identities now: a cache key that changes with the files."""
        return FileIdentity.of_paths(self.paths)

    def rel(self, path: str) -> str:
        """How a file of this source is named to the person (relative to the root)."""
        if state.is_upload(self.spec):
            return self.label
        return relative_to_root(self.root, path)
