"""TFRecord output: uncompressed, GZIP or ZLIB, in one file or in shards named like
TensorFlow's (``{stem}-{k:05d}-of-{N:05d}{ext}``), or written over the source itself.

Untouched records are copied byte for byte: the payload is read with its data CRC checked and
framed again, which gives the identical bytes. Edited and new records are encoded from their
effective state.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from typing import TYPE_CHECKING

import codec
from browser_app.errors import ExportError
from browser_app.export.base import TFRECORD, ExportOptions, ExportReport
from browser_app.export.exporter import Exporter
from browser_app.export.plan import ExportSource
from browser_app.export.running import run
from browser_app.export.staging import Check, ExportRun, Piece, PieceRun
from codec.errors import CodecError
from codec.framing import encode_record
from codec.kinds import COMPRESSIONS, GZIP, NO_COMPRESSION, ZLIB, Compression
from codec.values import plural

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = [
    "COMPRESSION_SUFFIX",
    "TFRecordExporter",
    "check_tfrecord",
    "compression_for_name",
    "export_tfrecord",
    "resolve_compression",
    "shard_names",
    "write_tfrecord",
]

_CHUNK = 1 << 20  # bytes of framed records handed to the writer at a time

COMPRESSION_SUFFIX: dict[str, str] = {NO_COMPRESSION: "", GZIP: ".gz", ZLIB: ".zlib"}
"""What a new TFRecord file's name ends with, for each compression."""

# Name endings that say a file is compressed (the first of each is COMPRESSION_SUFFIX's).
_COMPRESSED_SUFFIX: dict[str, Compression] = {".gz": GZIP, ".gzip": GZIP, ".zlib": ZLIB, ".z": ZLIB}


def compression_for_name(path: str | os.PathLike[str]) -> Compression | None:
    """The compression a name's last suffix asks for: ``x.tfrecord.gz`` is ``gzip``,
    ``x.tfrecord`` ``None``."""
    name = os.path.basename(os.fspath(path).rstrip("/\\"))
    return _COMPRESSED_SUFFIX.get(os.path.splitext(name)[1].lower())


def resolve_compression(compression: str | None, dst: str) -> str:
    """``compression``, else the one ``dst``'s name asks for, else none; checked."""
    comp = compression or compression_for_name(dst) or NO_COMPRESSION
    if comp not in COMPRESSIONS:
        raise ExportError(f"compression must be one of {', '.join(COMPRESSIONS)}")
    return comp


def shard_names(path: str | os.PathLike[str], shards: int) -> list[str]:
    """TensorFlow's shard names: ``out.tfrecord`` in 3 shards is ``out-00000-of-00003.tfrecord``
    ... (the extension, compression suffix included, stays at the end)."""
    p = os.fspath(path)
    directory, name = os.path.split(p)
    stem, ext = os.path.splitext(name)
    if ext.lower() in _COMPRESSED_SUFFIX:
        stem, inner = os.path.splitext(stem)
        ext = inner + ext
    return [os.path.join(directory, f"{stem}-{k:05d}-of-{shards:05d}{ext}") for k in range(shards)]


def write_tfrecord(path: str, compression: str, payloads: Iterable[bytes]) -> int:
    """Frame every payload and write them to a new TFRecord file at ``path``, a chunk of
    framed records at a time. Returns the writer's count of records written."""
    with codec.TFRecordWriter(path, compression) as w:
        buf: list[bytes] = []
        size = 0
        for payload in payloads:
            framed = encode_record(payload)
            buf.append(framed)
            size += len(framed)
            if size >= _CHUNK:
                w.write_framed(b"".join(buf), records=len(buf))
                buf, size = [], 0
        if buf:
            w.write_framed(b"".join(buf), records=len(buf))
    return w.records


def check_tfrecord(compression: str) -> Check:
    """A check that reads a written TFRecord file back, every CRC, and counts its records."""

    def check(path: str, expected: int, shown: str) -> None:
        with tempfile.TemporaryDirectory(prefix="tfrecord-browser-verify-") as cache:
            try:
                with codec.TFRecordFile(
                    path, compression=compression, cache_dir=cache, use_cache=False
                ) as f:
                    rep = f.verify()
            except (OSError, CodecError) as exc:
                raise ExportError(f"{shown}: the written file cannot be read back: {exc}") from exc
        if not rep.ok or rep.records != expected:
            what = "; ".join(p.describe() for p in rep.problems[:3]) or (
                f"{plural(rep.records, 'record')} read back, {expected:,} written"
            )
            raise ExportError(f"{shown}: verification of the written file failed: {what}")

    return check


