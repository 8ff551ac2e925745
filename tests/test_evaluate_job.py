"""The evaluation job over records: the known-answer datasets give their figures; generated
datasets with plausible predictions give pycocotools' figures (COCOeval run on the boxes
decoded here with the record decoder, not by the job's reader); any split into byte ranges,
on this process, a pool of two and a Dask cluster, gives the same JSON bytes, damaged
streams included; records that are damaged, not Examples, without boxes, with lists of
different lengths or non-finite values are counted and never crash; predictions in a second
dataset are joined by source_id, filename or record number with the misses said; boxes in
pixels meet normalised ones; class texts meet labels through a label map."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from damage import damage
from dask_support import local_scheduler
from test_evaluate import reference

import codec
from browser_app.generators import predictions, records, write
from browser_app.generators.evaluation import SCENARIOS, known_dataset
from codec import evaluate as ev
from codec.example import decode, encode_example
from codec.jobs import EvaluateJob, Task, executor, plan, run
from codec.jobs.evaluate import (
    DAMAGED,
    LISTS,
    NO_SIZE,
    NOT_EXAMPLE,
    NOT_FINITE,
    OK,
    UNJOINED,
    evaluate_apart,
)


def _json(result: Any) -> str:
    return json.dumps(result.to_json(), sort_keys=True)


def _cut(paths: list[str], cuts: list[float]) -> list[Task]:
    """A task per compressed file; each plain file cut into ranges at ``cuts`` (fractions)."""
    tasks = []
    for t in plan(paths, split=1 << 40):
        if t.path.endswith((".gz", ".zlib")) or t.end == 0:
            tasks.append(t)
            continue
        at = sorted({int(c * t.end) for c in cuts if 0 < int(c * t.end) < t.end})
        edges = [0, *at, t.end]
        tasks += [Task(t.file, t.path, a, b, whole=False) for a, b in itertools.pairwise(edges)]
    return tasks


# -- known answers -----------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_known_answer_datasets(tmp_path: Path, scenario: str) -> None:
    known = known_dataset(scenario, 14, seed=3)
    path = tmp_path / "known.tfrecord"
    write(path, known.records)
    result = run(EvaluateJob(), plan([str(path)]), "inline")
    doc = result.to_json()
    got = {c["label"]: c for c in doc["classes"]}
    assert set(got) == set(known.expected)
    for label, want in known.expected.items():
        for key, value in want.items():
            if value is None or isinstance(value, int):
                assert got[label][key] == value, (label, key)
            else:
                assert got[label][key] == pytest.approx(value, abs=1e-12), (label, key)
    assert got[1]["name"] == "person"  # named by the class texts beside the labels
    for name in ("map", "map50", "map75"):
        assert doc[name] == pytest.approx(getattr(known, name), abs=1e-12)
    # the confusion matrix, as counted while the dataset was made
    labels = [c["label"] for c in doc["classes"]]
    rows = doc["confusion"]["rows"]
    for (t, p), n in known.confusion.items():
        i = labels.index(t) if t is not None else len(labels)
        j = labels.index(p) if p is not None else len(labels)
        assert rows[i][j] == n, (t, p)
    assert sum(map(sum, rows)) == sum(known.confusion.values())
    if scenario in ("crowd", "difficult"):
        assert doc["objects"]["truth_ignored"] > 0
        assert doc["objects"]["predictions_ignored"] == doc["objects"]["truth_ignored"]


def test_known_answer_with_pictures_and_the_truth_in_pixels(tmp_path: Path) -> None:
    """The ground truth's boxes written in pixels, the predictions normalised: the job puts
    the predictions in pixels of each picture and finds the same figures."""
    known = known_dataset("shifted", 10, seed=5)
    pixel = []
    for payload in known.records:
        rec = decode(payload)
        feats: dict[str, Any] = {k: (f.type, f.values) for k, f in rec.features.items()}
        w, h = feats["image/width"][1][0], feats["image/height"][1][0]
        for side, scale in (("xmin", w), ("xmax", w), ("ymin", h), ("ymax", h)):
            key = f"image/object/bbox/{side}"
            feats[key] = ("float", [v * scale for v in feats[key][1]])
        pixel.append(encode_example(feats))
    path = tmp_path / "pixels.tfrecord"
    write(path, pixel)
    job = EvaluateJob(normalized=(False, True))
    doc = run(job, plan([str(path)]), "inline").to_json()
    assert doc["coordinates"] == {"truth": "pixels", "predictions": "normalised"}
    assert doc["map"] == pytest.approx(known.map, abs=1e-6)
    assert {c["label"]: c["ap"] for c in doc["classes"]} == pytest.approx(
        {k: v["ap"] for k, v in known.expected.items()}, abs=1e-6
    )


# -- against pycocotools, from records -----------------------------------------------------------


def _decoded(payloads: list[bytes]) -> tuple[ev.Truth, ev.Predictions, list[int]]:
    """The boxes of records as the record decoder reads them (labels, is_crowd, scores),
    with the classes sorted."""
    gt_rows: list[tuple[int, int, list[float], int, bool]] = []
    dt_rows: list[tuple[int, int, list[float], int, float]] = []
    for i, payload in enumerate(payloads):
        f = decode(payload).features

        def vals(key: str, f: Any = f) -> list[Any]:
            return list(f[key].values) if key in f else []

        xs = [vals(f"image/object/bbox/{s}") for s in ("xmin", "ymin", "xmax", "ymax")]
        for j, (x0, y0, x1, y1, lab, crowd) in enumerate(
            zip(*xs, vals("image/object/class/label"), vals("image/object/is_crowd"))
        ):
            x0, y0, x1, y1 = (float(np.float32(v)) for v in (x0, y0, x1, y1))
            gt_rows.append((i, j, [x0, y0, x1 - x0, y1 - y0], int(lab), bool(crowd)))
        ds = [vals(f"image/detection/bbox/{s}") for s in ("xmin", "ymin", "xmax", "ymax")]
        for j, (x0, y0, x1, y1, lab, score) in enumerate(
            zip(*ds, vals("image/detection/label"), vals("image/detection/score"))
        ):
            x0, y0, x1, y1 = (float(np.float32(v)) for v in (x0, y0, x1, y1))
            dt_rows.append((i, j, [x0, y0, x1 - x0, y1 - y0], int(lab), float(np.float32(score))))
    classes = sorted({r[3] for r in gt_rows} | {r[3] for r in dt_rows})
    at = {c: k for k, c in enumerate(classes)}
    truth = ev.Truth.of(
        [r[0] for r in gt_rows],
        np.array([r[2] for r in gt_rows]).reshape(-1, 4),
        [at[r[3]] for r in gt_rows],
        [r[4] for r in gt_rows],
        None,
        [r[1] for r in gt_rows],
    )
    preds = ev.Predictions.of(
        [r[0] for r in dt_rows],
        np.array([r[2] for r in dt_rows]).reshape(-1, 4),
        [at[r[3]] for r in dt_rows],
        [r[4] for r in dt_rows],
        [r[1] for r in dt_rows],
    )
    return truth, preds, classes


def _with_crowds(payload: bytes, seed: int) -> bytes:
    """A record with some of its objects made crowds."""
    rec = decode(payload)
    feats: dict[str, Any] = {k: (f.type, f.values) for k, f in rec.features.items()}
    n = len(feats["image/object/is_crowd"][1])
    rng = random.Random(seed)
    feats["image/object/is_crowd"] = ("int64", [int(rng.random() < 0.2) for _ in range(n)])
    return encode_example(feats)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("agnostic", [False, True])
def test_generated_predictions_match_pycocotools(tmp_path: Path, seed: int, agnostic: bool) -> None:
    payloads = [
        _with_crowds(p, seed * 1000 + i)
        for i, p in enumerate(
            records(predictions, 30, seed=seed * 50, n_detections=25, n_objects=8, max_side=96)
        )
    ]
    # the COCO writer's records name classes by text; these also carry labels
    payloads = [_labelled(p) for p in payloads]
    path = tmp_path / "p.tfrecord"
    write(path, payloads)
    result = run(EvaluateJob(agnostic=agnostic), plan([str(path)]), "inline")
    truth, preds, classes = _decoded(payloads)
    assert [label for label in result.labels] == classes
    e = reference(truth, preds, len(payloads), len(classes), agnostic)
    stats = e.stats
    doc = result.to_json()
    for key, i in (("map", 0), ("map50", 1), ("map75", 2), ("mar100", 8)):
        assert doc[key] == pytest.approx(stats[i], abs=1e-6), key
        assert doc[key] == stats[i]  # the same doubles
    precision = e.eval["precision"][:, :, :, 0, 2]
    assert np.array_equal(result.evaluation.precision[:10], precision)
    if not agnostic:
        for k, c in enumerate(doc["classes"]):
            block = precision[:, :, k]
            if (block > -1).any():
                assert c["ap"] == pytest.approx(float(np.mean(block[block > -1])), abs=1e-6)
            else:
                assert c["ap"] is None


def _labelled(payload: bytes) -> bytes:
    """A COCO record with ``image/object/class/label`` added from its texts (COCO ids)."""
    from browser_app.generators import COCO_IDS

    rec = decode(payload)
    feats: dict[str, Any] = {k: (f.type, f.values) for k, f in rec.features.items()}
    texts = [t.decode() for t in feats["image/object/class/text"][1]]
    out: dict[str, Any] = {}
    for k, v in feats.items():
        out[k] = v
        if k == "image/object/class/text":
            out["image/object/class/label"] = ("int64", [COCO_IDS[t] for t in texts])
    return encode_example(out)


# -- splits and executors ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Three files of generated records with predictions (one GZIP), a damaged one, one of
    odd records (no boxes, a raw record, lists of different lengths, a NaN)."""
    folder = tmp_path_factory.mktemp("eval-shards")
    payloads = [
        _labelled(p) for p in records(predictions, 90, seed=7, n_detections=20, max_side=64)
    ]
    paths = []
    for k, (a, b, comp) in enumerate([(0, 30, "none"), (30, 55, "gzip"), (55, 90, "none")]):
        path = folder / (f"part-{k}.tfrecord" + (".gz" if comp == "gzip" else ""))
        write(path, payloads[a:b], comp)
        paths.append(str(path))
    # a stream damaged at random, but not beyond recognition
    rng = random.Random(11)
    raw = (folder / "part-0.tfrecord").read_bytes()
    bad = folder / "part-3.tfrecord"
    bad.write_bytes(damage(rng, raw, hits=3) + raw[:200])
    paths.append(str(bad))
    paths.append(str(_odd(folder / "part-4.tfrecord", payloads[0])))
    return paths


