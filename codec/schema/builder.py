"""The accumulator: record batches in, per-feature statistics and drift out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..kinds import EXAMPLE, RAW, SEQUENCE_EXAMPLE
from .counters import RecordList, mix64, occurrence_keys
from .detection import DetectionChecks
from .stats import TYPE_NAMES, FeatureListStats, FeatureStats
from .walk import ColumnBuilder, Columns, KeyTable, PayloadFeed, walk_columns


def record_keys(crcs: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """A 64-bit key per record from its payload's CRC-32C and length: what the value counters
    sample occurrences by (:func:`.counters.occurrence_keys`), the same wherever the record is
    read, whatever its number."""
    c = np.asarray(crcs, np.uint64)
    n = np.asarray(lengths, np.uint64)
    return mix64(c | (n << np.uint64(32)))


class SchemaBuilder(PayloadFeed):
    """Accumulates a :class:`Schema` from records fed in ascending record order.

    Feed decoded records with :meth:`add_record`, raw payloads with :meth:`add_payloads`
    (Examples take the vectorised route), damaged records with :meth:`add_damaged`.

    What it holds does not depend on how the records were cut into batches, nor on how
    builders fed with parts of the records are merged (:meth:`merge`); a builder fed records
    numbered from 0 can be renumbered afterwards (:meth:`shift`)."""

    def __init__(
        self,
        *,
        decode_images: bool = False,
        label_map: Mapping[int, str] | None = None,
        detection: bool = True,
    ) -> None:
        self.decode_images = decode_images
        self.checks = DetectionChecks(label_map) if detection else None
        self.records = 0
        self.kinds: Counter[str] = Counter()
        self.damaged = RecordList()
        self.features: dict[str, FeatureStats] = {}
        self.feature_lists: dict[str, FeatureListStats] = {}
        self.first_records = RecordList()  # records with features, for "missing" bookkeeping
        self.first_sequences = RecordList()
        self._keys = KeyTable()
        # The batch being accumulated: its record numbers (ascending) and record keys.
        self._batch: tuple[np.ndarray, np.ndarray] = (np.empty(0, np.int64), np.empty(0, np.uint64))

    # -- input ----------------------------------------------------------------------------

    def add_damaged(self, index: int) -> None:
        self.damaged.add(np.array([index], np.int64))

    def add_record(self, index: int, record: Any) -> None:
        """One decoded :class:`codec.example.Record` (slow route: prefer batches)."""
        self.add_records([(index, record)])

    def add_records(self, items: Iterable[tuple[int, Any]], keys: np.ndarray | None = None) -> None:
        """Decoded records with their numbers, ascending; ``keys`` are their record keys
        (:func:`record_keys`; else made from the numbers)."""
        items = list(items)
        numbers = np.array([i for i, _ in items], np.int64)
        if keys is None:
            keys = mix64(numbers.astype(np.uint64))
        self._batch = (numbers, np.asarray(keys, np.uint64))
        cb = ColumnBuilder()
        lists: list[tuple[int, dict[str, list[Any]]]] = []
        for index, rec in items:
            self.records += 1
            self.kinds[rec.kind] += 1
            if rec.kind == RAW:
                continue
            cb.records.append(index)
            for name, feat in rec.features.items():
                cb.add(index, name, feat)
            if rec.kind == SEQUENCE_EXAMPLE:
                lists.append((index, rec.feature_lists))
        self._accumulate(cb.build())
        if lists:
            self._add_lists(lists)

    def _add_buffer(
        self,
        b: np.ndarray,
        rs: np.ndarray,
        re_: np.ndarray,
        numbers: Sequence[int] | np.ndarray,
        crcs: np.ndarray | None = None,
    ) -> None:
        """Payloads ``b[rs[i]:re_[i]]`` (``b`` padded with 16 bytes) numbered ``numbers``;
        ``crcs`` their CRC-32C when already computed."""
        numbers = np.asarray(numbers, np.int64)
        if crcs is None:
            import crc32c as _crc32c

            crc = _crc32c.crc32c
            with memoryview(b.data) as mv:
                crcs = np.fromiter(
                    (crc(mv[s:e]) for s, e in zip(rs.tolist(), re_.tolist())), np.uint32, len(rs)
                )
        keys = record_keys(crcs, np.asarray(re_) - np.asarray(rs))
        self._batch = (numbers, keys)
        cols, odd = walk_columns(b, rs, re_, numbers, self._keys)
        n_fast = len(rs) - len(odd)
        self.records += n_fast
        if n_fast:
            self.kinds[EXAMPLE] += n_fast
        self._accumulate(cols)
        if odd.size:
            from ..example import decode

            payloads = [b[int(rs[i]) : int(re_[i])].tobytes() for i in odd]
            self.add_records(
                [(int(numbers[i]), decode(p)) for i, p in zip(odd, payloads)], keys[odd]
            )

    # -- accumulation ---------------------------------------------------------------------

    def _occurrences(self, owners: np.ndarray) -> np.ndarray:
        """The sampling key of each value (``owners``: its record's number) of one feature."""
        numbers, keys = self._batch
        return occurrence_keys(keys[np.searchsorted(numbers, owners)], owners)

    def _feature(self, name: str) -> FeatureStats:
        fs = self.features.get(name)
        if fs is None:
            fs = self.features[name] = FeatureStats(name)
            # Every record seen before this feature appeared lacks it.
            fs.missing.merge(self.first_records)
        return fs

    def _accumulate(self, c: Columns) -> None:
        if not len(c.records):
            return
        order_f = np.argsort(c.fid, kind="stable") if len(c.fid) else c.fid
        fids, starts = np.unique(c.fid[order_f], return_index=True)
        bounds = [*starts.tolist(), len(order_f)]
        seen: set[str] = set()
        f_fid = c.fid[c.float_owner] if len(c.float_owner) else c.float_owner
        i_fid = c.fid[c.int_owner] if len(c.int_owner) else c.int_owner
        b_fid = c.fid[c.b_owner] if len(c.b_owner) else c.b_owner
        for j, f in enumerate(fids.tolist()):
            name = c.names[f]
            seen.add(name)
            fs = self._feature(name)
            sel = order_f[bounds[j] : bounds[j + 1]]
            rec = c.rec[sel]
            fs.add_entries(rec, c.kind[sel], c.length[sel])
            if len(rec) < len(c.records):
                fs.missing.add(np.setdiff1d(c.records, rec, assume_unique=True))
            if len(f_fid):
                fs.add_floats(c.floats[f_fid == f] if len(fids) > 1 else c.floats)
            if len(i_fid):
                mi = i_fid == f
                if mi.any():
                    fs.add_ints(c.ints[mi], self._occurrences(c.rec[c.int_owner[mi]]))
            if len(b_fid):
                m = b_fid == f
                if m.any():
                    owners = c.rec[c.b_owner[m]]
                    fs.add_bytes(
                        c.buf,
                        c.b_start[m],
                        c.b_len[m],
                        owners,
                        self.decode_images,
                        c.image_sizes,
                        self._occurrences(owners),
                    )
        for name, fs in self.features.items():
            if name not in seen:
                fs.missing.add(c.records)
        self.first_records.add(c.records)
        if self.checks is not None:
            self.checks.add(c)

    def _add_lists(self, lists: list[tuple[int, dict[str, list[Any]]]]) -> None:
        cb = ColumnBuilder()
        seqs = np.array([i for i, _ in lists], np.int64)
        seen: dict[str, list[int]] = {}
        for index, fl in lists:
            for name, steps in fl.items():
                st = self.feature_lists.get(name)
                if st is None:
                    st = self.feature_lists[name] = FeatureListStats(name)
                    st.missing.merge(self.first_sequences)
                st.add_steps(len(steps))
                seen.setdefault(name, []).append(index)
                for step in steps:
                    cb.add(index, name, step)
        for name, st in self.feature_lists.items():
            have = np.array(seen.get(name, []), np.int64)
            if len(have) < len(seqs):
                st.missing.add(np.setdiff1d(seqs, have))
        self.first_sequences.add(seqs)
        c = cb.build()
        if not len(c.rec):
            return
        for f, name in enumerate(c.names):
            st = self.feature_lists[name]
            m = c.fid == f
            if not m.any():
                continue
            st.steps.types += np.bincount(c.kind[m], minlength=len(TYPE_NAMES))
            st.steps.present += int(m.sum())
            for t in np.unique(c.kind[m]):
                st.steps.type_records[int(t)].add(np.unique(c.rec[m & (c.kind == t)]))
            st.steps._lengths(c.rec[m], c.length[m])
            if len(c.float_owner):
                st.steps.add_floats(c.floats[c.fid[c.float_owner] == f])
            if len(c.int_owner):
                mi = c.fid[c.int_owner] == f
                if mi.any():
                    st.steps.add_ints(c.ints[mi], self._occurrences(c.rec[c.int_owner[mi]]))
            if len(c.b_owner):
                mb = c.fid[c.b_owner] == f
                if mb.any():
                    owners = c.rec[c.b_owner[mb]]
                    st.steps.add_bytes(
                        c.buf,
                        c.b_start[mb],
                        c.b_len[mb],
                        owners,
                        self.decode_images,
                        keys=self._occurrences(owners),
                    )

    # -- merging and results --------------------------------------------------------------

    def merge(self, later: SchemaBuilder) -> None:
        """Fold in a builder that saw later records (e.g. the next range, another process).
        ``later`` is left as it was: nothing of it is taken over, so it can still stand for
        its own records (a file's statistics) after merging into a dataset's."""
        for name, fs in self.features.items():
            if name not in later.features:
                fs.missing.merge(later.first_records)
        for name, fs in later.features.items():
            mine = self.features.get(name)
            if mine is None:
                mine = self.features[name] = FeatureStats(name)
                mine.missing.merge(self.first_records)
            mine.merge(fs)
        for name, ls in self.feature_lists.items():
            if name not in later.feature_lists:
                ls.missing.merge(later.first_sequences)
        for name, ls in later.feature_lists.items():
            mine_l = self.feature_lists.get(name)
            if mine_l is None:
                mine_l = self.feature_lists[name] = FeatureListStats(name)
                mine_l.missing.merge(self.first_sequences)
            mine_l.merge(ls)
        self.records += later.records
        self.kinds.update(later.kinds)
        self.damaged.merge(later.damaged)
        self.first_records.merge(later.first_records)
        if self.checks is not None and later.checks is not None:
            self.checks.merge(later.checks)
        self.first_sequences.merge(later.first_sequences)

    def shift(self, by: int) -> None:
        """Renumber: every record number held plus ``by`` (a builder fed a range's records
        numbered from 0, once the range's first number in the dataset is known)."""
        if not by:
            return
        for fs in self.features.values():
            fs.shift(by)
        for ls in self.feature_lists.values():
            ls.shift(by)
        self.damaged.shift(by)
        self.first_records.shift(by)
        self.first_sequences.shift(by)
        if self.checks is not None:
            self.checks.shift(by)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_keys"] = None  # rebuilt on demand; not needed once accumulated
        state["_batch"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._keys = KeyTable()
        self._batch = (np.empty(0, np.int64), np.empty(0, np.uint64))


# --------------------------------------------------------------------------------------------


def merge_all(builders: Sequence[SchemaBuilder], empty: SchemaBuilder, keep: bool) -> SchemaBuilder:
    """``builders`` (in record order) merged into one: into ``empty`` when there are none or
    when ``keep`` (each given builder then still stands for its own records), else into the
    first of them."""
    total = empty if keep or not builders else builders[0]
    for b in builders if total is empty else builders[1:]:
        total.merge(b)
    return total
