"""The edit journal: pending changes to a dataset, kept on disk as they are made.

A :class:`Journal` sits beside an opened dataset and never writes to it. Every edit is checked
(:mod:`~browser_app.edits.commands`), appended to a JSON Lines file in the cache folder and
synced (:mod:`~browser_app.edits.journal_file`), then applied to the state in memory
(:mod:`~browser_app.edits.changeset`) that the edited dataset reads
(:mod:`~browser_app.edits.edited`); a refresh, a second tab or a restart loses nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Concatenate, ParamSpec

from browser_app.edits import commands as cmd
from browser_app.edits.changeset import ChangeSet
from browser_app.edits.commands import Edit, FeatureInput
from browser_app.edits.edited import DatasetSource, EditedDataset, as_dataset
from browser_app.edits.journal_file import (
    FSYNC_MODES,
    ChangeLine,
    FsyncMode,
    JournalFile,
    Line,
    MarkLine,
    UndoLine,
    journal_path,
    source_identity,
)
from browser_app.edits.model import Change, EditedSlot, FeatureDiff, Mark, RecordRef, mark_status
from browser_app.edits.values import Value
from browser_app.errors import EditError
from codec.example import Record
from codec.identity import FileIdentity

__all__ = ["Journal"]

_P = ParamSpec("_P")


class Journal:
    """Pending edits to a dataset, saved as they are made and replayed when opened.

    >>> j = Journal(codec.TFRecordDataset("train.tfrecord"))      # doctest: +SKIP
    >>> j.set_value(3, "label", 0, "7")                            # doctest: +SKIP
    >>> j.effective_record(3).features["label"].values             # doctest: +SKIP
    [7]

    ``path`` defaults to the source's journal in the cache folder (:func:`journal_path`);
    it is created on the first change or mark. ``fsync="change"`` syncs every change to disk
    as it is written; ``"batch"`` only at the end of ``with journal.batch():`` blocks (and
    on :meth:`flush`). ``known_types`` (``{feature: type}``, e.g. from the schema) turns on
    type warnings for each change. Raises :class:`JournalMismatchError` when the journal was
    made for another version of the source files.

    Edits are checked first (:mod:`browser_app.edits.commands` says how): a rejected edit
    raises :class:`EditError` and nothing is recorded.
    """

    def __init__(
        self,
        source: DatasetSource,
        *,
        path: str | os.PathLike[str] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        fsync: FsyncMode = "change",
        known_types: Mapping[str, str] | None = None,
        known_list_types: Mapping[str, str] | None = None,
    ) -> None:
        if fsync not in FSYNC_MODES:
            raise ValueError("fsync must be 'change' or 'batch'")
        self.source, self._owns_source = as_dataset(source)
        self.paths: list[str] = list(self.source.paths)
        self.path = Path(path) if path is not None else journal_path(self.paths, cache_dir)
        self.known_types = dict(known_types) if known_types is not None else None
        self.known_list_types = dict(known_list_types) if known_list_types is not None else None
        self._changes = ChangeSet()
        self._edited = EditedDataset(self.source, self._changes)
        self._file = JournalFile(
            self.path,
            self.paths,
            fsync=fsync,
            on_line=self._changes.apply,
            on_restart=self._changes.reset,
            digests=lambda k: self.source.files[k].index_digest(),
            anon=self._anon(),
        )
        self._lock = self._file.lock
        try:
            self._file.open_existing()
        except BaseException:
            self._file.close()
            if self._owns_source:
                self.source.close()
            raise

    @property
    def fsync(self) -> FsyncMode:
        """When the journal syncs to disk: after each ``"change"``, or per ``"batch"``."""
        return self._file.fsync

    def identity(self) -> list[FileIdentity]:
        """The identity of the source files now."""
        return source_identity(self.paths, anon=self._anon())

    def _anon(self) -> bool:
        """Whether the source's remote objects are read anonymously (and so asked about)."""
        return any(f.anon for f in self.source.files)

    @property
    def damaged(self) -> str | None:
        """Why a line of the journal file cannot be read, once one was met (the journal
        cannot be used until it is set aside), else None."""
        return self._file.damaged

    @property
    def torn(self) -> Path | None:
        """Where a last line cut short by a crash was put (the change it held could not be
        read), or None when the journal has had no such line."""
        return self._file.torn

    # -- the file --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        with self._lock, self._file.writing():
            yield

    def _write(self, line: Line) -> None:
        """Save a line, then apply it, exactly as a line read back from the file is."""
        self._file.append(line)
        self._changes.apply(line)

    @contextlib.contextmanager
    def batch(self) -> Iterator[Journal]:
        """Group changes: the journal is synced once at the end instead of per change."""
        with self._lock, self._file.batch():
            yield self

    def flush(self) -> None:
        """Sync every change written so far to disk."""
        with self._lock:
            self._file.flush()

    def refresh(self) -> None:
        """Pick up changes another tab or process appended to the same journal."""
        with self._lock:
            self._file.catch_up()

    def close(self) -> None:
        """Sync and close the journal (and the source, when the journal opened it)."""
        with self._lock:
            self._file.close()
            if self._owns_source:
                self.source.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def discard(self) -> Path | None:
        """Move this journal's file aside and start empty; returns where it went."""
        with self._lock:
            return self._file.discard()

    # -- undo ------------------------------------------------------------------------------

    def undo(self, change_id: int) -> list[int]:
        """Revert a change and the later ones that build on it; returns their ids."""
        with self._writing():
            ids = self._changes.undo_ids(change_id)
            self._write(UndoLine(tuple(ids), time.time()))
            return ids

    def undo_all(self) -> list[int]:
        """Revert every pending change (review marks stay). Returns the ids reverted."""
        with self._writing():
            ids = self._changes.pending_ids()
            if ids:
                self._write(UndoLine(tuple(ids), time.time()))
            return ids

    def redo(self, change_id: int) -> None:
        """Re-apply an undone change (for an "undo the undo" button)."""
        with self._writing():
            if not self._changes.is_undone(change_id):
                raise EditError(f"change {change_id} was not undone")
            self._write(UndoLine((change_id,), time.time(), redo=True))

    # -- reading ---------------------------------------------------------------------------

    def changes(self, include_undone: bool = False) -> list[Change]:
        """Pending changes, oldest first (with ``include_undone``, the whole history)."""
        with self._file.fresh:
            return self._changes.history(include_undone)

    def changes_for(self, record: RecordRef) -> list[Change]:
        """Pending changes to one record, oldest first."""
        with self._file.fresh:
            return self._changes.active(record)

    def is_undone(self, change_id: int) -> bool:
        return self._changes.is_undone(change_id)

    @property
    def pending(self) -> int:
        """How many changes are pending."""
        with self._file.fresh:
            return self._changes.pending

    def is_touched(self, record: RecordRef) -> bool:
        """Whether a record has pending changes (a new record always counts as touched)."""
        return self._changes.is_touched(record)

    def edited_records(self) -> list[RecordRef]:
        """Every record with pending changes (source indices first, then new ids)."""
        with self._file.fresh:
            return self._changes.touched()

    def is_deleted(self, record: RecordRef) -> bool:
        return self._changes.is_deleted(record)

    def added_records(self) -> list[str]:
        """Ids of the records added and not undone, in creation order."""
        with self._file.fresh:
            return self._changes.added()

    def deleted_records(self) -> list[RecordRef]:
        """Records deleted by pending changes (source indices first, then new ids)."""
        with self._file.fresh:
            return self._changes.deleted()

    def ref(self, path: str | os.PathLike[str], local: int) -> int:
        """The global index of record ``local`` of the source file ``path``."""
        return self._edited.ref(path, local)

    def locate(self, record: RecordRef) -> tuple[str, int] | None:
        """``(file path, local index)`` of a source record; ``None`` for a new record."""
        return self._edited.locate(record)

    def source_payload(self, record: RecordRef) -> bytes:
        """The payload before any change: the source's (CRC checked), or as created."""
        return self._edited.source_payload(record)

    def source_record(self, record: RecordRef) -> Record:
        """The record before any change (see :meth:`source_payload`)."""
        return self._edited.source_record(record)

    def effective_record(self, record: RecordRef) -> Record | None:
        """The record with every pending change applied; ``None`` when it is deleted."""
        with self._file.fresh:
            return self._edited.effective_record(record)

    def effective_payload(self, record: RecordRef) -> bytes | None:
        """The serialized effective record (the source bytes when untouched)."""
        with self._file.fresh:
            return self._edited.effective_payload(record)

    def diff(self, record: RecordRef) -> list[FeatureDiff]:
        """What differs between a record's source and its effective state."""
        with self._file.fresh:
            return self._edited.diff(record)

    def order(self, total: int | None = None) -> Iterator[RecordRef]:
        """The records of the edited dataset in order (``total``: of the source)."""
        self.refresh()
        return self._edited.order(total)

    def count(self, total: int | None = None) -> int:
        """How many records the edited dataset has."""
        self.refresh()
        return self._edited.count(total)

    def page(self, start: int, stop: int) -> list[EditedSlot]:
        """A page of the edited dataset: edited slots, new records in place."""
        with self._file.fresh:
            return self._edited.page(start, stop)

    def new_children(self, anchor: RecordRef) -> list[str]:
        """New records placed after ``anchor`` (and after those, recursively), in order."""
        with self._file.fresh:
            return self._edited.new_children(anchor)

    def inserted_after(self, new_id: str) -> RecordRef:
        """The record a new record was inserted after (itself possibly a new record)."""
        return self._edited.inserted_after(new_id)

    def label(self, ref: RecordRef) -> str:
        """How a person calls a record: ``Record 12`` or ``New record n1 (after record 12)``."""
        return self._edited.label(ref)

    def anchor(self, ref: RecordRef) -> int | None:
        """The source record that ``ref`` stands at (a new record: its chain's anchor)."""
        return self._edited.anchor(ref)

    # -- review marks ----------------------------------------------------------------------

    def set_mark(self, record: RecordRef, status: str | None, comment: str = "") -> Mark | None:
        """Mark a record ``"passed"`` or ``"flagged"`` with a comment; ``status=None`` clears
        the mark. Marks are not changes: undo leaves them alone."""
        checked = mark_status(status)
        self._edited.check_ref(record, allow_deleted=True)
        with self._writing():
            self._write(MarkLine(record, checked, comment, time.time()))
            return self._changes.mark(record) if checked is not None else None

    def marks(self) -> dict[RecordRef, Mark]:
        """Every review mark, by record."""
        with self._file.fresh:
            return self._changes.marks()

    # -- edits -----------------------------------------------------------------------------

    def _record(self, edit: Edit) -> Change:
        """Give a checked edit its id, name (a new record) and time; save it and apply it."""
        with self._writing():
            target = edit.target if edit.target is not None else self._changes.new_record_id()
            ch = edit.change(self._changes.next_id, target, time.time())
            known = (self.known_types, self.known_list_types)
            warnings = (*cmd.schema_warnings(self._edited, ch, *known), *edit.notes)
            if warnings:
                ch = dataclasses.replace(ch, warnings=warnings)
            self._write(ChangeLine(ch, edit.payload))
            return ch

    def _edit(
        self,
        command: Callable[Concatenate[EditedDataset, _P], Edit],
        *args: _P.args,
        **kwargs: _P.kwargs,
    ) -> Change:
        with self._file.fresh:
            return self._record(command(self._edited, *args, **kwargs))

    def set_feature(self, record: RecordRef, name: str, feature: FeatureInput) -> Change:
        """Replace (or add) a context/Example feature; its type cannot change here."""
        return self._edit(cmd.set_feature, record, name, feature)

    def set_values(self, record: RecordRef, name: str, text: str) -> Change:
        """Replace a feature's values with a list typed as text."""
        return self._edit(cmd.set_values, record, name, text)

    def set_value(self, record: RecordRef, name: str, index: int, text: str) -> Change:
        """Set (or, at the end, append) value ``index`` of a feature from text."""
        return self._edit(cmd.set_value, record, name, index, text)

    def add_feature(
        self, record: RecordRef, name: str, type: str, values: Sequence[Value] | str = ()
    ) -> Change:
        """Add a feature of ``type`` with values given as a list or as text."""
        return self._edit(cmd.add_feature, record, name, type, values)

    def delete_feature(self, record: RecordRef, name: str) -> Change:
        """Remove a feature (an Example's, or a SequenceExample's context feature)."""
        return self._edit(cmd.delete_feature, record, name)

    def convert_feature(self, record: RecordRef, name: str, new_type: str) -> Change:
        """Change a feature's type, checking that every value converts exactly."""
        return self._edit(cmd.convert_feature, record, name, new_type)

    def replace_image(self, record: RecordRef, name: str, index: int, data: bytes) -> Change:
        """Replace value ``index`` of a bytes feature with image bytes that decode."""
        return self._edit(cmd.replace_image, record, name, index, data)

    def set_feature_list(
        self, record: RecordRef, name: str, steps: Sequence[FeatureInput]
    ) -> Change:
        """Replace (or add) a feature list with checked step Features."""
        return self._edit(cmd.set_feature_list, record, name, steps)

    def add_feature_list(
        self, record: RecordRef, name: str, type: str, steps: Sequence[Sequence[Value]] = ()
    ) -> Change:
        """Add a feature list of ``type`` with the given values per step."""
        return self._edit(cmd.add_feature_list, record, name, type, steps)

    def delete_feature_list(self, record: RecordRef, name: str) -> Change:
        """Remove a feature list."""
        return self._edit(cmd.delete_feature_list, record, name)

    def set_step(self, record: RecordRef, name: str, step: int, text: str) -> Change:
        """Replace the values of one step of a feature list with values typed as text."""
        return self._edit(cmd.set_step, record, name, step, text)

    def set_step_value(
        self, record: RecordRef, name: str, step: int, index: int, text: str
    ) -> Change:
        """Set value ``index`` of step ``step`` of a feature list from text."""
        return self._edit(cmd.set_step_value, record, name, step, index, text)

    def set_cell(
        self, record: RecordRef, name: str, text: str, *, step: int | None = None
    ) -> Change:
        """Set feature ``name``'s values (with ``step``: those of step ``step`` of feature list
        ``name``) from the text of its cell in the record editor's table, read by the
        feature's type (:func:`~browser_app.edits.commands.set_cell`). A value that does not
        fit raises :class:`~browser_app.errors.ValueParseError` and nothing is recorded."""
        return self._edit(cmd.set_cell, record, name, text, step)

    def add_cell(self, record: RecordRef, name: str, type: str, text: str) -> Change:
        """Add feature ``name`` of ``type`` with its values given as the text of a cell, read
        as :meth:`set_cell` reads it (:func:`~browser_app.edits.commands.add_cell`)."""
        return self._edit(cmd.add_cell, record, name, type, text)

    def delete_record(self, record: RecordRef) -> Change:
        """Leave a record out of the edited dataset (a damaged one can be deleted too)."""
        return self._edit(cmd.delete_record, record)

    def add_record(
        self, after: RecordRef, record: Record | None = None, *, copy_of: RecordRef | None = None
    ) -> str:
        """Insert ``record`` (or a copy of ``copy_of``, default ``after``) after ``after``."""
        return str(self._edit(cmd.add_record, after, record, copy_of=copy_of).target)

    def duplicate_record(self, record: RecordRef) -> str:
        """Insert a copy of a record right after it; returns the new record's id."""
        return self.add_record(record)
