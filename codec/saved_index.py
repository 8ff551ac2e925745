"""Saved record indexes: a file's complete index kept under ``<cache>/index``, so the next
open of an unchanged file does not scan at all.

An entry is keyed by the file's :class:`~codec.identity.FileIdentity` and checked against it
again when loaded; one that is missing, stale or unreadable is only a rescan.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from array import array
from dataclasses import dataclass
from pathlib import Path

from .framing import Problem
from .identity import FileIdentity
from .kinds import COMPRESSION

__all__ = ["IndexCache", "SavedIndex"]

_INDEX_MAGIC = b"TFBIDX01"
_INDEX_HEAD = struct.Struct("<8sQQQQQ")  # magic, size, mtime_ns, ino, count, problems-json length


@dataclass
class SavedIndex:
    """A file's complete record index: header offsets, payload lengths and the problems the
    header scan found."""

    offsets: array
    lengths: array
    problems: list[Problem]


class IndexCache:
    """Complete record indexes saved under ``<cache>/index``, keyed by file identity."""

    def __init__(self, cache_dir: Path) -> None:
        self.folder = cache_dir / "index"

    def _path(self, ident: FileIdentity) -> Path:
        return self.folder / f"{ident.digest('index')}.idx"

    def load(self, ident: FileIdentity, path: str) -> SavedIndex | None:
        """The saved index of this exact file, or ``None`` (missing, stale or unreadable);
        its problems name the file as ``path`` (the name the caller opened it by)."""
        try:
            blob = self._path(ident).read_bytes()
        except OSError:
            return None
        try:
            magic, size, mtime, ino, count, plen = _INDEX_HEAD.unpack_from(blob, 0)
            if magic != _INDEX_MAGIC or (size, mtime, ino) != (
                ident.size,
                ident.mtime_ns,
                ident.ino,
            ):
                return None
            pos = _INDEX_HEAD.size
            probs = json.loads(blob[pos : pos + plen])
            pos += plen
            if len(blob) != pos + 16 * count:
                return None
            offsets = array("Q", blob[pos : pos + 8 * count])
            lengths = array("Q", blob[pos + 8 * count :])
            problems = [
                Problem(p["kind"], p["offset"], p["end"], p["message"], path) for p in probs
            ]
        except (struct.error, ValueError, KeyError, TypeError):
            return None
        return SavedIndex(offsets, lengths, problems)

    def save(self, ident: FileIdentity, index: SavedIndex) -> None:
        """Save atomically; a cache that cannot be written only costs a rescan next time."""
        probs = [
            {"kind": p.kind, "offset": p.offset, "end": p.end, "message": p.message}
            for p in index.problems
            if p.kind != COMPRESSION
        ]
        pj = json.dumps(probs).encode()
        head = _INDEX_HEAD.pack(
            _INDEX_MAGIC, ident.size, ident.mtime_ns, ident.ino, len(index.offsets), len(pj)
        )
        target = self._path(ident)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".idx-")
            with os.fdopen(fd, "wb") as f:
                f.write(head)
                f.write(pj)
                f.write(index.offsets.tobytes())
                f.write(index.lengths.tobytes())
            os.replace(tmp, target)
        except OSError:
            pass
