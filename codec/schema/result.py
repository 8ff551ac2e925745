"""The result of an inference: :class:`Schema`, its JSON form and its chart data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .builder import SchemaBuilder
from .drift import findings
from .stats import FeatureStats, show_bytes


@dataclass
class ShardInfo:
    path: str
    first_record: int
    records: int


class Schema:
    """An inferred schema with drift and statistics. :meth:`to_json` is what the CLI prints;
    :meth:`statistics` the chart data; :attr:`shards` the same per file of a dataset."""

    def __init__(
        self,
        builder: SchemaBuilder,
        *,
        total: int | None = None,
        sample: int | None = None,
        files: Sequence[ShardInfo] = (),
        shards: Mapping[str, Schema] | None = None,
        problems: int = 0,
    ) -> None:
        self.builder = builder
        self.features = builder.features
        self.feature_lists = builder.feature_lists
        self.records = builder.records
        self.total = total if total is not None else builder.records + builder.damaged.count
        self.sample = sample
        self.files = list(files)
        self.shards = dict(shards or {})
        self.problems = problems

    @property
    def damaged(self) -> list[int]:
        return self.builder.damaged.tolist()

    @property
    def is_sample(self) -> bool:
        return self.sample is not None

    def type_conflicts(self) -> dict[str, list[int]]:
        out = {}
        for name, fs in sorted(self.features.items()):
            recs = fs.type_conflicts()
            if recs:
                out[name] = recs
        return out

    def missing(self) -> dict[str, list[int]]:
        return {
            n: fs.missing.tolist() for n, fs in sorted(self.features.items()) if fs.missing.count
        }

    def length_drift(self) -> dict[str, dict[str, Any]]:
        out = {}
        for name, fs in sorted(self.features.items()):
            d = fs.length_drift()
            if d:
                out[name] = d
        return out

    def to_json(self, top: int = 10) -> dict[str, Any]:
        b = self.builder
        out: dict[str, Any] = {
            "records": self.records,
            "features": {n: fs.to_json(top) for n, fs in sorted(self.features.items())},
            "type_conflicts": self.type_conflicts(),
            "missing": self.missing(),
            "missing_counts": {
                n: fs.missing.count for n, fs in sorted(self.features.items()) if fs.missing.count
            },
            "length_drift": self.length_drift(),
            "kinds": dict(sorted(b.kinds.items())),
            "damaged": b.damaged.count,
            "damaged_records": b.damaged.tolist(),
            "problems": self.problems,
            "sampled": self.is_sample,
        }
        if self.feature_lists:
            out["feature_lists"] = {
                n: ls.to_json(top) for n, ls in sorted(self.feature_lists.items())
            }
        if self.is_sample:
            out["sample"] = {"records": self.sample, "of": self.total}
        if self.files:
            out["files"] = [
                {"path": f.path, "first_record": f.first_record, "records": f.records}
                for f in self.files
            ]
        detection = b.checks.to_json() if b.checks is not None else {}
        if detection:
            out["detection"] = detection
        out["findings"] = [f.to_json() for f in findings(out)]
        return out

    def statistics(self, top: int = 20) -> dict[str, Any]:
        """Chart data per feature: ``histogram`` (edges/counts), ``bars`` (an int64 feature
        with at most :data:`EXACT_BARS` distinct values: every value with its exact count, in
        value order), ``values`` (top int64 or text values with counts), ``lengths`` (list
        length -> records), ``image_sizes`` ([width, height, count]), and the same per shard
        under ``"shards"``."""
        return _statistics(self, top)


EXACT_BARS = 64  # int64 features with at most this many distinct values get a bar per value


def _statistics(schema: Schema, top: int) -> dict[str, Any]:
    def one(fs: FeatureStats) -> dict[str, Any]:
        d: dict[str, Any] = {
            "types": fs.type_counts(),
            "lengths": sorted([k, v] for k, v in fs.len_counts.items()),
        }
        num = fs.numeric()
        if num is not None:
            d["histogram"] = num.histogram.to_json()
        if fs.int_values.total:
            d["values"] = [[v, c] for v, c in fs.int_values.top(top)]
            if fs.int_values.exact and fs.int_values.distinct() <= EXACT_BARS:
                d["bars"] = sorted([v, c] for v, c in fs.int_values.counts.items())
        elif fs.values.total:
            d["values"] = [[show_bytes(v), c] for v, c in fs.values.top(top)]
        if fs.image_sizes:
            d["image_sizes"] = [[w, h, c] for (w, h), c in fs.sizes()]
        return d

    out: dict[str, Any] = {
        "records": schema.records,
        "sampled": schema.is_sample,
        "features": {n: one(fs) for n, fs in sorted(schema.features.items())},
    }
    if schema.feature_lists:
        out["feature_lists"] = {
            n: {**one(ls.steps), "steps": [ls.steps_min, ls.steps_max]}
            for n, ls in sorted(schema.feature_lists.items())
        }
    if schema.shards:
        out["shards"] = {p: _statistics(s, top) for p, s in schema.shards.items()}
    return out


# --------------------------------------------------------------------------------------------
