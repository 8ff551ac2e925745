"""The pending edits and review marks in memory, fed by the journal's lines.

Every change ever made is kept by id; undoing one only marks it undone, so it can be redone.
Per record, the ids of its active changes are kept in order (applying them to the source
record gives the edited record). Added records are kept with the payload they were created
with, deleted records as a set, review marks by record.
"""

from __future__ import annotations

from browser_app.edits.journal_file import ChangeLine, Line, UndoLine
from browser_app.edits.model import (
    ADD_RECORD,
    DELETE_RECORD,
    RECORD,
    Change,
    Mark,
    RecordRef,
    new_id_number,
    sort_new_ids,
    sort_refs,
)
from browser_app.errors import EditError

__all__ = ["ChangeSet"]


class ChangeSet:
    """Changes by id, the undone ones, active changes per record, added and deleted records,
    and review marks. Apply journal lines with :meth:`apply`; read with the other methods.
    Not thread-safe: the journal holds a lock around every call."""

    def __init__(self) -> None:
        self._tick = 0  # never reset, so a stamp is never given twice (see stamp())
        self.reset()

    def reset(self) -> None:
        """Forget everything (the journal file was discarded or started again)."""
        self._changes: dict[int, Change] = {}  # every change ever made, by id
        self._undone: set[int] = set()
        self._by_target: dict[RecordRef, list[int]] = {}  # active change ids per record
        self._added: dict[str, Change] = {}  # add_record changes, active or not, by new id
        self._payloads: dict[str, bytes] = {}  # payload of each new record at creation
        self._deleted: set[RecordRef] = set()
        self._marks: dict[RecordRef, Mark] = {}
        self._stamps: dict[RecordRef, int] = {}
        self._next_id = 1
        self._next_new = 1

    # -- feeding ---------------------------------------------------------------------------

    def apply(self, line: Line) -> None:
        """Take one journal line into the state (whoever wrote it)."""
        if isinstance(line, ChangeLine):
            if line.payload is not None:
                self._payloads[str(line.change.target)] = line.payload
            self._register(line.change)
        elif isinstance(line, UndoLine):
            for cid in line.ids:
                if line.redo:
                    self._redo_one(cid)
                else:
                    self._undo_one(cid)
        elif line.status is None:  # a MarkLine that clears the mark
            self._marks.pop(line.target, None)
        else:
            self._marks[line.target] = Mark(line.target, line.status, line.comment, line.timestamp)

    def _register(self, ch: Change) -> None:
        self._changes[ch.id] = ch
        self._next_id = max(self._next_id, ch.id + 1)
        self._activate(ch)

    def _touch(self, ref: RecordRef) -> None:
        self._tick += 1
        self._stamps[ref] = self._tick

    def _activate(self, ch: Change) -> None:
        ids = self._by_target.setdefault(ch.target, [])
        ids.append(ch.id)
        ids.sort()
        if ch.op == ADD_RECORD:
            new_id = str(ch.target)
            self._added[new_id] = ch
            n = new_id_number(new_id)
            if n is not None:
                self._next_new = max(self._next_new, n + 1)
        if ch.op == DELETE_RECORD:
            self._deleted.add(ch.target)
        self._touch(ch.target)

    def _undo_one(self, cid: int) -> None:
        ch = self._changes.get(cid)
        if ch is None or cid in self._undone:
            return
        self._undone.add(cid)
        ids = self._by_target.get(ch.target, [])
        if cid in ids:
            ids.remove(cid)
        if not ids:
            self._by_target.pop(ch.target, None)
        if ch.op == DELETE_RECORD:
            self._deleted.discard(ch.target)
        self._touch(ch.target)

    def _redo_one(self, cid: int) -> None:
        ch = self._changes.get(cid)
        if ch is None or cid not in self._undone:
            return
        self._undone.discard(cid)
        self._activate(ch)

    # -- what the next change is called ----------------------------------------------------

    @property
    def next_id(self) -> int:
        """The id the next change gets."""
        return self._next_id

    def new_record_id(self) -> str:
        """The id the next added record gets (``n1``, ``n2``...)."""
        return f"n{self._next_new}"

    # -- undo ------------------------------------------------------------------------------

    def undo_ids(self, change_id: int) -> list[int]:
        """A pending change and every later active change on the same record that builds on
        it (on the same feature; every later one when either touches the whole record),
        oldest first. :class:`EditError` when the change is not pending."""
        ch = self._changes.get(change_id)
        if ch is None or change_id in self._undone:
            raise EditError(f"change {change_id} is not pending")
        ids = {change_id}
        for cid in self._by_target.get(ch.target, []):
            later = self._changes[cid]
            if cid > ch.id and (
                RECORD in (ch.section, later.section)
                or (later.section, later.name) == (ch.section, ch.name)
            ):
                ids.add(cid)
        return sorted(ids)

    def pending_ids(self) -> list[int]:
        """The ids of every pending change, oldest first."""
        return sorted(c for c in self._changes if c not in self._undone)

    def is_undone(self, change_id: int) -> bool:
        return change_id in self._undone

    # -- changes ---------------------------------------------------------------------------

    def history(self, include_undone: bool = False) -> list[Change]:
        """Pending changes, oldest first (with ``include_undone``, the whole history)."""
        return [
            c
            for cid, c in sorted(self._changes.items())
            if include_undone or cid not in self._undone
        ]

    def active(self, ref: RecordRef) -> list[Change]:
        """Pending changes to one record, oldest first."""
        return [self._changes[cid] for cid in self._by_target.get(ref, [])]

    @property
    def pending(self) -> int:
        """How many changes are pending."""
        return len(self._changes) - len(self._undone)

    def is_touched(self, ref: RecordRef) -> bool:
        """Whether a record has pending changes (a new record always counts as touched)."""
        return bool(self._by_target.get(ref))

    def only_created(self, ref: RecordRef) -> bool:
        """Whether ``ref`` is a new record whose only pending change is its creation."""
        ch = self._added.get(ref) if isinstance(ref, str) else None
        return ch is not None and self._by_target.get(ref) == [ch.id]

    def touched(self) -> list[RecordRef]:
        """Every record with pending changes (source indices first, then new ids)."""
        return sort_refs(self._by_target)

    def stamp(self, ref: RecordRef) -> int:
        """A number that changes whenever the pending changes of ``ref`` change (0 while it
        never had any since the state was last reset): a cache of edited records keyed by
        it never serves a stale record."""
        return self._stamps.get(ref, 0)

    # -- added and deleted records ---------------------------------------------------------

    def exists(self, ref: RecordRef) -> bool:
        """Whether a record exists: every source index does, a new record until undone."""
        if isinstance(ref, str):
            ch = self._added.get(ref)
            return ch is not None and ch.id not in self._undone
        return True

    def is_deleted(self, ref: RecordRef) -> bool:
        return ref in self._deleted

    def deleted(self) -> list[RecordRef]:
        """Records deleted by pending changes (source indices first, then new ids)."""
        return sort_refs(d for d in self._deleted if self.exists(d))

    def added(self) -> list[str]:
        """Ids of the records added and not undone, in creation order."""
        return [k for k in sort_new_ids(self._added) if self.exists(k)]

    def every_added(self) -> list[str]:
        """Ids of every record ever added, undone ones too, in creation order."""
        return sort_new_ids(self._added)

    def creation(self, new_id: str) -> Change | None:
        """The ``add_record`` change that made ``new_id`` (pending or undone)."""
        return self._added.get(new_id)

    def inserted_after(self, new_id: str) -> RecordRef | None:
        """The record a new record was inserted after; ``None`` for an unknown id."""
        ch = self._added.get(new_id)
        after = ch.detail.get("after") if ch is not None else None
        return after if isinstance(after, (int, str)) else None

    def creation_payload(self, new_id: str) -> bytes:
        """The payload a new record was created with."""
        return self._payloads[new_id]

    # -- review marks ----------------------------------------------------------------------

    def marks(self) -> dict[RecordRef, Mark]:
        """Every review mark, by record."""
        return dict(self._marks)

    def mark(self, ref: RecordRef) -> Mark | None:
        return self._marks.get(ref)