def _odd(path: Path, good: bytes) -> Path:
    rec = decode(good)
    feats: dict[str, Any] = {k: (f.type, f.values) for k, f in rec.features.items()}
    empty = {k: v for k, v in feats.items() if not k.startswith("image/detection/")}
    for k in list(empty):
        if k.startswith("image/object/"):
            empty[k] = (empty[k][0], [])
    short = dict(feats)
    short["image/detection/score"] = ("float", feats["image/detection/score"][1][:-1])
    nan = dict(feats)
    nan["image/object/bbox/xmin"] = (
        "float",
        [float("nan"), *list(feats["image/object/bbox/xmin"][1][1:])],
    )
    plain = encode_example({"label": ("int64", [3])})
    write(
        path,
        [
            good,
            encode_example(empty),
            b"\x00 not an Example \xff",
            encode_example(short),
            encode_example(nan),
            plain,
            good,
        ],
    )
    return path


def test_odd_records_are_counted_and_never_crash(shards: list[str]) -> None:
    result = run(EvaluateJob(), plan([shards[4]]), "inline")
    assert result.status.tolist() == [OK, OK, NOT_EXAMPLE, LISTS, NOT_FINITE, OK, OK]
    doc = result.to_json()
    assert doc["records"]["without_truth"] == 2  # the one with empty lists, and the plain one
    assert doc["records"]["without_predictions"] == 2
    left = doc["records"]["left_out"]
    assert {why: got["first"] for why, got in left.items()} == {
        "it is not an Example": [2],
        "its object lists disagree in length (or predictions have no scores)": [3],
        "a coordinate or score is not a finite number": [4],
    }
    # the two good copies are evaluated: the figures of the first record twice
    once = run(EvaluateJob(), plan([shards[0]]), "inline").matches
    assert doc["objects"]["predictions"] == 2 * int(np.count_nonzero(once.predictions.image == 0))


