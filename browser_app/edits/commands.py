"""The edit commands: each checks its input against the record as it is now (its effective
record) and gives the :class:`Edit` to record, or raises :class:`~browser_app.errors.EditError`
(:class:`~browser_app.errors.ValueParseError`, :class:`~browser_app.errors.ConversionError`)
before anything is recorded.

Commands only read; the journal gives an edit its id and time, writes it and applies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from browser_app.edits.cells import parse_bytes_cell
from browser_app.edits.edited import EditedDataset, apply_change
from browser_app.edits.model import (
    ADD_FEATURE,
    ADD_FEATURE_LIST,
    ADD_RECORD,
    CONVERT_FEATURE,
    DELETE_FEATURE,
    DELETE_FEATURE_LIST,
    DELETE_RECORD,
    FEATURE_LISTS,
    FEATURES,
    RECORD,
    REPLACE_IMAGE,
    SET_FEATURE,
    SET_FEATURE_LIST,
    SET_STEP,
    SET_VALUE,
    Change,
    ChangeValue,
    DetailValue,
    Op,
    Part,
    RecordRef,
    Section,
)
from browser_app.edits.values import (
    Value,
    check_value,
    convert_values,
    parse_values,
    type_warnings,
    values_feature,
)
from browser_app.errors import AppError, EditError
from codec import example as ex
from codec import images
from codec.errors import CodecError, EncodeError
from codec.example import Feature, Record
from codec.kinds import BYTES, FEATURE_TYPES, INT64, NONE, RAW, SEQUENCE_EXAMPLE
from codec.values import plural

__all__ = [
    "Edit",
    "FeatureInput",
    "add_cell",
    "add_feature",
    "add_feature_list",
    "add_record",
    "convert_feature",
    "delete_feature",
    "delete_feature_list",
    "delete_record",
    "replace_image",
    "schema_warnings",
    "set_cell",
    "set_feature",
    "set_feature_list",
    "set_step",
    "set_step_value",
    "set_value",
    "set_values",
]

FeatureInput = Feature | tuple[str, Sequence[Value] | str]
"""A feature as a command takes it: a :class:`Feature`, or ``(type, values)`` with the values
as a list or as text (:func:`~browser_app.edits.values.parse_values`)."""


@dataclass(frozen=True)
class Edit:
    """A checked change, not recorded yet. ``target`` is ``None`` for a new record (the
    journal names it); ``notes`` are warnings about the values themselves (an inexact
    float); ``payload`` is a new record's."""

    target: RecordRef | None
    op: Op
    section: Section
    name: str | None
    before: Part = None
    after: ChangeValue = None
    detail: Mapping[str, DetailValue] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    payload: bytes | None = None

    def change(self, id: int, target: RecordRef, timestamp: float) -> Change:
        """The change this edit becomes once the journal gives it an id, a target (for a new
        record, its new id) and a time."""
        return Change(
            id=id,
            target=target,
            op=self.op,
            section=self.section,
            name=self.name,
            before=self.before,
            after=self.after,
            timestamp=timestamp,
            detail=dict(self.detail),
        )


# --------------------------------------------------------------------------------------------
# Checks shared by the commands


def _current(edited: EditedDataset, record: RecordRef) -> Record:
    edited.check_ref(record)
    rec = edited.effective_record(record)
    assert rec is not None  # check_ref refused deleted records
    return rec


def _editable(edited: EditedDataset, record: RecordRef) -> Record:
    rec = _current(edited, record)
    if rec.kind == RAW:
        raise EditError(
            f"record {record} is not an Example or SequenceExample; it can only be"
            " deleted or duplicated"
        )
    return rec


def _sequence(edited: EditedDataset, record: RecordRef) -> Record:
    rec = _editable(edited, record)
    if rec.kind != SEQUENCE_EXAMPLE:
        raise EditError(f"record {record} is an Example: it has no feature lists")
    return rec


