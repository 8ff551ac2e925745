"""A dataset diff (:class:`codec.diff.DatasetDiff`) as the command line and the Compare page
show it: which integer features are classes, a row per feature (presence, type, distances,
the value where the shares differ most, in words), the values found on one side only, and
the filters that find the records behind each figure (``has(name)``, ``label == 5``), for
links. No Streamlit, no pandas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from browser_app.selection import is_class_feature
from codec.diff import DatasetDiff, FeatureDiff, filter_name, filter_value, value_text
from codec.names import ClassNames
from codec.values import plural

__all__ = [
    "STATUS_WORDS",
    "Figure",
    "categorical_features",
    "change_words",
    "feature_rows",
    "join_lines",
    "named",
    "new_value_lines",
    "side_line",
    "value_filter",
]

STATUS_WORDS = {"same": "", "new": "new in B", "vanished": "gone from B", "type": "type changed"}


def categorical_features(names: Iterable[str], classes: Mapping[str, ClassNames]) -> set[str]:
    """The integer features read as categories: class label features (by their name, as the
    facets read them: :func:`browser_app.selection.is_class_feature`) and those with class
    names bound."""
    return {n for n in names if is_class_feature(n)} | set(classes)


def named(feature: str, value: Any, classes: Mapping[str, ClassNames] | None = None) -> str:
    """A value as text, an integer class with its name when ``feature`` has class names:
    ``zebra (5)``."""
    known = (classes or {}).get(feature)
    if isinstance(value, int) and known is not None:
        name = known.name(value)
        if name is not None:
            return f"{name} ({value})"
    return value_text(value)


def value_filter(feature: str, value: Any) -> str | None:
    """The filter that finds the records holding ``value`` in ``feature`` (None when no
    literal stands for the value)."""
    literal = filter_value(value)
    return None if literal is None else f"{filter_name(feature)} == {literal}"


def _share(present: int, of: int) -> float | None:
    return present / of if of else None


def change_words(f: FeatureDiff, classes: Mapping[str, ClassNames] | None = None) -> str:
    """What moved most, in words: the value where the shares differ most (``zebra (5): 0.0%
    → 3.2%``), a numeric feature's means, or why there is no distance."""
    if f.linf is not None and f.shares is not None:
        return f"{named(f.name, f.linf_at, classes)}: {f.shares[0]:.1%} → {f.shares[1]:.1%}"
    if f.kind == "numeric" and f.mean_a is not None and f.mean_b is not None:
        return f"mean {f.mean_a:.4g} → {f.mean_b:.4g}"
    return f.why


@dataclass(frozen=True)
class Figure:
    """A figure and the filter on side ``side`` (``"a"`` or ``"b"``) that finds the records
    behind it (empty: none)."""

    text: str
    side: str = ""
    expression: str = ""


def feature_rows(
    diff: DatasetDiff, classes: Mapping[str, ClassNames] | None = None
) -> list[dict[str, Any]]:
    """A row per feature: ``feature``, ``status`` in words, ``kind``, ``type`` (``A → B``
    when it changed), ``in_a`` / ``in_b`` (the share of intact records that have it, None
    where a side has none), ``linf``, ``js``, ``change`` (:func:`change_words`), and
    ``figures``: :class:`Figure` s with the filters behind the presence on each side and
    the value where L-infinity is reached."""
    rows = []
    for f in diff.features:
        present = f"has({filter_name(f.name)})"
        figures = []
        if f.present_a:
            figures.append(Figure(f"in {plural(f.present_a, 'record')} of A", "a", present))
        if f.present_b:
            figures.append(Figure(f"in {plural(f.present_b, 'record')} of B", "b", present))
        if f.missing_a and f.present_a:
            figures.append(
                Figure(f"missing from {plural(f.missing_a, 'record')} of A", "a", f"not {present}")
            )
        if f.missing_b and f.present_b:
            figures.append(
                Figure(f"missing from {plural(f.missing_b, 'record')} of B", "b", f"not {present}")
            )
        if f.linf is not None and f.linf_at is not None:
            expr = value_filter(f.name, f.linf_at)
            if expr is not None:
                shown = named(f.name, f.linf_at, classes)
                figures.append(Figure(f"{shown} in A", "a", expr))
                figures.append(Figure(f"{shown} in B", "b", expr))
        for value, count in f.new_values[:20]:
            expr = value_filter(f.name, value)
            if expr is not None:
                shown = named(f.name, value, classes)
                figures.append(Figure(f"new: {shown} ({plural(count, 'value')})", "b", expr))
        for value, count in f.vanished_values[:20]:
            expr = value_filter(f.name, value)
            if expr is not None:
                shown = named(f.name, value, classes)
                figures.append(Figure(f"gone: {shown} ({plural(count, 'value')})", "a", expr))
        type_text = f.type_a or f.type_b
        if f.status == "type":
            type_text = f"{f.type_a} → {f.type_b}"
        rows.append(
            {
                "feature": f.name,
                "status": STATUS_WORDS.get(f.status, f.status),
                "kind": f.kind,
                "type": type_text,
                "in_a": _share(f.present_a, diff.a.intact) if f.type_a else None,
                "in_b": _share(f.present_b, diff.b.intact) if f.type_b else None,
                "linf": f.linf,
                "js": f.js,
                "change": change_words(f, classes),
                "figures": figures,
            }
        )
    return rows


