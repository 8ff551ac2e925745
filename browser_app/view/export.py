"""The Export page's plain data: what an export did, with every path as the person sees it
(relative to the root folder)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import codec
from browser_app.export.base import TFRECORD, ExportReport
from browser_app.paths import relative_to_root
from codec.kinds import DATA_CRC

__all__ = ["DamageLeftOut", "ExportOutcome", "damage_left_out", "export_outcome"]


@dataclass(frozen=True)
class ExportOutcome:
    """An export's report for the page: ``source`` is the spec that was exported; ``summary``
    the report's sentence and ``shown`` the outputs, both with paths relative to the root;
    ``outputs`` the real paths; ``left_out`` one line per damaged record or region and per
    picture that could not be written; ``backup`` the replaced source's backup (relative);
    ``formula_warning`` the CSV cells a spreadsheet would run as formulas, in words, unless
    they were neutralised."""

    source: str
    format: str
    summary: str
    outputs: tuple[str, ...]
    shown: tuple[str, ...]
    bytes: int
    verified: bool
    left_out: tuple[str, ...]
    backup: str | None
    seconds: float
    formula_warning: str | None = None
    index_map: str | None = None  # relative to the root, as the summary says it

    @property
    def ok(self) -> bool:
        """Verified, and nothing left out."""
        return self.verified and not self.left_out

    @property
    def reopen_spec(self) -> str | None:
        """What to open to see the exported TFRecord file(s) in the app (a shard pattern for
        several shards); ``None`` for another format, a replaced source, or outputs outside
        the root."""
        if self.format != TFRECORD or self.backup or not self.shown:
            return None
        first = self.shown[0]
        spec = first if len(self.shown) == 1 else first.replace("-00000-of-", "-*-of-")
        return None if spec.startswith("/") else spec


def export_outcome(report: ExportReport, root: str, source: str) -> ExportOutcome:
    """``report`` of an export of ``source`` (a spec), with its paths relative to ``root``."""
    summary = report.summary()
    for p in report.outputs:
        summary = summary.replace(p, relative_to_root(root, p))
    index_map = None
    if report.index_map:
        index_map = relative_to_root(root, report.index_map)
        summary = summary.replace(report.index_map, index_map)
    backup = None
    if report.backup:
        backup = relative_to_root(root, report.backup)
        summary = summary.replace(report.backup, backup)
    return ExportOutcome(
        source=source,
        format=report.format,
        summary=summary,
        outputs=tuple(report.outputs),
        shown=tuple(relative_to_root(root, p) for p in report.outputs),
        bytes=report.bytes,
        verified=report.verified,
        left_out=tuple(report.left_out()),
        backup=backup,
        seconds=report.seconds,
        formula_warning=report.formula_warning(),
        index_map=index_map,
    )


@dataclass(frozen=True)
class DamageLeftOut:
    """The damage an export is about to leave out: ``records`` the global numbers of the
    damaged records among those it writes (in order), ``regions`` how many damaged stretches
    that are not records (bad headers, truncation) a whole-dataset export skips."""

    records: tuple[int, ...]
    regions: int

    def __bool__(self) -> bool:
        return bool(self.records or self.regions)


def damage_left_out(
    dataset: codec.TFRecordDataset,
    problems: Iterable[Mapping[str, Any]],
    selection: Iterable[int] | None = None,
    is_deleted: Callable[[int], bool] = lambda _r: False,
) -> DamageLeftOut:
    """Which of ``problems`` (plain data, as :func:`~browser_app.view.problem_dict` gives)
    an export of ``selection`` (``None``: every record) leaves out: the damaged records it
    would write, unless ``is_deleted`` says a pending edit deletes them anyway, and, for a
    whole export, the damaged regions."""
    wanted = None if selection is None else set(selection)
    files = {os.path.realpath(f.path): k for k, f in enumerate(dataset.files)}
    records: set[int] = set()
    regions = 0
    for p in problems:
        if p.get("kind") != DATA_CRC:
            regions += 1
            continue
        k = files.get(os.path.realpath(str(p.get("path") or "")))
        if p.get("offset") is None or k is None:
            continue
        local = dataset.files[k].record_at(int(p["offset"]))
        g = None if local is None else dataset.global_index(k, local)
        if g is not None and (wanted is None or g in wanted) and not is_deleted(g):
            records.add(g)
    return DamageLeftOut(tuple(sorted(records)), regions if wanted is None else 0)
