"""The Export page's plain data: what an export did, with every path as the person sees it
(relative to the root folder)."""

from __future__ import annotations

from dataclasses import dataclass

from browser_app.export.base import TFRECORD, ExportReport
from browser_app.paths import relative_to_root

__all__ = ["ExportOutcome", "export_outcome"]


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
    )
