"""Object detection evaluation: predictions against ground truth, exactly as the COCO reference
implementation (pycocotools' ``COCOeval``, ``iouType="bbox"``) computes it, vectorised.

Everything here is numbers in numpy arrays: objects of many images at once, classes as
numbers (``0..classes-1``, in the order a caller sorts them: COCOeval's category order),
images as numbers. Reading records is :mod:`codec.jobs.evaluate`'s.

:func:`match` is ``COCOeval.evaluate`` (``evaluateImg`` for every image and class, area range
"all", ``maxDets`` 100), :func:`accumulate` is ``COCOeval.accumulate`` with the summary
figures of ``summarize``. Their conventions, each as ``cocoeval.py`` has it:

- **Boxes** are ``(x, y, w, h)`` floats (:func:`xywh`: ``w = xmax - xmin``), in any
  coordinates, the same for both sides (normalised or pixels: IoU does not depend on the
  scale). Areas are ``w * h`` in those coordinates, for both sides (the ``area`` COCOeval
  reads; a ground-truth ``area`` list of a record is not used).
- **IoU** is ``maskUtils.iou``'s ``bbIou``: intersection over union, and for a crowd
  ground-truth object intersection over the detection's area. With ``iou_type="segm"``
  (COCOeval's ``iouType="segm"``) it is ``rleIou`` on the objects' masks (:data:`Mask`, given
  to :meth:`Truth.of` / :meth:`Predictions.of`): pixels in both over pixels in either (over
  the detection's pixels for a crowd object), 0 when no pixel is shared, -1 (never a match)
  for masks of different sizes; and areas, for the area ranges, are the masks' pixel counts
  (``maskUtils.area``, the ``area`` ``loadRes`` gives a segm result; ground truth's ``area``
  must be the same for COCOeval to agree).
- **Ignored ground truth**: crowd objects (``is_crowd``), Pascal VOC ``difficult`` objects,
  and objects whose area is outside the area range. An ignored object may be matched (the
  detection is then neither a true nor a false positive) and never counts as missed. A crowd
  object takes any number of detections; a difficult one is ignored *without* being crowd:
  one detection at most, as COCOeval treats an ``ignore`` flag on a non-crowd object. (This
  is COCOeval's rule — a detection goes to an unignored object when it can — which may
  differ from the VOC devkit, where the best-IoU object decides, in the rare detection that
  overlaps both a difficult and a plain object above the threshold.)
- **Matching**, per image and class (per image when class-agnostic, COCOeval's
  ``useCats=0``): detections by descending score (a stable sort: equal scores keep their
  order in the image's list — class-agnostic, class by class first, as COCOeval concatenates
  them), the first ``max_dets`` evaluated and the rest left out; ground truth unignored
  first; at each IoU threshold each detection in turn takes the free object of best IoU at or
  above the threshold (ties: the later object), an unignored one when there is one.
- **Accumulate**: per class, the detections of all images by descending score (stable, in
  image order), cumulative true and false positives, precision made monotone, read at the
  101 recall points ``0:.01:1``; AP is the mean over the ten IoU thresholds
  ``.50:.05:.95`` and the 101 points, AP50 and AP75 at one threshold, AR@100 the mean
  recall over the thresholds. A class without unignored ground truth has no AP (COCOeval's
  -1, here ``NaN``/``None``), and is left out of the means.

Beyond COCOeval, at the IoU a person chooses (``iou``, 0.5 by default; evaluated as an
eleventh threshold when it is not one of the ten): each object's outcome (:data:`OUTCOMES`)
with its IoU and partner, true/false positive and miss counts per class, precision at the
recall points, and a confusion matrix (:func:`confusion`).

The per-image answers (:class:`Matches`) concatenate: a dataset split into parts in image
order gives, merged with :func:`merge_matches`, the very arrays one call gives, so
:func:`accumulate` gives the same figures bit for bit whatever the split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "AREA_ALL",
    "COCO_IOUS",
    "FN",
    "FP",
    "IGNORED",
    "IOU_TYPES",
    "MAX_DETS",
    "OUTCOMES",
    "RECALLS",
    "TP",
    "UNEVALUATED",
    "Evaluation",
    "Mask",
    "Matches",
    "Outcomes",
    "Predictions",
    "Truth",
    "accumulate",
    "box_iou",
    "confusion",
    "mask_area",
    "mask_iou",
    "match",
    "merge_matches",
    "thresholds_for",
    "xywh",
]

# COCOeval's Params.setDetParams, expression for expression (np.arange would differ in the
# last bits, as its comment says).
COCO_IOUS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
RECALLS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
MAX_DETS = 100
AREA_ALL = (0.0**2, 1e5**2)
_TOP = 1 - 1e-10  # evaluateImg's min([t, 1 - 1e-10])

OUTCOMES = ("tp", "fp", "fn", "ignored", "unevaluated")
"""What an object is at the chosen IoU: a true positive (ground truth matched, or a prediction
matching it), a false positive (a prediction matching nothing), a false negative (ground truth
no prediction matched), ignored (crowd, difficult or out-of-range ground truth, and the
predictions matching it), or unevaluated (a prediction past ``max_dets`` in its image)."""
TP, FP, FN, IGNORED, UNEVALUATED = range(len(OUTCOMES))

Mask = tuple[np.ndarray, tuple[int, int], tuple[int, int]] | None
"""One object's mask as :mod:`codec.layers` keeps it: the bool part that holds all of it, where
that part starts (x, y) in the mask, and the mask's (width, height); None for an empty mask."""

