"""The edit model's small values: record references, edit statuses and edited slots."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import codec

__all__ = ["ADDED", "DELETED", "EDITED", "EditStatus", "EditedSlot", "RecordRef"]

RecordRef = int | str
"""A record: the global index of a source record (``int``) or the id of an added one (``str``,
``"n1"``, ``"n2"``...)."""

EditStatus = Literal["", "edited", "deleted", "added"]
EDITED: EditStatus = "edited"
DELETED: EditStatus = "deleted"
ADDED: EditStatus = "added"


@dataclass(frozen=True)
class EditedSlot:
    """One place on a page of the edited dataset.

    ``slot`` is the source's slot with the record's effective payload (for an added record:
    a slot at its anchor's number with no offset and the new payload); ``edit`` says how the
    pending edits touch it (``""`` untouched, ``edited``, ``deleted``, ``added``); ``ref`` is
    the record (``None`` for a skipped region) and ``changes`` the number of pending changes
    on it."""

    slot: codec.Slot
    edit: EditStatus = ""
    ref: RecordRef | None = None
    changes: int = 0
