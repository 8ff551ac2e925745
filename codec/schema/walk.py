"""The vectorised walk over Example payloads: many records at a time, with numpy.

Only plain, canonically encoded Examples are walked here; any record the walk declines
(SequenceExamples, unpacked lists, repeated keys, unknown fields, raw payloads) is handed back
to the caller, which decodes it exactly with :func:`codec.example.decode`. Both routes produce
the same :class:`Columns`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..kinds import RAW
from ..wire import decode_varints, ranges, varints_at
from .stats import BYTES_CODE, FLOAT_CODE, INT64_CODE, NONE_CODE, TYPE_CODE

_MAX_ENTRIES = 4_096  # features per record walked with numpy; more go the exact route
_MAX_ITEMS = 256  # bytes values per list walked with numpy


@dataclass
class Columns:
    records: np.ndarray  # record numbers decoded as Example/SequenceExample, ascending
    names: list[str]  # feature names; fid indexes this list
    rec: np.ndarray  # per entry: record number
    fid: np.ndarray  # per entry: feature id
    kind: np.ndarray  # per entry: type code
    length: np.ndarray  # per entry: number of values
    floats: np.ndarray  # float32 values
    float_owner: np.ndarray  # entry of each float
    ints: np.ndarray  # int64 values
    int_owner: np.ndarray
    buf: bytes  # bytes values live in buf[start:start+len]
    b_start: np.ndarray
    b_len: np.ndarray
    b_owner: np.ndarray
    # Header sizes of the pictures among the bytes values, by start, once read.
    image_sizes: dict[int, tuple[str, int, int] | None] = field(default_factory=dict)


def _empty_i64() -> np.ndarray:
    return np.empty(0, np.int64)


class ColumnBuilder:
    """Builds :class:`Columns` from decoded :class:`codec.example.Feature` values."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.ids: dict[str, int] = {}
        self.records: list[int] = []
        self.rec: list[int] = []
        self.fid: list[int] = []
        self.kind: list[int] = []
        self.length: list[int] = []
        self.floats: list[float] = []
        self.float_owner: list[int] = []
        self.ints: list[int] = []
        self.int_owner: list[int] = []
        self.bvals: list[bytes] = []
        self.b_owner: list[int] = []

    def add(self, record: int, name: str, feature: Any) -> None:
        f = self.ids.get(name)
        if f is None:
            f = self.ids[name] = len(self.names)
            self.names.append(name)
        e = len(self.rec)
        self.rec.append(record)
        self.fid.append(f)
        t = TYPE_CODE.get(feature.type, NONE_CODE)
        values = feature.values
        self.kind.append(t)
        self.length.append(len(values))
        if t == FLOAT_CODE:
            self.floats.extend(values)
            self.float_owner.extend([e] * len(values))
        elif t == INT64_CODE:
            self.ints.extend(values)
            self.int_owner.extend([e] * len(values))
        elif t == BYTES_CODE:
            self.bvals.extend(values)
            self.b_owner.extend([e] * len(values))

    def build(self) -> Columns:
        lens = np.fromiter(map(len, self.bvals), np.int64, len(self.bvals))
        starts = np.cumsum(lens) - lens if len(lens) else _empty_i64()
        return Columns(
            records=np.asarray(self.records, np.int64),
            names=self.names,
            rec=np.asarray(self.rec, np.int64),
            fid=np.asarray(self.fid, np.int64),
            kind=np.asarray(self.kind, np.int64),
            length=np.asarray(self.length, np.int64),
            floats=np.asarray(self.floats, np.float32),
            float_owner=np.asarray(self.float_owner, np.int64),
            ints=np.asarray(self.ints, np.int64),
            int_owner=np.asarray(self.int_owner, np.int64),
            buf=b"".join(self.bvals),
            b_start=starts,
            b_len=lens,
            b_owner=np.asarray(self.b_owner, np.int64),
        )


# --------------------------------------------------------------------------------------------
# The numpy walk over Example payloads


