"""Two splits side by side (train against eval or test): per feature, how many records have it
in each, its mean, and how far its distributions lie apart, in the numbers TensorFlow Data
Validation uses for skew and drift (``anomalies/metrics.cc``):

- **L-infinity distance** for categorical values (text values; integers with few distinct
  values, such as class labels): the largest absolute difference between the two
  normalised value counts, with the value where it is largest. The counts are the schema's
  most common values (:data:`browser_app.view.schema.TOP_VALUES`); the rest of each split's
  values count as one bucket, "(other values)", so the distance is exact whenever every value
  is among them (``exact``) and a lower bound otherwise.
- **Jensen–Shannon divergence** for numbers, exactly as TFDV computes it
  (:func:`codec.diff.js_histograms`, shared with the ``diff`` command and the Compare page):
  both histograms rebucketed on the union of their boundaries, log base 2, between 0 (same)
  and 1. (The charts show both on the coarser of their grids, which holds both exactly.)

Everything is read from the plain data of two inferred schemas
(:class:`browser_app.view.schema.SchemaResult`: ``schema`` and ``statistics``); nothing here
reads a record.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from codec.diff import Bucket, js_histograms

from .schema import SchemaResult

__all__ = [
    "OTHER",
    "Distance",
    "compare_splits",
    "distribution",
    "js_divergence",
    "linf_distance",
]

OTHER = "(other values)"

Names = Mapping[str, Mapping[int, str]]
"""Class names by feature: label → name."""


class Distance:
    """An L-infinity distance: ``value`` (0 to 1), the value ``at`` which the two shares differ
    most, its ``shares`` (a, b), and whether every value was counted (``exact``)."""

    __slots__ = ("at", "exact", "shares", "value")

    def __init__(self, value: float, at: Any, shares: tuple[float, float], exact: bool) -> None:
        self.value = value
        self.at = at
        self.shares = shares
        self.exact = exact


def linf_distance(
    a: Mapping[Any, int], total_a: int, b: Mapping[Any, int], total_b: int
) -> Distance | None:
    """The L-infinity distance between two value counts (``a`` of ``total_a`` values, ``b``
    of ``total_b``): counts missing from the totals are one "(other values)" bucket. None when
    either side has no values."""
    if total_a <= 0 or total_b <= 0:
        return None
    share_a = {k: v / total_a for k, v in a.items()}
    share_b = {k: v / total_b for k, v in b.items()}
    rest_a = max(0.0, 1.0 - sum(share_a.values()))
    rest_b = max(0.0, 1.0 - sum(share_b.values()))
    exact = rest_a < 1e-12 and rest_b < 1e-12
    best = Distance(0.0, None, (0.0, 0.0), exact)
    for k in [*share_a, *(k for k in share_b if k not in share_a)]:
        x, y = share_a.get(k, 0.0), share_b.get(k, 0.0)
        if abs(x - y) > best.value:
            best = Distance(abs(x - y), k, (x, y), exact)
    if not exact and abs(rest_a - rest_b) > best.value:
        best = Distance(abs(rest_a - rest_b), OTHER, (rest_a, rest_b), exact)
    return best


def _grid(h: Mapping[str, Sequence[float]]) -> tuple[float, dict[float, int]] | None:
    """A histogram (``edges``, ``counts``) as its bin width and counts by lower edge."""
    edges, counts = list(h.get("edges", ())), list(h.get("counts", ()))
    if len(edges) < 2 or len(counts) != len(edges) - 1:
        return None
    return float(edges[1]) - float(edges[0]), {float(e): int(c) for e, c in zip(edges, counts)}


def _rebucket(bins: Mapping[float, int], width: float) -> dict[int, int]:
    out: dict[int, int] = {}
    for edge, count in bins.items():
        k = math.floor(edge / width)
        out[k] = out.get(k, 0) + count
    return out


def _common(
    ha: Mapping[str, Sequence[float]], hb: Mapping[str, Sequence[float]]
) -> tuple[float, dict[int, int], dict[int, int]] | None:
    ga, gb = _grid(ha), _grid(hb)
    if ga is None or gb is None:
        return None
    width = max(ga[0], gb[0])
    if width <= 0:
        return None
    return width, _rebucket(ga[1], width), _rebucket(gb[1], width)


def js_divergence(
    ha: Mapping[str, Sequence[float]], hb: Mapping[str, Sequence[float]]
) -> float | None:
    """The Jensen–Shannon divergence (log base 2, 0 to 1) between two of the schema's
    histograms (``edges``, ``counts``), as TFDV computes it (:func:`codec.diff.js_histograms`,
    the one home of it: rebucketed on the union of both histograms' boundaries); None when
    either is empty."""
    a, b = _buckets(ha), _buckets(hb)
    if a is None or b is None:
        return None
    return js_histograms(a, 0.0, b, 0.0)


def _buckets(h: Mapping[str, Sequence[float]]) -> list[Bucket] | None:
    edges, counts = list(h.get("edges", ())), list(h.get("counts", ()))
    if len(edges) < 2 or len(counts) != len(edges) - 1 or sum(counts) <= 0:
        return None
    return [Bucket(float(edges[i]), float(edges[i + 1]), float(c)) for i, c in enumerate(counts)]


def _feature(result: SchemaResult, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    return (
        result.schema.get("features", {}).get(name) or {},
        result.statistics.get("features", {}).get(name) or {},
    )


def _categories(doc: Mapping[str, Any], stats: Mapping[str, Any]) -> tuple[dict[Any, int], int]:
    """A feature's value counts and the total they are a part of, when it is categorical (a
    text feature; an integer one with few distinct values, every one counted); else empty."""
    if "bars" in stats:
        counts = {v: int(c) for v, c in stats["bars"]}
        return counts, sum(counts.values())
    raw = doc.get("bytes")
    if raw and not doc.get("images") and raw.get("text", 0) >= raw.get("binary", 0):
        total = int(raw.get("text", 0)) + int(raw.get("binary", 0)) - int(raw.get("long", 0))
        return {v: int(c) for v, c in stats.get("values", [])}, total
    return {}, 0


def _identifier(doc: Mapping[str, Any]) -> bool:
    """Whether every value of a feature in a split is distinct (more than one: a file name,
    an id), so that its value shares say nothing about the split."""
    for part in ("bytes", "int_values"):
        got = doc.get(part) or {}
        distinct = int(got.get("distinct", 0))
        if got.get("exact") and distinct > 1 and distinct == int(doc.get("values") or 0):
            return True
    return False


def _shown(value: Any, names: Mapping[int, str] | None) -> str:
    if isinstance(value, int) and names and value in names:
        return f"{names[value]} ({value})"
    return str(value)


def _majority(types: Mapping[str, int]) -> str:
    return max(types.items(), key=lambda kv: kv[1])[0] if types else ""


def compare_splits(
    a: SchemaResult, b: SchemaResult, names: Names | None = None
) -> list[dict[str, Any]]:
    """A row per feature of either split: ``feature``, ``type`` (the type most records give
    it), ``present_a`` / ``present_b`` (the share of records that have it, None where a
    split has none), ``mean_a`` / ``mean_b`` (of its numbers), ``linf`` (a
    :class:`Distance` for categorical values, else None), ``largest`` (where the shares
    differ most, in words: ``cat (3): 25.0% → 40.0%``; a feature whose every value is
    distinct in both splits, a file name or an id, gets no distance), ``js``
    (Jensen–Shannon divergence of its numbers, else None). ``names``: class names by
    feature, to name integer values."""
    names = names or {}
    records_a = int(a.schema.get("records") or 0)
    records_b = int(b.schema.get("records") or 0)
    features = sorted(set(a.schema.get("features", {})) | set(b.schema.get("features", {})))
    rows = []
    for name in features:
        doc_a, st_a = _feature(a, name)
        doc_b, st_b = _feature(b, name)
        types: dict[str, int] = {}
        for doc in (doc_a, doc_b):
            for t, n in (doc.get("types") or {}).items():
                types[t] = types.get(t, 0) + int(n)
        dist = None
        cats_a, total_a = _categories(doc_a, st_a)
        cats_b, total_b = _categories(doc_b, st_b)
        identifier = _identifier(doc_a) and _identifier(doc_b)
        if doc_a and doc_b and (cats_a or cats_b) and not identifier:
            dist = linf_distance(cats_a, total_a, cats_b, total_b)
        js = None
        if "histogram" in st_a and "histogram" in st_b:
            js = js_divergence(st_a["histogram"], st_b["histogram"])
        largest = "every value distinct (an identifier)" if identifier else ""
        if dist is not None and dist.at is not None:
            shown = _shown(dist.at, names.get(name))
            largest = f"{shown}: {dist.shares[0]:.1%} → {dist.shares[1]:.1%}"
        rows.append(
            {
                "feature": name,
                "type": _majority(types),
                "present_a": (doc_a.get("present", 0) / records_a) if doc_a and records_a else None,
                "present_b": (doc_b.get("present", 0) / records_b) if doc_b and records_b else None,
                "mean_a": (doc_a.get("numeric") or {}).get("mean"),
                "mean_b": (doc_b.get("numeric") or {}).get("mean"),
                "linf": dist,
                "largest": largest,
                "js": js,
            }
        )
    return rows


def distribution(
    a: SchemaResult, b: SchemaResult, name: str, names: Mapping[int, str] | None = None
) -> tuple[str, list[dict[str, Any]]]:
    """``(kind, rows)``: the distributions of feature ``name`` in both splits as shares, for
    one chart. ``kind`` is ``"values"`` (categorical: a row per value of either split's most
    common values and split, ``value``, ``split`` ``"a"`` / ``"b"``, ``share``; the rest as
    "(other values)" when not every value was counted), ``"histogram"`` (numbers: a row per
    bin of the common grid, ``value`` its range, ``from`` its lower edge) or ``""`` when the
    feature has neither in both splits."""
    doc_a, st_a = _feature(a, name)
    doc_b, st_b = _feature(b, name)
    cats_a, total_a = _categories(doc_a, st_a)
    cats_b, total_b = _categories(doc_b, st_b)
    if (cats_a or cats_b) and total_a > 0 and total_b > 0:
        keys = [*cats_a, *(k for k in cats_b if k not in cats_a)]
        rows: list[dict[str, Any]] = []
        for side, counts, total in (("a", cats_a, total_a), ("b", cats_b, total_b)):
            for k in keys:
                rows.append(
                    {"value": _shown(k, names), "split": side, "share": counts.get(k, 0) / total}
                )
            rest = max(0.0, 1.0 - sum(counts.values()) / total)
            if rest > 1e-12:
                rows.append({"value": OTHER, "split": side, "share": rest})
        if any(r["value"] == OTHER for r in rows):
            for side in ("a", "b"):
                if not any(r["value"] == OTHER and r["split"] == side for r in rows):
                    rows.append({"value": OTHER, "split": side, "share": 0.0})
        return "values", rows
    if "histogram" in st_a and "histogram" in st_b:
        got = _common(st_a["histogram"], st_b["histogram"])
        if got is not None:
            width, ha, hb = got
            integers = all(t == "int64" for doc in (doc_a, doc_b) for t in (doc.get("types") or {}))
            out = []
            for side, h in (("a", ha), ("b", hb)):
                total = sum(h.values()) or 1
                for k in sorted(set(ha) | set(hb)):
                    lo, hi = k * width, (k + 1) * width
                    label = (
                        (f"{int(lo)}" if hi - lo <= 1 else f"{int(lo)} … {int(hi) - 1}")
                        if integers
                        else f"{lo:.4g} … {hi:.4g}"
                    )
                    out.append(
                        {"value": label, "from": lo, "split": side, "share": h.get(k, 0) / total}
                    )
            return "histogram", out
    return "", []
