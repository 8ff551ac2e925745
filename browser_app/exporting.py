"""Export a dataset, with its pending edits applied, to TFRecord, JSON Lines, flat tables or
image files; import JSON Lines back into TFRecord.

Every export follows the same steps: plan the records (the edited dataset's order, or a
selection of it), write them to temporary files beside the destination, verify what was
written, and only then rename the files into place. A failure at any step (a full disk, an
unwritable folder, a failed verification) removes the temporary files and leaves the
destination and the journal as they were. The source is never written to, unless
``replace_source=True`` asks for exactly that: the old file is kept as a backup first.

Untouched records are copied byte for byte (the payload is read with its data CRC checked and
framed again, which gives the identical bytes); edited and new records are encoded from their
effective state. Damaged source records are never copied: they are skipped and listed in the
report's ``skipped``.

Formats (:data:`FORMATS`): ``tfrecord`` (none, GZIP or ZLIB; optionally sharded as
``{stem}-{k:05d}-of-{N:05d}{ext}``), ``jsonl`` (``{"index", "kind", "record"}`` lines, the
record in the proto3 JSON mapping, read back by :func:`import_jsonl`), ``csv``, ``parquet`` and
``json`` (one row per record, one column per feature), and ``images`` (a folder or a ``.zip``).

Flat tables keep every value exact: int64 as int64 (Parquet), decimal text (CSV) or JSON
numbers up to ±(2**53 − 1) and strings beyond (``int64_as_string=True`` writes all as strings);
float32 as its shortest round-trip text (``nan``/``inf``/``-inf`` in CSV, ``"NaN"``,
``"Infinity"``, ``"-Infinity"`` in JSON); bytes as text when they are UTF-8, else
``base64:...`` (CSV) or ``{"$base64": "..."}`` (JSON); Parquet stores them as ``string`` when
every value is UTF-8, else ``binary``. A feature with exactly one value in every record that
has it is a scalar column, otherwise a list column (a JSON array in CSV); a feature seen with
several types gets one column per type, ``name:type``.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import itertools
import json
import os
import re
import shutil
import tempfile
import time
import zipfile
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import codec
from browser_app.journal import Journal, RecordRef, as_dataset
from codec import example as ex
from codec.errors import CodecError, CorruptRecordError, WriteError
from codec.example import Record
from codec.framing import Problem, encode_record
from codec.values import format_float, is_text
from codec.writer import fsync_dir

__all__ = [
    "COMPRESSIONS",
    "FORMATS",
    "ExportError",
    "ExportReport",
    "ImportFormatError",
    "Progress",
    "export",
    "export_images",
    "export_jsonl",
    "export_table",
    "export_tfrecord",
    "format_for_path",
    "import_jsonl",
    "shard_names",
]

FORMATS = ("tfrecord", "jsonl", "json", "csv", "parquet", "images")
COMPRESSIONS = ("none", "gzip", "zlib")
JS_SAFE_INT = (1 << 53) - 1

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: ``stage`` is ``"write"`` (records) or ``"verify"``."""

_CHUNK = 1 << 20  # bytes of framed records handed to the writer at a time
_ROW_BATCH = 8192  # rows per Parquet row group batch


class ExportError(CodecError):
    """An export that cannot be done as asked (e.g. it would overwrite the source, or the
    written output failed verification). Nothing was left at the destination."""


class ImportFormatError(CodecError, ValueError):
    """A JSON Lines input that is not what :func:`export_jsonl` writes; names the line."""