class TFRecordExporter(Exporter):
    """TFRecord files: ``compression`` (default: from the destination's name, else none),
    ``shards`` files, or the one source file replaced (``replace_source``)."""

    name = TFRECORD
    label = "TFRecord"
    suffix = ".tfrecord"
    extensions = (".tfrecord", ".tfrecords", ".tfrec", ".record", ".records")

    def __init__(
        self,
        dst: str | os.PathLike[str] | None = None,
        *,
        compression: str | None = None,
        shards: int | None = None,
        replace_source: bool = False,
    ) -> None:
        super().__init__(dst)
        self.compression = compression
        self.shards = shards
        self.replace_source = replace_source

    def pieces(self, job: ExportRun) -> list[Piece]:
        """A piece per file: the records go to the shards in order, as evenly as the count
        of planned records allows (a damaged record skipped leaves its shard one shorter)."""
        if self.replace_source:
            dsts, comp = self._over_the_source(job)
        else:
            comp = resolve_compression(self.compression, self.dst)
            dsts = self.outputs()
            job.guard(dsts)
        self.compression = comp  # resolved once, here, for every piece
        n = len(dsts)
        bounds = [job.total * k // n for k in range(n + 1)]
        return [Piece(bounds[k], bounds[k + 1], (dsts[k],)) for k in range(n)]

    def write(self, job: PieceRun) -> None:
        comp = resolve_compression(self.compression, job.dsts[0])
        out = job.reserve(job.dsts[0], check_tfrecord(comp))
        payloads = (p for _pos, _ref, p in job.ticking(job.plan.records(job.report)))
        out.expected = out.records = write_tfrecord(out.tmp, comp, payloads)
        job.tick("write", out.expected)
        job.report.outputs = list(job.dsts)

    def outputs(self) -> list[str]:
        """The destination, or the name of each shard."""
        if self.shards is not None and self.shards < 1:
            raise ExportError("shards must be at least 1")
        dst = self.dst
        return shard_names(dst, self.shards) if self.shards and self.shards > 1 else [dst]

    def _over_the_source(self, job: ExportRun) -> tuple[list[str], str]:
        files = job.plan.files
        if len(files) != 1:
            raise ExportError("replace_source works on a one-file source")
        src = files[0].path
        if self.destination is not None and os.path.realpath(self.destination) != os.path.realpath(
            src
        ):
            raise ExportError("replace_source writes over the source: leave out dst")
        if self.shards not in (None, 1):
            raise ExportError("replace_source cannot split into shards")
        job.replace_on_commit()
        return [src], self.compression or files[0].compression


def export_tfrecord(
    source: ExportSource,
    dst: str | os.PathLike[str] | None = None,
    *,
    compression: str | None = None,
    shards: int | None = None,
    replace_source: bool = False,
    **options: Unpack[ExportOptions],
) -> ExportReport:
    """Write the (edited) dataset to TFRecord.

    ``source`` is a :class:`~browser_app.edits.Journal` (its edits are applied), a dataset,
    a file or paths; ``options`` are :class:`~browser_app.export.base.ExportOptions`
    (``selection``, ``include_added``, ``verify``, ``progress``). ``compression`` is
    ``none``, ``gzip`` or ``zlib`` (default: from ``dst``'s name, else ``none``; for
    ``replace_source`` the source's). ``shards=N`` writes N files named :func:`shard_names`.
    With ``replace_source=True`` (a one-file source, ``dst`` omitted or the source itself)
    the source is replaced atomically after the old file is kept as ``<name>.bak`` (or
    ``<name>.<time>.bak`` when that exists), and the journal, whose edits are now in the
    file, is set aside. Raises :class:`codec.WriteError` (nothing written,
    edits kept), :class:`~browser_app.errors.ExportError`."""
    exporter = TFRecordExporter(
        dst, compression=compression, shards=shards, replace_source=replace_source
    )
    return run(exporter, source, **options)
