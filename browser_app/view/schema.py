"""The Schema page's plain data: an inferred schema as the Schema and Statistics pages keep it,
one table row per feature and feature list of it (its JSON form,
:meth:`codec.schema.Schema.to_json`), and the drift findings as lines with the records
involved.

The finding sentences are :func:`codec.schema.findings`' (the command line prints the same
ones); how a record number is shown (a link, for the app) is the caller's ``link``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codec.schema import CHECKS, Finding, Schema, findings

from .values import md_text

__all__ = [
    "DETECTION_CHECKS",
    "DRIFT_CHECKS",
    "LINKS_SHOWN",
    "SchemaResult",
    "finding_lines",
    "number_text",
    "record_links",
    "schema_result",
    "schema_rows",
]

LINKS_SHOWN = 20  # record numbers listed after a finding before "… and N more"
TOP_VALUES = 20  # most common values kept per feature


@dataclass(frozen=True)
class SchemaResult:
    """An inferred schema as plain data: ``schema`` its JSON form, ``statistics`` its chart
    data, ``sample`` the sample size asked for (``None``: every record), ``shards`` each file's
    name as shown to its real path (the keys of ``statistics["shards"]``)."""

    schema: dict[str, Any]
    statistics: dict[str, Any]
    sample: int | None
    shards: dict[str, str]
    label_map: str | None = None


def schema_result(
    schema: Schema,
    sample: int | None,
    shown: Callable[[str], str] = str,
    label_map: str | None = None,
) -> SchemaResult:
    """``schema`` as plain data, its files named by ``shown``; ``label_map`` names the label
    map its labels were checked against (None: none)."""
    return SchemaResult(
        schema=schema.to_json(top=TOP_VALUES),
        statistics=schema.statistics(top=TOP_VALUES),
        sample=sample,
        shards={shown(p): p for p in schema.shards},
        label_map=label_map,
    )


def number_text(x: float | int | None, missing: str = "") -> str:
    """A figure of the schema: floats to 6 significant digits, ``missing`` for none."""
    if x is None:
        return missing
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def _images(images: Mapping[str, Any] | None) -> str:
    if not images:
        return ""
    text = ", ".join(f"{k} {v:,}" for k, v in images["formats"].items())
    if images["undecodable"]:
        text += f"; {images['undecodable']:,} undecodable"
    return text


def schema_rows(doc: Mapping[str, Any]) -> list[dict[str, str]]:
    """One row per feature and feature list: what the Schema page's table shows (feature,
    kind, types with counts, presence, values and steps min / mean / max, numeric range,
    NaN/Inf, distinct and top values, picture formats)."""
    rows = []
    records = doc["records"]
    items = [(n, f, "feature") for n, f in doc["features"].items()]
    items += [(n, f, "feature list") for n, f in doc.get("feature_lists", {}).items()]
    for name, f, kind in items:
        num = f.get("numeric") or {}
        values = f.get("int_values") or f.get("bytes") or {}
        tops = values.get("top", [])
        distinct = values.get("distinct")
        rows.append(
            {
                "feature": name,
                "kind": kind,
                "types": ", ".join(f"{t} {c:,}" for t, c in f["types"].items()),
                "present": f"{f['present']:,} / {records:,}",
                "values": " / ".join(number_text(f[k]) for k in ("min_len", "mean_len", "max_len")),
                "steps": (
                    f"{f['min_steps']} / {number_text(f['mean_steps'])} / {f['max_steps']}"
                    if kind == "feature list"
                    else ""
                ),
                "min": number_text(num.get("min")),
                "max": number_text(num.get("max")),
                "NaN/Inf": f"{num['nan']:,} / {num['inf']:,}" if num else "",
                "distinct": "" if distinct is None else f"{distinct:,}",
                "top values": ", ".join(f"{v} ({c:,})" for v, c in tops[:5]),
                "images": _images(f.get("images")),
            }
        )
    return rows


def record_links(
    records: Sequence[int], count: int, link: Callable[[int], str], shown: int = LINKS_SHOWN
) -> str:
    """The first ``shown`` of ``records`` through ``link``, then ``… and N more`` for the
    rest of ``count`` (the lists are capped; ``count`` is exact)."""
    text = ", ".join(link(r) for r in records[:shown])
    more = count - min(len(records), shown)
    return text + (f" … and {more:,} more" if more > 0 else "")


def _bold_name(f: Finding) -> str:
    """The finding's sentence with the feature's name in bold (Markdown, escaped)."""
    for head in ("", "feature list ", "the "):
        if f.feature and f.message.startswith(head + f.feature):
            rest = f.message[len(head) + len(f.feature) :]
            return f"{head}**{md_text(f.feature)}**{md_text(rest)}"
    return md_text(f.message)


DRIFT_CHECKS: frozenset[str] = frozenset({"type", "missing", "length"})
DETECTION_CHECKS: frozenset[str] = frozenset(CHECKS) - DRIFT_CHECKS - {"damaged"}
"""The checks of pictures and Object Detection data (boxes, parallel lists, labels, picture
sizes, pictures that do not decode)."""


def finding_lines(
    doc: Mapping[str, Any],
    link: Callable[[int], str],
    shown: int = LINKS_SHOWN,
    checks: Collection[str] | None = None,
) -> list[str]:
    """One Markdown line per finding of the schema (those of ``checks`` when given): the
    sentence, the feature's name in bold, then the records involved (``**weight** is missing
    from 5 records: 3, 9, …``). Names from the file are escaped."""
    return [
        f"{_bold_name(f)}: {record_links(f.records, f.count, link, shown)}"
        for f in findings(doc)
        if checks is None or f.check in checks
    ]
