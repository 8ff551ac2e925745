"""Likely annotation mistakes from a model's stored predictions, with no model run: FiftyOne
Brain's *mistakenness* of detections (``compute_mistakenness`` with confidences, no logits),
definition for definition.

The ground truth and the predictions of each picture are matched **class-agnostically** at
IoU :data:`IOU` (0.5), as FiftyOne's ``evaluate_detections(classwise=False, iou=0.5)`` does:
COCOeval's greedy matching (:func:`codec.evaluate.match` with ``agnostic``), predictions by
descending score, crowd objects taking any number; no cap on the predictions of a picture
(FiftyOne sets none). Then, with ``c`` the confidence (score) of a prediction:

- a ground-truth object matched by a prediction has a **class mistakenness**
  ``(m·c + 1) / 2`` with ``m = -1`` when both have the same class and ``+1`` otherwise: near 1
  for a confident prediction of *another* class on the same box (the label is probably
  wrong), near 0 for a confident one of the same class, ½ for an unsure one; and a
  **localisation mistakenness** ``(c·(2i - 1) + 1) / 2`` with ``i = (1 - IoU) / (1 - 0.5)``:
  high for a confident prediction that overlaps the box poorly (the box is probably drawn
  badly);
- a ground-truth object no prediction matched is **possibly spurious** (an object annotated
  that is not there); crowd and difficult objects are ignored, as the evaluation ignores them,
  and are never called spurious;
- a prediction that matches nothing with a confidence above :data:`MISSED_CONFIDENCE` (0.95)
  is **possibly missing** from the ground truth (an object the annotators left out); its
  ``missed`` score is its confidence whatever the threshold, to sort by.

Per picture (:func:`per_record`), as FiftyOne's sample fields: ``mistakenness``, the largest
class mistakenness of its objects (FiftyOne writes -1 for a picture without a matched object;
here it has no value: NaN), ``mistakenness_loc`` likewise, ``possible_missing`` and
``possible_spurious``, counts. Everything is per picture, so the objects of parts of a dataset
concatenate (:meth:`Mistakes.concat`) into what one call over all of it gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import evaluate as ev

__all__ = [
    "IOU",
    "MISSED_CONFIDENCE",
    "RECORD_FIELDS",
    "Mistakes",
    "find",
    "per_record",
]

IOU = 0.5  # FiftyOne's _DETECTION_IOU
MISSED_CONFIDENCE = 0.95  # FiftyOne's _MISSED_CONFIDENCE_THRESHOLD

RECORD_FIELDS = ("mistakenness", "mistakenness_loc", "possible_missing", "possible_spurious")
"""The per-record figures :func:`per_record` gives, by name."""


@dataclass
class Mistakes:
    """The likely mistakes of objects, row for row with the ground truth and predictions given
    to :func:`find`. Per ground-truth object: ``mistakenness`` and ``mistakenness_loc`` (NaN:
    no prediction matched it), ``spurious``, and the matching prediction's class
    (``partner_cls``, -1: none) and ``partner_score`` (NaN). Per prediction: ``missing`` (a
    confident prediction matching nothing), ``missed`` (its confidence when it matches
    nothing, NaN otherwise) and its ``confidence``."""

    mistakenness: np.ndarray
    mistakenness_loc: np.ndarray
    spurious: np.ndarray
    partner_cls: np.ndarray
    partner_score: np.ndarray
    missing: np.ndarray
    missed: np.ndarray
    confidence: np.ndarray

    @staticmethod
    def concat(parts: Sequence[Mistakes], maps: Sequence[np.ndarray]) -> Mistakes:
        """The mistakes of parts in order, the partners' classes renumbered by ``maps``
        (local number → number of the whole)."""
        if not parts:
            return _none(0, 0)

        def classes(p: Mistakes, m: np.ndarray) -> np.ndarray:
            return (
                np.where(p.partner_cls >= 0, m[np.maximum(p.partner_cls, 0)], -1)
                if len(m)
                else np.full(len(p.partner_cls), -1, np.int64)
            )

        return Mistakes(
            np.concatenate([p.mistakenness for p in parts]),
            np.concatenate([p.mistakenness_loc for p in parts]),
            np.concatenate([p.spurious for p in parts]),
            np.concatenate([classes(p, m) for p, m in zip(parts, maps)]).astype(np.int64),
            np.concatenate([p.partner_score for p in parts]),
            np.concatenate([p.missing for p in parts]),
            np.concatenate([p.missed for p in parts]),
            np.concatenate([p.confidence for p in parts]),
        )


def _none(ng: int, nd: int) -> Mistakes:
    return Mistakes(
        np.full(ng, np.nan),
        np.full(ng, np.nan),
        np.zeros(ng, bool),
        np.full(ng, -1, np.int64),
        np.full(ng, np.nan),
        np.zeros(nd, bool),
        np.full(nd, np.nan),
        np.full(nd, np.nan),
    )


def class_mistakenness(confidence: np.ndarray, same: np.ndarray) -> np.ndarray:
    """FiftyOne's ``_compute_mistakenness_class_conf``: ``(m·c + 1) / 2``, ``m`` -1 for the
    same class, +1 for another."""
    m = np.where(same, -1.0, 1.0)
    return (m * confidence + 1.0) / 2.0


def loc_mistakenness(confidence: np.ndarray, iou: np.ndarray) -> np.ndarray:
    """FiftyOne's ``_compute_mistakenness_loc_conf``: ``(c·(2i - 1) + 1) / 2``, ``i`` 0 at
    IoU 1 and 1 at the matching threshold."""
    i = (1.0 / (1.0 - IOU)) * (1.0 - iou)
    return (confidence * ((2.0 * i) - 1.0) + 1.0) / 2.0


def find(truth: ev.Truth, predictions: ev.Predictions, *, images: int) -> Mistakes:
    """The likely mistakes of ``truth`` and ``predictions`` (objects of ``images`` pictures;
    see the module's docstring): one class-agnostic match at IoU 0.5."""
    ng, nd = len(truth), len(predictions)
    if not ng or not nd:
        out = _none(ng, nd)
        g_ig = truth.crowd | truth.difficult
        out.spurious[:] = ~g_ig
        out.missed[:] = predictions.score
        out.missing[:] = predictions.score > MISSED_CONFIDENCE
        out.confidence[:] = predictions.score
        return out
    most = int(np.bincount(predictions.image).max())
    # one class for all: the order among equal scores stays the picture's own (FiftyOne
    # sorts a picture's predictions by confidence, stably), and no confusion of classes
    zero_t = np.zeros(ng, np.int64)
    zero_d = np.zeros(nd, np.int64)
    m = ev.match(
        ev.Truth(truth.image, truth.box, zero_t, truth.crowd, truth.difficult, truth.index),
        ev.Predictions(
            predictions.image, predictions.box, zero_d, predictions.score, predictions.index
        ),
        images=images,
        classes=1,
        iou=IOU,
        agnostic=True,
        max_dets=max(most, 1),
        with_confusion=False,
    )
    t_out, p_out = m.truth, m.predictions
    # the partner's row among the predictions: by (image, index in its list)
    width = int(max(predictions.index.max(), truth.index.max())) + 1
    d_key = predictions.image * width + predictions.index
    d_order = np.argsort(d_key, kind="stable")
    partnered = t_out.partner >= 0
    want = truth.image * width + np.maximum(t_out.partner, 0)
    at = np.searchsorted(d_key[d_order], want)
    row = d_order[np.minimum(at, nd - 1)]
    row = np.where(partnered, row, -1)
    out = _none(ng, nd)
    has = np.flatnonzero(partnered)
    conf = predictions.score[row[has]]
    same = predictions.cls[row[has]] == truth.cls[has]
    out.mistakenness[has] = class_mistakenness(conf, same)
    out.mistakenness_loc[has] = loc_mistakenness(conf, t_out.iou[has])
    out.partner_cls[has] = predictions.cls[row[has]]
    out.partner_score[has] = conf
    out.spurious[:] = t_out.outcome == ev.FN
    alone = p_out.outcome == ev.FP
    out.missed[alone] = predictions.score[alone]
    out.missing[:] = alone & (predictions.score > MISSED_CONFIDENCE)
    out.confidence[:] = predictions.score
    return out


def per_record(
    mistakes: Mistakes, truth_image: np.ndarray, prediction_image: np.ndarray, images: int
) -> dict[str, np.ndarray]:
    """Per picture (``images`` of them; each object's picture in ``truth_image`` and
    ``prediction_image``), the figures :data:`RECORD_FIELDS` names: the largest class and
    localisation mistakenness of its objects (NaN: no matched object), and how many are
    possibly missing and possibly spurious."""

    def largest(values: np.ndarray) -> np.ndarray:
        out = np.full(images, -np.inf)
        ok = ~np.isnan(values)
        np.maximum.at(out, truth_image[ok], values[ok])
        return np.where(np.isinf(out), np.nan, out)

    return {
        "mistakenness": largest(mistakes.mistakenness),
        "mistakenness_loc": largest(mistakes.mistakenness_loc),
        "possible_missing": np.bincount(
            prediction_image[mistakes.missing], minlength=images
        ).astype(np.int64),
        "possible_spurious": np.bincount(truth_image[mistakes.spurious], minlength=images).astype(
            np.int64
        ),
    }
