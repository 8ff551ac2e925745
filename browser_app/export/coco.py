"""COCO detection output: a folder that any COCO tool reads.

- ``instances.json``, the ground truth as COCO's ``instances_*.json``: ``images`` (one per
  record that has a picture: ``id`` its position in the export + 1, ``file_name``,
  ``width``, ``height`` of the picture, and the record's ``source_id`` when it has one),
  ``annotations`` (``id``, ``image_id``, ``category_id``, ``bbox`` ``[x, y, w, h]`` in pixels,
  ``area`` — the box's, ``w·h``: no masks are written —, ``iscrowd``; a Pascal VOC
  ``difficult`` object also gets ``"ignore": 1``, which pycocotools does not read) and
  ``categories`` (``id``, ``name``);
- ``results.json``, the predictions as COCO's results format: ``image_id``,
  ``category_id``, ``bbox``, ``score`` (an empty list when the records hold none);
- the pictures beside them, each record's main picture (:func:`codec.roles.picture_roles`)
  as stored (``00000012.jpg``), or as PNG when it is raw pixels or a tensor.

The objects are read as ``tfrecord-browser evaluate`` reads them (:func:`codec.jobs.evaluate.
read_objects`: the same prefixes, found in the first records, the same classes and rules),
so pycocotools' ``COCOeval`` on the two files gives the figures ``evaluate`` gives. A
category's ``id`` is the class label; classes known by text alone follow the largest label
in their sorted order (the evaluation's order). Normalised boxes are put in pixels of the
picture's size (from its header; else ``image/width`` and ``image/height``).

What cannot be written is counted in the report's ``inexact``, by reason: the objects of a
record the evaluation leaves out (lists that disagree, a value that is not finite, not an
Example), of a record without a picture (a COCO annotation needs an image), or whose
normalised boxes meet no picture size. A picture that cannot be converted is in
``unconverted``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from browser_app.errors import ExportError
from browser_app.export.base import COCO, ExportOptions, ExportReport, UnconvertedPicture
from browser_app.export.exporter import Exporter
from browser_app.export.plan import ExportSource
from browser_app.export.remote import object_kind
from browser_app.export.running import run
from browser_app.export.staging import PieceRun
from codec import example as ex
from codec.errors import CodecError
from codec.jobs.evaluate import (
    LEFT_OUT,
    OK,
    PREDICTIONS_PREFIX,
    TRUTH_PREFIX,
    EvaluateJob,
    ObjectTables,
    look,
    read_objects,
)
from codec.locations import is_url, shown
from codec.roles import picture_facts, picture_roles

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["COCO", "INSTANCES", "RESULTS", "CocoExporter", "category_ids", "export_coco"]

INSTANCES = "instances.json"
RESULTS = "results.json"
LOOK_AT = 200  # first records whose layouts decide the prefixes (as evaluate's)
_EXT = {"jpeg": "jpg", "tiff": "tif"}
NO_PICTURE = "objects of a record without a picture (a COCO annotation needs an image)"
NO_SIZE = "objects in normalised coordinates of a record whose picture size is unknown"


def category_ids(objects: ObjectTables) -> list[int]:
    """Each class's COCO category id: its label; a class known by text alone (or by
    nothing) takes the next id after the largest label, in the classes' order."""
    labels = [label for label in objects.labels if label is not None]
    nxt = max(labels, default=0) + 1
    out: list[int] = []
    for label in objects.labels:
        if label is None:
            out.append(nxt)
            nxt += 1
        else:
            out.append(label)
    return out


def _check(path: str, expected: int, name: str) -> None:
    """The written folder holds the two files and every picture."""
    if len(os.listdir(path)) != expected:
        raise ExportError(f"{name}: the written folder is incomplete")