_PAIR_BUDGET = 1 << 22  # IoU values per batch of groups (and pairs per batch of images)


def xywh(xmin: np.ndarray, ymin: np.ndarray, xmax: np.ndarray, ymax: np.ndarray) -> np.ndarray:
    """``(n, 4)`` float64 boxes ``(x, y, w, h)`` from corner lists (COCO's ``bbox``)."""
    x0 = np.asarray(xmin, np.float64)
    y0 = np.asarray(ymin, np.float64)
    return np.stack(
        [x0, y0, np.asarray(xmax, np.float64) - x0, np.asarray(ymax, np.float64) - y0], 1
    )


def _positions(image: np.ndarray) -> np.ndarray:
    """Each row's position among the rows of its image, in the given order."""
    n = len(image)
    if not n:
        return np.zeros(0, np.int64)
    order = np.argsort(image, kind="stable")
    sorted_ = image[order]
    first = np.searchsorted(sorted_, sorted_, "left")
    out = np.empty(n, np.int64)
    out[order] = np.arange(n) - first
    return out


@dataclass
class Truth:
    """Ground-truth objects of many images, one row each: ``image`` (number), ``box``
    (``(n, 4)`` x, y, w, h), ``cls`` (class number), ``crowd``, ``difficult``, and ``index``
    (the object's place in its image's list: the order COCOeval keeps among equals);
    ``masks`` (an object array of :data:`Mask`, or None) for ``iou_type="segm"``."""

    image: np.ndarray
    box: np.ndarray
    cls: np.ndarray
    crowd: np.ndarray
    difficult: np.ndarray
    index: np.ndarray
    masks: np.ndarray | None = None

    @classmethod
    def of(
        cls,
        image: Sequence[int] | np.ndarray,
        box: Sequence[Sequence[float]] | np.ndarray,
        classes: Sequence[int] | np.ndarray,
        crowd: Sequence[bool] | np.ndarray | None = None,
        difficult: Sequence[bool] | np.ndarray | None = None,
        index: Sequence[int] | np.ndarray | None = None,
        masks: Sequence[Mask] | np.ndarray | None = None,
    ) -> Truth:
        img = np.asarray(image, np.int64).reshape(-1)
        n = len(img)
        return cls(
            img,
            np.asarray(box, np.float64).reshape(n, 4),
            np.asarray(classes, np.int64).reshape(n),
            np.zeros(n, bool) if crowd is None else np.asarray(crowd, bool).reshape(n),
            np.zeros(n, bool) if difficult is None else np.asarray(difficult, bool).reshape(n),
            _positions(img) if index is None else np.asarray(index, np.int64).reshape(n),
            None if masks is None else _mask_array(masks, n),
        )

    def __len__(self) -> int:
        return len(self.image)


@dataclass
class Predictions:
    """Predicted objects of many images, one row each: ``image``, ``box`` (x, y, w, h),
    ``cls``, ``score`` and ``index`` (the place in its image's list); ``masks`` (an object
    array of :data:`Mask`, or None) for ``iou_type="segm"``."""

    image: np.ndarray
    box: np.ndarray
    cls: np.ndarray
    score: np.ndarray
    index: np.ndarray
    masks: np.ndarray | None = None

    @classmethod
    def of(
        cls,
        image: Sequence[int] | np.ndarray,
        box: Sequence[Sequence[float]] | np.ndarray,
        classes: Sequence[int] | np.ndarray,
        score: Sequence[float] | np.ndarray,
        index: Sequence[int] | np.ndarray | None = None,
        masks: Sequence[Mask] | np.ndarray | None = None,
    ) -> Predictions:
        img = np.asarray(image, np.int64).reshape(-1)
        n = len(img)
        return cls(
            img,
            np.asarray(box, np.float64).reshape(n, 4),
            np.asarray(classes, np.int64).reshape(n),
            np.asarray(score, np.float64).reshape(n),
            _positions(img) if index is None else np.asarray(index, np.int64).reshape(n),
            None if masks is None else _mask_array(masks, n),
        )

    def __len__(self) -> int:
        return len(self.image)


@dataclass
class Outcomes:
    """What each object of one side is at the chosen IoU, row for row with the objects given
    to :func:`match`: ``image``, ``index``, ``cls``, ``outcome`` (a number of
    :data:`OUTCOMES`), ``iou`` with its partner (``NaN``: none) and ``partner``, the partner's
    ``index`` in the other side's list of the same image (-1: none; a crowd object matched
    many times names the last)."""

    image: np.ndarray
    index: np.ndarray
    cls: np.ndarray
    outcome: np.ndarray
    iou: np.ndarray
    partner: np.ndarray

    def __len__(self) -> int:
        return len(self.image)

    def counts(self, classes: int) -> np.ndarray:
        """``(classes, len(OUTCOMES))``: how many objects of each class have each outcome."""
        flat = self.cls * len(OUTCOMES) + self.outcome
        got = np.bincount(flat, minlength=classes * len(OUTCOMES))
        return got.reshape(classes, len(OUTCOMES))

    @staticmethod
    def concat(
        parts: Sequence[Outcomes], offsets: Sequence[int], maps: Sequence[np.ndarray]
    ) -> Outcomes:
        """The outcomes of parts in order, their images shifted by ``offsets`` and classes
        renumbered by ``maps`` (local number → number of the whole)."""
        if not parts:
            return _no_outcomes()
        return Outcomes(
            np.concatenate([p.image + o for p, o in zip(parts, offsets)]),
            np.concatenate([p.index for p in parts]),
            np.concatenate([m[p.cls] for p, m in zip(parts, maps)]),
            np.concatenate([p.outcome for p in parts]),
            np.concatenate([p.iou for p in parts]),
            np.concatenate([p.partner for p in parts]),
        )


