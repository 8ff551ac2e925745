"""The Schema page's plain data: an inferred schema as the Schema and Statistics pages keep it,
one table row per feature and feature list of it (its JSON form,
:meth:`codec.schema.Schema.to_json`), and the drift findings as lines with the records
involved.

The finding sentences are :func:`codec.schema.findings`' (the command line prints the same
ones); how a record number is shown (a link, for the app) is the caller's ``link``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codec.audio import AUDIO_FORMATS
from codec.schema import CHECKS, Finding, Schema, findings
from codec.values import format_float

from .values import Names, class_name, md_text

__all__ = [
    "DETECTION_CHECKS",
    "DRIFT_CHECKS",
    "LINKS_SHOWN",
    "NamesFinding",
    "SchemaResult",
    "finding_lines",
    "named_schema",
    "named_tops",
    "names_findings",
    "number_text",
    "record_links",
    "schema_result",
    "schema_rows",
    "top_text",
    "value_text",
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


def value_text(x: float | int | None, missing: str = "") -> str:
    """A value a feature holds (its smallest or largest): an int as it is, a float as the
    shortest text that reads back as the same float32 (``7.974931e-05``, not ``7.97493e-05``);
    ``missing`` for none. Figures computed from values (means) are :func:`number_text`."""
    if x is None:
        return missing
    if isinstance(x, float):
        return format_float(x)
    return str(x)


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


def top_text(value: Any, count: int, names: Any = None) -> str:
    """One of a feature's most common values with its count: ``3 (12)``; with class names
    (a :class:`codec.names.ClassNames`) ``3 "cat" (12)`` (a label the file does not name
    stays ``3 (12)``)."""
    name = class_name(value, names) if isinstance(value, int) else None
    return f'{value} "{name}" ({count:,})' if name is not None else f"{value} ({count:,})"


def _audio(audio: Mapping[str, Any] | None) -> str:
    """Bytes values too long to count one by one that are audio: ``audio/wav 6,
    audio/flac 2`` (by magic number)."""
    if not audio:
        return ""
    return ", ".join(f"{AUDIO_FORMATS.get(k, k)} {v:,}" for k, v in audio["formats"].items())


def schema_rows(doc: Mapping[str, Any], names: Names | None = None) -> list[dict[str, str]]:
    """One row per feature and feature list: what the Schema page's table shows (feature,
    kind, types with counts, presence, values and steps min / mean / max, numeric range
    (values as their shortest float32 text), NaN/Inf, distinct and top values — for audio
    values, their formats —, picture formats). The top values of a feature with
    class names in ``names`` are named (:func:`top_text`); a names file is a rendering
    matter, never part of the schema itself."""
    classes = names or {}
    rows = []
    records = doc["records"]
    items = [(n, f, "feature") for n, f in doc["features"].items()]
    items += [(n, f, "feature list") for n, f in doc.get("feature_lists", {}).items()]
    for name, f, kind in items:
        num = f.get("numeric") or {}
        values = f.get("int_values") or f.get("bytes") or {}
        tops = values.get("top", [])
        known = classes.get(name) if f.get("int_values") else None
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
                "min": value_text(num.get("min")),
                "max": value_text(num.get("max")),
                "NaN/Inf": f"{num['nan']:,} / {num['inf']:,}" if num else "",
                "distinct": "" if distinct is None else f"{distinct:,}",
                "top values": ", ".join(top_text(v, c, known) for v, c in tops[:5])
                or _audio(f.get("audio")),
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


# -- class names over a schema ---------------------------------------------------------------


@dataclass(frozen=True)
class NamesFinding:
    """What a schema says of a feature's class names: ``feature``, ``message`` (a sentence,
    plain text), and the labels seen that the names file does not name (``unnamed``, as far
    as the schema's figures tell: its top values and its range)."""

    feature: str
    message: str
    unnamed: tuple[int, ...] = ()


def names_findings(doc: Mapping[str, Any], names: Names) -> list[NamesFinding]:
    """Per feature of the schema with class names in ``names``: the labels it holds that
    the names file does not name (a file shorter than the labels used), or a feature that is
    not whole numbers at all. Read from the schema's figures (top values, range), so the
    schema itself never depends on a names file."""
    out: list[NamesFinding] = []
    sections = [doc.get("features", {}), doc.get("feature_lists", {})]
    for feature, cn in names.items():
        f = next((sec[feature] for sec in sections if feature in sec), None)
        if f is None:
            continue
        where = _file_name(cn.source)
        types = set(f.get("types", {}))
        if types and "int64" not in types:
            kinds = ", ".join(sorted(types))
            out.append(
                NamesFinding(
                    feature,
                    f"{feature} holds {kinds}, not class labels: {where} names nothing in it",
                )
            )
            continue
        iv = f.get("int_values") or {}
        unnamed = sorted({int(v) for v, _c in iv.get("top", []) if cn.name(int(v)) is None})
        num = f.get("numeric") or {}
        low, high = num.get("min"), num.get("max")
        named = sorted(cn.names)
        outside = bool(named) and (
            (low is not None and low < named[0]) or (high is not None and high > named[-1])
        )
        if not unnamed and not outside:
            continue
        listed = ", ".join(str(v) for v in unnamed[:12]) + (" …" if len(unnamed) > 12 else "")
        span = f"{named[0]}–{named[-1]}" if named else "nothing"
        seen = ""
        if low is not None and high is not None:
            seen = f" (its labels run {number_text(low)}–{number_text(high)})"
        head = f"{feature} has labels {listed} that" if unnamed else f"{feature} has labels that"
        out.append(
            NamesFinding(
                feature,
                f"{head} {where} does not name: it names {span}{seen}; they are shown as numbers",
                tuple(unnamed),
            )
        )
    return out


def _file_name(source: str) -> str:
    return os.path.basename(source) or source


def named_schema(doc: Mapping[str, Any], names: Names) -> dict[str, Any]:
    """A copy of a schema's JSON form with the class names of ``names`` beside its figures,
    for output (``schema --json --names``): each named feature gains ``"names"`` (``source``,
    ``kind``, ``count``) and its ``int_values`` a ``"top_names"`` list (the name of each top
    value, None where it has none); the drift's names findings go under ``"names_findings"``.
    The schema itself is left as it is."""
    out = dict(doc)
    for section in ("features", "feature_lists"):
        feats = doc.get(section)
        if not feats:
            continue
        copied = dict(feats)
        for feature, cn in names.items():
            if feature not in copied:
                continue
            f = dict(copied[feature])
            f["names"] = {"source": cn.source, "kind": cn.kind, "count": len(cn)}
            iv = f.get("int_values")
            if iv:
                f["int_values"] = {
                    **iv,
                    "top_names": [cn.name(int(v)) for v, _c in iv.get("top", [])],
                }
            copied[feature] = f
        out[section] = copied
    out["names_findings"] = [
        {"feature": x.feature, "message": x.message, "unnamed": list(x.unnamed)}
        for x in names_findings(doc, names)
    ]
    return out


def named_tops(doc: Mapping[str, Any], names: Names) -> dict[str, Any]:
    """A copy of a schema's JSON form for the text report: the top values of each feature
    with class names written as ``3 "cat"`` (:func:`top_text`), so that a report printing
    ``value (count)`` prints ``3 "cat" (12)``."""
    out = dict(doc)
    for section in ("features", "feature_lists"):
        feats = doc.get(section)
        if not feats:
            continue
        copied = dict(feats)
        for feature, cn in names.items():
            f = copied.get(feature) or {}
            iv = f.get("int_values")
            if not iv:
                continue
            tops = []
            for v, c in iv.get("top", []):
                name = class_name(v, cn) if isinstance(v, int) else None
                tops.append([f'{v} "{name}"' if name is not None else v, c])
            copied[feature] = {**f, "int_values": {**iv, "top": tops}}
        out[section] = copied
    return out