def _feature(rec: Record, record: RecordRef, name: str, hint: str = "") -> Feature:
    old = rec.features.get(name)
    if old is None:
        raise EditError(f"record {record} has no feature {name!r}{hint}")
    return old


def _feature_list(rec: Record, record: RecordRef, name: str) -> list[Feature]:
    old = rec.feature_lists.get(name)
    if old is None:
        raise EditError(f"record {record} has no feature list {name!r}")
    return old


def _step(steps: list[Feature], name: str, step: int) -> Feature:
    if not 0 <= step < len(steps):
        raise EditError(f"feature list {name!r} has no step {step} ({plural(len(steps), 'step')})")
    return steps[step]


def _check_type(type: str) -> None:
    if type not in FEATURE_TYPES:
        raise EditError(f"unknown feature type {type!r} (expected one of int64, float, bytes)")


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not name:
        raise EditError("a feature name must be a non-empty text")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EditError(f"feature name {name!r} is not valid UTF-8") from exc


def _as_feature(feature: FeatureInput, name: str) -> Feature:
    if isinstance(feature, Feature):
        return (
            values_feature(feature.type, feature.values, name)
            if feature.type != NONE
            else Feature(NONE, [])
        )
    if isinstance(feature, tuple) and len(feature) == 2:
        t, values = feature
        _check_type(t)
        if isinstance(values, str):
            vals, _notes = parse_values(t, values)
            return values_feature(t, vals, name)
        return values_feature(t, list(values), name)
    raise EditError(f"feature {name!r}: {feature!r} is not a Feature or a (type, values) pair")


def _values(type: str, values: Sequence[Value] | str) -> tuple[list[Value], tuple[str, ...]]:
    if isinstance(values, str):
        vals, notes = parse_values(type, values)
        return vals, tuple(notes)
    return list(values), ()


def _check_index(feat: Feature, index: int, name: str) -> None:
    """:class:`EditError` unless value ``index`` can be set (one past the end appends)."""
    if feat.type == NONE:
        raise EditError(f"feature {name!r} has no type; give it one with convert_feature")
    if not 0 <= index <= len(feat.values):
        raise EditError(
            f"feature {name!r} has no value {index} ({plural(len(feat.values), 'value')})"
        )


def _with_value(feat: Feature, index: int, value: Value) -> list[Value]:
    values: list[Value] = list(feat.values)
    if index == len(values):
        values.append(value)
    else:
        values[index] = value
    return values


def _check_image(data: bytes) -> tuple[int, int]:
    """``(width, height)`` of encoded image bytes, or :class:`EditError` when they do not
    decode as an image."""
    try:
        img = images.decode_image(data)
        img.load()
    except CodecError as exc:
        raise EditError(f"not a decodable image: {exc}") from exc
    except Exception as exc:  # the imaging library's own errors for damaged files
        raise EditError(f"not a decodable image: {exc}") from exc
    return int(img.width), int(img.height)


_SIZE_KEYS = (
    ("height", "width"),
    ("image/height", "image/width"),
)


def _size_warnings(rec: Record, name: str, size: tuple[int, int]) -> list[str]:
    width, height = size
    out = []
    for hkey, wkey in _SIZE_KEYS:
        prefix = name.rsplit("/", 1)[0] + "/" if "/" in name and "/" in hkey else ""
        if prefix and not hkey.startswith(prefix):
            continue
        h, w = rec.features.get(hkey), rec.features.get(wkey)
        if h is not None and h.type == INT64 and h.values and h.values[0] != height:
            out.append(f"feature {hkey!r} says {h.values[0]} but the new image is {height} high")
        if w is not None and w.type == INT64 and w.values and w.values[0] != width:
            out.append(f"feature {wkey!r} says {w.values[0]} but the new image is {width} wide")
    return out