class CocoExporter(Exporter):
    """A folder of ``instances.json``, ``results.json`` and pictures (see the module). The
    destination must not exist yet: the folder appears complete or not at all. ``truth``
    and ``predictions`` name the prefixes (default: found in the first records, as
    ``evaluate`` finds them); ``names`` (label → name, a label map) names the categories and
    turns class texts into labels, as ``evaluate --names`` does."""

    name = COCO
    label = "COCO detection (a folder: instances.json, results.json and the pictures)"
    suffix = "-coco"
    extensions = ()

    def __init__(
        self,
        dst: str | os.PathLike[str] | None,
        *,
        truth: str | None = None,
        predictions: str | None = None,
        names: Mapping[int, str] | None = None,
    ) -> None:
        super().__init__(dst)
        self.truth = truth
        self.predictions = predictions
        self.names = dict(names) if names is not None else None

    def write(self, job: PieceRun) -> None:
        dst = self.dst
        job.guard([dst])
        kind = object_kind(dst, anon=job.anon) if is_url(dst) else None
        if kind is not None or (not is_url(dst) and os.path.lexists(dst)):
            raise ExportError(f"{shown(dst)}: exists; a COCO export makes a new folder")
        out = job.reserve_folder(dst, _check)
        pictures: list[dict[str, Any] | None] = []  # per record read, in order
        first: list[bytes | None] = []

        def payloads() -> Iterator[bytes | None]:
            for pos, _ref, payload in job.ticking(job.plan.records(job.report)):
                pictures.append(self._picture(job, out.tmp, pos, payload))
                yield payload

        stream = payloads()
        for payload in stream:
            first.append(payload)
            if len(first) >= LOOK_AT:
                break
        seen = look(first)
        evaluate = EvaluateJob(
            truth=self.truth or seen.truth or TRUTH_PREFIX,
            predictions=self.predictions or seen.predictions or PREDICTIONS_PREFIX,
            label_map=self.names,
            normalized=(seen.truth_normalized, seen.predictions_normalized),
            mistakes=False,
        )

        def every() -> Iterator[bytes | None]:
            yield from first
            yield from stream

        objects = read_objects(every(), evaluate)
        images = [p for p in pictures if p is not None]
        instances, results = self._documents(objects, pictures, evaluate.normalized, job)
        instances["images"] = images
        for name, doc in ((INSTANCES, instances), (RESULTS, results)):
            data = json.dumps(doc, ensure_ascii=False).encode("utf-8")
            with open(os.path.join(out.tmp, name), "wb") as f:
                f.write(data)
            job.report.bytes += len(data)
        out.expected = 2 + len(images)
        job.tick("write", job.total)
        job.report.outputs = [dst]

    def _picture(
        self, job: PieceRun, folder: str, pos: int, payload: bytes | None
    ) -> dict[str, Any] | None:
        """Write the record's main picture into ``folder``; its COCO image entry, or None
        when it has none that can be written."""
        if payload is None:
            return None
        try:
            rec = ex.decode(payload)
        except CodecError:
            return None
        roles = picture_roles(rec)
        if not roles:
            return None
        ref = roles[0][0]
        try:
            data = ref.data if ref.source == "encoded" else ref.display_bytes()
        except CodecError as exc:
            job.report.unconverted.append(UnconvertedPicture(pos, ref.feature, ref.index, str(exc)))
            return None
        size = picture_facts(ref).size
        if size is None:
            size = _size_of(rec)
        if size is None:
            return None
        ext = _EXT.get(ref.format, ref.format) if ref.source == "encoded" else "png"
        name = f"{pos:08d}.{ext}"
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
        job.report.images += 1
        job.report.bytes += len(data)
        entry: dict[str, Any] = {
            "id": pos + 1,
            "file_name": name,
            "width": size[0],
            "height": size[1],
        }
        source_id = rec.features.get("image/source_id")
        if source_id is not None and source_id.type == "bytes" and source_id.values:
            entry["source_id"] = bytes(source_id.values[0]).decode("utf-8", "backslashreplace")
        return entry

    def _documents(
        self,
        objects: ObjectTables,
        pictures: list[dict[str, Any] | None],
        normalized: tuple[bool, bool],
        job: PieceRun,
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        ids = category_ids(objects)
        n = objects.records
        size = np.full((n, 2), np.nan)
        image_id = np.full(n, -1, np.int64)
        for r, entry in enumerate(pictures):
            if entry is not None:
                size[r] = (entry["width"], entry["height"])
                image_id[r] = entry["id"]
        # why each record's objects are not written (empty: they are)
        why = [LEFT_OUT[s] if s != OK else "" for s in objects.status.tolist()]
        for r in range(n):
            if not why[r] and image_id[r] < 0:
                why[r] = NO_PICTURE
        sides = (
            (objects.truth, objects.truth_cls, normalized[0]),
            (objects.predictions, objects.prediction_cls, normalized[1]),
        )
        for table, _cls, norm in sides:
            if norm:
                unknown = ~np.isfinite(size).all(axis=1)
                for r in np.unique(table.rec[unknown[table.rec]]).tolist():
                    if not why[r]:
                        why[r] = NO_SIZE
        counted: dict[str, int] = {}
        for r, reason in enumerate(why):
            has = objects.truth.count[r] or objects.predictions.count[r]
            if reason and has:
                key = f"objects not written: {reason}"
                counted[key] = counted.get(key, 0) + 1
        for key, k in counted.items():
            job.report.inexact[key] = job.report.inexact.get(key, 0) + k
        written = np.array([not w for w in why], bool)

        def boxes(table: Any, norm: bool) -> np.ndarray:
            corners = table.box.astype(np.float64)
            if norm and len(corners):
                wh = size[table.rec]
                corners = corners * np.concatenate([wh, wh], 1)
            x0, y0, x1, y1 = corners.T if len(corners) else (np.zeros(0),) * 4
            return np.stack([x0, y0, x1 - x0, y1 - y0], 1) if len(corners) else np.zeros((0, 4))

        truth, t_cls, t_norm = sides[0]
        t_box = boxes(truth, t_norm)
        annotations: list[dict[str, Any]] = []
        for row in np.flatnonzero(written[truth.rec]).tolist():
            x, y, w, h = (float(v) for v in t_box[row])
            ann: dict[str, Any] = {
                "id": len(annotations) + 1,
                "image_id": int(image_id[truth.rec[row]]),
                "category_id": ids[int(t_cls[row])],
                "bbox": [x, y, w, h],
                "area": w * h,
                "iscrowd": int(truth.crowd[row]),
            }
            if truth.difficult[row]:
                ann["ignore"] = 1
            annotations.append(ann)
        preds, p_cls, p_norm = sides[1]
        p_box = boxes(preds, p_norm)
        results = [
            {
                "image_id": int(image_id[preds.rec[row]]),
                "category_id": ids[int(p_cls[row])],
                "bbox": [float(v) for v in p_box[row]],
                "score": float(preds.score[row]),
            }
            for row in np.flatnonzero(written[preds.rec]).tolist()
        ]
        categories = [{"id": i, "name": name} for i, name in zip(ids, objects.names)]
        instances: dict[str, Any] = {
            "info": {"description": "exported by tfrecord-browser"},
            "images": [],
            "annotations": annotations,
            "categories": categories,
        }
        return instances, results


def _size_of(rec: ex.Record) -> tuple[int, int] | None:
    """``image/width`` × ``image/height`` of a record, when both are one positive number."""
    got = []
    for key in ("image/width", "image/height"):
        f = rec.features.get(key)
        if f is None or f.type != "int64" or len(f.values) != 1 or f.values[0] <= 0:
            return None
        got.append(int(f.values[0]))
    return got[0], got[1]


def export_coco(
    source: ExportSource,
    dst: str | os.PathLike[str],
    *,
    truth: str | None = None,
    predictions: str | None = None,
    names: Mapping[int, str] | None = None,
    **options: Unpack[ExportOptions],
) -> ExportReport:
    """Write ``source``'s ground truth, predictions and pictures as a COCO folder at ``dst``
    (see :class:`CocoExporter`; ``options``: :class:`ExportOptions`)."""
    place = os.fspath(dst)
    if not is_url(place):
        place = os.path.abspath(place)  # a worker may run in another folder
    exporter = CocoExporter(place, truth=truth, predictions=predictions, names=names)
    return run(exporter, source, **options)
