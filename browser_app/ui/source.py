"""The open source of a session: what was asked for, the shared reader of its files, and for
a split of a dataset that describes itself (a TFDS dataset, a TFX ExampleGen output), the
dataset folder and the split."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import codec
from browser_app.paths import relative_to_root
from browser_app.ui import state
from codec.identity import FileIdentity
from codec.locations import is_url
from codec.tfds import SplitFolder

__all__ = ["Source"]


@dataclass(frozen=True)
class Source:
    """An open source: the spec the person gave, a label, the root (a folder or a URL
    prefix), the files (real paths, or the objects' URLs) and the shared reader; ``anon``:
    its remote objects are read without credentials.

    A split of a dataset folder has its ``split_folder`` (the TFDS dataset or TFX output, as
    :func:`codec.tfds.open_split_folder` reads it), the ``split`` open (its files are
    ``paths``), ``folder_spec``, the spec of the folder (``FOLDER:SPLIT`` opens another
    split: :meth:`split_spec`), and ``choices``: when the spec named a folder holding several
    TFDS datasets or configs, their specs (the first was opened). ``skipped``: what a folder
    or ``**`` glob found by content left out, ``(path relative to the root, why)``."""

    spec: str
    label: str
    root: str
    paths: tuple[str, ...]
    dataset: codec.TFRecordDataset
    anon: bool = False
    split_folder: SplitFolder | None = None
    split: str | None = None
    folder_spec: str | None = None
    choices: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()

    def split_spec(self, split: str) -> str:
        """The spec that opens ``split`` of this source's dataset folder."""
        return f"{self.folder_spec or self.spec}:{split}"

    @property
    def key(self) -> tuple[FileIdentity, ...]:
        """The files' identities now: a cache key that changes with the files. A remote
        object's is the one its reader opened (size and version): asking the server at every
        run would cost a request per object; a replaced object is found when read (see
        :mod:`browser_app.ui.widgets.remote`)."""
        if not self.remote:
            return FileIdentity.of_paths(self.paths)
        return tuple(
            f.identity if is_url(p) else FileIdentity.of_paths([p])[0]
            for p, f in zip(self.paths, self.dataset.files)
        )

    @property
    def remote(self) -> bool:
        """Whether any file of this source is a remote object."""
        return any(is_url(p) for p in self.paths)

    def local_within(self, limit: int) -> bool:
        """Whether every file of this source is on this machine and they hold at most
        ``limit`` bytes together: small enough for a page to read them all at once, without
        being asked."""
        if self.remote:
            return False
        try:
            return sum(os.path.getsize(p) for p in self.paths) <= limit
        except OSError:
            return False

    @property
    def link(self) -> str:
        """The spec as links and labels carry it (a URL without its query string)."""
        return state.link_spec(self.spec)

    @property
    def tag(self) -> str:
        """A short name of the spec for widget keys (which reach the page): the spec itself
        when it can be shown whole, else a digest of it."""
        if self.link == self.spec:
            return self.spec
        return hashlib.sha256(self.spec.encode("utf-8", "surrogateescape")).hexdigest()[:16]

    def rel(self, path: str) -> str:
        """How a file of this source is named to the person (relative to the root)."""
        if state.is_upload(self.spec):
            return self.label
        return relative_to_root(self.root, path)
