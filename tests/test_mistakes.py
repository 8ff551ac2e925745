"""Likely annotation mistakes (codec.mistakes): FiftyOne Brain's detection mistakenness with
confidences, checked formula by formula on hand-made pictures and against a plain
re-implementation of its per-picture loop on random pictures; on generated records with
planted mistakes, the evaluation job puts every planted mislabel first and flags exactly the
planted missing and spurious objects; its answer is the same bytes whatever the split and
wherever the tasks run."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from dask_support import local_scheduler
from test_evaluate_job import _cut, shards  # noqa: F401 - a fixture, used by name

from browser_app.generators import write
from browser_app.generators.evaluation import planted_mistakes
from codec import evaluate as ev
from codec import mistakes as mk
from codec.jobs import EvaluateJob, executor, plan, run
from codec.jobs.evaluate import EvaluationResult


def _pictures(
    truth: list[tuple[int, tuple[float, float, float, float], int, bool]],
    preds: list[tuple[int, tuple[float, float, float, float], int, float]],
) -> tuple[ev.Truth, ev.Predictions]:
    t = ev.Truth.of(
        [r[0] for r in truth],
        np.array([r[1] for r in truth], np.float64).reshape(-1, 4),
        [r[2] for r in truth],
        [r[3] for r in truth],
    )
    p = ev.Predictions.of(
        [r[0] for r in preds],
        np.array([r[1] for r in preds], np.float64).reshape(-1, 4),
        [r[2] for r in preds],
        [r[3] for r in preds],
    )
    return t, p


def test_the_definitions_on_one_picture() -> None:
    box = (10.0, 10.0, 20.0, 20.0)  # x, y, w, h
    t, p = _pictures(
        [
            (0, box, 1, False),  # predicted as another class, confidently
            (0, (50.0, 10.0, 20.0, 20.0), 2, False),  # its own class, IoU 0.75
            (0, (10.0, 50.0, 20.0, 20.0), 3, False),  # nothing on it: spurious
            (0, (50.0, 50.0, 20.0, 20.0), 3, True),  # a crowd, nothing on it: ignored
            (1, box, 1, False),  # a picture without predictions: spurious
        ],
        [
            (0, box, 2, 0.9),
            (0, (50.0, 10.0, 15.0, 20.0), 2, 0.8),  # IoU 0.75
            (0, (90.0, 90.0, 5.0, 5.0), 1, 0.97),  # on nothing, confident: missing
            (0, (90.0, 60.0, 5.0, 5.0), 1, 0.95),  # on nothing, not above 0.95
            (2, box, 4, 0.99),  # a picture without ground truth: missing
        ],
    )
    got = mk.find(t, p, images=3)
    # (m·c + 1) / 2: +1 for another class, -1 for the same
    assert got.mistakenness[0] == pytest.approx((0.9 + 1) / 2)
    assert got.mistakenness[1] == pytest.approx((-0.8 + 1) / 2)
    assert np.isnan(got.mistakenness[2:]).all()
    # (c·(2i - 1) + 1) / 2 with i = (1 - IoU) / 0.5: IoU 1 → i 0; IoU 0.75 → i 0.5
    assert got.mistakenness_loc[0] == pytest.approx((0.9 * -1 + 1) / 2)
    assert got.mistakenness_loc[1] == pytest.approx(0.5)
    assert got.spurious.tolist() == [False, False, True, False, True]
    assert got.partner_cls.tolist() == [2, 2, -1, -1, -1]
    assert got.missing.tolist() == [False, False, True, False, True]
    assert np.isnan(got.missed[:2]).all()
    assert got.missed[2:].tolist() == pytest.approx([0.97, 0.95, 0.99])
    per = mk.per_record(got, t.image, p.image, 3)
    assert per["mistakenness"][0] == pytest.approx(0.95)
    assert np.isnan(per["mistakenness"][1:]).all()
    assert per["possible_missing"].tolist() == [1, 0, 1]
    assert per["possible_spurious"].tolist() == [1, 1, 0]


def test_a_prediction_on_a_crowd_is_not_missing() -> None:
    crowd = (0.0, 0.0, 100.0, 100.0)
    t, p = _pictures(
        [(0, crowd, 1, True)],
        [(0, (10.0, 10.0, 5.0, 5.0), 1, 0.99), (0, (60.0, 60.0, 5.0, 5.0), 2, 0.98)],
    )
    got = mk.find(t, p, images=1)
    assert got.missing.tolist() == [False, False]
    assert got.spurious.tolist() == [False]
    # matched (by the crowd rule, the last one): FiftyOne scores it as any matched object
    assert got.mistakenness[0] == pytest.approx((0.98 + 1) / 2)


def _fiftyone(
    boxes: list[tuple[float, float, float, float]],
    labels: list[int],
    pboxes: list[tuple[float, float, float, float]],
    plabels: list[int],
    scores: list[float],
) -> tuple[list[float | None], list[bool], list[bool]]:
    """FiftyOne's detection mistakenness of one picture, as its loop computes it: predictions
    by descending confidence each take the free object of best IoU at 0.5 or more, whatever
    the class; then the formulas (no crowds here)."""

    def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
        w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
        h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
        if w <= 0 or h <= 0:
            return 0.0
        inter = w * h
        return inter / (a[2] * a[3] + b[2] * b[3] - inter)

    gt_match: list[int | None] = [None] * len(boxes)
    gt_iou = [0.0] * len(boxes)
    pred_match = [False] * len(pboxes)
    for d in sorted(range(len(pboxes)), key=lambda j: -scores[j]):
        best, best_iou = None, 0.5
        for g in range(len(boxes)):
            if gt_match[g] is not None:
                continue
            v = iou(pboxes[d], boxes[g])
            if v >= best_iou:
                best, best_iou = g, v
        if best is not None:
            gt_match[best] = d
            gt_iou[best] = best_iou
            pred_match[d] = True
    mistakenness: list[float | None] = []
    for g, d in enumerate(gt_match):
        if d is None:
            mistakenness.append(None)
        else:
            m = -1.0 if plabels[d] == labels[g] else 1.0
            mistakenness.append((m * scores[d] + 1.0) / 2.0)
    spurious = [d is None for d in gt_match]
    missing = [not pred_match[d] and scores[d] > 0.95 for d in range(len(pboxes))]
    return mistakenness, spurious, missing


def test_random_pictures_as_fiftyone_computes_them() -> None:
    rng = random.Random(5)
    truth, preds = [], []
    expected_m, expected_s, expected_miss = [], [], []
    for img in range(300):
        boxes = [
            (rng.uniform(0, 80), rng.uniform(0, 80), rng.uniform(5, 30), rng.uniform(5, 30))
            for _ in range(rng.randint(0, 6))
        ]
        labels = [rng.randint(0, 3) for _ in boxes]
        pboxes, plabels, scores = [], [], []
        for b in boxes:
            if rng.random() < 0.8:
                j = [rng.gauss(0, 3) for _ in range(4)]
                pboxes.append((b[0] + j[0], b[1] + j[1], max(1, b[2] + j[2]), max(1, b[3] + j[3])))
                plabels.append(rng.randint(0, 3))
                scores.append(rng.random())
        for _ in range(rng.randint(0, 3)):
            pboxes.append((rng.uniform(0, 80), rng.uniform(0, 80), 10.0, 10.0))
            plabels.append(rng.randint(0, 3))
            scores.append(rng.uniform(0.9, 1.0))
        truth += [(img, b, c, False) for b, c in zip(boxes, labels)]
        preds += [(img, b, c, s) for b, c, s in zip(pboxes, plabels, scores)]
        m, s, miss = _fiftyone(boxes, labels, pboxes, plabels, scores)
        expected_m += m
        expected_s += s
        expected_miss += miss
    t, p = _pictures(truth, preds)
    got = mk.find(t, p, images=300)
    want = np.array([np.nan if v is None else v for v in expected_m])
    np.testing.assert_allclose(got.mistakenness, want, rtol=0, atol=1e-12)
    assert got.spurious.tolist() == expected_s
    assert got.missing.tolist() == expected_miss
    assert any(expected_miss) and any(expected_s)


# -- planted mistakes, found by the evaluation job ------------------------------------------------


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, object]:
    known = planted_mistakes(48, seed=2)
    path = tmp_path_factory.mktemp("planted") / "planted.tfrecord"
    write(path, known.records)
    return str(path), known


def _objects(result: EvaluationResult) -> list[tuple[int, int]]:
    t = result.matches.truth
    return list(zip(t.image.tolist(), t.index.tolist()))


def test_planted_mislabels_come_first(planted: tuple[str, object]) -> None:
    path, known = planted
    result = run(EvaluateJob(mistakes=True), plan([path]), "inline")
    assert result.mistakes is not None
    objects = _objects(result)
    order = np.argsort(-np.nan_to_num(result.mistakes.mistakenness, nan=-1), kind="stable")
    top = [objects[i] for i in order[: len(known.mislabelled)]]
    assert sorted(top) == sorted(known.mislabelled)
    # the next one is the model's own mistake, far below
    nxt = result.mistakes.mistakenness[order[len(known.mislabelled)]]
    assert nxt < 0.85 < result.mistakes.mistakenness[order[len(known.mislabelled) - 1]]
    # the class the model gives a mislabelled object is its right class
    labels = result.labels
    for k in order[: len(known.mislabelled)]:
        assert labels[result.mistakes.partner_cls[k]] == known.truth_class[objects[k]]
    # spurious: exactly the planted ones
    spurious = [objects[i] for i in np.flatnonzero(result.mistakes.spurious)]
    assert sorted(spurious) == sorted(known.spurious)
    # missing: exactly the planted predictions
    p = result.matches.predictions
    flagged = list(
        zip(p.image[result.mistakes.missing].tolist(), p.index[result.mistakes.missing].tolist())
    )
    assert sorted(flagged) == sorted(known.missing)


def test_records_sort_by_their_likely_mistakes(planted: tuple[str, object]) -> None:
    path, known = planted
    fields = run(EvaluateJob(mistakes=True), plan([path]), "inline").record_fields()
    with_mislabel = sorted({r for r, _ in known.mislabelled})
    key = np.nan_to_num(fields["mistakenness"], nan=-1)
    first = np.argsort(-key, kind="stable")[: len(with_mislabel)]
    assert sorted(first.tolist()) == with_mislabel
    assert np.flatnonzero(fields["possible_missing"]).tolist() == sorted(
        {r for r, _ in known.missing}
    )
    assert np.flatnonzero(fields["possible_spurious"]).tolist() == sorted(
        {r for r, _ in known.spurious}
    )
    # a mislabelled object is missed in its (wrong) class, and its prediction is false there
    for r, _ in known.mislabelled:
        assert fields["fn"][r] >= 1 and fields["fp"][r] >= 1


def test_without_mistakes_the_job_computes_none(planted: tuple[str, object]) -> None:
    path, _ = planted
    assert not EvaluateJob().mistakes  # the evaluate command shows none: it pays for none
    result = run(EvaluateJob(mistakes=False), plan([path]), "inline")
    assert result.mistakes is None
    assert set(result.record_fields()) == {"tp", "fp", "fn"}


# -- any split, any executor ----------------------------------------------------------------------


def _bytes(result: EvaluationResult) -> bytes:
    m = result.mistakes
    assert m is not None
    fields = result.record_fields()
    parts = [
        m.mistakenness,
        m.mistakenness_loc,
        m.spurious,
        m.partner_cls,
        m.partner_score,
        m.missing,
        m.missed,
        m.confidence,
        *(fields[k] for k in sorted(fields)),
    ]
    return b"".join(np.ascontiguousarray(a).tobytes() for a in parts)


@pytest.mark.parametrize("cuts", [[0.5], [0.13, 0.5, 0.51, 0.9], [0.01, 0.02, 0.03]])
def test_any_split_gives_the_same_mistakes(shards: list[str], cuts: list[float]) -> None:  # noqa: F811
    job = EvaluateJob(mistakes=True)
    whole = run(job, plan(shards, split=0), "inline")
    assert whole.mistakes is not None and len(whole.mistakes.spurious) > 100
    assert _bytes(run(job, _cut(shards, cuts), "inline")) == _bytes(whole)
    parts = [job.task(t) for t in _cut(shards, cuts)]
    random.Random(len(cuts)).shuffle(parts)
    assert _bytes(job.merge(parts)) == _bytes(whole)


def test_a_pool_and_a_dask_cluster_give_the_same_mistakes(shards: list[str]) -> None:  # noqa: F811
    job = EvaluateJob(mistakes=True)
    whole = _bytes(run(job, plan(shards, split=0), "inline"))
    tasks = _cut(shards, [0.25, 0.5, 0.75])
    assert _bytes(run(job, tasks, "processes:2")) == whole
    with (
        local_scheduler(2, threads_per_worker=1) as cluster,
        executor(f"dask:{cluster.scheduler_address}") as ex,
    ):
        assert _bytes(run(job, tasks, ex)) == whole


def test_predictions_in_a_second_dataset_give_the_same_mistakes(
    tmp_path: Path, planted: tuple[str, object]
) -> None:
    from codec.example import decode, encode_example
    from codec.jobs.evaluate import evaluate_apart

    path, known = planted
    truth, preds = [], []
    for payload in known.records:  # type: ignore[attr-defined]
        feats = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        truth.append(encode_example({k: v for k, v in feats.items() if "detection" not in k}))
        preds.append(
            encode_example(
                {k: v for k, v in feats.items() if "detection" in k or k == "image/source_id"}
            )
        )
    write(tmp_path / "t.tfrecord", truth)
    write(tmp_path / "p.tfrecord", preds)
    job = EvaluateJob(mistakes=True)
    apart = evaluate_apart(
        job, plan([str(tmp_path / "t.tfrecord")]), plan([str(tmp_path / "p.tfrecord")]), "inline"
    )
    together = run(job, plan([path]), "inline")
    assert _bytes(apart) == _bytes(together)