def test_a_damaged_stream_is_counted(shards: list[str]) -> None:
    result = run(EvaluateJob(), plan([shards[3]]), "inline")
    with codec.TFRecordFile(shards[3]) as f:
        intact = [info.data is not None for info in f.records()]
    assert len(result.status) == len(intact)
    assert (result.status == DAMAGED).tolist() == [not ok for ok in intact]
    assert not all(intact)


@pytest.mark.parametrize(
    "cuts", [[], [0.5], [0.13, 0.5, 0.51, 0.9], [0.01, 0.02, 0.03], [0.33, 0.66]]
)
@pytest.mark.parametrize("agnostic", [False, True])
def test_any_split_gives_the_same_bytes(
    shards: list[str], cuts: list[float], agnostic: bool
) -> None:
    job = EvaluateJob(agnostic=agnostic, iou=0.6)
    whole = _json(run(job, plan(shards, split=0), "inline"))
    got = _json(run(job, _cut(shards, cuts), "inline"))
    assert got == whole
    # answers in any order
    parts = [job.task(t) for t in _cut(shards, cuts)]
    random.Random(len(cuts)).shuffle(parts)
    assert _json(job.merge(parts)) == whole


def test_a_pool_and_a_dask_cluster_give_the_same_bytes(shards: list[str]) -> None:
    job = EvaluateJob()
    whole = _json(run(job, plan(shards, split=0), "inline"))
    tasks = _cut(shards, [0.25, 0.5, 0.75])
    assert _json(run(job, tasks, "processes:2")) == whole
    with (
        local_scheduler(2, threads_per_worker=1) as cluster,
        executor(f"dask:{cluster.scheduler_address}") as ex,
    ):
        assert _json(run(job, tasks, ex)) == whole


