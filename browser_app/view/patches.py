"""The patches view's data: one patch per object of a detection dataset — a ground-truth object
or a prediction — with its evaluation outcome and its likely-mistake score, chosen by side,
class and outcome, sorted, captioned, and cropped with some context from its picture.

:class:`PatchTable` holds every object of an evaluation (:class:`codec.jobs.evaluate.
EvaluationResult`) as columns (no object is a Python object: a dataset of millions of boxes
stays a few arrays). The likely-mistake score of a patch (:mod:`codec.mistakes`) is, for a
ground-truth object, its class mistakenness (a confident prediction of another class on the
same box: the label is probably wrong), and for a prediction that matches nothing, its
confidence (above 0.95: probably an object the annotators missed); objects without one sort
last. Nothing here imports Streamlit.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from PIL import Image, ImageDraw

from browser_app.export.csv import neutralized, runs_as_formula
from codec import evaluate as ev
from codec.errors import CodecError
from codec.example import decode
from codec.jobs.evaluate import EvaluateJob, EvaluationResult
from codec.roles import picture_roles
from codec.values import plural

__all__ = [
    "OUTCOME_WORDS",
    "SIDES",
    "SORTS",
    "PatchTable",
    "patch_png",
]

Side = Literal["truth", "predictions"]
SIDES: dict[Side, str] = {"truth": "Ground truth", "predictions": "Predictions"}
SORTS: dict[str, str] = {
    "mistake": "Likely mistake first",
    "score": "Highest score first",
    "iou": "Lowest IoU first",
    "record": "Record order",
}
OUTCOME_WORDS: dict[str, str] = {
    "tp": "found",
    "fp": "matches nothing",
    "fn": "missed",
    "ignored": "ignored (crowd or difficult)",
    "unevaluated": "past the detections evaluated",
}
"""Each outcome (:data:`codec.evaluate.OUTCOMES`) as a patch's caption says it."""
_COLOR = {"tp": "#2e7d32", "fp": "#c62828", "fn": "#c62828", "ignored": "#757575"}
CONTEXT = 0.35  # the share of the box's size shown around it, each side
MIN_CONTEXT = 12  # pixels shown around a box at least