def _no_outcomes() -> Outcomes:
    e = np.zeros(0, np.int64)
    return Outcomes(e, e, e, np.zeros(0, np.int8), np.zeros(0, np.float64), e)


@dataclass
class Matches:
    """COCOeval's per-image answers (``evalImgs``) of many images, compact: what
    :func:`accumulate` needs and the chosen IoU's outcomes.

    ``thresholds`` are the IoU thresholds matched at (the ten, then the chosen one when it is
    not among them), ``chosen`` the chosen one's place. The evaluated detections, in the
    order COCOeval concatenates them (image by image; class by class within an image unless
    ``agnostic``; by descending score), have ``det_class``, ``det_score`` and bit masks of
    the thresholds at which each is a true (``det_tp``) or false (``det_fp``) positive (an
    ignored one is neither). ``counted``: unignored ground-truth objects per class.
    ``confusion``: ``(classes + 1)²`` counts, truth by row, prediction by column, the last
    row and column "background" (:func:`confusion`)."""

    thresholds: np.ndarray
    chosen: int
    agnostic: bool
    classes: int
    images: int
    det_class: np.ndarray
    det_score: np.ndarray
    det_tp: np.ndarray
    det_fp: np.ndarray
    counted: np.ndarray
    truth: Outcomes
    predictions: Outcomes
    confusion: np.ndarray


def thresholds_for(iou: float) -> tuple[np.ndarray, int]:
    """The IoU thresholds matched at for a chosen ``iou``, and its place among them: COCO's
    ten, then ``iou`` when it is none of them."""
    if not 0.0 < iou <= 1.0:
        raise ValueError(f"the IoU threshold must be above 0 and at most 1, not {iou}")
    near = np.flatnonzero(np.abs(COCO_IOUS - iou) < 1e-12)
    if near.size:
        return COCO_IOUS.copy(), int(near[0])
    return np.append(COCO_IOUS, iou), len(COCO_IOUS)


def box_iou(det: np.ndarray, gt: np.ndarray, crowd: np.ndarray) -> np.ndarray:
    """IoU of box pairs, row for row (``det``, ``gt``: ``(n, 4)`` x, y, w, h; ``crowd``: the
    ground truth's flag): ``maskUtils.iou``'s ``bbIou`` operation for operation, so the
    values are the very doubles it gives. 0 for boxes that do not overlap."""
    return _iou(np.ascontiguousarray(det.T), np.ascontiguousarray(gt.T), crowd)


