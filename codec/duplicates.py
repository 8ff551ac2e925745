"""Duplicate pictures, found without a model: records grouped by their main picture's
fingerprints (:mod:`codec.perceptual`), within a dataset and across datasets or splits.

Every record has, in dataset order (:class:`Fingerprints`): a status, the digest of its main
picture's stored bytes, the digest of its decoded pixels, its pHash and dHash (and those of the
picture mirrored), and, when asked for, an embedding read from a feature. Two records are
related when, in this order:

1. ``identical``: their pictures' stored bytes are equal (the same file copied);
2. ``pixels``: their decoded pixels are equal (the same picture stored again: another
   container, a lossless re-encoding);
3. ``near``: both the pHash and dHash distances are at most ``threshold`` bits — the pair's
   distance is the larger of the two —, or, with ``mirror``, the distances of one picture's
   hashes to the other's mirrored ones are (a mirrored copy); with an embedding instead of
   hashes, the cosine distance of the two vectors is at most ``cosine``.

Groups are the connected parts of these relations (records linked through others are in one
group). Each member is told by its relation to the group's first record (in dataset order) and
its distance to it, which can be above the threshold for a member linked through another.
With sides (``across``), only groups holding records of both sides are kept: the same picture
in ``train`` and in ``eval``.

The search for near pairs is never over all pairs: **multi-index hashing** — the 64 bits cut
into chunks, and by the pigeonhole principle two hashes within ``t`` bits agree within
``t // chunks`` bits on some chunk, so only records whose chunk is that close are compared
(all in numpy: sorted chunk values, and every chunk value within the radius looked up with
``searchsorted``). Equal fingerprints are folded first, so a picture copied a thousand times
costs one lookup. Embeddings are compared block by block (one matrix product per block of
rows; the flops are quadratic, no loop over pairs is in Python).

The answer depends only on the records and their order: the same on one process, a pool or a
cluster (:mod:`codec.jobs.duplicates` computes the fingerprints as a job).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .perceptual import HASH_BITS

__all__ = [
    "DEFAULT_COSINE",
    "DEFAULT_THRESHOLD",
    "IDENTICAL",
    "MAX_THRESHOLD",
    "NEAR",
    "PIXELS",
    "STATUS",
    "Fingerprints",
    "Group",
    "Member",
    "find_groups",
    "near_pairs",
]

DEFAULT_THRESHOLD = 6  # bits of pHash and of dHash (none of 5,000 planted pictures falsely grouped)
MAX_THRESHOLD = 16  # beyond it unrelated pictures (32 bits apart on average) start to meet
DEFAULT_COSINE = 0.05

IDENTICAL = "identical"
PIXELS = "pixels"
NEAR = "near"

# A record's status; 0: its picture was fingerprinted.
STATUS = (
    "",
    "its data CRC fails",
    "it is not an Example",
    "it has no picture",
    "its picture cannot be decoded",
    "it has no embedding of the length the others have",
)
OK, DAMAGED, NOT_EXAMPLE, NO_PICTURE, UNDECODABLE, NO_EMBEDDING = range(len(STATUS))
_DIGEST = 16  # bytes of a digest


@dataclass
class Fingerprints:
    """Fingerprints of ``len(status)`` records (numbered from 0 in dataset order): ``status``
    (a number of :data:`STATUS`), ``payload`` and ``pixels`` digests (``(n, 16)`` bytes),
    ``phash``, ``dhash``, ``phash_mirrored``, ``dhash_mirrored`` (``uint64``), ``size`` (width,
    height; 0 unknown), ``picture`` (the main picture's feature, per record; ``""`` none) and
    ``embedding`` (``(n, d)`` float32, when one was read)."""

    status: np.ndarray
    payload: np.ndarray
    pixels: np.ndarray
    phash: np.ndarray
    dhash: np.ndarray
    phash_mirrored: np.ndarray
    dhash_mirrored: np.ndarray
    size: np.ndarray
    picture: list[str] = field(default_factory=list)
    embedding: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.status)

    @classmethod
    def empty(cls, n: int = 0, dims: int | None = None) -> Fingerprints:
        u = np.zeros(n, np.uint64)
        return cls(
            np.zeros(n, np.int8),
            np.zeros((n, _DIGEST), np.uint8),
            np.zeros((n, _DIGEST), np.uint8),
            u,
            u.copy(),
            u.copy(),
            u.copy(),
            np.zeros((n, 2), np.int64),
            [""] * n,
            None if dims is None else np.zeros((n, dims), np.float32),
        )

    @staticmethod
    def concat(parts: Sequence[Fingerprints]) -> Fingerprints:
        """The fingerprints of consecutive records, one after the other. Embeddings of
        different lengths (or missing in some parts) leave the records of the parts whose
        length is not the first one's without one (:data:`NO_EMBEDDING`)."""
        if not parts:
            return Fingerprints.empty()
        dims = next((p.embedding.shape[1] for p in parts if p.embedding is not None), None)
        out = Fingerprints(
            np.concatenate([p.status for p in parts]),
            np.concatenate([p.payload for p in parts]),
            np.concatenate([p.pixels for p in parts]),
            np.concatenate([p.phash for p in parts]),
            np.concatenate([p.dhash for p in parts]),
            np.concatenate([p.phash_mirrored for p in parts]),
            np.concatenate([p.dhash_mirrored for p in parts]),
            np.concatenate([p.size for p in parts]),
            [x for p in parts for x in p.picture],
        )
        if dims is not None:
            vectors = []
            start = 0
            for p in parts:
                if p.embedding is not None and p.embedding.shape[1] == dims:
                    vectors.append(p.embedding)
                else:
                    vectors.append(np.zeros((len(p), dims), np.float32))
                    mine = out.status[start : start + len(p)]  # a view: set in place
                    mine[mine == OK] = NO_EMBEDDING
                start += len(p)
            out.embedding = np.concatenate(vectors)
        return out


@dataclass(frozen=True)
class Member:
    """A record of a group: its number in the dataset (all sources one after the other),
    its relation to the group's first record (``""`` for that record itself, else
    :data:`IDENTICAL`, :data:`PIXELS` or :data:`NEAR`), and for a near one the pHash and
    dHash distances in bits (``mirrored``: to the first record's mirrored hashes), or the
    cosine distance of their embeddings."""

    record: int
    relation: str = ""
    phash: int | None = None
    dhash: int | None = None
    mirrored: bool = False
    cosine: float | None = None

    @property
    def distance(self) -> int | float | None:
        """The pair's distance to the group's first record: the larger of the two hash
        distances (bits), or the cosine distance; 0 for identical pixels or bytes."""
        if self.cosine is not None:
            return self.cosine
        if self.phash is None or self.dhash is None:
            return 0 if self.relation else None
        return max(self.phash, self.dhash)


@dataclass(frozen=True)
class Group:
    """Records holding the same picture (or near copies of it), the first in dataset order
    first; ``kind`` the loosest relation among them."""

    members: tuple[Member, ...]

    @property
    def kind(self) -> str:
        rel = {m.relation for m in self.members[1:]}
        for k in (NEAR, PIXELS, IDENTICAL):
            if k in rel:
                return k
        return IDENTICAL

    @property
    def records(self) -> list[int]:
        return [m.record for m in self.members]


# -- near pairs --------------------------------------------------------------------------------


def _chunks(t: int, n_query: int = 1, n_index: int = 1) -> list[tuple[int, int]]:
    """The chunks (shift, bits) of a 64-bit hash searched for distances up to ``t``: as many
    as cost least for a query of ``n_query`` hashes against ``n_index`` (each chunk value
    within ``t // chunks`` bits looked up, and the records met compared: more chunks mean
    shorter ones, fewer lookups and more records met), at most 22 bits each when there is
    more than one (looked up in a table)."""
    best: tuple[float, int] | None = None
    for m in range(1, t + 2):
        bits = -(-HASH_BITS // m)
        if m > 1 and bits > _DENSE_BITS:
            continue
        r = t // m
        probes = sum(math.comb(bits, k) for k in range(r + 1))
        met = n_query * n_index / 2.0**bits
        cost = m * probes * (n_query + _PAIR_COST * met)
        if best is None or cost < best[0]:
            best = (cost, m)
    m = best[1] if best is not None else t + 1
    edges = [HASH_BITS * i // m for i in range(m + 1)]
    return [(a, b - a) for a, b in itertools.pairwise(edges)]


def _flips(bits: int, radius: int) -> np.ndarray:
    """Every ``bits``-bit mask of at most ``radius`` set bits."""
    masks = [0]
    for r in range(1, radius + 1):
        for combo in itertools.combinations(range(bits), r):
            masks.append(sum(1 << b for b in combo))
    return np.array(masks, np.uint64)


_DENSE_BITS = 22  # chunks of at most this many bits are looked up in a table of every value
_PAIR_COST = 0.3  # a record met costs about this share of a chunk's lookup (measured)
_STEP_PAIRS = 4_000_000  # candidate pairs looked at in one vectorised step


def near_pairs(
    query: np.ndarray, index: np.ndarray, t: int, *, same: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair ``(i, j)`` with ``popcount(query[i] ^ index[j]) <= t`` (both ``uint64``),
    sorted, without repeats; ``same``: the query is the index, and only pairs with ``i < j``
    are given. Multi-index hashing (the module's docstring): no loop over records in
    Python."""
    if not 0 <= t <= MAX_THRESHOLD:
        raise ValueError(f"a Hamming threshold is from 0 to {MAX_THRESHOLD} bits, not {t}")
    query = np.asarray(query, np.uint64)
    index = np.asarray(index, np.uint64)
    found: list[np.ndarray] = []
    n_index = max(1, len(index))
    chunks = _chunks(t, len(query), len(index))
    radius = t // len(chunks)
    for shift, bits in chunks:
        mask = np.uint64((1 << bits) - 1)
        keys = (index >> np.uint64(shift)) & mask
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        qkeys = (query >> np.uint64(shift)) & mask
        table = None
        if bits <= _DENSE_BITS:  # where each chunk value's records start: a lookup, no search
            table = np.zeros((1 << bits) + 1, np.int64)
            np.cumsum(np.bincount(keys.astype(np.int64), minlength=1 << bits), out=table[1:])
        for flip in _flips(bits, radius):
            probe = qkeys ^ flip
            if table is not None:
                p = probe.astype(np.int64)
                lo, hi = table[p], table[p + 1]
            else:
                lo = np.searchsorted(sorted_keys, probe, "left")
                hi = np.searchsorted(sorted_keys, probe, "right")
            counts = hi - lo
            nz = np.flatnonzero(counts)
            if not nz.size:
                continue
            # the queries in slices whose candidates fit in one step
            csum = np.cumsum(counts[nz])
            start = 0
            while start < nz.size:
                base = csum[start - 1] if start else 0
                stop = int(np.searchsorted(csum, base + _STEP_PAIRS, "right"))
                stop = max(stop, start + 1)
                sel = nz[start:stop]
                c = counts[sel]
                qi = np.repeat(sel, c)
                offs = np.arange(int(c.sum())) - np.repeat(np.cumsum(c) - c, c)
                j = order[np.repeat(lo[sel], c) + offs]
                keep = qi < j if same else np.ones(len(j), bool)
                qi, j = qi[keep], j[keep]
                close = np.bitwise_count(query[qi] ^ index[j]) <= t
                found.append(qi[close].astype(np.int64) * n_index + j[close])
                start = stop
    if not found:
        e = np.zeros(0, np.int64)
        return e, e
    pairs = np.unique(np.concatenate(found))
    return pairs // n_index, pairs % n_index


def _cosine_pairs(
    vectors: np.ndarray, limit: float, block: int = 2048
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs ``i < j`` of rows whose cosine distance is at most ``limit``, with it."""
    v = np.asarray(vectors, np.float64)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    v = v / np.where(norms > 0, norms, 1.0)
    out_i, out_j, out_d = [], [], []
    for a in range(0, len(v), block):
        sims = v[a : a + block] @ v.T
        d = 1.0 - sims
        i, j = np.nonzero(d <= limit)
        i = i + a
        keep = i < j
        out_i.append(i[keep])
        out_j.append(j[keep])
        out_d.append(d[i[keep] - a, j[keep]])
    if not out_i:
        e = np.zeros(0, np.int64)
        return e, e, np.zeros(0)
    return np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_d)


# -- groups ------------------------------------------------------------------------------------


def _components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The connected part of each of ``n`` nodes linked by edges ``a[k] — b[k]``, named by
    its smallest node (min-label propagation with pointer jumping, vectorised)."""
    label = np.arange(n, dtype=np.int64)
    if not len(a):
        return label
    a = np.asarray(a, np.int64)
    b = np.asarray(b, np.int64)
    while True:
        la, lb = label[a], label[b]
        low = np.minimum(la, lb)
        before = label.copy()
        np.minimum.at(label, la, low)
        np.minimum.at(label, lb, low)
        while True:  # jump: every node to its label's label
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
        if np.array_equal(label, before):
            return label


def _same_rows(rows: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges joining every ``ok`` record to the first record with an equal row."""
    idx = np.flatnonzero(ok)
    if not idx.size:
        e = np.zeros(0, np.int64)
        return e, e
    _, first, inverse = np.unique(
        np.ascontiguousarray(rows[idx]).view(f"V{rows.shape[1] * rows.itemsize}").ravel(),
        return_index=True,
        return_inverse=True,
    )
    heads = idx[first[inverse]]
    keep = heads != idx
    return heads[keep], idx[keep]


def _hash_edges(fp: Fingerprints, ok: np.ndarray, t: int, mirror: bool) -> list[np.ndarray]:
    """Edges between records whose hashes are near (equal pairs of hashes folded first)."""
    idx = np.flatnonzero(ok)
    if not idx.size:
        return []
    keys = np.stack([fp.phash[idx], fp.dhash[idx]], 1)
    uniq, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    heads = idx[first[inverse]]
    edges = [np.stack([heads, idx])]  # records of equal hashes, joined to the first of them
    ph, dh = uniq[:, 0], uniq[:, 1]
    rep = idx[first]  # a record of each pair of hashes
    i, j = near_pairs(ph, ph, t, same=True)
    close = np.bitwise_count(dh[i] ^ dh[j]) <= t
    edges.append(np.stack([rep[i[close]], rep[j[close]]]))
    if mirror:
        mph = fp.phash_mirrored[rep]
        mdh = fp.dhash_mirrored[rep]
        i, j = near_pairs(mph, ph, t)
        close = (np.bitwise_count(mdh[i] ^ dh[j]) <= t) & (i != j)
        edges.append(np.stack([rep[i[close]], rep[j[close]]]))
    return edges


def _member(fp: Fingerprints, ref: int, r: int, mirror: bool) -> Member:
    if r == ref:
        return Member(r)
    if fp.embedding is not None:
        a, b = fp.embedding[ref].astype(np.float64), fp.embedding[r].astype(np.float64)
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        cos = float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0
        if np.array_equal(fp.payload[ref], fp.payload[r]):
            return Member(r, IDENTICAL, cosine=round(max(0.0, 1.0 - cos), 6))
        return Member(r, NEAR, cosine=round(max(0.0, 1.0 - cos), 6))
    if np.array_equal(fp.payload[ref], fp.payload[r]):
        return Member(r, IDENTICAL)
    if np.array_equal(fp.pixels[ref], fp.pixels[r]):
        return Member(r, PIXELS)

    def bits(x: Any, y: Any) -> int:
        return int(x ^ y).bit_count()

    direct = (bits(fp.phash[ref], fp.phash[r]), bits(fp.dhash[ref], fp.dhash[r]))
    if mirror:
        flipped = (
            bits(fp.phash_mirrored[ref], fp.phash[r]),
            bits(fp.dhash_mirrored[ref], fp.dhash[r]),
        )
        if max(flipped) < max(direct):
            return Member(r, NEAR, flipped[0], flipped[1], True)
    return Member(r, NEAR, direct[0], direct[1])


def find_groups(
    fp: Fingerprints,
    threshold: int = DEFAULT_THRESHOLD,
    *,
    mirror: bool = True,
    cosine: float | None = None,
    sides: np.ndarray | None = None,
) -> list[Group]:
    """The groups of records holding the same picture (see the module's docstring), each
    of at least two records, in the order of their first records. ``threshold``: bits of
    pHash and of dHash (at most :data:`MAX_THRESHOLD`); with an embedding in ``fp``, pairs
    are near by ``cosine`` distance (default :data:`DEFAULT_COSINE`) instead of hashes.
    ``sides`` (a number per record): only groups holding records of two sides or more."""
    if not 0 <= threshold <= MAX_THRESHOLD:
        raise ValueError(f"a Hamming threshold is from 0 to {MAX_THRESHOLD} bits, not {threshold}")
    n = len(fp)
    ok = fp.status == OK
    edges: list[np.ndarray] = [np.stack(_same_rows(fp.payload, ok))]
    if fp.embedding is not None:
        limit = DEFAULT_COSINE if cosine is None else cosine
        idx = np.flatnonzero(ok)
        i, j, _ = _cosine_pairs(fp.embedding[idx], limit)
        edges.append(np.stack([idx[i], idx[j]]))
    else:
        edges.append(np.stack(_same_rows(fp.pixels, ok)))
        edges.extend(_hash_edges(fp, ok, threshold, mirror))
    e = np.concatenate(edges, axis=1) if edges else np.zeros((2, 0), np.int64)
    label = _components(n, e[0], e[1])
    label = np.where(ok, label, -1)
    # groups of two records or more, in the order of their first (smallest) record
    idx = np.flatnonzero(label >= 0)
    order = np.lexsort((idx, label[idx]))
    idx = idx[order]
    labs = label[idx]
    starts = np.flatnonzero(np.r_[True, np.diff(labs) != 0])
    sizes = np.diff(np.r_[starts, len(labs)])
    groups: list[Group] = []
    for s0, size in zip(starts[sizes > 1].tolist(), sizes[sizes > 1].tolist()):
        part = idx[s0 : s0 + size]
        if sides is not None and len(np.unique(sides[part])) < 2:
            continue
        ref = int(part[0])
        use_mirror = mirror and fp.embedding is None
        groups.append(Group(tuple(_member(fp, ref, int(r), use_mirror) for r in part)))
    groups.sort(key=lambda g: g.members[0].record)
    return groups
