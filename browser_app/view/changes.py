"""The Changes page's plain data: a feature (or a feature list) before or after a change in
one line, and a record's differences as before/after rows."""

from __future__ import annotations

from collections.abc import Sequence

from browser_app.edits.model import FEATURE_LISTS, FeatureDiff, Part
from codec import example as ex

from .values import plural, values_preview

__all__ = ["diff_rows", "part_preview"]

_STEPS_SHOWN = 6  # steps of a feature list written out before "… N more steps"


def part_preview(value: Part) -> str:
    """A feature as ``int64 [3] 1, 2, 3``, a feature list as ``2 steps: …; …``, ``—`` when
    absent."""
    if value is None:
        return "—"
    if isinstance(value, list):  # a feature list: its steps
        if not value:
            return "(no steps)"
        steps = "; ".join(values_preview(f, 4, 20) for f in value[:_STEPS_SHOWN])
        more = f"; … {len(value) - _STEPS_SHOWN} more steps" if len(value) > _STEPS_SHOWN else ""
        return f"{plural(len(value), 'step')}: {steps}{more}"
    if isinstance(value, ex.Feature):
        return f"{value.type} [{len(value.values)}] {values_preview(value, 8, 60)}"
    return str(value)  # pragma: no cover - a Part is a Feature, a list of them or None


def diff_rows(diffs: Sequence[FeatureDiff]) -> list[dict[str, str]]:
    """One row per difference: the feature (marked when it is a feature list), before, after."""
    return [
        {
            "feature": d.feature + (" (feature list)" if d.section == FEATURE_LISTS else ""),
            "before": part_preview(d.before),
            "after": part_preview(d.after),
        }
        for d in diffs
    ]
