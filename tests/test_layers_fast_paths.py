"""The gallery's layers are read faster than they were (issue 25) and must say exactly what
the straightforward code said: each fast path here is checked against that code, kept in this
file as the reference, on generated records (random object counts 0–100, odd values, lists
of wrong lengths, features in a random order)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from typing import Any

import numpy as np
import pytest

from codec import detection as D
from codec import example as ex
from tests.layer_records import random_record

SEEDS = range(120)


def _old_pixels(
    b: D.StoredBox, width: int, height: int, normalized: bool
) -> tuple[float, float, float, float] | None:
    coords = (b.xmin, b.ymin, b.xmax, b.ymax)
    if not all(math.isfinite(c) for c in coords):
        return None
    sx, sy = (width, height) if normalized else (1, 1)
    x0, x1 = sorted((b.xmin * sx, b.xmax * sx))
    y0, y1 = sorted((b.ymin * sy, b.ymax * sy))
    clip_x = lambda v: min(max(v, 0.0), float(width))  # noqa: E731
    clip_y = lambda v: min(max(v, 0.0), float(height))  # noqa: E731
    return clip_x(x0), clip_y(y0), clip_x(x1), clip_y(y1)


def _old_factor_lists(layout: D.Layout, names: Iterable[str], kind: str) -> list[str]:
    first = [layout.prefix + r for r in D._FIRST_OF.get(kind, ())]
    mine = sorted(k for k in set(names) if D.list_kind(layout, k) == kind)
    return [k for k in first if k in mine] + [k for k in mine if k not in first]


def _old_box_problems(
    x0: float, y0: float, x1: float, y1: float, normalized: bool, width: int, height: int
) -> list[str]:
    bad = []
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)):
        bad.append("a coordinate is not a finite number")
    else:
        if normalized and not all(0.0 <= v <= 1.0 for v in (x0, y0, x1, y1)):
            bad.append("a coordinate is outside [0, 1]")
        if not normalized and (
            min(x0, y0, x1, y1) < 0 or max(x0, x1) > width or max(y0, y1) > height
        ):
            bad.append("the box reaches outside the picture")
        if x0 >= x1 or y0 >= y1:
            bad.append("xmin ≥ xmax or ymin ≥ ymax")
    return bad


def _same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN, and the sign of a zero counted."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and repr(a) == repr(b))
    return a == b and type(a) is type(b)


def test_box_pixels_are_the_old_pixels_for_every_kind_of_coordinate() -> None:
    rng = random.Random(5)
    odd = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1e-9, 1 + 1e-9, 640.0, 700.5]
    for _ in range(20_000):
        c = [rng.choice(odd) if rng.random() < 0.3 else rng.uniform(-2, 700) for _ in range(4)]
        box = D.StoredBox(0, *c)
        for normalized in (True, False):
            w, h = rng.choice([(640, 480), (1, 1), (160, 90)])
            old = _old_pixels(box, w, h, normalized)
            assert _same(box.pixels(w, h, normalized), old)
            assert _same(D.box_pixels(*c, w, h, normalized), old)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_records_boxes_and_lengths_are_described_as_before(seed: int) -> None:
    features = ex.decode(random_record(seed)).features
    for layout in D.layouts(features):
        names = tuple(layout.parallel)
        for kind in D.FACTORS:
            assert D.factor_lists(layout, names, kind) == _old_factor_lists(layout, names, kind)
        assert layout.boxes == tuple(f"{layout.prefix}bbox/{s}" for s in D.BBOX)
        for normalized in (True, False):
            got = D.record_boxes(features, layout, normalized=normalized, width=64, height=48)
            coords = [list(features[name].values) for name in layout.boxes]
            assert len(got.boxes) == min(len(c) for c in coords)
            for b in got.boxes:
                x0, y0, x1, y1 = (float(c[b.index]) for c in coords)
                assert _same((b.xmin, b.ymin, b.xmax, b.ymax), (x0, y0, x1, y1))
                assert list(b.problems) == _old_box_problems(x0, y0, x1, y1, normalized, 64, 48)


@pytest.mark.parametrize("seed", range(20))
def test_layouts_are_the_same_in_any_order_and_a_callers_list_is_its_own(seed: int) -> None:
    names = list(ex.decode(random_record(seed)).features)
    first = D.layouts(names)
    random.Random(seed).shuffle(names)
    again = D.layouts(iter(names))
    assert again == first and again is not first
    again.clear()
    assert D.layouts(names) == first
    assert tuple(D.layouts(names[:-1])) == D._layouts.__wrapped__(frozenset(names[:-1]))


def _old_known(values: np.ndarray, count: int) -> np.ndarray:
    v = np.asarray(values, np.float64).reshape(count)
    ok = np.isfinite(v) & (v >= 0)
    return np.where(ok, np.nan_to_num(v, nan=-1.0), -1).astype(np.int64)


def _old_expected(
    kinds: tuple[str, ...],
    n: np.ndarray,
    per: dict[str, np.ndarray],
    numbers: np.ndarray,
    px: np.ndarray,
    pts: np.ndarray,
) -> np.ndarray:
    expected = np.full((len(kinds), len(n)), -1, np.int64)
    for j, kind in enumerate(kinds):
        if kind in ("box", "object"):
            expected[j] = n
        elif kind in D.FACTORS:
            f = per[kind]
            expected[j] = np.where(f >= 0, n * f, -1)
        elif kind == "mask":
            expected[j] = np.where(numbers[j], np.where(px >= 0, n * px, -1), n)
        else:
            expected[j] = pts
    return expected


_TAILS = (
    "class/label",
    "score",
    "keypoint/x",
    "keypoint/y",
    "keypoint/visibility",
    "keypoint/num",
    "class/multiclass_scores",
    "mask",
    "densepose/num",
    "densepose/u",
    "area",
)


@pytest.mark.parametrize("seed", range(200))
def test_object_lengths_of_many_records_are_as_before(seed: int) -> None:
    rng = np.random.default_rng(seed)
    count = int(rng.integers(0, 12))
    prefix = "image/object/"
    tails = [t for t in _TAILS if rng.random() < 0.6]
    names = [f"{prefix}bbox/{s}" for s in D.BBOX] + [prefix + t for t in tails]
    order = list(rng.permutation(len(names)))
    names = [names[i] for i in order]
    n = rng.integers(0, 5, count)
    lengths = {
        k: np.where(
            rng.random(count) < 0.8, n * int(rng.integers(1, 4)), rng.integers(0, 20, count)
        )
        for k in names
    }
    numeric = {k: rng.random(count) < 0.5 for k in names}
    pixels = np.where(rng.random(count) < 0.2, np.nan, rng.integers(-2, 30, count).astype(float))
    points = rng.integers(-1, 10, count).astype(float)
    layout = D.layout_of(prefix, names)
    got = D.object_lengths(layout, lengths, numeric=numeric, pixels=pixels, points=points)
    assert np.array_equal(got.pixels, _old_known(pixels, count))
    want = _old_expected(got.kinds, got.n, got.factors, got.numeric, got.pixels, got.points)
    assert np.array_equal(got.expected, want)
    assert got.expected.shape == (len(names), count)
    kind_of = dict(zip(got.names, got.kinds))
    for kind in D.FACTORS:
        mine = [k for k in names if kind_of[k] == kind]
        assert (kind in got.factors) == bool(mine)


def _old_decide_normalized(values: Iterable[float], share: float = D.NORMALIZED_SHARE) -> bool:
    inside = total = 0
    for v in values:
        if math.isfinite(v):
            total += 1
            inside += 0.0 <= v <= 1.0
    return total == 0 or inside >= share * total


@pytest.mark.parametrize("seed", range(300))
def test_normalized_is_decided_as_before(seed: int) -> None:
    rng = random.Random(seed)
    odd = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, 1, 0, -1, 2**62, 1 + 1e-16, -1e-300]
    values: list[float] = [
        rng.choice(odd) if rng.random() < 0.3 else rng.uniform(-0.2, 1.3 if seed % 2 else 700)
        for _ in range(rng.randint(0, 400))
    ]
    for share in (D.NORMALIZED_SHARE, 0.5, 1.0, 0.0):
        want = _old_decide_normalized(values, share)
        assert D.decide_normalized(values, share) is want
        assert D.decide_normalized(iter(values), share) is want
        assert D.decide_normalized((v for v in values), share) is want
        assert D.decide_normalized(np.array(values, np.float64), share) is want
        assert D.decide_normalized(np.array(values, np.float64).reshape(-1, 1), share) is want


def _old_record_lengths(features: Any, layout: D.Layout) -> D.ObjectLengths:
    lengths: dict[str, np.ndarray] = {}
    numeric: dict[str, np.ndarray] = {}
    for name in layout.parallel:
        f = features.get(name)
        if f is None or f.type not in ("float", "int64", "bytes"):
            lengths[name], numeric[name] = np.zeros(1, np.int64), np.zeros(1, bool)
            continue
        lengths[name] = np.array([len(f.values)], np.int64)
        numeric[name] = np.array([f.type in ("float", "int64")], bool)
    height = D._values(features, layout.height, ("int64",)) or []
    width = D._values(features, layout.width, ("int64",)) or []
    pixels = np.array(
        [int(height[0]) * int(width[0]) if len(height) == 1 and len(width) == 1 else -1],
        np.float64,
    )
    nums = D._values(features, f"{layout.prefix}densepose/num", ("int64",))
    points = np.array([sum(int(v) for v in nums) if nums is not None else -1], np.float64)
    return D.object_lengths(layout, lengths, numeric=numeric, pixels=pixels, points=points)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_records_lengths_shared_with_records_alike_are_its_own(seed: int) -> None:
    features = ex.decode(random_record(seed)).features
    for layout in D.layouts(features):
        want = _old_record_lengths(features, layout)
        for _ in range(2):  # worked out, then shared
            got = D._record_lengths(features, layout)
            assert got.names == want.names and got.kinds == want.kinds
            for a, b in zip(
                (got.lengths, got.numeric, got.n, got.pixels, got.points, got.expected, got.wrong),
                (
                    want.lengths,
                    want.numeric,
                    want.n,
                    want.pixels,
                    want.points,
                    want.expected,
                    want.wrong,
                ),
            ):
                assert np.array_equal(a, b) and a.dtype == b.dtype and not a.flags.writeable
            assert got.factors.keys() == want.factors.keys()
            assert all(np.array_equal(got.factors[k], want.factors[k]) for k in want.factors)
            assert got.problems(0) == want.problems(0)
        k = D.keypoint_count(features, layout)
        assert k == D.keypoint_count(dict(features), layout)
