"""The ``segm`` evaluation (IoU of instance masks) against pycocotools' COCOeval with
``iouType="segm"`` run on the very masks, as RLE: per class AP and the summary figures to
1e-6, the precision curves and the mask IoUs themselves; the same answer on every executor
and split; ``bbox`` unchanged by masks in the records; the command's ``--iou-type``."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dask_support import local_scheduler
from test_evaluate_job import _cut, _json

from browser_app.generators import write
from browser_app.generators.evaluation import MaskedDataset, masked_dataset
from codec import evaluate as ev
from codec.jobs import EvaluateJob, executor, plan, run

pytest.importorskip("pycocotools")
from pycocotools import mask as mask_utils
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval


def _rle(m: np.ndarray) -> dict[str, Any]:
    return mask_utils.encode(np.asfortranarray(m.astype(np.uint8)))


def segm_reference(data: MaskedDataset, iou_type: str = "segm") -> COCOeval:
    """COCOeval on the dataset's masks: image ``i`` is record ``i``, categories the labels,
    each ground-truth ``area`` the mask's pixel count (``maskUtils.area``)."""
    width, height = data.size
    labels = sorted(
        {t[1] for r in data.truth for t in r} | {p[1] for r in data.predictions for p in r}
    )
    gt: dict[str, Any] = {
        "images": [{"id": i, "width": width, "height": height} for i in range(len(data.truth))],
        "categories": [{"id": c} for c in labels],
        "annotations": [],
    }
    for i, objects in enumerate(data.truth):
        for m, label, crowd in objects:
            rle = _rle(m)
            gt["annotations"].append(
                {
                    "id": len(gt["annotations"]) + 1,
                    "image_id": i,
                    "category_id": label,
                    "segmentation": rle,
                    "area": float(mask_utils.area(rle)),
                    "bbox": mask_utils.toBbox(rle).tolist(),
                    "iscrowd": int(crowd),
                }
            )
    results = [
        {"image_id": i, "category_id": label, "segmentation": _rle(m), "score": score}
        for i, found in enumerate(data.predictions)
        for m, label, score in found
    ]
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = gt
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(results)
        e = COCOeval(coco_gt, coco_dt, iou_type)
        e.evaluate()
        e.accumulate()
        e.summarize()
    return e


def _check(result: Any, e: COCOeval) -> None:
    """Our figures equal COCOeval's to 1e-6: the summary, each class's AP and the
    precision at every threshold and recall point."""
    ours = result.evaluation
    assert ours.map == pytest.approx(e.stats[0], abs=1e-6)
    assert ours.map50 == pytest.approx(e.stats[1], abs=1e-6)
    assert ours.map75 == pytest.approx(e.stats[2], abs=1e-6)
    assert ours.mar100 == pytest.approx(e.stats[8], abs=1e-6)
    labels = [k[1] for k in result.keys]
    assert labels == sorted(e.params.catIds)
    p = e.eval["precision"][:, :, :, 0, -1]  # area "all", 100 detections
    np.testing.assert_allclose(ours.precision[:10], p, atol=1e-6)
    for k in range(len(labels)):
        got = p[:, :, k]
        want = float(np.mean(got[got > -1])) if (got > -1).any() else float("nan")
        if np.isnan(want):
            assert np.isnan(ours.ap[k])
        else:
            assert ours.ap[k] == pytest.approx(want, abs=1e-6)


@pytest.fixture(scope="module")
def masked(tmp_path_factory: pytest.TempPathFactory) -> tuple[MaskedDataset, list[str]]:
    data = masked_dataset(30, seed=3)
    root = tmp_path_factory.mktemp("masks")
    paths = []
    for n, (a, b) in enumerate(((0, 12), (12, 30))):
        path = root / f"part-{n}.tfrecord"
        write(path, data.records[a:b])
        paths.append(str(path))
    return data, paths


def test_the_dataset_has_what_the_comparison_needs(
    masked: tuple[MaskedDataset, list[str]],
) -> None:
    """Crowd objects, predictions of another class, both mask layouts, records without
    objects: the comparison below exercises every rule."""
    data, _ = masked
    assert any(crowd for r in data.truth for _, _, crowd in r)
    assert any(not r for r in data.truth)
    labels = {(i, t[1]) for i, r in enumerate(data.truth) for t in r}
    assert any((i, p[1]) not in labels for i, r in enumerate(data.predictions) for p in r)


