"""The edited dataset: a source dataset seen through its pending changes.

Source records keep their global numbers; a new record stands after the record it was
inserted after (itself possibly new), and deleted records drop out of the order. Records are
addressed by :data:`~browser_app.edits.model.RecordRef`. A page of the edited dataset is the
source's page (:meth:`codec.TFRecordDataset.page`) with every record's effective payload, the
deleted ones marked, and the new ones in place after their anchors.
"""

from __future__ import annotations

import dataclasses
import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence

import codec
from browser_app.edits.changeset import ChangeSet
from browser_app.edits.model import (
    ADDED,
    DELETED,
    EDITED,
    FEATURE_LISTS,
    FEATURES,
    Change,
    EditedSlot,
    FeatureDiff,
    RecordRef,
)
from browser_app.edits.values import feature_to_json
from browser_app.errors import AppError, EditError
from codec import example as ex
from codec.errors import CodecError, EncodeError
from codec.example import Feature, Record

__all__ = ["DatasetSource", "EditedDataset", "apply_change", "as_dataset"]

DatasetSource = (
    codec.TFRecordDataset
    | codec.TFRecordFile
    | str
    | os.PathLike[str]
    | Sequence[str | os.PathLike[str]]
)
"""What a journal can sit beside: a dataset, one open file, a path or a list of paths."""


def as_dataset(source: DatasetSource) -> tuple[codec.TFRecordDataset, bool]:
    """``(dataset, owned)`` for a dataset, a file, or paths (opened here, ``owned``)."""
    if isinstance(source, codec.TFRecordDataset):
        return source, False
    if isinstance(source, codec.TFRecordFile):
        return codec.TFRecordDataset(source), False  # the file stays the caller's
    if isinstance(source, (str, os.PathLike)):
        return codec.TFRecordDataset(source), True
    if isinstance(source, Sequence):
        paths = [s for s in source if isinstance(s, (str, os.PathLike))]
        if len(paths) == len(source):
            return codec.TFRecordDataset(paths), True
    raise TypeError(f"not a dataset, file or path: {type(source).__name__}")


def apply_change(rec: Record, ch: Change) -> Record:
    """``rec`` with one feature or feature list change applied (a whole-record change leaves
    it as it is: a new record's state is its payload, a deletion is the caller's)."""
    name = ch.name or ""
    if ch.section == FEATURES:
        features = dict(rec.features)
        if isinstance(ch.after, Feature):
            features[name] = ch.after
        else:
            features.pop(name, None)
        return Record(rec.kind, features, rec.feature_lists, rec.raw)
    if ch.section == FEATURE_LISTS:
        lists = dict(rec.feature_lists)
        if isinstance(ch.after, list):
            lists[name] = list(ch.after)
        else:
            lists.pop(name, None)
        return Record(rec.kind, rec.features, lists, rec.raw)
    return rec


def _same_feature(a: Feature | None, b: Feature | None) -> bool:
    if a is None or b is None:
        return a is b
    return feature_to_json(a) == feature_to_json(b)  # NaN-aware, exact