@dataclass
class ExportReport:
    """What an export did. ``records`` were written: ``copied`` byte for byte, ``edited``
    re-encoded with their changes, ``added`` new; ``deleted`` were left out as the journal
    asks; ``skipped`` lists damaged source records and regions that were not exported (also
    images that could not be converted, for the images format)."""

    format: str
    outputs: list[str] = field(default_factory=list)
    records: int = 0
    copied: int = 0
    edited: int = 0
    added: int = 0
    deleted: int = 0
    images: int = 0
    bytes: int = 0  # bytes written on disk, all outputs
    skipped: list[Problem] = field(default_factory=list)
    verified: bool = False
    backup: str | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Nothing was skipped."""
        return not self.skipped

    def summary(self) -> str:
        where = self.outputs[0] if len(self.outputs) == 1 else f"{len(self.outputs)} files"
        what = f"{self.images:,} images from " if self.format == "images" else ""
        parts = [f"wrote {what}{self.records:,} records to {where} ({self.format})"]
        detail = []
        if self.copied:
            how = "copied byte for byte" if self.format == "tfrecord" else "unchanged"
            detail.append(f"{self.copied:,} {how}")
        if self.edited:
            detail.append(f"{self.edited:,} edited")
        if self.added:
            detail.append(f"{self.added:,} added")
        if self.deleted:
            detail.append(f"{self.deleted:,} deleted left out")
        if detail:
            parts.append("; ".join(detail))
        if self.skipped:
            parts.append(f"{len(self.skipped)} damaged record(s) or region(s) skipped")
        if self.verified:
            parts.append("verified")
        if self.backup:
            parts.append(f"the previous file is kept as {self.backup}")
        return ", ".join(parts)


# --------------------------------------------------------------------------------------------
# Names


_EXTENSIONS = {
    ".tfrecord": "tfrecord",
    ".tfrecords": "tfrecord",
    ".tfrec": "tfrecord",
    ".record": "tfrecord",
    ".records": "tfrecord",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".zip": "images",
}
_COMPRESSED_SUFFIX = {".gz": "gzip", ".gzip": "gzip", ".zlib": "zlib", ".z": "zlib"}


def format_for_path(path: str | os.PathLike[str]) -> tuple[str | None, str | None]:
    """``(format, compression)`` suggested by a destination's name: ``x.tfrecord.gz`` gives
    ``("tfrecord", "gzip")``, ``x.csv`` ``("csv", None)``, a folder or an unknown name
    ``(None, None)``."""
    name = os.path.basename(os.fspath(path).rstrip("/\\")).lower()
    stem, ext = os.path.splitext(name)
    compression = None
    if ext in _COMPRESSED_SUFFIX:
        compression = _COMPRESSED_SUFFIX[ext]
        stem, ext = os.path.splitext(stem)
        fmt = _EXTENSIONS.get(ext)
        return (fmt or ("tfrecord" if codec.looks_like_tfrecord(stem) else None)), compression
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext], None
    if codec.looks_like_tfrecord(name):
        return "tfrecord", None
    return None, None


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


# --------------------------------------------------------------------------------------------
# The plan: which records, in which order, from where


class _Plan:
    """The records to export: ``(position, ref)`` pairs in the edited dataset's order, and
    how to get each one's payload."""

    def __init__(
        self,
        source: Any,
        selection: Iterable[RecordRef] | None,
        include_added: bool,
    ) -> None:
        if isinstance(source, Journal):
            self.journal: Journal | None = source
            self.dataset = source.source
            self._owned = False
        else:
            self.journal = None
            self.dataset, self._owned = as_dataset(source)
        self.files: list[codec.TFRecordFile] = list(self.dataset.files)
        self._starts = [0]
        for f in self.files:
            self._starts.append(self._starts[-1] + len(f))
        self.source_total = self._starts[-1]
        self.whole = selection is None
        self.deleted = 0
        self._items: list[tuple[int, RecordRef]] | None = None
        if selection is not None:
            self._items = self._select(selection, include_added)
            self.total = len(self._items)
        elif self.journal is not None:
            self.total = self.journal.count(self.source_total)
            self.deleted = len(self.journal.deleted_records())
        else:
            self.total = self.source_total

    def close(self) -> None:
        if self._owned:
            self.dataset.close()

    def _select(
        self, selection: Iterable[RecordRef], include_added: bool
    ) -> list[tuple[int, RecordRef]]:
        wanted: set[RecordRef] = set()
        for r in selection:
            if isinstance(r, bool) or not isinstance(r, (int, str)):
                raise ExportError(f"{r!r} is not a record index")
            if isinstance(r, int):
                if r < 0:
                    r += self.source_total
                if not 0 <= r < self.source_total:
                    raise ExportError(f"record {r} is out of range ({self.source_total} records)")
            wanted.add(r)
        if self.journal is None:
            bad = [r for r in wanted if isinstance(r, str)]
            if bad:
                raise ExportError(f"record {bad[0]!r} does not exist (no journal)")
            return [(int(r), r) for r in sorted(int(r) for r in wanted)]
        j = self.journal
        self.deleted = sum(1 for r in wanted if j.is_deleted(r))
        out: list[tuple[int, RecordRef]] = []
        for pos, ref in enumerate(j.order(self.source_total)):
            if ref in wanted or (
                include_added and isinstance(ref, str) and j.anchor(ref) in wanted
            ):
                out.append((pos, ref))
        return out

    def items(self) -> Iterator[tuple[int, RecordRef]]:
        if self._items is not None:
            yield from self._items
        elif self.journal is not None:
            yield from enumerate(self.journal.order(self.source_total))
        else:
            yield from ((i, i) for i in range(self.source_total))

    def locate(self, i: int) -> tuple[codec.TFRecordFile, int]:
        k = bisect_right(self._starts, i) - 1
        return self.files[k], i - self._starts[k]

    def payload(self, ref: RecordRef) -> tuple[bytes | None, str, Problem | None]:
        """``(payload, how, problem)``: how is ``copied``, ``edited`` or ``added``; a damaged
        source record gives ``(None, "copied", problem)``."""
        j = self.journal
        if j is not None and j.is_touched(ref):
            payload = j.effective_payload(ref)
            return payload, "added" if isinstance(ref, str) else "edited", None
        if isinstance(ref, str):
            assert j is not None
            return j.effective_payload(ref), "added", None
        f, local = self.locate(ref)
        try:
            return f.read(local), "copied", None
        except CorruptRecordError as exc:
            prob = f.is_damaged(local) or Problem(
                "data_crc", exc.offset, exc.offset, exc.reason, f.path
            )
            return None, "copied", prob

    def records(self, report: ExportReport) -> Iterator[tuple[int, RecordRef, bytes]]:
        """``(position, ref, payload)`` of every record to write, counting into ``report``."""
        for pos, ref in self.items():
            payload, how, problem = self.payload(ref)
            if payload is None:
                if problem is not None:
                    report.skipped.append(problem)
                continue
            setattr(report, how, getattr(report, how) + 1)
            report.records += 1
            yield pos, ref, payload

    def region_problems(self) -> list[Problem]:
        """Damage that is not a record (bad headers, truncation, broken compression): lost
        data to report when the whole dataset is exported."""
        if not self.whole:
            return []
        return [p for f in self.files for p in f.problems if p.kind != "data_crc"]

    def source_paths(self) -> list[str]:
        return [os.path.realpath(f.path) for f in self.files]