def test_segm_equals_pycocotools(masked: tuple[MaskedDataset, list[str]]) -> None:
    data, paths = masked
    result = run(EvaluateJob(iou_type="segm"), plan(paths, split=0), "inline")
    assert result.to_json()["records"]["left_out"] == {}
    e = segm_reference(data)
    _check(result, e)
    # box IoU gives other figures on these objects: the masks were compared
    boxes = run(EvaluateJob(), plan(paths, split=0), "inline")
    assert boxes.evaluation.map != pytest.approx(result.evaluation.map, abs=1e-3)
    assert result.to_json()["iou_type"] == "segm"
    assert "iou_type" not in boxes.to_json()


def test_mask_iou_is_pycocotools_iou_to_the_last_bit() -> None:
    data = masked_dataset(8, seed=11)
    for truth, preds in zip(data.truth, data.predictions):
        if not truth or not preds:
            continue
        from codec.layers import _cut as cut

        d = np.array([cut(p[0]) for p in preds] + [None], object)
        g = np.array([cut(t[0]) for t in truth], object)
        crowd = np.array([t[2] for t in truth])
        want = mask_utils.iou(
            [_rle(p[0]) for p in preds] + [_rle(np.zeros_like(preds[0][0]))],
            [_rle(t[0]) for t in truth],
            crowd.astype(np.uint8).tolist(),
        )
        di, gi = np.meshgrid(np.arange(len(d)), np.arange(len(g)), indexing="ij")
        got = ev.mask_iou(d[di.ravel()], g[gi.ravel()], crowd[gi.ravel()]).reshape(di.shape)
        assert got.tobytes() == np.asarray(want, np.float64).tobytes()


def test_segm_is_the_same_on_every_executor_and_split(
    masked: tuple[MaskedDataset, list[str]],
) -> None:
    _, paths = masked
    job = EvaluateJob(iou_type="segm", iou=0.6)
    whole = _json(run(job, plan(paths, split=0), "inline"))
    tasks = _cut(paths, [0.3, 0.5, 0.8])
    assert _json(run(job, tasks, "inline")) == whole
    assert _json(run(job, tasks, "processes:2")) == whole
    with (
        local_scheduler(2, threads_per_worker=1) as cluster,
        executor(f"dask:{cluster.scheduler_address}") as ex,
    ):
        assert _json(run(job, tasks, ex)) == whole


def test_bbox_ignores_the_masks_and_segm_needs_them(tmp_path: Path) -> None:
    """Box evaluation of records with masks is the box evaluation of the same records
    without them, byte for byte; segm of records whose masks are gone leaves them out."""
    from codec.example import decode, encode_example

    data = masked_dataset(10, seed=5)
    bare = []
    for payload in data.records:
        feats = {k: (f.type, list(f.values)) for k, f in decode(payload).features.items()}
        feats.pop("image/object/mask")
        bare.append(encode_example(feats))
    write(tmp_path / "masked.tfrecord", data.records)
    write(tmp_path / "bare.tfrecord", bare)
    with_masks = _json(run(EvaluateJob(), plan([str(tmp_path / "masked.tfrecord")]), "inline"))
    without = _json(run(EvaluateJob(), plan([str(tmp_path / "bare.tfrecord")]), "inline"))
    assert with_masks.replace("masked.tfrecord", "bare.tfrecord") == without
    got = run(EvaluateJob(iou_type="segm"), plan([str(tmp_path / "bare.tfrecord")]), "inline")
    left = got.to_json()["records"]["left_out"]
    with_objects = sum(1 for r in data.truth if r)
    assert next(iter(left.values()))["count"] == with_objects
    assert "masks" in next(iter(left))