def test_a_file_that_cannot_be_read_is_said_and_left_out(tmp_path: Path, shards: list[str]) -> None:
    gone = tmp_path / "gone.tfrecord"
    gone.write_bytes(Path(shards[0]).read_bytes())
    tasks = plan([shards[2], str(gone)], split=0)
    gone.unlink()
    result = run(EvaluateJob(), tasks, "inline")
    assert [p for p, _ in result.unreadable] == [str(gone)]
    alone = run(EvaluateJob(), plan([shards[2]]), "inline")
    assert result.to_json()["map"] == alone.to_json()["map"]


# -- predictions in a second dataset -------------------------------------------------------------


def _split_sides(payloads: list[bytes], keep: Any) -> tuple[list[bytes], list[bytes]]:
    """Each record as two: the ground truth alone, and the predictions (and the picture's
    keys, as infer_detections.py keeps them); ``keep(features) -> features`` edits both."""
    truth, preds = [], []
    for payload in payloads:
        feats: dict[str, Any] = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        feats = keep(feats)
        truth.append(
            encode_example({k: v for k, v in feats.items() if not k.startswith("image/detection/")})
        )
        preds.append(
            encode_example({k: v for k, v in feats.items() if not k.startswith("image/object/")})
        )
    return truth, preds


@pytest.mark.parametrize("by", ["image/source_id", "image/filename", "record number"])
def test_predictions_in_a_second_dataset(tmp_path: Path, by: str) -> None:
    known = known_dataset("missing", 16, seed=8)

    def keyed(feats: dict[str, Any]) -> dict[str, Any]:
        source_id = feats["image/source_id"][1][0]
        if by != "image/source_id":
            feats.pop("image/source_id")
        if by == "image/filename":  # the photographs repeat: a name of each record's own
            feats["image/filename"] = ("bytes", [b"frame-" + source_id + b".jpg"])
        if by == "record number":
            feats.pop("image/filename")
        return feats

    truth, preds = _split_sides(known.records, keyed)
    same = tmp_path / "same.tfrecord"
    write(
        same,
        [
            encode_example(
                {
                    **{k: (f.type, f.values) for k, f in decode(t).features.items()},
                    **{k: (f.type, f.values) for k, f in decode(p).features.items()},
                }
            )
            for t, p in zip(truth, preds)
        ],
    )
    job = EvaluateJob()
    expected = run(job, plan([str(same)]), "inline").to_json()
    if by == "record number":
        order = list(range(len(preds)))
        dropped: list[int] = []
    else:  # shuffled, two left out, and one extra
        order = list(range(len(preds)))
        random.Random(1).shuffle(order)
        dropped = order[:2]
        order = order[2:]
    t_path, p_path = tmp_path / "truth.tfrecord", tmp_path / "preds.tfrecord"
    write(t_path, truth)
    extra = [] if by == "record number" else [_stray(preds[0], by)]
    write(p_path, [preds[i] for i in order] + extra)
    result = evaluate_apart(job, plan([str(t_path)]), plan([str(p_path)]), "inline")
    doc = result.to_json()
    join = doc["join"]
    assert join["by"] == by
    assert join["joined"] == len(order)
    assert join["truth_alone"]["count"] == len(dropped)
    assert join["predictions_alone"]["count"] == len(extra)
    assert (result.status == UNJOINED).sum() == len(dropped)
    assert sorted(np.flatnonzero(result.status == UNJOINED).tolist()) == sorted(dropped)
    if not dropped:
        for key in ("classes", "map", "map50", "map75", "confusion"):
            assert doc[key] == expected[key], key
    else:
        # the same as the records that were joined, evaluated in one dataset
        kept = tmp_path / "kept.tfrecord"
        rows = [r for i, r in enumerate(codec.TFRecordFile(str(same))) if i not in dropped]
        write(kept, rows)
        alone = run(job, plan([str(kept)]), "inline").to_json()
        for key in ("classes", "map", "map50", "map75", "confusion"):
            assert doc[key] == alone[key], key
    assert result.partner is not None
    assert [int(result.partner[i]) for i in range(len(truth)) if i not in dropped] == [
        order.index(i) for i in range(len(truth)) if i not in dropped
    ]