FEW_VALUES = 50  # distinct values of a categorical feature whose new and gone ones are listed


def _few_values(diff: DatasetDiff, name: str) -> bool:
    """Whether feature ``name`` holds a few values repeated over its records on both sides
    (at most :data:`FEW_VALUES` distinct, fewer than half its values): categories."""
    for side in (diff.a, diff.b):
        f = side.features.get(name)
        if f is None:
            return False
        counts = f.counts if f.counts is not None else f.int_counts
        if counts is None:
            return False
        if len(counts) > FEW_VALUES or 2 * len(counts) >= max(1, sum(counts.values())):
            return False
    return True


def new_value_lines(
    diff: DatasetDiff, classes: Mapping[str, ClassNames] | None = None
) -> list[str]:
    """One line per categorical feature with values on one side only — class features, and
    others that hold a few values repeated (categories, not identifiers or captions):
    ``label: new classes zebra (5) (5 values); gone: …``."""
    out = []
    for f in diff.features:
        if not f.new_values and not f.vanished_values:
            continue
        if not f.classes and not _few_values(diff, f.name):
            continue  # an identifier, a caption: every record's value is new or gone
        what = "classes" if f.classes else "values"
        parts = []
        for title, got in (("new", f.new_values), ("gone", f.vanished_values)):
            if got:
                shown = ", ".join(f"{named(f.name, v, classes)} ({c:,})" for v, c in got[:8])
                more = f" … and {len(got) - 8:,} more" if len(got) > 8 else ""
                parts.append(f"{title} {what} {shown}{more}")
        out.append(f"{f.name}: " + "; ".join(parts))
    return out


def join_lines(diff: DatasetDiff, shown: int = 10) -> list[str]:
    """The record-by-record comparison in lines of text (record numbers: the first
    ``shown`` of each list)."""
    j = diff.join
    if j is None:
        return [diff.join_note] if diff.join_note else []

    def first(nums: list[Any], count: int) -> str:
        text = ", ".join(str(n) for n in nums[:shown])
        return text + (", …" if count > min(len(nums), shown) else "")

    c = j.counts
    lines = [f"records joined by {j.key}:"]
    lines.append(
        f"  added (in B only): {plural(c['added'], 'record')}: {first(j.added, c['added'])}"
    )
    lines.append(
        f"  removed (in A only): {plural(c['removed'], 'record')}: {first(j.removed, c['removed'])}"
    )
    pairs = [f"{a}→{b}" for a, b in j.changed]
    lines.append(f"  changed: {plural(c['changed'], 'record')}: {first(pairs, c['changed'])}")
    for name, n in j.by_feature.items():
        lines.append(f"    {name}: {plural(n, 'record')}")
    lines.append(f"  unchanged: {plural(c['unchanged'], 'record')}")
    for side, groups, keys, recs in (
        ("A", j.duplicates_a, c["duplicate_keys_a"], c["duplicate_records_a"]),
        ("B", j.duplicates_b, c["duplicate_keys_b"], c["duplicate_records_b"]),
    ):
        if keys:
            lines.append(
                f"  duplicate keys in {side}: {plural(keys, 'key')} held by"
                f" {plural(recs, 'record')} (left out of the counts above)"
            )
            for k, r in groups[:shown]:
                lines.append(f"    {value_text(k)}: {', '.join(str(n) for n in r)}")
    for side, nums, n in (("A", j.no_key_a, c["no_key_a"]), ("B", j.no_key_b, c["no_key_b"])):
        if n:
            lines.append(f"  without {j.key} in {side}: {plural(n, 'record')}: {first(nums, n)}")
    return lines


def side_line(name: str, spec: str, side: Any) -> str:
    """``A: <spec>: 160 records (1 damaged, left out)``."""
    extra = []
    if side.damaged:
        extra.append(f"{plural(side.damaged, 'damaged record')} left out")
    if side.unreadable:
        extra.append(f"{plural(len(side.unreadable), 'file')} could not be read")
    tail = f" ({'; '.join(extra)})" if extra else ""
    return f"{name}: {spec}: {plural(side.records, 'record')}{tail}"