def test_the_command_takes_an_iou_type(
    masked: tuple[MaskedDataset, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from browser_app.cli import main
    from codec.example import decode, encode_example

    data, paths = masked
    argv = ["evaluate", *paths, "--iou-type", "segm", "--json", "--executor", "inline"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["map"] == pytest.approx(segm_reference(data).stats[0], abs=1e-6)
    assert doc["iou_type"] == "segm"
    # predictions without masks are refused, saying which side lacks them
    bare = []
    for payload in data.records:
        feats = {k: (f.type, list(f.values)) for k, f in decode(payload).features.items()}
        feats.pop("image/detection/mask")
        bare.append(encode_example(feats))
    write(tmp_path / "bare.tfrecord", bare)
    assert main(["evaluate", str(tmp_path / "bare.tfrecord"), "--iou-type", "segm"]) == 2
    err = capsys.readouterr().err
    assert "the predictions have no masks" in err, err
    assert main(["evaluate", str(tmp_path / "bare.tfrecord"), "--json"]) == 0
    capsys.readouterr()
    # the table says what was compared
    assert main(["evaluate", *paths, "--iou-type", "segm", "--executor", "inline"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("IoU of the instance masks (segm)"), first
    assert main(["evaluate", *paths, "--executor", "inline"]) == 0
    assert "segm" not in capsys.readouterr().out


def _objects(data: MaskedDataset) -> tuple[ev.Truth, ev.Predictions, list[int]]:
    """The dataset's objects as codec.evaluate takes them, classes numbered in label order."""
    from codec.layers import _cut as cut

    labels = sorted(
        {t[1] for r in data.truth for t in r} | {p[1] for r in data.predictions for p in r}
    )
    rows_t = [(i, t) for i, r in enumerate(data.truth) for t in r]
    rows_p = [(i, p) for i, r in enumerate(data.predictions) for p in r]
    truth = ev.Truth.of(
        [i for i, _ in rows_t],
        np.zeros((len(rows_t), 4)),
        [labels.index(t[1]) for _, t in rows_t],
        crowd=[t[2] for _, t in rows_t],
        masks=[cut(t[0]) for _, t in rows_t],
    )
    preds = ev.Predictions.of(
        [i for i, _ in rows_p],
        np.zeros((len(rows_p), 4)),
        [labels.index(p[1]) for _, p in rows_p],
        [p[2] for _, p in rows_p],
        masks=[cut(p[0]) for _, p in rows_p],
    )
    return truth, preds, labels


@pytest.mark.parametrize("area", [(0.0, 150.0), (150.0, 1e10), (60.0, 300.0)])
def test_area_ranges_go_by_the_masks_pixels_as_cocoeval_goes_by_their_area(
    area: tuple[float, float],
) -> None:
    """An area range keeps the objects whose mask has that many pixels (boxes are zeros
    here, so a box area would keep none): COCOeval's, whose ``area`` is the RLE's."""
    data = masked_dataset(30, seed=8)
    truth, preds, labels = _objects(data)
    m = ev.match(
        truth, preds, images=len(data.truth), classes=len(labels), area=area, iou_type="segm"
    )
    ours = ev.accumulate(m)
    with contextlib.redirect_stdout(io.StringIO()):
        e = segm_reference(data)
        e.params.areaRng = [[0, 1e10], list(area)]
        e.params.areaRngLbl = ["all", "chosen"]
        e.evaluate()
        e.accumulate()
    p = e.eval["precision"][:, :, :, 1, -1]
    assert (p > 0).any()  # the range keeps objects and matches
    np.testing.assert_allclose(ours.precision[:10], p, atol=1e-6)
    np.testing.assert_allclose(ours.recall[:10], e.eval["recall"][:, :, 1, -1], atol=1e-6)


def test_segm_without_masks_is_an_error() -> None:
    truth = ev.Truth.of([0], [[0, 0, 2, 2]], [0])
    preds = ev.Predictions.of([0], [[0, 0, 2, 2]], [0], [0.5], masks=[None])
    with pytest.raises(ValueError, match="the ground truth have none"):
        ev.match(truth, preds, images=1, classes=1, iou_type="segm")
    with pytest.raises(ValueError, match="'bbox' or 'segm'"):
        ev.match(truth, preds, images=1, classes=1, iou_type="polygon")


def test_segm_with_predictions_in_a_second_dataset(tmp_path: Path) -> None:
    """Predictions (with their masks) in a dataset of their own, joined by source_id in
    another order: the figures of the same records holding both."""
    from codec.example import decode, encode_example
    from codec.jobs.evaluate import evaluate_apart

    data = masked_dataset(16, seed=9)
    truths, preds = [], []
    for payload in data.records:
        feats = {k: (f.type, list(f.values)) for k, f in decode(payload).features.items()}
        keep = ("image/height", "image/width", "image/source_id")
        truths.append(
            encode_example({k: v for k, v in feats.items() if not k.startswith("image/detection/")})
        )
        preds.append(
            encode_example(
                {k: v for k, v in feats.items() if k.startswith("image/detection/") or k in keep}
            )
        )
    write(tmp_path / "both.tfrecord", data.records)
    write(tmp_path / "truth.tfrecord", truths)
    write(tmp_path / "preds.tfrecord", preds[::-1])
    job = EvaluateJob(iou_type="segm")
    together = run(job, plan([str(tmp_path / "both.tfrecord")]), "inline")
    apart = evaluate_apart(
        job,
        plan([str(tmp_path / "truth.tfrecord")]),
        plan([str(tmp_path / "preds.tfrecord")]),
        "inline",
    )
    assert apart.evaluation.map == together.evaluation.map
    np.testing.assert_array_equal(apart.evaluation.precision, together.evaluation.precision)
    _check(apart, segm_reference(data))
