"""Object outlines: COCO's polygon rasterization, areas, boxes, random outlines, VOC's void band.

:func:`polygon_mask` turns COCO polygons into the binary mask ``create_coco_tf_record.py``
encodes, pixel for pixel: it follows ``rleFrPoly`` of pycocotools (``common/maskApi.c``, which
the writer calls through ``mask.frPyObjects`` and ``mask.decode``): the outline is walked at
five times the resolution, the points where it crosses a pixel column's centre are the run
boundaries of a column-major run-length code, and the polygons of one object are merged with a
maximum (``np.amax(binary_mask, axis=2)``). No pycocotools is needed.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np

__all__ = [
    "Polygon",
    "bbox_of",
    "outline_band",
    "polygon_area",
    "polygon_mask",
    "random_polygon",
]

Polygon = list[float]  # COCO: [x1, y1, x2, y2, ...] in pixels

_SCALE = 5  # pycocotools' upsampling of the outline


def _boundary(xy: Sequence[float], height: int, width: int) -> np.ndarray:
    """The run boundaries (column-major positions ``x * height + y``) of one polygon."""
    pts = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    # (int)(scale * v + .5): C truncates toward zero, as numpy's cast does.
    x = (_SCALE * pts[:, 0] + 0.5).astype(np.int64)
    y = (_SCALE * pts[:, 1] + 0.5).astype(np.int64)
    x = np.append(x, x[0])
    y = np.append(y, y[0])
    us: list[np.ndarray] = []
    vs: list[np.ndarray] = []
    for j in range(len(pts)):
        xs, xe, ys, ye = int(x[j]), int(x[j + 1]), int(y[j]), int(y[j + 1])
        dx, dy = abs(xe - xs), abs(ys - ye)
        flip = (dx >= dy and xs > xe) or (dx < dy and ys > ye)
        if flip:
            xs, xe, ys, ye = xe, xs, ye, ys
        if dx >= dy:
            s = (ye - ys) / dx if dx else 0.0
            d = np.arange(dx + 1)
            t = dx - d if flip else d
            us.append(t + xs)
            vs.append((ys + s * t + 0.5).astype(np.int64))
        else:
            s = (xe - xs) / dy
            d = np.arange(dy + 1)
            t = dy - d if flip else d
            vs.append(t + ys)
            us.append((xs + s * t + 0.5).astype(np.int64))
    u = np.concatenate(us)
    v = np.concatenate(vs)
    # Points where the outline steps to another (upsampled) column; keep those on a pixel
    # column's centre, with the row below the crossing.
    change = np.flatnonzero(u[1:] != u[:-1]) + 1
    uj, ui = u[change], u[change - 1]
    xd = np.where(uj < ui, uj, uj - 1).astype(np.float64)
    xd = (xd + 0.5) / _SCALE - 0.5
    keep = (np.floor(xd) == xd) & (xd >= 0) & (xd <= width - 1)
    yd = np.minimum(v[change], v[change - 1]).astype(np.float64)
    yd = (yd + 0.5) / _SCALE - 0.5
    yd = np.ceil(np.clip(yd, 0, height))
    return (xd[keep].astype(np.int64) * height + yd[keep].astype(np.int64)).astype(np.int64)


def polygon_mask(polygons: Sequence[Sequence[float]], height: int, width: int) -> np.ndarray:
    """The ``uint8`` mask (``height`` × ``width``, values 0 and 1) of an object outlined by
    ``polygons``, as pycocotools rasterizes them and ``create_coco_tf_record.py`` merges them."""
    out = np.zeros((height, width), dtype=np.uint8)
    n = height * width
    for xy in polygons:
        if len(xy) < 6:
            continue
        edges = _boundary(xy, height, width)
        counts = np.bincount(edges, minlength=n + 1)[:n]
        # A run-length code alternates 0 and 1 at each boundary: the parity of the boundaries
        # at or before a pixel is its value (two at one place cancel, as merged runs do).
        column_major = (np.cumsum(counts) & 1).astype(np.uint8)
        np.maximum(out, column_major.reshape(width, height).T, out=out)
    return out


def polygon_area(polygons: Sequence[Sequence[float]]) -> float:
    """The area of the outline (shoelace formula, summed over the polygons), as COCO's
    annotation files give ``area`` for polygon objects (a real number, not a pixel count)."""
    total = 0.0
    for xy in polygons:
        pts = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        x, y = pts[:, 0], pts[:, 1]
        total += 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))
    return total


def bbox_of(polygons: Sequence[Sequence[float]]) -> tuple[float, float, float, float]:
    """COCO's ``[x, y, width, height]`` of the outline's extent, in pixels."""
    pts = np.concatenate([np.asarray(xy, dtype=np.float64).reshape(-1, 2) for xy in polygons])
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    return float(x0), float(y0), float(x1 - x0), float(y1 - y0)


def random_polygon(rng: random.Random, width: int, height: int) -> Polygon:
    """A plausible object outline inside a ``width`` × ``height`` picture: a star-shaped
    polygon (6–14 corners around a centre, radius between 4% and 35% of the shorter side,
    each corner at 55–100% of it), coordinates to two decimals as COCO's files have them,
    never two equal corners in a row."""
    short = min(width, height)
    radius = max(2.0, rng.uniform(0.04, 0.35) * short)
    radius = min(radius, (width - 1) / 2, (height - 1) / 2)
    cx = rng.uniform(radius, width - 1 - radius)
    cy = rng.uniform(radius, height - 1 - radius)
    k = rng.randint(6, 14)
    start = rng.uniform(0, 2 * math.pi)
    angles = sorted(start + (i + rng.uniform(-0.3, 0.3)) * 2 * math.pi / k for i in range(k))
    out: Polygon = []
    for a in angles:
        r = radius * rng.uniform(0.55, 1.0)
        px = round(min(max(cx + r * math.cos(a), 0.0), width - 1.0), 2)
        py = round(min(max(cy + r * math.sin(a), 0.0), height - 1.0), 2)
        if out and (px, py) == (out[-2], out[-1]):
            continue
        out += [px, py]
    if len(out) >= 4 and (out[0], out[1]) == (out[-2], out[-1]):
        out = out[:-2]
    if len(out) < 6:  # a degenerate draw (a tiny picture): a triangle around the centre
        out = [round(cx, 2), round(max(cy - radius, 0.0), 2)]
        out += [round(max(cx - radius, 0.0), 2), round(min(cy + radius, height - 1.0), 2)]
        out += [round(min(cx + radius, width - 1.0), 2), round(min(cy + radius, height - 1.0), 2)]
    return out


def _dilate(mask: np.ndarray, r: int) -> np.ndarray:
    """``mask`` grown by ``r`` pixels (a square window), by shifted maxima."""
    out = mask.copy()
    h, w = mask.shape
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            if dx == 0 and dy == 0:
                continue
            ys, yd = (
                (slice(0, h - dy), slice(dy, h)) if dy >= 0 else (slice(-dy, h), slice(0, h + dy))
            )
            xs, xd = (
                (slice(0, w - dx), slice(dx, w)) if dx >= 0 else (slice(-dx, w), slice(0, w + dx))
            )
            np.maximum(out[yd, xd], mask[ys, xs], out=out[yd, xd])
    return out


def outline_band(mask: np.ndarray, width: int = 5) -> np.ndarray:
    """The pixels within a band ``width`` pixels wide centred on the object's outline: where
    PASCAL VOC's class maps put the void label 255."""
    r = width // 2
    m = mask.astype(bool)
    grown = _dilate(m, r)
    shrunk = ~_dilate(~m, r)
    return grown & ~shrunk
