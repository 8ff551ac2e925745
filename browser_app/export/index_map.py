"""The index map an export writes beside its output: where every record of the source went.

One CSV row per source record (and per new record), in the source's order with new records
after the record they were added after: the source file and the record's index in it, its
number in the dataset (a new record's id, such as ``n3``), then either the output file (a
shard's name) and the record's index in that file, or why it is not in the output: ``deleted``
(a pending edit deletes it), ``filtered out`` (the export took a selection without it) or
``damaged: …`` (its bytes fail their check; what is wrong follows).

The map is one more staged output of the export (:mod:`~browser_app.export.staging`): written
to a temporary file beside the destination, read back, and renamed into place with the
outputs, never without them. It is named :func:`index_map_path`: ``<output>.index-map.csv``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator

from browser_app.edits import RecordRef
from browser_app.errors import ExportError
from browser_app.export.plan import Plan
from browser_app.export.staging import ExportRun
from codec.locations import shown as shown_url
from codec.values import plural

__all__ = [
    "DELETED",
    "FILTERED_OUT",
    "INDEX_MAP_SUFFIX",
    "MAP_FIELDS",
    "check_index_map",
    "index_map_path",
    "write_index_map",
]

INDEX_MAP_SUFFIX = ".index-map.csv"
MAP_FIELDS = (
    "source_file",
    "local_index",
    "global_index",
    "output_file",
    "new_index",
    "dropped",
)
DELETED = "deleted"
FILTERED_OUT = "filtered out"
DAMAGED = "damaged"


def index_map_path(output: str | os.PathLike[str]) -> str:
    """Where the index map of an export to ``output`` goes: ``<output>.index-map.csv`` (for
    shards, ``output`` is the name the shards' names are made from)."""
    return os.fspath(output).rstrip("/\\") + INDEX_MAP_SUFFIX


def _full_order(plan: Plan) -> Iterator[RecordRef]:
    """Every record of the source, deleted ones included, in the edited dataset's order
    (a deleted source record at its own place; deleted new records last)."""
    j = plan.journal
    if j is None:
        yield from range(plan.source_total)
        return
    deleted = j.deleted_records()
    gone = sorted(r for r in deleted if isinstance(r, int))
    k = 0
    for ref in j.order(plan.source_total):
        if isinstance(ref, int):
            while k < len(gone) and gone[k] < ref:
                yield gone[k]
                k += 1
        yield ref
    yield from gone[k:]
    yield from (r for r in deleted if isinstance(r, str))


def _file_names(plan: Plan) -> list[str]:
    """How the map names each source file: its name, or its path when two share a name."""
    names = [os.path.basename(f.path) for f in plan.files]
    if len(set(names)) == len(names):
        return names
    return [f.path for f in plan.files]


def _places(counts: list[int]) -> Iterator[tuple[int, int]]:
    """``(output number, index in it)`` of the written records, in order: ``counts[k]`` of
    them go to output ``k`` (the last takes the rest)."""
    k, i = 0, 0
    while True:
        while k < len(counts) - 1 and i >= counts[k]:
            k, i = k + 1, 0
        yield k, i
        i += 1


def write_index_map(job: ExportRun, path: str) -> str:
    """Stage the index map of the export ``job`` has just written at ``path`` (one more
    output of the job, verified and committed with the others). Returns ``path``.

    The records written are those of the plan that were neither deleted nor damaged, in the
    plan's order, which is the order of the map: so the map is made in one pass, holding
    only the damaged records and the selection."""
    plan = job.plan
    outputs = list(job.report.outputs)
    if not outputs:
        raise ExportError("the export named no output to map its records to")
    split = [o.records for o in job.outputs if o.records is not None]
    counts = split if len(split) == len(outputs) else [job.report.records]
    job.guard([path])
    out = job.reserve(path, check_index_map)
    names = _file_names(plan)
    shown = [os.path.basename(shown_url(o).rstrip("/\\")) for o in outputs]
    selected = None if plan.whole else {ref for _pos, ref in plan.items()}
    deleted = set(plan.journal.deleted_records()) if plan.journal is not None else set()
    places = _places(counts)
    rows = written = 0
    with open(out.tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(MAP_FIELDS)
        for ref in _full_order(plan):
            source_file, local = "", ""
            if isinstance(ref, int):
                k, i = plan.dataset.locate(ref)
                source_file, local = names[k], str(i)
            problem = plan.damaged.get(ref)
            if ref in deleted:
                w.writerow((source_file, local, ref, "", "", DELETED))
            elif problem is not None:
                w.writerow((source_file, local, ref, "", "", f"{DAMAGED}: {problem.message}"))
            elif selected is not None and ref not in selected:
                w.writerow((source_file, local, ref, "", "", FILTERED_OUT))
            else:
                k, i = next(places)
                w.writerow((source_file, local, ref, shown[k], i, ""))
                written += 1
            rows += 1
    if written != job.report.records:
        raise ExportError(
            f"{path}: the index map places {plural(written, 'record')},"
            f" the export wrote {job.report.records:,}"
        )
    out.expected = rows
    job.report.index_map = path
    return path


def check_index_map(path: str, expected: int, shown: str) -> None:
    """Read a written index map back: the header, then ``expected`` rows of six cells."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            reader = csv.reader(f)
            if tuple(next(reader, ())) != MAP_FIELDS:
                raise ExportError(f"{shown}: the index map's header is not the one written")
            rows = 0
            for row in reader:
                if len(row) != len(MAP_FIELDS):
                    raise ExportError(f"{shown}: row {rows + 1} of the index map is cut short")
                rows += 1
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ExportError(f"{shown}: the index map cannot be read back: {exc}") from exc
    if rows != expected:
        raise ExportError(
            f"{shown}: {plural(rows, 'row')} of the index map read back, {expected:,} written"
        )
