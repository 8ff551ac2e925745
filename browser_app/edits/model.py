"""The edit model's small values: record references, the vocabularies of edits (operations,
sections, review marks, edit statuses), a change, a review mark, a feature's before/after and
an edited slot.

The vocabularies are plain strings because they are written into the journal file; the
``Literal`` types make a misspelt one a type error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, get_args

import codec
from browser_app.errors import EditError
from codec.example import Feature, Record

__all__ = [
    "ADDED",
    "ADD_FEATURE",
    "ADD_FEATURE_LIST",
    "ADD_RECORD",
    "CONVERT_FEATURE",
    "DELETED",
    "DELETE_FEATURE",
    "DELETE_FEATURE_LIST",
    "DELETE_RECORD",
    "EDITED",
    "FEATURES",
    "FEATURE_LISTS",
    "FLAGGED",
    "MARK_STATUSES",
    "OPS",
    "PASSED",
    "RECORD",
    "REPLACE_IMAGE",
    "SECTIONS",
    "SET_FEATURE",
    "SET_FEATURE_LIST",
    "SET_STEP",
    "SET_VALUE",
    "Change",
    "ChangeValue",
    "DetailValue",
    "EditStatus",
    "EditedSlot",
    "FeatureDiff",
    "Mark",
    "MarkStatus",
    "Op",
    "Part",
    "RecordRef",
    "Section",
    "mark_status",
    "new_id_number",
    "sort_new_ids",
    "sort_refs",
]

RecordRef = int | str
"""A record: the global index of a source record (``int``) or the id of an added one (``str``,
``"n1"``, ``"n2"``...)."""

# -- edit operations ------------------------------------------------------------------------

Op = Literal[
    "set_feature",
    "set_value",
    "add_feature",
    "delete_feature",
    "convert_feature",
    "replace_image",
    "set_feature_list",
    "set_step",
    "add_feature_list",
    "delete_feature_list",
    "delete_record",
    "add_record",
]
SET_FEATURE: Op = "set_feature"
SET_VALUE: Op = "set_value"
ADD_FEATURE: Op = "add_feature"
DELETE_FEATURE: Op = "delete_feature"
CONVERT_FEATURE: Op = "convert_feature"
REPLACE_IMAGE: Op = "replace_image"
SET_FEATURE_LIST: Op = "set_feature_list"
SET_STEP: Op = "set_step"
ADD_FEATURE_LIST: Op = "add_feature_list"
DELETE_FEATURE_LIST: Op = "delete_feature_list"
DELETE_RECORD: Op = "delete_record"
ADD_RECORD: Op = "add_record"
OPS: tuple[Op, ...] = get_args(Op)

# -- what a change touches ------------------------------------------------------------------

Section = Literal["features", "feature_lists", "record"]
FEATURES: Section = "features"  # an Example's features, a SequenceExample's context
FEATURE_LISTS: Section = "feature_lists"  # a SequenceExample's feature lists
RECORD: Section = "record"  # the whole record (added or deleted)
SECTIONS: tuple[Section, ...] = get_args(Section)

# -- review marks ---------------------------------------------------------------------------

MarkStatus = Literal["passed", "flagged"]
PASSED: MarkStatus = "passed"
FLAGGED: MarkStatus = "flagged"
MARK_STATUSES: tuple[MarkStatus, ...] = get_args(MarkStatus)


def mark_status(value: str | None) -> MarkStatus | None:
    """``value`` as a mark status (``None`` clears a mark); :class:`EditError` for another."""
    for status in MARK_STATUSES:
        if value == status:
            return status
    if value is not None:
        raise EditError(f"mark status must be one of {', '.join(MARK_STATUSES)} or None")
    return None


# -- how pending edits touch a record on a page ---------------------------------------------

EditStatus = Literal["", "edited", "deleted", "added"]
EDITED: EditStatus = "edited"
DELETED: EditStatus = "deleted"
ADDED: EditStatus = "added"

Part = Feature | list[Feature] | None
"""A feature (or a feature list's step Features) as it is before or after a change;
``None`` is absent."""

ChangeValue = Feature | list[Feature] | Record | None
"""What a change leaves: a :data:`Part`, or the new :class:`Record` of ``add_record``."""

DetailValue = int | str | bool | None
"""A value in a change's ``detail``: JSON scalars only, so the journal keeps them as they are."""


@dataclass(frozen=True)
class Change:
    """One pending change.

    ``target`` is the record; ``op`` one of :data:`OPS`; ``section`` is ``"features"`` (an
    Example's features, a SequenceExample's context), ``"feature_lists"`` or ``"record"``;
    ``name`` the feature (or feature list). ``before``/``after`` are the :class:`Feature` (or
    list of step Features) before and after; ``None`` means absent. For ``add_record``,
    ``after`` is the new :class:`Record`; for ``delete_record`` both are ``None`` (the record
    is the one the journal's ``effective_record`` gave before). ``detail`` holds op-specific
    facts (``after`` and ``source`` for a new record, ``index`` of a changed value,
    ``from``/``to`` types); ``warnings`` the schema warnings seen when it was made;
    ``timestamp`` is seconds since the epoch."""

    id: int
    target: RecordRef
    op: Op
    section: Section
    name: str | None
    before: Part
    after: ChangeValue
    timestamp: float
    detail: Mapping[str, DetailValue] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def describe(self) -> str:
        """A one-line summary for a list of changes."""
        rec = f"record {self.target}"
        if self.op == DELETE_RECORD:
            return f"{rec}: deleted"
        if self.op == ADD_RECORD:
            how = "duplicated from" if self.detail.get("duplicate") else "copied from"
            return f"{rec}: new record {how} record {self.detail.get('source')}"
        noun = "feature list" if self.section == FEATURE_LISTS else "feature"
        text = f"{rec}: {_VERBS.get(self.op, self.op)} {noun} {self.name!r}"
        if self.op == CONVERT_FEATURE:
            text += f" from {self.detail.get('from')} to {self.detail.get('to')}"
        return text


_VERBS: dict[Op, str] = {
    SET_FEATURE: "changed",
    SET_VALUE: "changed a value of",
    ADD_FEATURE: "added",
    DELETE_FEATURE: "deleted",
    CONVERT_FEATURE: "converted",
    REPLACE_IMAGE: "replaced an image in",
    SET_FEATURE_LIST: "changed",
    SET_STEP: "changed a step of",
    ADD_FEATURE_LIST: "added",
    DELETE_FEATURE_LIST: "deleted",
}


@dataclass(frozen=True)
class Mark:
    """A review mark on a record: ``status`` is ``"passed"`` or ``"flagged"``."""

    target: RecordRef
    status: MarkStatus
    comment: str
    timestamp: float


class FeatureDiff(NamedTuple):
    """One difference between a record's source and its edited state. ``before``/``after``
    are Features (or lists of step Features for a feature list); ``None`` is absent."""

    feature: str
    before: Part
    after: Part

    @property
    def section(self) -> Section:
        value = self.before if self.before is not None else self.after
        return FEATURE_LISTS if isinstance(value, list) else FEATURES


@dataclass(frozen=True)
class EditedSlot:
    """One place on a page of the edited dataset.

    ``slot`` is the source's slot with the record's effective payload (for an added record:
    a slot at its anchor's number with no offset and the new payload); ``edit`` says how the
    pending edits touch it (``""`` untouched, ``edited``, ``deleted``, ``added``); ``ref`` is
    the record (``None`` for a skipped region) and ``changes`` the number of pending changes
    on it (for an added record, its creation counts as one)."""

    slot: codec.Slot
    edit: EditStatus = ""
    ref: RecordRef | None = None
    changes: int = 0


_NEW_ID = re.compile(r"^n(\d+)$")


def new_id_number(ref: str) -> int | None:
    """The number in a new record's id (``"n12"`` gives 12), ``None`` for another text."""
    m = _NEW_ID.match(ref)
    return int(m.group(1)) if m else None


def _new_sort_key(ref: str) -> tuple[int, str]:
    n = new_id_number(ref)
    return (n, ref) if n is not None else (1 << 62, ref)


def sort_new_ids(ids: Iterable[str]) -> list[str]:
    """New records' ids in the order the records were made (``n2`` before ``n10``)."""
    return sorted(ids, key=_new_sort_key)


def sort_refs(refs: Iterable[RecordRef]) -> list[RecordRef]:
    """Source records by index first, then new records in the order they were made."""
    refs = list(refs)
    ints: list[RecordRef] = sorted(r for r in refs if isinstance(r, int))
    return [*ints, *sort_new_ids(r for r in refs if isinstance(r, str))]