def _same_steps(a: list[Feature] | None, b: list[Feature] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(_same_feature(x, y) for x, y in zip(a, b))


def _union(a: Mapping[str, object], b: Mapping[str, object]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


_CACHE_SIZE = 128


class EditedDataset:
    """The records of ``source`` with the pending changes of ``changes`` applied.

    Reads only: the caller (the journal) keeps ``changes`` up to date and holds its lock.
    Effective records are kept in a small LRU cache, checked against the change set's stamp
    of the record so an edit, undo or redo is never served stale."""

    def __init__(
        self, source: codec.TFRecordDataset, changes: ChangeSet, cache_size: int = _CACHE_SIZE
    ) -> None:
        self.source = source
        self.paths: list[str] = list(source.paths)
        self._changes = changes
        self._cache_size = cache_size
        self._cache: OrderedDict[RecordRef, tuple[int, Record | None]] = OrderedDict()

    # -- numbering -------------------------------------------------------------------------

    def ref(self, path: str | os.PathLike[str], local: int) -> int:
        """The global index of record ``local`` of the source file ``path``."""
        real = os.path.realpath(os.fspath(path))
        for k, p in enumerate(self.paths):
            if os.path.realpath(p) == real:
                return int(self.source.global_index(k, local))
        raise EditError(f"{path}: not one of this dataset's files")

    def locate(self, ref: RecordRef) -> tuple[str, int] | None:
        """``(file path, local index)`` of a source record; ``None`` for a new record."""
        if isinstance(ref, str):
            return None
        k, j = self.source.locate(ref)
        return self.paths[k], j

    def check_ref(self, ref: RecordRef, allow_deleted: bool = False) -> None:
        """:class:`EditError` unless ``ref`` is a record of the edited dataset (or a deleted
        one, with ``allow_deleted``)."""
        if isinstance(ref, bool) or not isinstance(ref, (int, str)):
            raise EditError(f"{ref!r} is not a record index or a new record's id")
        if isinstance(ref, str):
            if not self._changes.exists(ref):
                raise EditError(f"record {ref!r} does not exist")
        else:
            if ref < 0:
                raise EditError(f"record {ref}: indices start at 0")
            try:
                self.source.locate(ref)
            except IndexError as exc:
                raise EditError(f"record {ref} is out of range") from exc
        if not allow_deleted and self._changes.is_deleted(ref):
            raise EditError(f"record {ref} is deleted; undo the deletion to edit it")

    # -- records ---------------------------------------------------------------------------

    def source_payload(self, ref: RecordRef) -> bytes:
        """The payload the record had before any change: from the source file for a source
        record (data CRC checked), as created for a new one."""
        if isinstance(ref, str):
            if not self._changes.exists(ref):
                raise EditError(f"record {ref!r} does not exist")
            return self._changes.creation_payload(ref)
        return bytes(self.source.read(ref))

    def source_record(self, ref: RecordRef) -> Record:
        """The record before any change (see :meth:`source_payload`)."""
        if isinstance(ref, str):
            made = self._changes.creation(ref)
            kind = made.detail.get("kind", "auto") if made is not None else "auto"
            return ex.decode(self.source_payload(ref), kind if isinstance(kind, str) else "auto")
        return ex.decode(self.source_payload(ref))

    def effective_record(self, ref: RecordRef) -> Record | None:
        """The record with every pending change applied; ``None`` when it is deleted.
        Raises :class:`codec.CorruptRecordError` for a damaged source record and
        ``IndexError`` for an index out of range."""
        stamp = self._changes.stamp(ref)
        hit = self._cache.get(ref)
        if hit is not None and hit[0] == stamp:
            self._cache.move_to_end(ref)
            return hit[1]
        if isinstance(ref, str) and not self._changes.exists(ref):
            raise EditError(f"record {ref!r} does not exist")
        rec: Record | None = None
        if not self._changes.is_deleted(ref):
            rec = self.source_record(ref)
            for ch in self._changes.active(ref):
                rec = apply_change(rec, ch)
        self._cache[ref] = (stamp, rec)
        self._cache.move_to_end(ref)
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return rec

    def effective_payload(self, ref: RecordRef) -> bytes | None:
        """The serialized effective record (the source bytes themselves when untouched);
        ``None`` when deleted."""
        if self._changes.is_deleted(ref):
            return None
        if not self._changes.is_touched(ref) or self._changes.only_created(ref):
            return self.source_payload(ref)
        rec = self.effective_record(ref)
        if rec is None:
            return None
        try:
            return ex.encode(rec)
        except EncodeError as exc:  # pragma: no cover - edits are checked when made
            raise EditError(f"record {ref}: {exc}") from exc

    def diff(self, ref: RecordRef) -> list[FeatureDiff]:
        """``(feature, before, after)`` for every feature and feature list that differs
        between the source record (for a new record: the record it was copied from, as
        copied) and the effective one; a deleted record lists every feature with ``after``
        ``None``."""
        before = self.source_record(ref)
        after = self.effective_record(ref)
        out: list[FeatureDiff] = []
        after_features = after.features if after is not None else {}
        after_lists = after.feature_lists if after is not None else {}
        for name in _union(before.features, after_features):
            b, a = before.features.get(name), after_features.get(name)
            if not _same_feature(b, a):
                out.append(FeatureDiff(name, b, a))
        for name in _union(before.feature_lists, after_lists):
            bl, al = before.feature_lists.get(name), after_lists.get(name)
            if not _same_steps(bl, al):
                out.append(FeatureDiff(name, bl, al))
        return out

    # -- order -----------------------------------------------------------------------------

    def _placed_after(self) -> dict[RecordRef | None, list[str]]:
        """Every new record by the record it was inserted after, in creation order. Undone
        new records stay in this tree (they are skipped when walking it), so records added
        after them keep their place."""
        children: dict[RecordRef | None, list[str]] = {}
        for new_id in self._changes.every_added():
            children.setdefault(self._changes.inserted_after(new_id), []).append(new_id)
        return children

    def _descendants(
        self, ref: RecordRef, children: Mapping[RecordRef | None, list[str]]
    ) -> Iterator[str]:
        """The new records placed after ``ref`` (and after those, recursively), in order,
        without the deleted and undone ones."""
        stack = list(reversed(children.get(ref, ())))
        while stack:
            r = stack.pop()
            if not self._changes.is_deleted(r) and self._changes.exists(r):
                yield r
            stack.extend(reversed(children.get(r, ())))

    def new_children(self, anchor: RecordRef) -> list[str]:
        """New records placed after ``anchor`` (and after those, recursively), in order."""
        return list(self._descendants(anchor, self._placed_after()))

    def order(self, total: int | None = None) -> Iterator[RecordRef]:
        """The records of the edited dataset in order: source records that are not deleted,
        each followed by the records added after it. ``total`` is the number of source
        records (default: ``len(source)``, which indexes every file)."""
        n = len(self.source) if total is None else total
        children = self._placed_after()
        deleted = set(self._changes.deleted())
        if not children and not deleted:  # the common case: nothing to interleave
            return iter(range(n))
        return self._interleaved(n, children, deleted)

    def _interleaved(
        self, n: int, children: Mapping[RecordRef | None, list[str]], deleted: set[RecordRef]
    ) -> Iterator[RecordRef]:
        for i in range(n):
            if i in children:
                if i not in deleted:
                    yield i
                yield from self._descendants(i, children)
            elif i not in deleted:
                yield i

    def count(self, total: int | None = None) -> int:
        """How many records the edited dataset has (``total`` as for :meth:`order`)."""
        n = len(self.source) if total is None else total
        return n - len(self._changes.deleted()) + len(self._changes.added())

    def inserted_after(self, new_id: str) -> RecordRef:
        """The record a new record was inserted after (itself possibly a new record)."""
        after = self._changes.inserted_after(new_id)
        if after is None:
            raise EditError(f"record {new_id!r} was not added by this journal")
        return after

    def anchor(self, ref: RecordRef) -> int | None:
        """The source record that ``ref`` stands at: itself for a source record, else the
        source record a chain of added records was inserted after (``None`` if unknown)."""
        seen: set[RecordRef] = set()
        while isinstance(ref, str):
            if ref in seen:
                return None
            seen.add(ref)
            after = self._changes.inserted_after(ref)
            if after is None:
                return None
            ref = after
        return ref

    def label(self, ref: RecordRef) -> str:
        """How a person calls a record: ``Record 12`` or ``New record n1 (after record 12)``."""
        if isinstance(ref, int):
            return f"Record {ref:,}"
        after = self._changes.inserted_after(ref)
        return f"New record {ref} (after record {'?' if after is None else after})"

    # -- pages -----------------------------------------------------------------------------

    def page(self, start: int, stop: int) -> list[EditedSlot]:
        """Source records ``start..stop-1`` as :meth:`codec.TFRecordDataset.page` gives them
        (skipped regions in place), each with its effective payload and edit status, and the
        new records placed after each of them (at their anchor's number, without an
        offset). A record whose edited form cannot be made keeps its source payload."""
        children = self._placed_after()
        out: list[EditedSlot] = []
        for slot in self.source.page(start, stop):
            if slot.index is None:
                out.append(EditedSlot(slot))
                continue
            out.append(self._edited_slot(slot, slot.index))
            for new_id in self._descendants(slot.index, children):
                try:
                    payload = self.effective_payload(new_id)
                except (AppError, CodecError):
                    continue
                if payload is None:
                    continue
                placed = codec.Slot(slot.index, slot.path, None, len(payload), payload)
                out.append(EditedSlot(placed, ADDED, new_id, len(self._changes.active(new_id))))
        return out

    def _edited_slot(self, slot: codec.Slot, ref: int) -> EditedSlot:
        if not self._changes.is_touched(ref):
            return EditedSlot(slot, "", ref, 0)
        n = len(self._changes.active(ref))
        if self._changes.is_deleted(ref):
            return EditedSlot(slot, DELETED, ref, n)
        if slot.payload is not None:
            try:
                payload = self.effective_payload(ref)
            except (AppError, CodecError):
                payload = None
            if payload is not None:
                slot = dataclasses.replace(slot, payload=payload, length=len(payload))
        return EditedSlot(slot, EDITED, ref, n)