@dataclass
class PatchTable:
    """Every object of an evaluation, one row each: ``side`` (0 ground truth, 1 prediction),
    ``record``, ``index`` (its place in the record's lists), ``cls`` (into ``names``),
    ``outcome`` (a number of :data:`codec.evaluate.OUTCOMES`), ``iou`` with its partner,
    ``score`` (a prediction's), ``mistake`` (the likely-mistake score, NaN: none), the class
    the model gives a ground-truth object (``partner_cls``, -1: none, matched whatever its
    class) with its confidence (``partner_score``); and how to find each object's box:
    ``prefixes`` and whether each side's boxes are ``normalized``; ``iou_at``: the IoU the
    outcomes were decided at."""

    side: np.ndarray
    record: np.ndarray
    index: np.ndarray
    cls: np.ndarray
    outcome: np.ndarray
    iou: np.ndarray
    score: np.ndarray
    mistake: np.ndarray
    partner_cls: np.ndarray
    partner_score: np.ndarray
    names: list[str]
    prefixes: tuple[str, str]
    normalized: tuple[bool, bool]
    iou_at: float

    def __len__(self) -> int:
        return len(self.side)

    @classmethod
    def of(cls, result: EvaluationResult, job: EvaluateJob) -> PatchTable:
        """The patches of ``result``, evaluated by ``job`` (its prefixes and coordinates)."""
        t, p = result.matches.truth, result.matches.predictions
        nt, np_ = len(t), len(p)
        m = result.mistakes
        if m is not None:
            mistake = np.concatenate([m.mistakenness, m.missed])
            partner_cls = np.concatenate([m.partner_cls, np.full(np_, -1, np.int64)])
            partner_score = np.concatenate([m.partner_score, np.full(np_, np.nan)])
        else:
            mistake = np.full(nt + np_, np.nan)
            partner_cls = np.full(nt + np_, -1, np.int64)
            partner_score = np.full(nt + np_, np.nan)
        score = m.confidence if m is not None else np.full(np_, np.nan)
        return cls(
            np.concatenate([np.zeros(nt, np.int8), np.ones(np_, np.int8)]),
            np.concatenate([t.image, p.image]).astype(np.int64),
            np.concatenate([t.index, p.index]).astype(np.int64),
            np.concatenate([t.cls, p.cls]).astype(np.int64),
            np.concatenate([t.outcome, p.outcome]).astype(np.int8),
            np.concatenate([t.iou, p.iou]),
            np.concatenate([np.full(nt, np.nan), score]),
            mistake,
            partner_cls,
            partner_score,
            list(result.names),
            (job.truth, job.predictions),
            job.normalized,
            result.iou,
        )

    # -- choosing and ordering -----------------------------------------------------------

    def rows(
        self,
        side: Side,
        classes: Sequence[int] | None = None,
        outcomes: Sequence[str] | None = None,
    ) -> np.ndarray:
        """The rows of one side, of the ``classes`` (numbers into :attr:`names`) and
        ``outcomes`` (names of :data:`codec.evaluate.OUTCOMES`) asked for (None: all)."""
        keep = self.side == (0 if side == "truth" else 1)
        if classes is not None:
            keep &= np.isin(self.cls, np.asarray(list(classes), np.int64))
        if outcomes is not None:
            codes = [ev.OUTCOMES.index(o) for o in outcomes if o in ev.OUTCOMES]
            keep &= np.isin(self.outcome, np.asarray(codes, np.int8))
        return np.flatnonzero(keep)

    def ordered(self, rows: np.ndarray, sort: str) -> np.ndarray:
        """``rows`` in the order ``sort`` (a key of :data:`SORTS`) asks for; ties, and rows
        without the value sorted on (last), in record order."""
        rows = rows[np.lexsort((self.index[rows], self.record[rows]))]
        if sort == "mistake":
            key = -self.mistake[rows]
        elif sort == "score":
            key = -np.where(self.side[rows] == 1, self.score[rows], self.partner_score[rows])
        elif sort == "iou":
            key = self.iou[rows]
        else:
            return rows
        key = np.where(np.isnan(key), np.inf, key)
        return rows[np.argsort(key, kind="stable")]

    def counts(self, rows: np.ndarray) -> tuple[dict[int, int], dict[str, int]]:
        """How many of ``rows`` are of each class (by number) and have each outcome."""
        by_class = np.bincount(self.cls[rows], minlength=len(self.names))
        by_outcome = np.bincount(self.outcome[rows], minlength=len(ev.OUTCOMES))
        return (
            {k: int(n) for k, n in enumerate(by_class.tolist()) if n},
            {ev.OUTCOMES[k]: int(n) for k, n in enumerate(by_outcome.tolist()) if n},
        )

    # -- in words ----------------------------------------------------------------------------

    def name(self, k: int) -> str:
        return self.names[k] if 0 <= k < len(self.names) else "(no class)"

    def caption(self, row: int) -> str:
        """What a patch is, in a line: ``#12 · cat · model: dog 0.97 · mistake 0.98``."""
        rec, outcome = int(self.record[row]), ev.OUTCOMES[int(self.outcome[row])]
        parts = [f"#{rec}", self.name(int(self.cls[row]))]
        if self.side[row] == 0:
            partner = int(self.partner_cls[row])
            if partner >= 0 and partner != self.cls[row]:
                parts.append(f"model: {self.name(partner)} {self.partner_score[row]:.2f}")
            elif partner < 0 and outcome == "fn":
                parts.append("no prediction on it")
            else:
                parts.append(OUTCOME_WORDS[outcome])
        else:
            if not np.isnan(self.score[row]):
                parts[-1] += f" {self.score[row]:.2f}"
            parts.append(OUTCOME_WORDS[outcome])
        if not np.isnan(self.mistake[row]):
            parts.append(f"mistake {self.mistake[row]:.2f}")
        return " · ".join(parts)

    def summary(self, rows: np.ndarray, side: Side) -> str:
        """How many patches are shown, of what, in a sentence."""
        what = "ground-truth object" if side == "truth" else "prediction"
        return f"{plural(len(rows), what)} · outcomes at IoU {self.iou_at:g}"

    def outcome_name(self, row: int) -> str:
        return ev.OUTCOMES[int(self.outcome[row])]

    def review_list(self, rows: np.ndarray) -> bytes:
        """``rows`` as a review list, in their order: a CSV file (UTF-8) of one line per
        object — its record, side, place in the record's lists, class, outcome, IoU, score,
        likely-mistake score, and the class and confidence the model gives a ground-truth
        object. A class name a spreadsheet would run as a formula is written with a leading
        ``'`` (:func:`browser_app.export.csv.neutralized`)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(
            [
                "record",
                "side",
                "object",
                "class",
                "outcome",
                "iou",
                "score",
                "likely_mistake",
                "model_class",
                "model_score",
            ]
        )

        def number(v: float) -> str:
            return "" if np.isnan(v) else f"{float(v):.6g}"

        def text(name: str) -> str:
            return neutralized(name) if runs_as_formula(name) else name

        for row in rows.tolist():
            truth = self.side[row] == 0
            partner = int(self.partner_cls[row]) if truth else -1
            w.writerow(
                [
                    int(self.record[row]),
                    "ground truth" if truth else "prediction",
                    int(self.index[row]),
                    text(self.name(int(self.cls[row]))),
                    self.outcome_name(row),
                    number(self.iou[row]),
                    number(self.score[row]) if not truth else "",
                    number(self.mistake[row]),
                    text(self.name(partner)) if partner >= 0 else "",
                    number(self.partner_score[row]) if partner >= 0 else "",
                ]
            )
        return out.getvalue().encode("utf-8")


# -- pictures ---------------------------------------------------------------------------------


def _box(features: Mapping[str, Any], prefix: str, index: int) -> tuple[float, ...] | None:
    """The corners ``(xmin, ymin, xmax, ymax)`` of object ``index`` under ``prefix``."""
    out = []
    for side in ("xmin", "ymin", "xmax", "ymax"):
        f = features.get(f"{prefix}bbox/{side}")
        if f is None or index >= len(f.values):
            return None
        out.append(float(f.values[index]))
    return tuple(out)


def patch_png(payload: bytes, table: PatchTable, row: int, max_side: int = 176) -> bytes | None:
    """The patch of ``row``: its record's main picture cropped around the object's box with
    :data:`CONTEXT` around it, the box drawn in the colour of its outcome, at most
    ``max_side`` pixels a side, as PNG; None when the record has no picture or box."""
    try:
        rec = decode(payload)
        roles = picture_roles(rec)
        if not roles:
            return None
        img = roles[0][0].image().convert("RGB")
    except (CodecError, OSError, ValueError):
        return None
    side = int(table.side[row])
    corners = _box(rec.features, table.prefixes[side], int(table.index[row]))
    if corners is None:
        return None
    x0, y0, x1, y1 = corners
    if table.normalized[side]:
        x0, x1 = x0 * img.width, x1 * img.width
        y0, y1 = y0 * img.height, y1 * img.height
    bw, bh = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    mx, my = max(bw * CONTEXT, MIN_CONTEXT), max(bh * CONTEXT, MIN_CONTEXT)
    left, top = int(max(0, np.floor(x0 - mx))), int(max(0, np.floor(y0 - my)))
    right = int(min(img.width, np.ceil(x1 + mx)))
    bottom = int(min(img.height, np.ceil(y1 + my)))
    if right <= left or bottom <= top:
        return None
    crop = img.crop((left, top, right, bottom))
    scale = min(1.0 * max_side / max(crop.width, crop.height), 4.0)
    size = (max(1, round(crop.width * scale)), max(1, round(crop.height * scale)))
    crop = crop.resize(size, Image.Resampling.LANCZOS)
    draw = ImageDraw.Draw(crop)
    color = _COLOR.get(table.outcome_name(row), "#f9a825")
    box = [(x0 - left) * scale, (y0 - top) * scale, (x1 - left) * scale, (y1 - top) * scale]
    draw.rectangle(box, outline=color, width=2)
    out = io.BytesIO()
    crop.save(out, "PNG")
    return out.getvalue()