def schema_warnings(
    edited: EditedDataset,
    change: Change,
    known_types: Mapping[str, str] | None,
    known_list_types: Mapping[str, str] | None = None,
) -> list[str]:
    """The type warnings (:func:`~browser_app.edits.values.type_warnings`) that ``change``
    brings to its feature, against the dataset's known types (none when they are not known,
    and none for adding or deleting a whole record)."""
    if known_types is None or change.op in (DELETE_RECORD, ADD_RECORD):
        return []
    try:
        rec = edited.effective_record(change.target)
        if rec is None:
            return []
        rec = apply_change(rec, change)
    except (AppError, CodecError):
        return []
    mine = type_warnings(rec, known_types, known_list_types)
    if change.section == RECORD or change.name is None:
        return mine
    quoted = repr(change.name)
    return [w for w in mine if quoted in w]


# --------------------------------------------------------------------------------------------
# Features (an Example's, or a SequenceExample's context)


def set_feature(edited: EditedDataset, record: RecordRef, name: str, feature: FeatureInput) -> Edit:
    """Replace (or add) a feature with a checked :class:`Feature` or a ``(type, values)``
    pair. The type of an existing feature cannot change here: use :func:`convert_feature`."""
    rec = _editable(edited, record)
    feat = _as_feature(feature, name)
    old = rec.features.get(name)
    if old is not None and old.type not in (feat.type, NONE) and feat.values:
        raise EditError(
            f"feature {name!r} is {old.type}; change its type with convert_feature"
            f" (which checks every value) before giving it {feat.type} values"
        )
    return Edit(record, SET_FEATURE, FEATURES, name, old, feat)


def set_values(edited: EditedDataset, record: RecordRef, name: str, text: str) -> Edit:
    """Replace a feature's values with a list typed as text (:func:`parse_values`); the
    notes about inexact floats become the change's warnings."""
    rec = _editable(edited, record)
    old = _feature(rec, record, name, "; add it first")
    if old.type == NONE:
        raise EditError(f"feature {name!r} has no type; give it one with convert_feature")
    values, notes = _values(old.type, text)
    new = values_feature(old.type, values, name)
    return Edit(record, SET_FEATURE, FEATURES, name, old, new, notes=notes)


def set_value(edited: EditedDataset, record: RecordRef, name: str, index: int, text: str) -> Edit:
    """Set value ``index`` of a feature from text (:func:`check_value`); ``index`` equal to
    the number of values appends one. The note about an inexact float becomes a warning."""
    rec = _editable(edited, record)
    old = _feature(rec, record, name, "; add it first")
    _check_index(old, index, name)
    parsed = check_value(old.type, text)
    new = values_feature(old.type, _with_value(old, index, parsed.value), name)
    notes = (parsed.note,) if parsed.note else ()
    return Edit(record, SET_VALUE, FEATURES, name, old, new, {"index": index}, notes)


def add_feature(
    edited: EditedDataset,
    record: RecordRef,
    name: str,
    type: str,
    values: Sequence[Value] | str = (),
) -> Edit:
    """Add a feature of ``type`` (``int64``, ``float``, ``bytes``) with values given as a
    list or as text (:func:`parse_values`). Refuses a name the record already has."""
    rec = _editable(edited, record)
    _check_name(name)
    _check_type(type)
    if name in rec.features:
        raise EditError(f"record {record} already has a feature named {name!r}")
    vals, notes = _values(type, values)
    feat = values_feature(type, vals, name)
    return Edit(record, ADD_FEATURE, FEATURES, name, None, feat, notes=notes)


def delete_feature(edited: EditedDataset, record: RecordRef, name: str) -> Edit:
    """Remove a feature (an Example's, or a SequenceExample's context feature)."""
    old = _feature(_editable(edited, record), record, name)
    return Edit(record, DELETE_FEATURE, FEATURES, name, old, None)


