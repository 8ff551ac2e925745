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
from typing import Any, Literal, get_args

from ..detection import layout_root
from ..values import plural

__all__ = ["CHECKS", "Finding", "findings"]

Check = Literal[
    "damaged",
    "type",
    "missing",
    "length",
    "undecodable",
    "object_lengths",
    "box_not_finite",
    "box_range",
    "box_inverted",
    "label_map",
    "label_text",
    "image_size",
]
CHECKS: tuple[Check, ...] = get_args(Check)


def _records(n: int) -> str:
    return plural(n, "record")


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
    if doc.get("damaged"):
        n = int(doc["damaged"])
        out.append(
            Finding(
                "damaged",
                "",
                plural(n, "record fails its CRC and is", "records fail their CRC and are")
                + " left out of every figure",
                n,
                list(doc.get("damaged_records", [])),
            )
        )
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
    out.extend(_detection(doc.get("detection", {})))
    return out


def _braced(text: str) -> str:
    """``text`` safe inside a message that is ``str.format``-ed."""
    return text.replace("{", "{{").replace("}", "}}")


def _detection(detection: Mapping[str, Any]) -> list[Finding]:
    out: list[Finding] = []
    for prefix, d in detection.items():
        checks = d.get("checks", {})
        bbox = f"{prefix}bbox"
        root = layout_root(prefix)
        # A model's predictions name their classes in ``<prefix>label`` (detection_inference).
        label = f"{prefix}label" if d.get("kind") == "predictions" else f"{prefix}class/label"

        def add(
            check: Check, feature: str, message: str, checks: Mapping[str, Any] = checks
        ) -> None:
            c = checks.get(check)
            if c:
                n = int(c["count"])
                out.append(
                    Finding(check, feature, message.format(n=_records(n)), n, list(c["records"]))
                )

        lengths = checks.get("object_lengths") or {}
        first = (lengths.get("example") or {}).get("problem")
        add(
            "object_lengths",
            f"{prefix}*",
            f"the {prefix}* lists have lengths their layout does not explain in {{n}}"
            + (f" (the first: {_braced(first)})" if first else ""),
        )
        add("box_not_finite", bbox, f"{bbox} has a coordinate that is not a number in {{n}}")
        where = (
            "outside [0, 1] (normalised)" if d.get("normalized", True) else "outside the picture"
        )
        add("box_range", bbox, f"{bbox} has a coordinate {where} in {{n}}")
        add("box_inverted", bbox, f"{bbox} has xmin ≥ xmax or ymin ≥ ymax in {{n}}")
        add("label_map", label, f"{label} is not in the label map in {{n}}")
        add(
            "label_text",
            f"{prefix}class/text",
            f"{prefix}class/text differs from the label map's name for its label in {{n}}",
        )
        add(
            "image_size",
            f"{root}height",
            f"{root}height / {root}width differ from the picture's own size in {{n}}",
        )
        for t in d.get("label_texts", []):
            n = int(t["count"])
            others = ", ".join(repr(o) for o in t["others"])
            out.append(
                Finding(
                    "label_text",
                    f"{prefix}class/text",
                    f"{label} {t['label']} is {t['usual']!r} in most boxes but"
                    f" {others} in {_records(n)}",
                    n,
                    list(t["records"]),
                )
            )
    return out
