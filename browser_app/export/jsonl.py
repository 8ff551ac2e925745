"""JSON Lines output, one ``{"index", "kind", "record"}`` line per record with the record in
the proto3 JSON mapping, and the way back: :func:`import_jsonl` turns such lines into a
TFRecord file again.
"""

from __future__ import annotations

import json
import os
import struct
import time
from typing import TYPE_CHECKING

from browser_app.errors import ExportError, ImportFormatError
from browser_app.export.base import (
    JSONL,
    TFRECORD,
    ExportOptions,
    ExportProgress,
    ExportReport,
)
from browser_app.export.exporter import Exporter
from browser_app.export.plan import ExportSource
from browser_app.export.remote import open_input, same_place
from browser_app.export.running import run
from browser_app.export.staging import PieceRun, Stage, staged
from browser_app.export.tfrecord import check_tfrecord, resolve_compression, write_tfrecord
from codec import example as ex
from codec.errors import CodecError
from codec.kinds import EXAMPLE, FLOAT, RECORD_KINDS, RecordKind
from codec.locations import is_url, shown
from codec.values import plural

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["JsonLinesExporter", "export_jsonl", "import_jsonl"]


def _check_lines(path: str, expected: int, shown: str) -> None:
    n = 0
    with open(path, "rb") as f:
        for n, line in enumerate(f, start=1):
            try:
                json.loads(line)
            except ValueError as exc:
                raise ExportError(f"{shown}: line {n} of the written file is not JSON") from exc
    if n != expected:
        raise ExportError(f"{shown}: {plural(n, 'line')} read back, {expected:,} written")


class JsonLinesExporter(Exporter):
    """One line per record: ``index`` is the record's position in the edited dataset,
    ``kind`` ``example``/``sequence_example``/``raw``, ``record`` the proto3 JSON mapping
    (``codec.example.to_json``)."""

    name = JSONL
    label = "JSON Lines (one record per line, TensorFlow's JSON form)"
    suffix = ".jsonl"
    extensions = (".jsonl", ".ndjson")

    def write(self, job: PieceRun) -> None:
        dst = self.dst
        job.guard([dst])
        out = job.reserve(dst, _check_lines)
        inexact = job.report.inexact
        with open(out.tmp, "wb") as f:
            for pos, _ref, payload in job.ticking(job.plan.records(job.report)):
                kind = ex.detect_kind(payload)
                record = ex.to_json(payload, kind)
                back = ex.from_json(record, kind)  # what import will make of this line
                if back != payload:
                    why = _why_different(payload, back, kind)
                    inexact[why] = inexact.get(why, 0) + 1
                line = {"index": pos, "kind": kind, "record": record}
                f.write(json.dumps(line, ensure_ascii=False).encode("utf-8"))
                f.write(b"\n")
        out.expected = job.report.records
        job.tick("write", job.report.records)
        job.report.outputs = [dst]


_NAN_BITS = "a NaN's sign or payload (JSON has one NaN)"
_ENCODING = "protobuf's canonical encoding of the same values"


def _why_different(payload: bytes, back: bytes, kind: RecordKind) -> str:
    """Why a record does not come back byte for byte from its JSON form: the values are the
    same but a NaN loses its sign and payload, or only the encoding differs (order, packing,
    unknown fields: JSON keeps values, not bytes)."""
    a, b = ex.decode(payload, kind), ex.decode(back, kind)
    for name, f in a.features.items():
        g = b.features.get(name)
        if f.type == FLOAT and g is not None and len(f.values) == len(g.values):
            bits_a = struct.pack(f"<{len(f.values)}f", *f.values)
            bits_b = struct.pack(f"<{len(g.values)}f", *g.values)
            if bits_a != bits_b and any(v != v for v in f.values):
                return _NAN_BITS
    return _ENCODING