def _iou(det: np.ndarray, gt: np.ndarray, crowd: np.ndarray | bool) -> np.ndarray:
    """:func:`box_iou` of boxes given as columns (``(4, n)``: x, y, w, h rows)."""
    dx, dy, dw, dh = det
    gx, gy, gw, gh = gt
    # np.minimum is fmin for the finite values evaluated (and many times faster)
    w = np.minimum(dw + dx, gw + gx) - np.maximum(dx, gx)
    h = np.minimum(dh + dy, gh + gy) - np.maximum(dy, gy)
    inter = w * h
    da = dw * dh
    union = np.where(crowd, da, da + gw * gh - inter)
    overlap = (w > 0) & (h > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(overlap, inter / np.where(overlap, union, 1.0), 0.0)


def _mask_array(masks: Sequence[Mask] | np.ndarray, n: int) -> np.ndarray:
    """Masks as a one-dimensional object array of ``n`` (each a :data:`Mask`)."""
    out = np.empty(n, object)
    got = list(masks)
    if len(got) != n:
        raise ValueError(f"{n} objects but {len(got)} masks")
    for i, m in enumerate(got):
        out[i] = m
    return out


def mask_area(masks: np.ndarray) -> np.ndarray:
    """Each mask's pixels (``maskUtils.area``; 0 for an empty one), as float64."""
    return np.fromiter(
        (0 if m is None else int(np.count_nonzero(m[0])) for m in masks), np.float64, len(masks)
    )


def mask_iou(det: np.ndarray, gt: np.ndarray, crowd: np.ndarray | bool) -> np.ndarray:
    """IoU of mask pairs, row for row (object arrays of :data:`Mask`; ``crowd``: the ground
    truth's flag): ``maskUtils.iou``'s ``rleIou``. Pixels in both over pixels in either (a
    crowd object: over the detection's pixels), counted exactly, so the value is the very
    double it gives; 0 when no pixel is shared (an empty mask shares none), -1 for masks of
    different sizes that would overlap (rleIou's answer: never a match)."""
    n = len(det)
    out = np.zeros(n)
    flags = np.broadcast_to(np.asarray(crowd, bool), (n,))
    for i in range(n):
        d, g = det[i], gt[i]
        if d is None or g is None:
            continue
        dm, (dx, dy), dsize = d
        gm, (gx, gy), gsize = g
        x0, y0 = max(dx, gx), max(dy, gy)
        x1 = min(dx + dm.shape[1], gx + gm.shape[1])
        y1 = min(dy + dm.shape[0], gy + gm.shape[0])
        if x1 <= x0 or y1 <= y0:
            continue
        if dsize != gsize:
            out[i] = -1.0
            continue
        inter = int(
            np.count_nonzero(
                dm[y0 - dy : y1 - dy, x0 - dx : x1 - dx] & gm[y0 - gy : y1 - gy, x0 - gx : x1 - gx]
            )
        )
        if not inter:
            continue
        da = int(np.count_nonzero(dm))
        union = da if flags[i] else da + int(np.count_nonzero(gm)) - inter
        out[i] = inter / union
    return out


def _gather(values: np.ndarray, at: np.ndarray, missing: Any) -> np.ndarray:
    """``values[at]``, ``missing`` where ``at`` is -1 (``values`` may be empty then)."""
    if not len(values):
        return np.full(at.shape, missing, dtype=np.asarray(missing).dtype)
    return np.where(at >= 0, values[np.maximum(at, 0)], missing)


def _pairs(
    a_first: np.ndarray, a_count: np.ndarray, b_first: np.ndarray, b_count: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (a, b) row pair of each group (``a_first[j]``.. ``a_count[j]`` rows of one side,
    likewise of the other): ``(group, a row, b row)``, group by group, a-major."""
    per = a_count * b_count
    total = int(per.sum())
    group = np.repeat(np.arange(len(per)), per)
    within = np.arange(total) - np.repeat(np.cumsum(per) - per, per)
    bc = b_count[group]
    return group, a_first[group] + within // bc, b_first[group] + within % bc


def _last_best(value: np.ndarray) -> np.ndarray:
    """Along the last axis, the last position holding the largest value."""
    n = value.shape[-1]
    return n - 1 - np.argmax(value[..., ::-1], axis=-1)


def _greedy(
    iou: np.ndarray, ignored: np.ndarray, crowd: np.ndarray, dets: np.ndarray, thr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """evaluateImg's matching loop for ``n`` groups at once (``iou``: ``(n, D, G)``, -1 where
    there is no object; ``ignored``, ``crowd``: ``(n, G)``; ``dets``: detections per group,
    descending), at every threshold of ``thr``. Returns the object each detection matched
    (``(n, T, D)``, -1: none) and the detection that matched each object last
    (``(n, T, G)``)."""
    n, dmax, gmax = iou.shape
    t = len(thr)
    matched = np.zeros((n, t, gmax), bool)
    g_partner = np.full((n, t, gmax), -1, np.int64)
    d_partner = np.full((n, t, dmax), -1, np.int64)
    active = (dets[None, :] > np.arange(dmax)[:, None]).sum(axis=1)
    plain = ~ignored[:, None, :]
    again = crowd[:, None, :]
    level = thr[None, :, None]
    for d in range(dmax):
        k = int(active[d])
        io = iou[:k, d, None, :]  # (k, 1, G)
        # a free object (or a crowd, free always) at or above the threshold ...
        cand = (io >= level) & (~matched[:k] | again[:k])
        first = cand & plain[:k]  # ... unignored ones first (evaluateImg's break)
        best = np.where(
            first.any(axis=2),
            _last_best(np.where(first, io, -1.0)),
            np.where(cand.any(axis=2), _last_best(np.where(cand, io, -1.0)), -1),
        )
        rows, ts = np.nonzero(best >= 0)
        gs = best[rows, ts]
        matched[rows, ts, gs] = True
        g_partner[rows, ts, gs] = d
        d_partner[rows, ts, d] = gs
    return d_partner, g_partner


def _batches(g_count: np.ndarray, d_count: np.ndarray, t: int) -> list[np.ndarray]:
    """Groups (numbers into the counts) in batches of like sizes, each small enough that its
    padded IoU and matching arrays stay within the budget; within a batch, most detections
    first."""
    order = np.lexsort((d_count, g_count))
    gs, ds = g_count[order], d_count[order]
    out: list[np.ndarray] = []
    start, n = 0, len(order)
    while start < n:
        stop = min(n, start + _PAIR_BUDGET)
        g = gs[start:stop]
        d = np.maximum.accumulate(ds[start:stop])
        size = np.arange(1, stop - start + 1) * np.maximum(g * d, t * np.maximum(g, d))
        take = max(1, int(np.searchsorted(size, _PAIR_BUDGET, "right")))
        batch = order[start : start + take]
        out.append(batch[np.argsort(-d_count[batch], kind="stable")])
        start += take
    return out


def match(
    truth: Truth,
    predictions: Predictions,
    *,
    images: int,
    classes: int,
    iou: float = 0.5,
    agnostic: bool = False,
    max_dets: int = MAX_DETS,
    area: tuple[float, float] = AREA_ALL,
    with_confusion: bool = True,
    iou_type: str = "bbox",
) -> Matches:
    """COCOeval's ``evaluate`` (every image and class, one area range, ``max_dets``) over
    ``images`` images and ``classes`` classes, and the outcomes at ``iou`` (see the module's
    docstring for every rule). Boxes must be finite, scores too. Without
    ``with_confusion`` the confusion matrix is left empty (zeros), for a caller that needs
    only the outcomes. ``iou_type`` is COCOeval's: ``"bbox"`` (boxes) or ``"segm"`` (the
    masks both sides must carry, areas their pixel counts)."""
    segm = _segm(iou_type, truth, predictions)
    thresholds, chosen = thresholds_for(iou)
    thr = np.minimum(thresholds, _TOP)
    t = len(thresholds)
    k = max(classes, 1)
    ng, nd = len(truth), len(predictions)
    g_area = (
        mask_area(truth.masks)
        if segm and truth.masks is not None
        else truth.box[:, 2] * truth.box[:, 3]
    )
    g_ig = truth.crowd | truth.difficult | (g_area < area[0]) | (g_area > area[1])
    gkey = truth.image if agnostic else truth.image * k + truth.cls
    dkey = predictions.image if agnostic else predictions.image * k + predictions.cls
    g_order = np.lexsort((truth.index, truth.cls, g_ig, gkey))
    d_order = np.lexsort((predictions.index, predictions.cls, -predictions.score, dkey))
    gk = gkey[g_order]
    dk_all = dkey[d_order]
    rank = np.arange(nd) - np.searchsorted(dk_all, dk_all, "left")
    keep = rank < max_dets
    ev = d_order[keep]  # evaluated detections (input rows), in COCOeval's order
    dk = dk_all[keep]
    ne = len(ev)
    g_ig_s = g_ig[g_order]
    g_crowd_s = truth.crowd[g_order]
    g_box_s = truth.box[g_order]
    d_box_s = predictions.box[ev]
    g_cols = np.ascontiguousarray(g_box_s.T)  # boxes as columns, gathered fast
    d_cols = np.ascontiguousarray(d_box_s.T)
    g_masks_s = truth.masks[g_order] if segm and truth.masks is not None else None
    d_masks_s = predictions.masks[ev] if segm and predictions.masks is not None else None

    det_match = np.full((ne, t), -1, np.int64)  # sorted truth row
    det_iou = np.full(ne, np.nan)
    gt_match = np.full(ng, -1, np.int64)  # evaluated detection row, at the chosen threshold
    gt_iou = np.full(ng, np.nan)
    g_keys, g_first, g_count = np.unique(gk, return_index=True, return_counts=True)
    d_keys, d_first, d_count = np.unique(dk, return_index=True, return_counts=True)
    _, gi, di = np.intersect1d(g_keys, d_keys, assume_unique=True, return_indices=True)
    gf, gc, df, dc = g_first[gi], g_count[gi], d_first[di], d_count[di]
    for batch in _batches(gc, dc, t):
        n = len(batch)
        gmax, dmax = int(gc[batch].max()), int(dc[batch].max())
        grp, drow, grow = _pairs(df[batch], dc[batch], gf[batch], gc[batch])
        if g_masks_s is not None and d_masks_s is not None:
            values = mask_iou(d_masks_s[drow], g_masks_s[grow], g_crowd_s[grow])
        else:
            values = _iou(d_cols[:, drow], g_cols[:, grow], g_crowd_s[grow])
        pad = np.full((n, dmax, gmax), -1.0)
        pad[grp, drow - df[batch][grp], grow - gf[batch][grp]] = values
        gslots = gf[batch][:, None] + np.arange(gmax)[None, :]
        inside = np.arange(gmax)[None, :] < gc[batch][:, None]
        gslots = np.where(inside, gslots, 0)
        ign = np.where(inside, g_ig_s[gslots], False)
        crw = np.where(inside, g_crowd_s[gslots], False)
        d_partner, g_partner = _greedy(pad, ign, crw, dc[batch], thr)
        # back to rows: detections ...
        r, d = np.nonzero(np.arange(dmax)[None, :] < dc[batch][:, None])
        rows = df[batch][r] + d
        got = d_partner[r, :, d]  # (m, T)
        det_match[rows] = np.where(got >= 0, gf[batch][r][:, None] + got, -1)
        at = got[:, chosen]
        det_iou[rows] = np.where(at >= 0, pad[r, d, np.maximum(at, 0)], np.nan)
        # ... and objects
        r, s = np.nonzero(inside)
        rows = gf[batch][r] + s
        got_g = g_partner[r, chosen, s]
        gt_match[rows] = np.where(got_g >= 0, df[batch][r] + got_g, -1)
        gt_iou[rows] = np.where(got_g >= 0, pad[r, np.maximum(got_g, 0), s], np.nan)

    d_area = d_box_s[:, 2] * d_box_s[:, 3] if d_masks_s is None else mask_area(d_masks_s)
    hit = det_match >= 0
    det_ig = _gather(g_ig_s, det_match, False)
    out_of_range = (d_area < area[0]) | (d_area > area[1])
    det_ig |= ~hit & out_of_range[:, None]
    bits = (1 << np.arange(t)).astype(np.uint16)
    det_tp = ((hit & ~det_ig) * bits).sum(axis=1).astype(np.uint16)
    det_fp = ((~hit & ~det_ig) * bits).sum(axis=1).astype(np.uint16)
    counted = np.bincount(truth.cls[~g_ig], minlength=classes).astype(np.int64)

    # outcomes at the chosen threshold, row for row with the input
    t_out = np.where(g_ig_s, IGNORED, np.where(gt_match >= 0, TP, FN)).astype(np.int8)
    t_partner = _gather(predictions.index[ev], gt_match, -1)
    truth_out = Outcomes(
        truth.image.copy(),
        truth.index.copy(),
        truth.cls.copy(),
        np.empty(ng, np.int8),
        np.empty(ng),
        np.empty(ng, np.int64),
    )
    truth_out.outcome[g_order] = t_out
    truth_out.iou[g_order] = gt_iou
    truth_out.partner[g_order] = t_partner
    at = det_match[:, chosen]
    p_out = np.where(det_ig[:, chosen], IGNORED, np.where(at >= 0, TP, FP)).astype(np.int8)
    p_partner = _gather(truth.index[g_order], at, -1)
    pred_out = Outcomes(
        predictions.image.copy(),
        predictions.index.copy(),
        predictions.cls.copy(),
        np.full(nd, UNEVALUATED, np.int8),
        np.full(nd, np.nan),
        np.full(nd, -1, np.int64),
    )
    pred_out.outcome[ev] = p_out
    pred_out.iou[ev] = det_iou
    pred_out.partner[ev] = p_partner
    if with_confusion:
        grid = confusion(
            truth,
            predictions,
            ev,
            g_ig,
            classes=classes,
            iou=float(thresholds[chosen]),
            iou_type="segm" if segm else "bbox",
        )
    else:
        grid = np.zeros((classes + 1, classes + 1), np.int64)
    return Matches(
        thresholds,
        chosen,
        agnostic,
        classes,
        images,
        predictions.cls[ev].astype(np.int32),
        predictions.score[ev].copy(),
        det_tp,
        det_fp,
        counted,
        truth_out,
        pred_out,
        grid,
    )


def confusion(
    truth: Truth,
    predictions: Predictions,
    evaluated: np.ndarray,
    ignored: np.ndarray,
    *,
    classes: int,
    iou: float,
    iou_type: str = "bbox",
) -> np.ndarray:
    """The confusion matrix at ``iou`` (of boxes; of masks with ``iou_type="segm"``), as
    FiftyOne's and the TF Object Detection confusion matrices count it: ``(classes + 1)²``
    counts, ground truth's class by row, prediction's by column, the last row and column
    "background". Per image, the ``evaluated`` predictions (rows of ``predictions``) and the
    unignored ground truth are paired one to one, whatever their classes, best IoU first (ties:
    higher score, then earlier prediction, then earlier object), among pairs at or above
    ``iou``; a pair counts at (truth's class, prediction's class), an object left alone at (its
    class, background), a prediction left alone at (background, its class) — unless it overlaps
    an ignored object (crowd: by the crowd rule) at or above ``iou``, when it is not counted."""
    k = classes
    grid = np.zeros((k + 1, k + 1), np.int64)
    g_rows = np.flatnonzero(~ignored)
    i_rows = np.flatnonzero(ignored)
    d_rows = np.asarray(evaluated, np.int64)
    thr = min(iou, _TOP)
    d_cols = np.ascontiguousarray(predictions.box.T)  # boxes as columns, gathered fast
    g_cols = np.ascontiguousarray(truth.box.T)
    segm = _segm(iou_type, truth, predictions)

    def pair_iou(dd: np.ndarray, gg: np.ndarray, crowd: np.ndarray | bool) -> np.ndarray:
        if segm and predictions.masks is not None and truth.masks is not None:
            return mask_iou(predictions.masks[dd], truth.masks[gg], crowd)
        return _iou(d_cols[:, dd], g_cols[:, gg], crowd)

    paired_g = np.zeros(len(truth), bool)
    paired_d = np.zeros(len(predictions), bool)
    absorbed = np.zeros(len(predictions), bool)
    for dsel, gsel, igsel in _image_batches(predictions.image, truth.image, d_rows, g_rows, i_rows):
        # unignored objects: one to one, best IoU first
        dd, gg = _image_pairs(predictions.image, truth.image, dsel, gsel)
        if len(dd):
            v = pair_iou(dd, gg, False)
            ok = v >= thr
            dd, gg, v = dd[ok], gg[ok], v[ok]
            order = np.lexsort((truth.index[gg], predictions.index[dd], -predictions.score[dd], -v))
            dd, gg = dd[order], gg[order]
            while len(dd):
                _, first_d = np.unique(dd, return_index=True)
                _, first_g = np.unique(gg, return_index=True)
                take = np.zeros(len(dd), bool)
                take[np.intersect1d(first_d, first_g, assume_unique=True)] = True
                td, tg = dd[take], gg[take]
                paired_d[td] = True
                paired_g[tg] = True
                _add(grid, truth.cls[tg], predictions.cls[td])
                left = ~paired_d[dd] & ~paired_g[gg]
                dd, gg = dd[left], gg[left]
        # predictions on ignored objects are not counted
        dd, gg = _image_pairs(predictions.image, truth.image, dsel, igsel)
        if len(dd):
            v = pair_iou(dd, gg, truth.crowd[gg])
            absorbed[dd[v >= thr]] = True
    lone_g = g_rows[~paired_g[g_rows]]
    _add(grid, truth.cls[lone_g], np.full(len(lone_g), k))
    lone_d = d_rows[~paired_d[d_rows] & ~absorbed[d_rows]]
    _add(grid, np.full(len(lone_d), k), predictions.cls[lone_d])
    return grid


IOU_TYPES = ("bbox", "segm")
"""What objects are compared by: COCOeval's ``iouType`` values this module computes."""


