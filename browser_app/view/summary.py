"""The overview's plain data: a verify report as a dict, the kinds and features of the first
records (types with counts, presence, list lengths, an example value), the kinds in words, the
type most records give each feature; and for a dataset that describes itself (a TFDS dataset,
a TFX ExampleGen output), its facts, its splits with their declared and counted records, and
its declared features."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import codec
from browser_app.edits.model import FEATURE_LISTS, FEATURES, Section
from codec import example as ex
from codec.framing import Problem
from codec.kinds import BYTES, EXAMPLE, NONE, RAW, SEQUENCE_EXAMPLE

from .values import value_view, values_preview

if TYPE_CHECKING:
    from codec.tfds import FeatureSpec, SplitFolder

__all__ = [
    "SAMPLE_BYTES",
    "dataset_facts",
    "declared_features",
    "feature_summary",
    "first_payloads",
    "kind_label",
    "problem_dict",
    "report_dict",
    "split_rows",
    "usual_types",
]


def problem_dict(p: Problem) -> dict[str, Any]:
    """A damaged record or skipped region as plain data: kind, offset, end, message, path."""
    return {"kind": p.kind, "offset": p.offset, "end": p.end, "message": p.message, "path": p.path}


def report_dict(r: codec.VerifyReport) -> dict[str, Any]:
    """A verify report as plain data (for caching and tables)."""
    return {
        "path": r.path,
        "compression": r.compression,
        "records": r.records,
        "damaged": r.damaged,
        "recovered": r.recovered,
        "bytes": r.bytes,
        "skipped_bytes": r.skipped_bytes,
        "ok": r.ok,
        "problems": [problem_dict(p) for p in r.problems],
    }


_KIND_NAMES: dict[str, str] = {
    EXAMPLE: "Example",
    SEQUENCE_EXAMPLE: "SequenceExample",
    RAW: "raw bytes",
}


def kind_label(kinds: Mapping[str, int]) -> str:
    """The record kinds seen, in words: ``Example``, or ``Example (3) / raw bytes (1)`` when
    they are mixed (most common first); ``—`` for none."""
    if not kinds:
        return "—"
    ordered = sorted(kinds.items(), key=lambda kv: -kv[1])
    if len(ordered) == 1:
        return _KIND_NAMES.get(ordered[0][0], ordered[0][0])
    return " / ".join(f"{_KIND_NAMES.get(k, k)} ({v})" for k, v in ordered)


def _entries(rec: ex.Record) -> list[tuple[str, ex.Feature, Section]]:
    """``(name, feature, section)`` of a record: each feature, and each feature list by its
    first step (an empty list by a feature of type ``none``)."""
    items = [(n, f, FEATURES) for n, f in rec.features.items()]
    for n, steps in rec.feature_lists.items():
        items += [(n, f, FEATURE_LISTS) for f in steps[:1]] or [
            (n, ex.Feature(NONE, []), FEATURE_LISTS)
        ]
    return items


SAMPLE_BYTES = 64 << 20  # the first records read as a sample stop after this many bytes


def first_payloads(
    ds: codec.TFRecordDataset, limit: int, budget: int = SAMPLE_BYTES
) -> Iterator[bytes | None]:
    """The payloads of the first ``limit`` records, one at a time (``None`` for a damaged
    one), stopping once ``budget`` bytes were read (after at least one record): a sample
    costs at most that much whatever the records hold."""
    spent = 0
    for i in range(limit):
        if i and spent >= budget:
            return
        try:
            payload = ds.read(i)
        except IndexError:
            return
        except codec.CorruptRecordError:
            yield None
            continue
        spent += len(payload)
        yield payload


def feature_summary(ds: codec.TFRecordDataset, limit: int = 200) -> dict[str, Any]:
    """Kinds and features of the first ``limit`` records (:func:`first_payloads`): for each
    feature, the types seen (with counts), how many records have it, and the shortest and
    longest list."""
    kinds: Counter[str] = Counter()
    feats: dict[str, dict[str, Any]] = {}
    seen = damaged = 0
    for payload in first_payloads(ds, limit):
        if payload is None:
            damaged += 1
            continue
        seen += 1
        rec = ex.decode(payload, "auto")
        kinds[rec.kind] += 1
        for name, f, section in _entries(rec):
            e = feats.setdefault(
                name,
                {
                    "name": name,
                    "section": section,
                    "types": Counter(),
                    "records": 0,
                    "min_len": None,
                    "max_len": None,
                    "example": "",
                    "content": Counter(),
                },
            )
            e["types"][f.type] += 1
            e["records"] += 1
            n_values = len(rec.feature_lists[name]) if section == FEATURE_LISTS else len(f.values)
            e["min_len"] = n_values if e["min_len"] is None else min(e["min_len"], n_values)
            e["max_len"] = n_values if e["max_len"] is None else max(e["max_len"], n_values)
            if not e["example"] and f.values:
                e["example"] = values_preview(f, 3, 30)
            if f.type == BYTES and f.values:
                e["content"][value_view(f.values[0]).kind] += 1
    out = []
    for e in feats.values():
        types = e["types"]
        e["type"] = " / ".join(t for t, _ in types.most_common())
        e["drift"] = len(types) > 1
        e["content"] = e["content"].most_common(1)[0][0] if e["content"] else ""
        e["types"] = dict(types)
        out.append(e)
    return {"records": seen, "damaged": damaged, "kinds": dict(kinds), "features": out}


def usual_types(summary: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """``({feature: type}, {feature list: type})``: the type most records of a
    :func:`feature_summary` give each feature (features seen only without values are left
    out)."""
    feats: dict[str, str] = {}
    lists: dict[str, str] = {}
    for e in summary.get("features", []):
        types = {t: n for t, n in dict(e.get("types", {})).items() if t != NONE}
        if not types:
            continue
        best = max(types, key=lambda t: types[t])
        (lists if e.get("section") == FEATURE_LISTS else feats)[str(e["name"])] = best
    return feats, lists


# -- datasets that describe themselves ---------------------------------------------------------


def dataset_facts(folder: SplitFolder) -> dict[str, Any]:
    """What a dataset folder says of itself: ``kind`` in words (``TFDS dataset``, ``TFX
    ExampleGen output``), ``name``, ``version``, ``config``, ``description``, ``citation``,
    ``homepage``, ``supervised_keys`` (``image → label``), ``file_format``; the TFDS fields are
    None for a TFX output, which says none of them."""
    ds = folder.tfds
    if ds is None:
        return {
            "kind": "TFX ExampleGen output",
            "name": folder.name,
            "version": None,
            "config": None,
            "description": None,
            "citation": None,
            "homepage": None,
            "supervised_keys": None,
            "file_format": None,
        }
    return {
        "kind": "TFDS dataset",
        "name": ds.name,
        "version": ds.version,
        "config": ds.config,
        "description": ds.description,
        "citation": ds.citation,
        "homepage": ds.homepage,
        "supervised_keys": " → ".join(ds.supervised_keys) if ds.supervised_keys else None,
        "file_format": ds.file_format,
    }


def split_rows(
    folder: SplitFolder,
    counts: Mapping[str, Sequence[int] | None],
    open_split: str | None = None,
) -> list[dict[str, Any]]:
    """A row per split of ``folder``: ``split``, ``open`` (the one shown), ``shards`` (``2``,
    or ``1 of 2`` when some are missing), ``declared`` records (None when not declared),
    ``counted`` records (None until ``counts`` has the split's, one count per file that is
    there), ``bytes`` declared, and ``check``: ``✓ as declared``, ``✗ differs``, ``not
    declared`` or ``not counted``."""
    rows = []
    for s in folder.splits:
        got = counts.get(s.name)
        counted = sum(got) if got is not None else None
        present = len(s.files)
        declared = s.declared_total
        if counted is None:
            check = "not counted"
        elif declared is None and all(d is None for d in s.declared_records):
            check = "not declared"
        else:
            by_shard = [
                d == n
                for d, n in zip([sh.declared_records for sh in s.shards if sh.present], got or ())
                if d is not None
            ]
            same = (declared is None or declared == counted) and all(by_shard)
            check = "✓ as declared" if same and not s.missing else "✗ differs"
        rows.append(
            {
                "split": s.name,
                "open": s.name == open_split,
                "shards": f"{present:,}"
                if present == len(s.shards)
                else f"{present:,} of {len(s.shards):,}",
                "declared": declared,
                "counted": counted,
                "bytes": s.num_bytes,
                "check": check,
            }
        )
    return rows


def _shape_words(shape: Sequence[int | None] | None) -> str:
    if shape is None:
        return ""
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"


def declared_features(features: Mapping[str, FeatureSpec]) -> list[dict[str, Any]]:
    """A row per feature ``features.json`` declares (by the key the records carry it under):
    ``feature``, ``kind`` (``image``, ``class label``…), ``dtype``, ``shape`` (``(?, 4)``:
    ``?`` for a length that is not fixed), ``encoding``, ``classes`` (``20, names from
    objects-label.labels.txt``) and ``more`` (a sample rate, a ragged feature's keys)."""
    rows = []
    for key in sorted(features):
        f = features[key]
        classes = ""
        if f.num_classes is not None or f.names is not None:
            n = f.num_classes if f.num_classes is not None else len(f.names or ())
            classes = f"{n:,}" + (f", names from {f.names_file}" if f.names is not None else "")
        more = []
        if f.sample_rate:
            more.append(f"{f.sample_rate:,} Hz")
        if f.file_format:
            more.append(f.file_format)
        if f.ragged:
            more.append("ragged: " + ", ".join(f.record_keys))
        rows.append(
            {
                "feature": key,
                "kind": f.kind.replace("_", " "),
                "dtype": f.dtype or "",
                "shape": _shape_words(f.shape),
                "encoding": f.encoding or "",
                "classes": classes,
                "more": "; ".join(more),
            }
        )
    return rows