def convert_feature(edited: EditedDataset, record: RecordRef, name: str, new_type: str) -> Edit:
    """Change a feature's type, checking every value (:func:`convert_values`); raises
    :class:`ConversionError` when any value would be lost or changed."""
    old = _feature(_editable(edited, record), record, name)
    if new_type not in FEATURE_TYPES:
        raise EditError(f"unknown feature type {new_type!r}")
    if new_type == old.type:
        raise EditError(f"feature {name!r} already is {new_type}")
    values = convert_values(old.values, old.type, new_type, name=name)
    new = values_feature(new_type, values, name)
    detail = {"from": old.type, "to": new_type}
    return Edit(record, CONVERT_FEATURE, FEATURES, name, old, new, detail)


def replace_image(
    edited: EditedDataset, record: RecordRef, name: str, index: int, data: bytes
) -> Edit:
    """Replace value ``index`` of a bytes feature with new image bytes, after checking that
    they decode as an image (:mod:`codec.images`). The warnings name height/width features
    that no longer match the new image."""
    rec = _editable(edited, record)
    old = _feature(rec, record, name)
    if old.type != BYTES:
        raise EditError(f"feature {name!r} is {old.type}; images live in bytes features")
    _check_index(old, index, name)
    width, height = _check_image(bytes(data))
    new = Feature(BYTES, _with_value(old, index, bytes(data)))
    detail = {"index": index, "width": width, "height": height}
    notes = tuple(_size_warnings(rec, name, (width, height)))
    return Edit(record, REPLACE_IMAGE, FEATURES, name, old, new, detail, notes)


# --------------------------------------------------------------------------------------------
# SequenceExample feature lists


def _list_type(steps: list[Feature]) -> str | None:
    types = [s.type for s in steps if s.type != NONE]
    return types[0] if types else None


def set_feature_list(
    edited: EditedDataset, record: RecordRef, name: str, steps: Sequence[FeatureInput]
) -> Edit:
    """Replace (or add) a feature list with checked step Features."""
    rec = _sequence(edited, record)
    new = [_as_feature(s, f"{name}[{i}]") for i, s in enumerate(steps)]
    old = rec.feature_lists.get(name)
    op = SET_FEATURE_LIST if old is not None else ADD_FEATURE_LIST
    return Edit(record, op, FEATURE_LISTS, name, old, new)


def add_feature_list(
    edited: EditedDataset,
    record: RecordRef,
    name: str,
    type: str,
    steps: Sequence[Sequence[Value]] = (),
) -> Edit:
    """Add a feature list of ``type`` with the given values per step."""
    rec = _sequence(edited, record)
    _check_name(name)
    _check_type(type)
    if name in rec.feature_lists:
        raise EditError(f"record {record} already has a feature list named {name!r}")
    new = [values_feature(type, list(s), f"{name}[{i}]") for i, s in enumerate(steps)]
    return Edit(record, ADD_FEATURE_LIST, FEATURE_LISTS, name, None, new)


def delete_feature_list(edited: EditedDataset, record: RecordRef, name: str) -> Edit:
    """Remove a feature list."""
    old = _feature_list(_sequence(edited, record), record, name)
    return Edit(record, DELETE_FEATURE_LIST, FEATURE_LISTS, name, old, None)


def set_step(edited: EditedDataset, record: RecordRef, name: str, step: int, text: str) -> Edit:
    """Replace the values of one step of a feature list with values typed as text
    (:func:`parse_values`), of the step's type."""
    old = _feature_list(_sequence(edited, record), record, name)
    at = _step(old, name, step)
    type_ = at.type if at.type != NONE else _list_type(old)
    if type_ is None:
        raise EditError(f"feature list {name!r} has no type to parse values with")
    values, notes = parse_values(type_, text)
    new = list(old)
    new[step] = values_feature(type_, values, f"{name}[{step}]")
    return Edit(record, SET_STEP, FEATURE_LISTS, name, old, new, {"step": step}, tuple(notes))