# --------------------------------------------------------------------------------------------
# Staging: temporary files beside the destination, renamed into place after verification


class _Stage:
    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []  # (temporary, destination)

    def reserve(self, dst: str) -> str:
        directory = os.path.dirname(os.path.abspath(dst))
        try:
            fd, tmp = tempfile.mkstemp(
                dir=directory, prefix=f".{os.path.basename(dst)}.", suffix=".export"
            )
        except OSError as exc:
            raise WriteError(f"{dst}: cannot write here: {exc.strerror or exc}") from exc
        os.close(fd)
        self.pairs.append((tmp, dst))
        return tmp

    def discard(self) -> None:
        for tmp, _dst in self.pairs:
            with contextlib.suppress(OSError):
                if os.path.isdir(tmp) and not os.path.islink(tmp):
                    shutil.rmtree(tmp)
                else:
                    os.unlink(tmp)
        self.pairs = []

    def commit(self) -> None:
        done: list[str] = []
        try:
            for tmp, dst in self.pairs:
                os.replace(tmp, dst)
                done.append(dst)
                fsync_dir(os.path.dirname(os.path.abspath(dst)))
        except OSError as exc:
            self.discard()
            raise WriteError(
                f"{dst}: cannot move the output into place: {exc.strerror or exc}"
                + (f" ({len(done)} of the other files were already written)" if done else "")
            ) from exc
        self.pairs = []