def export_jsonl(
    source: ExportSource,
    dst: str | os.PathLike[str],
    **options: Unpack[ExportOptions],
) -> ExportReport:
    """Write one ``{"index", "kind", "record"}`` line per record (see
    :class:`JsonLinesExporter`; ``options``: :class:`ExportOptions`). :func:`import_jsonl`
    gives back the same values; the report's ``inexact`` counts the records whose bytes it
    would not give back exactly (a NaN's sign and payload, a non-canonical encoding)."""
    return run(JsonLinesExporter(dst), source, **options)


def import_jsonl(
    src: str | os.PathLike[str],
    dst: str | os.PathLike[str],
    *,
    compression: str | None = None,
    verify: bool = True,
    progress: ExportProgress | None = None,
    anon: bool = False,
) -> ExportReport:
    """Turn JSON Lines written by :func:`export_jsonl` (or ``tfrecord-browser dump --json``)
    back into a TFRecord file: one record per line, in line order, each ``record`` read as
    its ``kind`` (``codec.example.from_json``), in protobuf's canonical encoding: records
    TensorFlow wrote come back byte for byte, except a NaN's sign and payload, which JSON does
    not keep. The report counts the records as ``reencoded`` (never as copied byte for byte),
    and in ``inexact`` the lines whose JSON was not in the exported form (so its values were
    normalised on the way in). Raises :class:`~browser_app.errors.ImportFormatError` naming the
    first bad line; nothing is written then. ``src`` and ``dst`` may be URLs (``anon``: without
    credentials); a remote input is read as a stream, once."""
    t0 = time.perf_counter()
    src, dst = os.fspath(src), os.fspath(dst)
    comp = resolve_compression(compression, dst)
    if same_place(src) == same_place(dst):
        raise ExportError(f"{shown(dst)}: the destination is the input file")
    report = ExportReport(TFRECORD)
    # A missing or unreadable input raises its own OSError here. A remote one is not read
    # twice just to count its lines: its progress has no total.
    total = 0 if is_url(src) else _count_lines(src)
    stage = Stage(report, total=total, verify=verify, progress=progress, anon=anon)
    name = shown(src)
    with open_input(src, anon=anon) as fin, staged(stage, "import"):
        out = stage.reserve(dst, check_tfrecord(comp))
        lines = stage.ticking(enumerate(fin, start=1))
        payloads = (
            _payload_from_line(raw, name, n, report.inexact) for n, raw in lines if raw.strip()
        )
        out.expected = write_tfrecord(out.tmp, comp, payloads)
        report.records = report.reencoded = out.expected
        stage.tick("write", total)
    report.outputs = [dst]
    report.seconds = time.perf_counter() - t0
    return report


def _count_lines(path: str) -> int:
    n = 0
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            n += chunk.count(b"\n")
    return n


_NORMALISED = "JSON not in the exported form, its values normalised"


def _payload_from_line(raw: bytes, src: str, n: int, inexact: dict[str, int]) -> bytes:
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ImportFormatError(f"{src}: line {n}: not UTF-8 text, not JSON Lines") from exc
    except ValueError as exc:
        raise ImportFormatError(f"{src}: line {n}: not JSON: {exc}") from exc
    except RecursionError:
        raise ImportFormatError(f"{src}: line {n}: JSON nested too deeply to be a record") from None
    if not isinstance(obj, dict) or "record" not in obj:
        raise ImportFormatError(f'{src}: line {n}: expected an object with a "record" member')
    kind = obj.get("kind", EXAMPLE)
    if kind not in RECORD_KINDS:
        raise ImportFormatError(f"{src}: line {n}: unknown kind {kind!r}")
    try:
        payload = ex.from_json(obj["record"], kind)
    except (CodecError, ValueError, TypeError) as exc:
        raise ImportFormatError(f"{src}: line {n}: {exc}") from exc
    except RecursionError:
        raise ImportFormatError(f"{src}: line {n}: a record nested too deeply") from None
    if ex.to_json(payload, kind) != obj["record"]:
        inexact[_NORMALISED] = inexact.get(_NORMALISED, 0) + 1
    return payload