def _stray(payload: bytes, by: str) -> bytes:
    feats: dict[str, Any] = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
    key = "image/source_id" if by == "image/source_id" else "image/filename"
    feats[key] = ("bytes", [b"nobody"])
    return encode_example(feats)


def test_class_texts_meet_labels_through_a_label_map(tmp_path: Path) -> None:
    known = known_dataset("swapped", 12, seed=2)

    def texts_only(feats: dict[str, Any]) -> dict[str, Any]:
        feats.pop("image/object/class/label")
        return feats

    truth, preds = _split_sides(known.records, texts_only)
    t_path, p_path = tmp_path / "truth.tfrecord", tmp_path / "preds.tfrecord"
    write(t_path, truth)
    write(p_path, preds)
    job = EvaluateJob(label_map=known.names)
    doc = evaluate_apart(job, plan([str(t_path)]), plan([str(p_path)]), "inline").to_json()
    assert doc["map"] == pytest.approx(known.map, abs=1e-12)
    assert [c["name"] for c in doc["classes"]] == [known.names[k] for k in sorted(known.expected)]
    # without one, the texts never meet the labels: every prediction is a false positive
    none = evaluate_apart(EvaluateJob(), plan([str(t_path)]), plan([str(p_path)]), "inline")
    assert none.to_json()["map"] == 0.0
    assert sum(c["tp"] for c in none.to_json()["classes"]) == 0


def test_a_picture_without_size_cannot_be_put_in_pixels(tmp_path: Path) -> None:
    known = known_dataset("perfect", 4, seed=1)
    payloads = []
    for i, payload in enumerate(known.records):
        feats: dict[str, Any] = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        if i == 2:
            feats.pop("image/width")
        payloads.append(encode_example(feats))
    path = tmp_path / "x.tfrecord"
    write(path, payloads)
    result = run(EvaluateJob(normalized=(True, False)), plan([str(path)]), "inline")
    assert result.status.tolist() == [OK, OK, NO_SIZE, OK]


def test_the_job_pickles_and_refuses_a_bad_threshold() -> None:
    import pickle

    job = EvaluateJob(iou=0.7, label_map={1: "cat"})
    assert pickle.loads(pickle.dumps(job)) == job
    with pytest.raises(ValueError, match="IoU"):
        EvaluateJob(iou=1.5)


def test_a_damaged_record_does_not_change_what_the_join_goes_by(tmp_path: Path) -> None:
    known = known_dataset("perfect", 8, seed=12)
    truth, preds = _split_sides(known.records, lambda feats: feats)
    t_path, p_path = tmp_path / "truth.tfrecord", tmp_path / "preds.tfrecord"
    write(t_path, truth)
    write(p_path, preds[::-1])
    with codec.TFRecordFile(str(t_path)) as f:
        offset = int(f.spans()[0][3])  # the fourth record's header
    raw = bytearray(t_path.read_bytes())
    raw[offset + 12 + 5] ^= 0x10  # a byte of its payload: its data CRC fails
    t_path.write_bytes(bytes(raw))
    result = evaluate_apart(EvaluateJob(), plan([str(t_path)]), plan([str(p_path)]), "inline")
    doc = result.to_json()
    assert doc["join"]["by"] == "image/source_id"
    assert doc["join"]["joined"] == 7 and doc["join"]["truth_alone"]["count"] == 0
    assert doc["join"]["predictions_alone"]["count"] == 1  # the damaged record's partner
    assert result.status.tolist() == [OK, OK, OK, DAMAGED, OK, OK, OK, OK]
    assert doc["map"] == 1.0