def _walk_examples(
    b: np.ndarray, rs: np.ndarray, re_: np.ndarray, keys: KeyTable
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Walk Example payloads ``b[rs[i]:re_[i]]`` (``b`` padded with 16 zero bytes).

    Returns ``bad`` (records that are not plain canonical Examples) and per-entry arrays for
    the others: ``r`` (position in rs), ``fid``, ``kind``, ``length``, value regions."""
    n = len(rs)
    bad = np.zeros(n, bool)
    cur = rs.copy()
    end = rs.copy()
    nonempty = np.flatnonzero(re_ > rs)
    if nonempty.size:
        p = rs[nonempty]
        tag = b[p]
        ln, sz = varints_at(b, p + 1)
        fs = p + 1 + sz
        fe = fs + ln
        ok = (tag == 0x0A) & (sz > 0) & (fe == re_[nonempty])
        bad[nonempty[~ok]] = True
        good = nonempty[ok]
        cur[good] = fs[ok]
        end[good] = fe[ok]
    # Entries, one per iteration for every record that still has some.
    e_r: list[np.ndarray] = []
    e_s: list[np.ndarray] = []
    e_e: list[np.ndarray] = []
    active = np.flatnonzero(cur < end)
    it = 0
    while active.size:
        it += 1
        if it > _MAX_ENTRIES:
            bad[active] = True
            break
        p = cur[active]
        ln, sz = varints_at(b, p + 1)
        es = p + 1 + sz
        ee = es + ln
        ok = (b[p] == 0x0A) & (sz > 0) & (ee <= end[active])
        bad[active[~ok]] = True
        good = active[ok]
        e_r.append(good)
        e_s.append(es[ok])
        e_e.append(ee[ok])
        cur[good] = ee[ok]
        active = good[cur[good] < end[good]]
    if e_r:
        r = np.concatenate(e_r)
        es = np.concatenate(e_s)
        ee = np.concatenate(e_e)
        order = np.argsort(r, kind="stable")
        r, es, ee = r[order], es[order], ee[order]
    else:
        r = es = ee = _empty_i64()
    # Entry: 0A klen key 12 vlen value, exactly.
    klen, ksz = varints_at(b, es + 1)
    ks = es + 1 + ksz
    ke = ks + klen
    ke_safe = np.minimum(ke, len(b) - 16)
    vlen, vsz = varints_at(b, ke_safe + 1)
    vs = ke_safe + 1 + vsz
    ve = vs + vlen
    ok = (b[es] == 0x0A) & (ksz > 0) & (ke < ee) & (b[ke_safe] == 0x12) & (vsz > 0) & (ve == ee)
    bad[r[~ok]] = True
    # Feature: empty, or tag (0A bytes / 12 float / 1A int64) L1 List, exactly.
    vs_safe = np.minimum(vs, len(b) - 16)
    tag = b[vs_safe].astype(np.int64)
    nonempty = vs < ve
    kind = np.where(nonempty, np.select([tag == 0x0A, tag == 0x12, tag == 0x1A], [1, 2, 3], 9), 0)
    l1, sz1 = varints_at(b, vs_safe + 1)
    ls = vs + 1 + sz1
    le = ls + l1
    ok = ~nonempty | ((kind != 9) & (sz1 > 0) & (le == ve))
    bad[r[~ok]] = True
    length = np.zeros(len(r), np.int64)
    # Packed numbers: empty List, or 0A L2 data, exactly.
    num = nonempty & ((kind == 2) | (kind == 3)) & (ls < le)
    ni = np.flatnonzero(num)
    ds = np.zeros(len(r), np.int64)
    de = np.zeros(len(r), np.int64)
    if ni.size:
        p = np.minimum(ls[ni], len(b) - 16)
        l2, sz2 = varints_at(b, p + 1)
        d0 = p + 1 + sz2
        d1 = d0 + l2
        okn = (b[p] == 0x0A) & (sz2 > 0) & (d1 == le[ni])
        isf = kind[ni] == 2
        okn &= ~isf | (l2 % 4 == 0)
        d1c = np.minimum(d1, len(b) - 16)
        okn &= isf | (l2 == 0) | (b[np.maximum(d1c - 1, 0)] < 0x80)
        bad[r[ni[~okn]]] = True
        ds[ni], de[ni] = d0, d1c
        length[ni[isf]] = l2[isf] // 4
    # Bytes lists: items 0A len data, walked together.
    bi = np.flatnonzero(nonempty & (kind == 1))
    it_e: list[np.ndarray] = []
    it_s: list[np.ndarray] = []
    it_l: list[np.ndarray] = []
    if bi.size:
        cur2 = ls[bi].copy()
        end2 = le[bi]
        act = np.flatnonzero(cur2 < end2)
        steps = 0
        while act.size:
            steps += 1
            if steps > _MAX_ITEMS:
                bad[r[bi[act]]] = True
                break
            p = np.minimum(cur2[act], len(b) - 16)
            ln, sz = varints_at(b, p + 1)
            s0 = p + 1 + sz
            s1 = s0 + ln
            oki = (b[p] == 0x0A) & (sz > 0) & (s1 <= end2[act])
            bad[r[bi[act[~oki]]]] = True
            g = act[oki]
            it_e.append(bi[g])
            it_s.append(s0[oki])
            it_l.append(ln[oki])
            cur2[g] = s1[oki]
            act = g[cur2[g] < end2[g]]
    if it_e:
        item_e = np.concatenate(it_e)
        item_s = np.concatenate(it_s)
        item_l = np.concatenate(it_l)
        order = np.argsort(item_e, kind="stable")
        item_e, item_s, item_l = item_e[order], item_s[order], item_l[order]
        length += np.bincount(item_e, minlength=len(r))
    else:
        item_e = item_s = item_l = _empty_i64()
    # Int64 counts: bytes ending a varint inside each data region.
    ii = np.flatnonzero(num & (kind == 3) & (de > ds))
    if ii.size:
        ends = (b[ranges(ds[ii], de[ii] - ds[ii])] < 0x80).astype(np.int64)
        length[ii] = np.add.reduceat(ends, np.cumsum(de[ii] - ds[ii]) - (de[ii] - ds[ii]))
    fid = keys.lookup(b, ks, klen, bad, r)
    return bad, {
        "r": r,
        "fid": fid,
        "kind": kind,
        "length": length,
        "ds": ds,
        "de": de,
        "item_e": item_e,
        "item_s": item_s,
        "item_l": item_l,
    }


class KeyTable:
    """Feature names to ids, matching key bytes in the buffer with numpy."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.ids: dict[bytes, int] = {}
        self.by_len: dict[int, list[tuple[np.ndarray, int]]] = {}

    def _add(self, key: bytes) -> int | None:
        try:
            name = key.decode("utf-8")
        except UnicodeDecodeError:
            return None
        fid = self.ids[key] = len(self.names)
        self.names.append(name)
        self.by_len.setdefault(len(key), []).append((np.frombuffer(key, np.uint8), fid))
        return fid

    def lookup(
        self, b: np.ndarray, ks: np.ndarray, klen: np.ndarray, bad: np.ndarray, r: np.ndarray
    ) -> np.ndarray:
        fid = np.full(len(ks), -1, np.int64)
        live = np.flatnonzero(~bad[r]) if len(r) else _empty_i64()
        if not live.size:
            return fid
        for L in np.unique(klen[live]).tolist():
            cand = live[klen[live] == L]
            if L == 0:
                empty = self.ids.get(b"")
                fid[cand] = empty if empty is not None else self._add(b"") or 0
                continue
            rows = b[ks[cand][:, None] + np.arange(L)]
            unresolved = np.ones(len(cand), bool)
            for key, f in self.by_len.get(L, []):
                m = unresolved & (rows == key).all(axis=1)
                fid[cand[m]] = f
                unresolved &= ~m
            if unresolved.any():
                rest = cand[unresolved]
                void = np.ascontiguousarray(rows[unresolved]).view(np.dtype((np.void, L)))
                uniq, inv = np.unique(void.ravel(), return_inverse=True)
                for u, key_v in enumerate(uniq):
                    kb = key_v.tobytes()
                    f2 = self.ids.get(kb)
                    if f2 is None:
                        f2 = self._add(kb)
                    if f2 is None:  # not UTF-8: the exact route decides what it is
                        bad[r[rest[inv.ravel() == u]]] = True
                        continue
                    fid[rest[inv.ravel() == u]] = f2
        return fid


def walk_columns(
    b: np.ndarray, rs: np.ndarray, re_: np.ndarray, numbers: np.ndarray, keys: KeyTable
) -> tuple[Columns, np.ndarray]:
    """Columns of the regular records and the record positions (into ``rs``) that are not."""
    bad, w = _walk_examples(b, rs, re_, keys)
    r = w["r"]
    # Repeated keys in one record: the last wins in a map; leave those to the exact route.
    if len(r) > 1:
        width = len(keys.names) + 1
        srt = np.sort(r * width + w["fid"])
        dup = srt[1:][srt[1:] == srt[:-1]]
        if dup.size:
            bad[np.unique(dup // width)] = True
    keep = ~bad[r] if len(r) else np.zeros(0, bool)
    entry_ids = np.flatnonzero(keep)
    remap = np.full(len(r), -1, np.int64)
    remap[entry_ids] = np.arange(entry_ids.size)
    kind = w["kind"][entry_ids]
    # Float values.
    fe = entry_ids[kind == FLOAT_CODE]
    ds, de = w["ds"][fe], w["de"][fe]
    fidx = ranges(ds, de - ds)
    floats = b[fidx].view("<f4") if fidx.size else np.empty(0, np.float32)
    float_owner = np.repeat(remap[fe], (de - ds) // 4)
    # Int values.
    ie = entry_ids[kind == INT64_CODE]
    ds, de = w["ds"][ie], w["de"][ie]
    iidx = ranges(ds, de - ds)
    try:
        ints = decode_varints(b[iidx])
    except ValueError:  # an over-long varint: let the exact route judge every record
        bad[:] = True
        return _nothing(numbers, keys), np.arange(len(rs))
    int_owner = np.repeat(remap[ie], w["length"][ie])
    # Bytes values.
    item_e = w["item_e"]
    keep_i = keep[item_e] if item_e.size else np.zeros(0, bool)
    cols = Columns(
        records=numbers[~bad],
        names=keys.names,
        rec=numbers[r[entry_ids]],
        fid=w["fid"][entry_ids],
        kind=kind,
        length=w["length"][entry_ids],
        floats=floats,
        float_owner=float_owner,
        ints=ints,
        int_owner=int_owner,
        buf=b.tobytes(),
        b_start=w["item_s"][keep_i],
        b_len=w["item_l"][keep_i],
        b_owner=remap[item_e[keep_i]],
    )
    return cols, np.flatnonzero(bad)


def _nothing(numbers: np.ndarray, keys: KeyTable) -> Columns:
    e = _empty_i64()
    return Columns(
        np.empty(0, np.int64),
        keys.names,
        e,
        e,
        e,
        e,
        np.empty(0, np.float32),
        e,
        e,
        e,
        b"",
        e,
        e,
        e,
    )


# --------------------------------------------------------------------------------------------


class PayloadFeed:
    """The feeding side of a builder, as :func:`codec.schema.scan.feed_spans` and the slow
    scan call it: intact payloads (with their record numbers, ascending) are joined into one
    buffer, padded for the vectorised walk, and handed to ``_add_buffer`` as spans, the form
    a file's mapped bytes reach it in."""

    def add_payloads(self, payloads: Sequence[bytes], numbers: Sequence[int] | np.ndarray) -> None:
        """Intact payloads with their record numbers (ascending)."""
        lens = np.fromiter(map(len, payloads), np.int64, len(payloads))
        starts = np.cumsum(lens) - lens
        buf = b"".join(payloads) + bytes(16)
        self._add_buffer(np.frombuffer(buf, np.uint8), starts, starts + lens, numbers)

    def _add_buffer(
        self,
        b: np.ndarray,
        rs: np.ndarray,
        re_: np.ndarray,
        numbers: Sequence[int] | np.ndarray,
        crcs: np.ndarray | None = None,
    ) -> None:
        raise NotImplementedError


class ColumnFeed(PayloadFeed):
    """A builder fed its batches as :class:`Columns`: ``_add_buffer`` walks a batch with
    :func:`walk_columns` (the Examples the vectorised walk leaves, decoded one by one) and
    hands the columns to ``_take``; a record that is not an Example goes to
    ``_not_example``, a damaged one to ``damaged``."""

    def __init__(self) -> None:
        self.keys = KeyTable()
        self.damaged: list[int] = []

    def add_damaged(self, number: int) -> None:
        self.damaged.append(int(number))

    def _add_buffer(
        self,
        b: np.ndarray,
        rs: np.ndarray,
        re_: np.ndarray,
        numbers: Sequence[int] | np.ndarray,
        crcs: np.ndarray | None = None,
    ) -> None:
        numbers = np.asarray(numbers, np.int64)
        cols, odd = walk_columns(b, rs, re_, numbers, self.keys)
        self._take(cols)
        if not odd.size:
            return
        from ..example import decode

        cb = ColumnBuilder()
        for i in odd.tolist():
            rec = decode(b[int(rs[i]) : int(re_[i])].tobytes())
            if rec.kind == RAW:
                self._not_example(int(numbers[i]))
                continue
            cb.records.append(int(numbers[i]))
            for name, feat in rec.features.items():
                cb.add(int(numbers[i]), name, feat)
        if cb.records:
            self._take(cb.build())

    def _take(self, c: Columns) -> None:
        raise NotImplementedError

    def _not_example(self, number: int) -> None:
        """A record that is not an Example: nothing is taken of it unless a builder says."""