def _segm(iou_type: str, truth: Truth, predictions: Predictions) -> bool:
    """Whether masks are compared (``iou_type`` ``"segm"``); a bad type, or ``"segm"``
    without masks on both sides, is an error."""
    if iou_type not in IOU_TYPES:
        raise ValueError(f"the IoU type is 'bbox' or 'segm', not {iou_type!r}")
    if iou_type == "bbox":
        return False
    lacking = [
        side
        for side, m in (("ground truth", truth.masks), ("predictions", predictions.masks))
        if m is None
    ]
    if lacking:
        raise ValueError(
            f"segm IoU needs masks on both sides; the {' and the '.join(lacking)} have none"
        )
    return True


def _add(grid: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> None:
    """Count each (row, column) pair into ``grid``."""
    size = grid.shape[1]
    grid += np.bincount(rows * size + cols, minlength=grid.size).reshape(grid.shape)


def _image_batches(
    d_image: np.ndarray,
    g_image: np.ndarray,
    d_rows: np.ndarray,
    g_rows: np.ndarray,
    i_rows: np.ndarray,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The rows of each side (predictions, unignored and ignored truth) in batches of whole
    images, each with about ``_PAIR_BUDGET`` pairs at most (an image alone may have more)."""
    if not len(d_rows) or not (len(g_rows) or len(i_rows)):
        return []
    images = np.unique(d_image[d_rows])
    dn = np.bincount(np.searchsorted(images, d_image[d_rows]), minlength=len(images))
    gi = g_image[np.concatenate([g_rows, i_rows])]
    gi = gi[np.isin(gi, images)]
    gn = np.bincount(np.searchsorted(images, gi), minlength=len(images))
    cost = np.cumsum(dn * gn)
    marks = np.arange(_PAIR_BUDGET, int(cost[-1]) + _PAIR_BUDGET, _PAIR_BUDGET)
    cuts = np.minimum(np.searchsorted(cost, marks, "right"), len(images))
    edges = np.unique(np.concatenate([[0], cuts, [len(images)]]))
    out = []
    for a, b in zip(edges[:-1].tolist(), edges[1:].tolist()):
        lo, hi = images[a], images[b - 1]
        picked = []
        for rows, img in ((d_rows, d_image), (g_rows, g_image), (i_rows, g_image)):
            v = img[rows]
            picked.append(rows[(v >= lo) & (v <= hi)])
        out.append((picked[0], picked[1], picked[2]))
    return out


def _image_pairs(
    d_image: np.ndarray, g_image: np.ndarray, d_rows: np.ndarray, g_rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every (prediction row, truth row) pair of the same image among the given rows."""
    if not len(d_rows) or not len(g_rows):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    d_rows = d_rows[np.argsort(d_image[d_rows], kind="stable")]
    g_rows = g_rows[np.argsort(g_image[g_rows], kind="stable")]
    dk, df, dc = np.unique(d_image[d_rows], return_index=True, return_counts=True)
    gk, gf, gc = np.unique(g_image[g_rows], return_index=True, return_counts=True)
    _, a, b = np.intersect1d(dk, gk, assume_unique=True, return_indices=True)
    _, di, gi = _pairs(df[a], dc[a], gf[b], gc[b])
    return d_rows[di], g_rows[gi]


def merge_matches(
    parts: Sequence[Matches],
    offsets: Sequence[int],
    maps: Sequence[np.ndarray],
    classes: int,
    images: int,
) -> Matches:
    """The matches of parts of a dataset taken in image order, as one :func:`match` call over
    all of it gives them: images shifted by ``offsets``, classes renumbered by ``maps``
    (local number → number of the whole, in the same order: each map ascending)."""
    if not parts:
        raise ValueError("no matches to merge")
    first = parts[0]
    grid = np.zeros((classes + 1, classes + 1), np.int64)
    counted = np.zeros(classes, np.int64)
    for p, m in zip(parts, maps):
        full = np.append(m, classes)  # background stays last
        grid[np.ix_(full, full)] += p.confusion  # a map never sends two classes to one
        counted[m] += p.counted
    return Matches(
        first.thresholds,
        first.chosen,
        first.agnostic,
        classes,
        images,
        np.concatenate([m[p.det_class].astype(np.int32) for p, m in zip(parts, maps)]),
        np.concatenate([p.det_score for p in parts]),
        np.concatenate([p.det_tp for p in parts]),
        np.concatenate([p.det_fp for p in parts]),
        counted,
        Outcomes.concat([p.truth for p in parts], offsets, maps),
        Outcomes.concat([p.predictions for p in parts], offsets, maps),
        grid,
    )


@dataclass
class Evaluation:
    """What :func:`accumulate` makes of :class:`Matches`. Per evaluated class (every class;
    one, "any class", when class-agnostic): ``ap`` (IoU .50:.95), ``ap50``, ``ap75``,
    ``ar100`` (``NaN`` without unignored ground truth), and at the chosen IoU ``gt``
    (unignored ground truth), ``tp``, ``fp`` and ``fn``; the means over classes ``map``,
    ``map50``, ``map75``, ``mar100`` (``NaN`` when no class has ground truth); COCOeval's
    ``precision`` ``(T, 101, K)``, ``recall`` ``(T, K)`` and ``scores`` ``(T, 101, K)`` (-1
    for a class without ground truth) at every threshold matched at (the chosen IoU's curves
    are ``precision[chosen]``); and the matches' ``confusion``."""

    thresholds: np.ndarray
    chosen: int
    agnostic: bool
    ap: np.ndarray
    ap50: np.ndarray
    ap75: np.ndarray
    ar100: np.ndarray
    gt: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    map: float
    map50: float
    map75: float
    mar100: float
    precision: np.ndarray
    recall: np.ndarray
    scores: np.ndarray
    confusion: np.ndarray


def _mean(s: np.ndarray) -> float:
    """summarize's ``np.mean(s[s > -1])``, NaN for none."""
    valid = s[s > -1]
    return float(np.mean(valid)) if valid.size else float("nan")


def accumulate(m: Matches) -> Evaluation:
    """COCOeval's ``accumulate`` (one area range, ``maxDets`` 100) and the figures
    ``summarize`` prints for it, per class and over classes (see :class:`Evaluation`)."""
    t_all = len(m.thresholds)
    r = len(RECALLS)
    k_eval = 1 if m.agnostic else m.classes
    precision = -np.ones((t_all, r, k_eval))
    recall = -np.ones((t_all, k_eval))
    scores = -np.ones((t_all, r, k_eval))
    bits = (1 << np.arange(t_all)).astype(np.uint16)
    tp_at = np.zeros(k_eval, np.int64)
    fp_at = np.zeros(k_eval, np.int64)
    if m.agnostic:
        groups = [np.arange(len(m.det_class))]
        npigs = [int(m.counted.sum())]
    else:
        order = np.argsort(m.det_class, kind="stable")
        edges = np.searchsorted(m.det_class[order], np.arange(m.classes + 1))
        groups = [order[edges[c] : edges[c + 1]] for c in range(m.classes)]
        npigs = [int(c) for c in m.counted]
    for k, (sel, npig) in enumerate(zip(groups, npigs)):
        chosen_bit = np.uint16(1 << m.chosen)
        tp_at[k] = int(np.count_nonzero(m.det_tp[sel] & chosen_bit))
        fp_at[k] = int(np.count_nonzero(m.det_fp[sel] & chosen_bit))
        if npig == 0:
            continue
        dt_scores = m.det_score[sel]
        inds = np.argsort(-dt_scores, kind="mergesort")
        dt_sorted = dt_scores[inds]
        tps = (m.det_tp[sel][inds][None, :] & bits[:, None]) != 0
        fps = (m.det_fp[sel][inds][None, :] & bits[:, None]) != 0
        tp_sum = np.cumsum(tps, axis=1).astype(dtype=float)
        fp_sum = np.cumsum(fps, axis=1).astype(dtype=float)
        nd = len(inds)
        for t in range(t_all):
            tp, fp = tp_sum[t], fp_sum[t]
            rc = tp / npig
            pr = tp / (fp + tp + np.spacing(1))
            recall[t, k] = rc[-1] if nd else 0
            if nd:
                pr = np.maximum.accumulate(pr[::-1])[::-1]
            at = np.searchsorted(rc, RECALLS, side="left")
            inside = at < nd
            q = np.zeros(r)
            ss = np.zeros(r)
            q[inside] = pr[at[inside]]
            ss[inside] = dt_sorted[at[inside]]
            precision[t, :, k] = q
            scores[t, :, k] = ss
    coco = len(COCO_IOUS)
    i50 = int(np.flatnonzero(COCO_IOUS == 0.5)[0])
    i75 = int(np.flatnonzero(COCO_IOUS == 0.75)[0])
    p = precision[:coco]
    present = np.asarray(npigs) > 0
    nan = np.full(k_eval, np.nan)
    ap = np.where(present, [_mean(p[:, :, k]) for k in range(k_eval)], nan)
    ap50 = np.where(present, [_mean(p[i50, :, k]) for k in range(k_eval)], nan)
    ap75 = np.where(present, [_mean(p[i75, :, k]) for k in range(k_eval)], nan)
    ar100 = np.where(present, [_mean(recall[:coco, k]) for k in range(k_eval)], nan)
    gt = np.asarray(npigs, np.int64)
    return Evaluation(
        m.thresholds,
        m.chosen,
        m.agnostic,
        ap,
        ap50,
        ap75,
        ar100,
        gt,
        tp_at,
        fp_at,
        gt - tp_at,
        _mean(p),
        _mean(p[i50 : i50 + 1]),
        _mean(p[i75 : i75 + 1]),
        _mean(recall[:coco]),
        precision,
        recall,
        scores,
        m.confusion,
    )