def _fsync_file(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise WriteError(f"{path}: cannot sync: {exc.strerror or exc}") from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        raise WriteError(f"{path}: write failed: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


@contextlib.contextmanager
def _exporting(
    source: Any, selection: Iterable[RecordRef] | None, include_added: bool, fmt: str
) -> Iterator[tuple[_Plan, _Stage, ExportReport]]:
    t0 = time.perf_counter()
    plan = _Plan(source, selection, include_added)
    stage = _Stage()
    report = ExportReport(fmt, deleted=plan.deleted)
    try:
        yield plan, stage, report
    except BaseException as exc:
        stage.discard()
        if isinstance(exc, OSError):
            raise WriteError(f"export failed, nothing written: {exc.strerror or exc}") from exc
        raise
    finally:
        plan.close()
        report.seconds = time.perf_counter() - t0
    report.skipped.extend(plan.region_problems())


def _guard_source(plan: _Plan, dsts: Sequence[str]) -> None:
    sources = set(plan.source_paths())
    for d in dsts:
        if os.path.realpath(d) in sources:
            raise ExportError(
                f"{d} is a source file of this export; pick another destination"
                " (or replace the source explicitly)"
            )


def _tick(progress: Progress | None, stage: str, done: int, total: int) -> None:
    if progress is not None:
        progress(stage, done, total)


_TICK_EVERY = 1024


# --------------------------------------------------------------------------------------------
# TFRecord


def _verify_tfrecord(path: str, compression: str, records: int, shown: str) -> None:
    with tempfile.TemporaryDirectory(prefix="tfrecord-browser-verify-") as cache:
        try:
            with codec.TFRecordFile(
                path, compression=compression, cache_dir=cache, use_cache=False
            ) as f:
                rep = f.verify()
        except (OSError, CodecError) as exc:
            raise ExportError(f"{shown}: the written file cannot be read back: {exc}") from exc
    if not rep.ok or rep.records != records:
        what = "; ".join(p.describe() for p in rep.problems[:3]) or (
            f"{rep.records} records read back, {records} written"
        )
        raise ExportError(f"{shown}: verification of the written file failed: {what}")


def _write_tfrecords(
    plan: _Plan,
    stage: _Stage,
    report: ExportReport,
    dsts: list[str],
    compression: str,
    progress: Progress | None,
    verify: bool,
) -> None:
    total = plan.total
    shards = len(dsts)
    bounds = [total * k // shards for k in range(shards + 1)]
    tmps = [stage.reserve(d) for d in dsts]
    counts = [0] * shards
    records = plan.records(report)
    done = 0
    for n, tmp in enumerate(tmps):
        limit = bounds[n + 1] - done if n < shards - 1 else None
        mine = itertools.islice(records, max(0, limit)) if limit is not None else records
        with codec.TFRecordWriter(tmp, compression) as w:
            buf: list[bytes] = []
            size = 0
            for _pos, _ref, payload in mine:
                framed = encode_record(payload)
                buf.append(framed)
                size += len(framed)
                counts[n] += 1
                done += 1
                if size >= _CHUNK:
                    w.write_framed(b"".join(buf))
                    buf, size = [], 0
                if done % _TICK_EVERY == 0:
                    _tick(progress, "write", done, total)
            if buf:
                w.write_framed(b"".join(buf))
    _tick(progress, "write", done, total)
    if verify:
        for n, tmp in enumerate(tmps):
            _tick(progress, "verify", n, len(tmps))
            _verify_tfrecord(tmp, compression, counts[n], dsts[n])
        _tick(progress, "verify", len(tmps), len(tmps))
        report.verified = True
    report.bytes = sum(os.path.getsize(t) for t in tmps)


def export_tfrecord(
    source: Any,
    dst: str | os.PathLike[str] | None = None,
    *,
    selection: Iterable[RecordRef] | None = None,
    include_added: bool = True,
    compression: str | None = None,
    shards: int | None = None,
    replace_source: bool = False,
    verify: bool = True,
    progress: Progress | None = None,
) -> ExportReport:
    """Write the (edited) dataset to TFRecord.

    ``source`` is a :class:`~browser_app.journal.Journal` (its edits are applied), a dataset,
    a file or paths. ``selection`` is an iterable of records (global indices, new records'
    ids); records added after a selected record come with it unless ``include_added`` is
    false. ``compression`` is ``none``, ``gzip`` or ``zlib`` (default: from ``dst``'s name,
    else ``none``; for ``replace_source`` the source's). ``shards=N`` writes N files named
    :func:`shard_names`. With ``replace_source=True`` (a one-file source, ``dst`` omitted or
    the source itself) the source is replaced atomically after the old file is kept as
    ``<name>.bak`` (or ``<name>.<time>.bak`` when that exists), and the journal, whose edits
    are now in the file, is set aside. Raises :class:`codec.WriteError` (nothing written,
    edits kept), :class:`ExportError`."""
    with _exporting(source, selection, include_added, "tfrecord") as (plan, stage, report):
        if replace_source:
            if len(plan.files) != 1:
                raise ExportError("replace_source works on a one-file source")
            src = plan.files[0].path
            if dst is not None and os.path.realpath(dst) != os.path.realpath(src):
                raise ExportError("replace_source writes over the source: leave out dst")
            if shards not in (None, 1):
                raise ExportError("replace_source cannot split into shards")
            comp = compression or plan.files[0].compression
            _write_tfrecords(plan, stage, report, [src], comp, progress, verify)
            report.backup = _replace(stage, src)
            report.outputs = [src]
            if isinstance(source, Journal):
                source.discard()
            return report
        if dst is None:
            raise ExportError("no destination given")
        dst = os.fspath(dst)
        comp = compression or format_for_path(dst)[1] or "none"
        if comp not in COMPRESSIONS:
            raise ExportError(f"compression must be one of {', '.join(COMPRESSIONS)}")
        if shards is not None and shards < 1:
            raise ExportError("shards must be at least 1")
        dsts = shard_names(dst, shards) if shards and shards > 1 else [dst]
        _guard_source(plan, dsts)
        _write_tfrecords(plan, stage, report, dsts, comp, progress, verify)
        stage.commit()
        report.outputs = dsts
        return report


def _replace(stage: _Stage, src: str) -> str:
    """Keep ``src`` as a backup (a hard link when possible), then move the staged file over
    it in one rename. Returns the backup's path."""
    backup = f"{src}.bak"
    if os.path.lexists(backup):
        backup = f"{src}.{time.strftime('%Y%m%d-%H%M%S')}.bak"
        n = 1
        while os.path.lexists(backup):
            backup = f"{src}.{time.strftime('%Y%m%d-%H%M%S')}-{n}.bak"
            n += 1
    try:
        os.link(src, backup)
    except OSError:
        try:
            with open(src, "rb") as fin, codec.atomic_output(backup, "wb") as fout:
                shutil.copyfileobj(fin, fout, 1 << 20)
        except (OSError, WriteError) as exc:
            raise WriteError(f"{src}: cannot keep a backup, not replaced: {exc}") from exc
    try:
        stage.commit()
    except WriteError:
        with contextlib.suppress(OSError):
            os.unlink(backup)
        raise
    return backup


# --------------------------------------------------------------------------------------------
# JSON Lines (proto3 JSON mapping)


def export_jsonl(
    source: Any,
    dst: str | os.PathLike[str],
    *,
    selection: Iterable[RecordRef] | None = None,
    include_added: bool = True,
    verify: bool = True,
    progress: Progress | None = None,
) -> ExportReport:
    """Write one ``{"index", "kind", "record"}`` line per record: ``index`` is the record's
    position in the edited dataset, ``kind`` ``example``/``sequence_example``/``raw``,
    ``record`` the proto3 JSON mapping (``codec.example.to_json``). Lossless:
    :func:`import_jsonl` gives back the same payloads."""
    dst = os.fspath(dst)
    with _exporting(source, selection, include_added, "jsonl") as (plan, stage, report):
        _guard_source(plan, [dst])
        tmp = stage.reserve(dst)
        total = plan.total
        with open(tmp, "wb") as out:
            for n, (pos, _ref, payload) in enumerate(plan.records(report), start=1):
                kind = ex.detect_kind(payload)
                line = {"index": pos, "kind": kind, "record": ex.to_json(payload, kind)}
                out.write(json.dumps(line, ensure_ascii=False).encode("utf-8"))
                out.write(b"\n")
                if n % _TICK_EVERY == 0:
                    _tick(progress, "write", n, total)
            out.flush()
            os.fsync(out.fileno())
        _tick(progress, "write", report.records, total)
        if verify:
            _tick(progress, "verify", 0, 1)
            _verify_lines(tmp, report.records, dst)
            report.verified = True
            _tick(progress, "verify", 1, 1)
        report.bytes = os.path.getsize(tmp)
        stage.commit()
        report.outputs = [dst]
        return report


def _verify_lines(path: str, expected: int, shown: str) -> None:
    n = 0
    with open(path, "rb") as f:
        for n, line in enumerate(f, start=1):
            try:
                json.loads(line)
            except ValueError as exc:
                raise ExportError(f"{shown}: line {n} of the written file is not JSON") from exc
    if n != expected:
        raise ExportError(f"{shown}: {n} lines read back, {expected} written")


def import_jsonl(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    compression: str | None = None,
    verify: bool = True,
    progress: Progress | None = None,
) -> ExportReport:
    """Turn JSON Lines written by :func:`export_jsonl` (or ``tfrecord-browser dump --json``)
    back into a TFRecord file: one record per line, in line order, each ``record`` read as
    its ``kind`` (``codec.example.from_json``). Records TensorFlow wrote come back byte for
    byte. Raises :class:`ImportFormatError` naming the first bad line; nothing is written
    then."""
    t0 = time.perf_counter()
    src, dst = os.fspath(src), os.fspath(dst)
    comp = compression or format_for_path(dst)[1] or "none"
    if comp not in COMPRESSIONS:
        raise ExportError(f"compression must be one of {', '.join(COMPRESSIONS)}")
    if os.path.realpath(src) == os.path.realpath(dst):
        raise ExportError(f"{dst}: the destination is the input file")
    report = ExportReport("tfrecord")
    stage = _Stage()
    total = _count_lines(src)  # a missing or unreadable input raises its own OSError here
    try:
        tmp = stage.reserve(dst)
        with open(src, "rb") as fin, codec.TFRecordWriter(tmp, comp) as w:
            buf: list[bytes] = []
            size = 0
            for n, raw in enumerate(fin, start=1):
                if not raw.strip():
                    continue
                payload = _payload_from_line(raw, src, n)
                framed = encode_record(payload)
                buf.append(framed)
                size += len(framed)
                if size >= _CHUNK:
                    w.write_framed(b"".join(buf))
                    buf, size = [], 0
                report.records += 1
                if n % _TICK_EVERY == 0:
                    _tick(progress, "write", n, total)
            if buf:
                w.write_framed(b"".join(buf))
        report.copied = report.records
        _tick(progress, "write", total, total)
        if verify:
            _tick(progress, "verify", 0, 1)
            _verify_tfrecord(tmp, comp, report.records, dst)
            report.verified = True
            _tick(progress, "verify", 1, 1)
        report.bytes = os.path.getsize(tmp)
        stage.commit()
    except BaseException as exc:
        stage.discard()
        if isinstance(exc, OSError):
            raise WriteError(f"import failed, nothing written: {exc.strerror or exc}") from exc
        raise
    report.outputs = [dst]
    report.seconds = time.perf_counter() - t0
    return report


def _count_lines(path: str) -> int:
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
    return n


def _payload_from_line(raw: bytes, src: str, n: int) -> bytes:
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{src}: line {n}: not UTF-8 text, not JSON Lines") from exc
    except ValueError as exc:
        raise ImportFormatError(f"{src}: line {n}: not JSON: {exc}") from exc
    if not isinstance(obj, dict) or "record" not in obj:
        raise ImportFormatError(f'{src}: line {n}: expected an object with a "record" member')
    kind = obj.get("kind", "example")
    if kind not in ex.KINDS:
        raise ImportFormatError(f"{src}: line {n}: unknown kind {kind!r}")
    try:
        return ex.from_json(obj["record"], kind)
    except (CodecError, ValueError, TypeError) as exc:
        raise ImportFormatError(f"{src}: line {n}: {exc}") from exc


# --------------------------------------------------------------------------------------------
# Flat tables


@dataclass
class _Column:
    section: str  # "features" | "feature_lists" | "raw" | "index"
    name: str
    type: str
    scalar: bool = True
    utf8: bool = True
    title: str = ""


_PREFIXES = (b"hex:", b"base64:", b"text:")


def _text_or_none(b: bytes) -> str | None:
    """``b`` as text when it is text and cannot be mistaken for a marked value."""
    if is_text(b) and not b[:7].lower().startswith(_PREFIXES):
        return b.decode("utf-8")
    return None


class _Table:
    """The columns of a flat table, found by a first pass over the records."""

    def __init__(self) -> None:
        self.columns: dict[tuple[str, str, str], _Column] = {}
        self.has_raw = False

    def see(self, rec: Record) -> None:
        if rec.kind == "raw":
            self.has_raw = True
            return
        for name, feat in rec.features.items():
            if feat.type == "none":
                continue
            col = self._col("features", name, feat.type)
            if len(feat.values) != 1:
                col.scalar = False
            if feat.type == "bytes" and col.utf8:
                col.utf8 = all(_utf8(v) for v in feat.values)
        for name, steps in rec.feature_lists.items():
            types = {s.type for s in steps if s.type != "none"} or {"none"}
            for t in types:
                col = self._col("feature_lists", name, t)
                col.scalar = False
                if t == "bytes" and col.utf8:
                    col.utf8 = all(_utf8(v) for s in steps if s.type == t for v in s.values)

    def _col(self, section: str, name: str, type_: str) -> _Column:
        key = (section, name, type_)
        col = self.columns.get(key)
        if col is None:
            col = self.columns[key] = _Column(section, name, type_)
        return col

    def finish(self) -> list[_Column]:
        cols = [_Column("index", "_index", "int64", title="_index")]
        names: dict[str, int] = {"_index": 1, "_raw": 1}
        for key in self.columns:
            names[key[1]] = names.get(key[1], 0) + 1
        for (section, name, type_), col in self.columns.items():
            if names[name] == 1:
                col.title = name
            elif section == "features":
                col.title = f"{name}:{type_}"
            else:
                col.title = f"{name}:list:{type_}"
            cols.append(col)
        if self.has_raw:
            cols.append(_Column("raw", "_raw", "bytes", utf8=False, title="_raw"))
        return cols


def _utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _cell(col: _Column, pos: int, rec: Record) -> Any:
    """The column's value in ``rec``: a list of values, a list of lists (feature lists), or
    ``None`` when absent; the index as an int; raw bytes."""
    if col.section == "index":
        return pos
    if col.section == "raw":
        return rec.raw if rec.kind == "raw" else None
    if col.section == "features":
        feat = rec.features.get(col.name)
        if feat is None or feat.type != col.type:
            return None
        return feat.values
    steps = rec.feature_lists.get(col.name)
    if steps is None:
        return None
    if not any(s.type == col.type for s in steps) and not (
        col.type == "none" and all(s.type == "none" for s in steps)
    ):
        return None
    return [s.values if s.type == col.type else None for s in steps]


# -- CSV -------------------------------------------------------------------------------------


def _csv_value(t: str, v: Any) -> str:
    if t == "int64":
        return str(v)
    if t == "float":
        return format_float(v)
    text = _text_or_none(v)
    return text if text is not None else "base64:" + base64.b64encode(v).decode("ascii")


def _json_scalar_text(t: str, v: Any, int64_as_string: bool, marker: str) -> str:
    """One value as JSON text. ``marker`` is ``"csv"`` (bytes as text or ``base64:`` string)
    or ``"json"`` (bytes as text or ``{"$base64": ...}``)."""
    if t == "int64":
        # CSV cells are read as text: exact digits suffice. JSON readers (JavaScript) lose
        # integers beyond 2**53 - 1, so those are strings there.
        if marker == "json" and (int64_as_string or abs(v) > JS_SAFE_INT):
            return f'"{v}"'
        return str(v)
    if t == "float":
        s = format_float(v)
        if s == "nan":
            return '"NaN"'
        if s == "inf":
            return '"Infinity"'
        if s == "-inf":
            return '"-Infinity"'
        return s
    text = _text_or_none(v) if marker == "csv" else (v.decode("utf-8") if is_text(v) else None)
    if text is not None:
        return json.dumps(text, ensure_ascii=False)
    b64 = base64.b64encode(v).decode("ascii")
    if marker == "csv":
        return json.dumps("base64:" + b64)
    return '{"$base64": "' + b64 + '"}'


def _json_list_text(
    t: str, values: Any, int64_as_string: bool, marker: str, nested: bool = False
) -> str:
    if values is None:
        return "null"
    if nested:
        inner = (_json_list_text(t, s, int64_as_string, marker) for s in values)
    else:
        inner = (_json_scalar_text(t, v, int64_as_string, marker) for v in values)
    return "[" + ", ".join(inner) + "]"


def _csv_cell(col: _Column, value: Any) -> str:
    if value is None:
        return ""
    if col.section == "index":
        return str(value)
    if col.section == "raw":
        return "base64:" + base64.b64encode(value).decode("ascii")
    if col.section == "features":
        if col.scalar:
            v = value[0]
            if col.type == "bytes" and v == b"":
                return "base64:"  # an empty value, not a missing one
            return _csv_value(col.type, v)
        return _json_list_text(col.type, value, False, "csv")
    return _json_list_text(col.type, value, False, "csv", nested=True)


# -- JSON ------------------------------------------------------------------------------------


def _json_cell(col: _Column, value: Any, int64_as_string: bool) -> str:
    if value is None:
        return "null"
    if col.section == "index":
        return str(value)
    if col.section == "raw":
        return '{"$base64": "' + base64.b64encode(value).decode("ascii") + '"}'
    if col.section == "features" and col.scalar:
        return _json_scalar_text(col.type, value[0], int64_as_string, "json")
    nested = col.section == "feature_lists"
    return _json_list_text(col.type, value, int64_as_string, "json", nested=nested)


# -- Parquet ---------------------------------------------------------------------------------


def _arrow_type(col: _Column) -> Any:
    import pyarrow as pa

    base = {
        "int64": pa.int64(),
        "float": pa.float32(),
        "bytes": pa.string() if col.utf8 else pa.binary(),
        "none": pa.null(),
    }[col.type]
    if col.section == "index":
        return pa.int64()
    if col.section == "raw":
        return pa.binary()
    if col.section == "features":
        return base if col.scalar else pa.list_(base)
    return pa.list_(pa.list_(base))


def _arrow_value(col: _Column, value: Any) -> Any:
    if value is None or col.section in ("index", "raw"):
        return value
    utf8 = col.type == "bytes" and col.utf8
    if col.section == "features":
        if utf8:
            value = [v.decode("utf-8") for v in value]
        return value[0] if col.scalar else value
    if utf8:
        return [None if s is None else [v.decode("utf-8") for v in s] for s in value]
    return value


# -- driver ----------------------------------------------------------------------------------


def _decoded(plan: _Plan, report: ExportReport) -> Iterator[tuple[int, Record]]:
    for pos, ref, payload in plan.records(report):
        j = plan.journal
        if j is not None and j.is_touched(ref):
            rec = j.effective_record(ref)
            assert rec is not None
            yield pos, rec
        else:
            yield pos, ex.decode(payload)


def export_table(
    source: Any,
    dst: str | os.PathLike[str],
    *,
    format: str | None = None,
    selection: Iterable[RecordRef] | None = None,
    include_added: bool = True,
    int64_as_string: bool = False,
    verify: bool = True,
    progress: Progress | None = None,
) -> ExportReport:
    """Write a flat table, one row per record and one column per feature: ``csv``,
    ``parquet`` or ``json`` (a JSON array of row objects), chosen by ``format`` or ``dst``'s
    extension. The first column, ``_index``, is the record's position in the edited dataset;
    raw (non-Example) records go to a ``_raw`` column. See the module docstring for how each
    value is written. Two passes: the first finds the columns."""
    dst = os.fspath(dst)
    fmt = format or format_for_path(dst)[0]
    if fmt not in ("csv", "parquet", "json"):
        raise ExportError(f"{dst}: a flat table is csv, parquet or json, not {fmt}")
    with _exporting(source, selection, include_added, fmt) as (plan, stage, report):
        _guard_source(plan, [dst])
        # Pass 1: columns.
        table = _Table()
        scan = ExportReport(fmt)
        for n, (_pos, rec) in enumerate(_decoded(plan, scan), start=1):
            table.see(rec)
            if n % _TICK_EVERY == 0:
                _tick(progress, "scan", n, plan.total)
        cols = table.finish()
        tmp = stage.reserve(dst)
        rows = _decoded(plan, report)
        total = plan.total
        if fmt == "csv":
            _write_csv(tmp, cols, rows, progress, total)
        elif fmt == "json":
            _write_json(tmp, cols, rows, int64_as_string, progress, total)
        else:
            _write_parquet(tmp, cols, rows, progress, total)
        _tick(progress, "write", report.records, total)
        _fsync_file(tmp)
        if verify:
            _tick(progress, "verify", 0, 1)
            _verify_table(tmp, fmt, report.records, dst)
            report.verified = True
            _tick(progress, "verify", 1, 1)
        report.bytes = os.path.getsize(tmp)
        stage.commit()
        report.outputs = [dst]
        return report


def _write_csv(
    tmp: str,
    cols: list[_Column],
    rows: Iterator[tuple[int, Record]],
    progress: Progress | None,
    total: int,
) -> None:
    with open(tmp, "w", encoding="utf-8", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow([c.title for c in cols])
        for n, (pos, rec) in enumerate(rows, start=1):
            w.writerow([_csv_cell(c, _cell(c, pos, rec)) for c in cols])
            if n % _TICK_EVERY == 0:
                _tick(progress, "write", n, total)


def _write_json(
    tmp: str,
    cols: list[_Column],
    rows: Iterator[tuple[int, Record]],
    int64_as_string: bool,
    progress: Progress | None,
    total: int,
) -> None:
    keys = [json.dumps(c.title, ensure_ascii=False) for c in cols]
    with open(tmp, "w", encoding="utf-8") as out:
        out.write("[")
        for n, (pos, rec) in enumerate(rows, start=1):
            cells = (
                f"{k}: {_json_cell(c, _cell(c, pos, rec), int64_as_string)}"
                for k, c in zip(keys, cols)
            )
            out.write(("\n" if n == 1 else ",\n") + "{" + ", ".join(cells) + "}")
            if n % _TICK_EVERY == 0:
                _tick(progress, "write", n, total)
        out.write("\n]\n")


def _write_parquet(
    tmp: str,
    cols: list[_Column],
    rows: Iterator[tuple[int, Record]],
    progress: Progress | None,
    total: int,
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([pa.field(c.title, _arrow_type(c)) for c in cols])
    with pq.ParquetWriter(tmp, schema) as writer:
        batch: list[list[Any]] = [[] for _ in cols]
        n = 0

        def flush() -> None:
            arrays = [pa.array(b, type=f.type) for b, f in zip(batch, schema)]
            writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
            for b in batch:
                b.clear()

        for n, (pos, rec) in enumerate(rows, start=1):
            for b, c in zip(batch, cols):
                b.append(_arrow_value(c, _cell(c, pos, rec)))
            if n % _ROW_BATCH == 0:
                flush()
                _tick(progress, "write", n, total)
        if batch[0] or n == 0:
            flush()


def _verify_table(path: str, fmt: str, expected: int, shown: str) -> None:
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            got = pq.ParquetFile(path).metadata.num_rows
        elif fmt == "csv":
            limit = csv.field_size_limit(1 << 30)  # a cell may hold a 1 MiB value as base64
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    got = sum(1 for _ in csv.reader(f)) - 1
            finally:
                csv.field_size_limit(limit)
        else:
            got = _count_json_rows(path)
    except Exception as exc:
        raise ExportError(f"{shown}: the written file cannot be read back: {exc}") from exc
    if got != expected:
        raise ExportError(f"{shown}: {got} rows read back, {expected} written")


def _count_json_rows(path: str) -> int:
    # Rows are written one per line between "[" and "]"; each must parse on its own.
    n = 0
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        if first.strip() not in ("[", "[]"):
            raise ValueError("not a JSON array")
        if first.strip() == "[]":
            return 0
        for line in f:
            s = line.rstrip("\n")
            if s == "]":
                break
            json.loads(s[:-1] if s.endswith(",") else s)
            n += 1
    return n


# --------------------------------------------------------------------------------------------
# Images


_EXT = {"jpeg": "jpg", "tiff": "tif"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def image_file_name(position: int, ref: Any) -> str:
    """``00000012_image-encoded_0.jpg`` for the first picture of feature ``image/encoded``
    of record 12 (``..._s3_0`` for step 3 of a feature list)."""
    feature = _UNSAFE.sub("-", ref.feature).strip("-") or "feature"
    step = f"_s{ref.step}" if ref.step is not None else ""
    ext = _EXT.get(ref.format, ref.format) if ref.source == "encoded" else "png"
    return f"{position:08d}_{feature}{step}_{ref.index}.{ext}"


def _image_files(
    plan: _Plan, report: ExportReport, progress: Progress | None
) -> Iterator[tuple[str, bytes]]:
    from codec import images

    for n, (pos, rec) in enumerate(_decoded(plan, report), start=1):
        for ref in images.find_images(rec):
            try:
                data = ref.data if ref.source == "encoded" else ref.display_bytes()
            except CodecError as exc:
                report.skipped.append(
                    Problem("image", None, None, f"record {pos}: {ref.feature}[{ref.index}]: {exc}")  # type: ignore[arg-type]
                )
                continue
            report.images += 1
            yield image_file_name(pos, ref), data
        if n % _TICK_EVERY == 0:
            _tick(progress, "write", n, plan.total)


def export_images(
    source: Any,
    dst: str | os.PathLike[str],
    *,
    selection: Iterable[RecordRef] | None = None,
    include_added: bool = True,
    progress: Progress | None = None,
) -> ExportReport:
    """Write every picture of the records (:func:`codec.images.find_images`) as a file named
    by :func:`image_file_name`: encoded images as their own bytes, raw-pixel and tensor
    images as PNG. ``dst`` ending in ``.zip`` gives a zip file; anything else a folder (a new
    folder appears complete or not at all; into an existing folder each file is written
    atomically). Pictures that cannot be converted are listed in ``skipped``."""
    dst = os.fspath(dst)
    with _exporting(source, selection, include_added, "images") as (plan, stage, report):
        _guard_source(plan, [dst])
        if dst.lower().endswith(".zip"):
            tmp = stage.reserve(dst)
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as z:
                for name, data in _image_files(plan, report, progress):
                    z.writestr(name, data)
            _fsync_file(tmp)
            with zipfile.ZipFile(tmp) as z:
                if len(z.namelist()) != report.images:
                    raise ExportError(f"{dst}: the written zip file is incomplete")
            report.verified = True
            report.bytes = os.path.getsize(tmp)
            stage.commit()
        elif os.path.isdir(dst):
            for name, data in _image_files(plan, report, progress):
                target = os.path.join(dst, name)
                with codec.atomic_output(target, "wb") as f:
                    f.write(data)
                report.bytes += len(data)
        else:
            if os.path.lexists(dst):
                raise ExportError(f"{dst}: exists and is not a folder")
            parent = os.path.dirname(os.path.abspath(dst))
            try:
                tmp = tempfile.mkdtemp(dir=parent, prefix=f".{os.path.basename(dst)}.")
            except OSError as exc:
                raise WriteError(f"{dst}: cannot write here: {exc.strerror or exc}") from exc
            stage.pairs.append((tmp, dst))
            for name, data in _image_files(plan, report, progress):
                with open(os.path.join(tmp, name), "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                report.bytes += len(data)
            if len(os.listdir(tmp)) != report.images:
                raise ExportError(f"{dst}: image names collided; nothing written")
            report.verified = True
            stage.commit()
        _tick(progress, "write", plan.total, plan.total)
        report.outputs = [dst]
        return report


# --------------------------------------------------------------------------------------------
# One entry point


def export(
    source: Any,
    dst: str | os.PathLike[str],
    *,
    format: str | None = None,
    **options: Any,
) -> ExportReport:
    """Export to ``dst`` in ``format`` (default: from ``dst``'s extension; a name without a
    known extension is a folder of images). ``options`` go to the format's function."""
    fmt = format or format_for_path(dst)[0] or "images"
    if fmt == "tfrecord":
        return export_tfrecord(source, dst, **options)
    if fmt == "jsonl":
        return export_jsonl(source, dst, **options)
    if fmt in ("csv", "parquet", "json"):
        return export_table(source, dst, format=fmt, **options)
    if fmt == "images":
        return export_images(source, dst, **options)
    raise ExportError(f"unknown export format {fmt!r} (expected one of {', '.join(FORMATS)})")