def set_step_value(
    edited: EditedDataset, record: RecordRef, name: str, step: int, index: int, text: str
) -> Edit:
    """Set value ``index`` of step ``step`` of a feature list from text."""
    old = _feature_list(_sequence(edited, record), record, name)
    at = _step(old, name, step)
    where = f"{name}[{step}]"
    _check_index(at, index, where)
    parsed = check_value(at.type, text)
    new = list(old)
    new[step] = values_feature(at.type, _with_value(at, index, parsed.value), where)
    detail = {"step": step, "index": index}
    notes = (parsed.note,) if parsed.note else ()
    return Edit(record, SET_STEP, FEATURE_LISTS, name, old, new, detail, notes)


# --------------------------------------------------------------------------------------------
# A cell of the record editor's table


def set_cell(
    edited: EditedDataset, record: RecordRef, name: str, text: str, step: int | None = None
) -> Edit:
    """The values of feature ``name`` (with ``step``: of step ``step`` of feature list
    ``name``) from the text of its cell in the record editor's table
    (:mod:`~browser_app.edits.cells`), by the feature's type: a bytes feature's text is one
    value or a JSON list of them, placeholders keeping the values they stand for
    (:func:`~browser_app.edits.cells.parse_bytes_cell`); a number feature's is a list
    (:func:`set_values`, :func:`set_step`). A step without a type takes its list's."""
    rec = edited.effective_record(record)
    if rec is None:
        raise EditError(f"record {record} is deleted")
    if step is None:
        old = rec.features.get(name)
        if old is None:
            raise EditError(f"record {record} has no feature {name!r}")
        if old.type == BYTES:
            return set_feature(edited, record, name, (BYTES, parse_bytes_cell(text, old)))
        return set_values(edited, record, name, text)
    steps = rec.feature_lists.get(name)
    if steps is None or not 0 <= step < len(steps):
        raise EditError(f"record {record} has no step {step} of {name!r}")
    at = steps[step]
    if (at.type if at.type != NONE else _list_type(steps)) == BYTES:
        new = list(steps)
        new[step] = Feature(BYTES, parse_bytes_cell(text, at))
        return set_feature_list(edited, record, name, new)
    return set_step(edited, record, name, step, text)


def add_cell(edited: EditedDataset, record: RecordRef, name: str, type: str, text: str) -> Edit:
    """Add feature ``name`` of ``type`` with its values given as the text of a cell
    (:mod:`~browser_app.edits.cells`): a bytes feature's text is one value or a JSON list of
    them (an empty text, none); a number feature's is a list (:func:`add_feature`)."""
    if type == BYTES:
        values = parse_bytes_cell(text, None) if text else []
        return add_feature(edited, record, name, BYTES, values)
    return add_feature(edited, record, name, type, text)


# --------------------------------------------------------------------------------------------
# Whole records


def delete_record(edited: EditedDataset, record: RecordRef) -> Edit:
    """Leave a record out of the edited dataset (a damaged source record can be deleted
    too)."""
    edited.check_ref(record)
    return Edit(record, DELETE_RECORD, RECORD, None)


def add_record(
    edited: EditedDataset,
    after: RecordRef,
    record: Record | None = None,
    *,
    copy_of: RecordRef | None = None,
) -> Edit:
    """A new record after record ``after``: ``record`` when given, else a copy of
    ``copy_of`` (default: ``after``) as it is now, edits included. The copy of an untouched
    record keeps its exact bytes."""
    edited.check_ref(after, allow_deleted=True)
    source: RecordRef = after if copy_of is None else copy_of
    if record is None:
        edited.check_ref(source)
        payload = edited.effective_payload(source)
        new_rec = edited.effective_record(source)
        assert payload is not None and new_rec is not None  # check_ref refused deleted ones
    else:
        try:
            payload = ex.encode(record)
        except EncodeError as exc:
            raise EditError(f"the new record: {exc}") from exc
        new_rec = record
    detail = {
        "after": after,
        "source": None if record is not None else source,
        "duplicate": record is None and copy_of is None,
        "kind": new_rec.kind,
    }
    return Edit(None, ADD_RECORD, RECORD, None, None, new_rec, detail, payload=payload)
