"""Findings: what the schema says is off, as values with one sentence each.

:func:`findings` reads a schema's JSON form (:meth:`Schema.to_json`, which is also what the
app keeps) and returns one :class:`Finding` per problem: a feature whose type differs in some
records, a feature missing from some records, a list length that differs where most records
agree, and pictures that cannot be decoded. The sentence is written here once; the command
line prints it with the record numbers, the app with links to them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["CHECKS", "Finding", "findings"]

Check = Literal["type", "missing", "length", "undecodable"]
CHECKS: tuple[Check, ...] = ("type", "missing", "length", "undecodable")


def _records(n: int) -> str:
    return f"{n:,} record{'s' if n != 1 else ''}"


@dataclass(frozen=True)
class Finding:
    """One problem the schema shows: ``check`` names the kind, ``feature`` the feature (or
    feature list, when ``section`` is ``"feature_lists"``), ``message`` says it in a sentence
    that does not list records; ``count`` records are involved, the first of them (capped)
    in ``records``."""

    check: Check
    feature: str
    message: str
    count: int
    records: list[int] = field(default_factory=list)
    section: str = "features"

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "feature": self.feature,
            "message": self.message,
            "count": self.count,
            "records": list(self.records),
        }


def _majority(types: Mapping[str, int]) -> str:
    return max(types.items(), key=lambda kv: kv[1])[0] if types else "?"


def findings(doc: Mapping[str, Any]) -> list[Finding]:
    """Every finding of a schema's JSON form, in a stable order: by check, then feature."""
    out: list[Finding] = []
    features: Mapping[str, Any] = doc.get("features", {})
    lists: Mapping[str, Any] = doc.get("feature_lists", {})
    for name, recs in doc.get("type_conflicts", {}).items():
        major = _majority(features.get(name, {}).get("types", {}))
        out.append(
            Finding(
                "type",
                name,
                f"{name} is {major} in most records but another type in {_records(len(recs))}",
                len(recs),
                list(recs),
            )
        )
    for name, f in lists.items():
        recs = f.get("type_conflicts") or []
        if recs:
            out.append(
                Finding(
                    "type",
                    name,
                    f"feature list {name} changes type in {_records(len(recs))}",
                    len(recs),
                    list(recs),
                    "feature_lists",
                )
            )
    counts = doc.get("missing_counts", {})
    for name, recs in doc.get("missing", {}).items():
        n = int(counts.get(name, len(recs)))
        out.append(Finding("missing", name, f"{name} is missing from {_records(n)}", n, list(recs)))
    for name, f in lists.items():
        if f.get("missing"):
            n = int(f["missing"])
            out.append(
                Finding(
                    "missing",
                    name,
                    f"feature list {name} is missing from {_records(n)}",
                    n,
                    list(f.get("missing_records", [])),
                    "feature_lists",
                )
            )
    for name, d in doc.get("length_drift", {}).items():
        n = int(d["count"])
        out.append(
            Finding(
                "length",
                name,
                f"{name} has {d['usual_len']} value{'s' if d['usual_len'] != 1 else ''} in most"
                f" records but a different number in {_records(n)}",
                n,
                list(d["records"]),
            )
        )
    for section, table in (("features", features), ("feature_lists", lists)):
        for name, f in table.items():
            im = f.get("images")
            if im and im.get("undecodable"):
                n = int(im["undecodable"])
                out.append(
                    Finding(
                        "undecodable",
                        name,
                        f"{name} holds {n:,} picture{'s' if n != 1 else ''} that cannot be decoded",
                        n,
                        list(im.get("undecodable_records", [])),
                        section,
                    )
                )
    return out
