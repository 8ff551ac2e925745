"""Detection evaluation: 100,000 pictures × 20 predictions (``--quick``: 10,000), evaluated by
``tfrecord-browser evaluate`` on two cores, against pycocotools' COCOeval on the same boxes.

The dataset is the Object Detection API's layout without pictures (as ``infer_detections.py
--discard_image_pixels`` leaves it): about seven ground-truth objects a record, 1 % of them
crowds, 20 classes, and 20 detections a record (most near an object, a few elsewhere),
written in four shards under benchmarks/data/ and reused.

Ours is the command as a person runs it, in a fresh interpreter: ``evaluate SRC --json
--workers 2`` (reading every record, its CRC checked, and matching on two processes, the
merge and accumulate in the client), wall time. pycocotools runs in a fresh interpreter of
its own: the records are decoded into its dictionaries first (not timed: its time starts from
its own in-memory dicts, as a user who already has ``instances.json`` and ``results.json``
loaded would start), then ``loadRes`` + ``evaluate`` + ``accumulate`` + ``summarize`` are
timed, in one run. Both print their mAP; the two must agree to 1e-6.

The evaluation job alone (``codec.jobs.run`` on two processes, and the per-record fields) is
timed without and with the likely mistakes (:mod:`codec.mistakes`, a second match of every
picture, class-agnostic at IoU 0.5): what the patches view and the filter's mistake names
add.

Masks (``--iou-type segm``): :data:`SEGM_COUNT` pictures of 160×120 with instance masks on
both sides (:func:`browser_app.generators.evaluation.masked_dataset`: one 0/1 PNG per
object, as ``create_coco_tf_record.py --include_masks`` writes them), the command on two
processes (reading and decoding every mask) against pycocotools'
``COCOeval(iouType="segm")`` from its own RLEs (the masks decoded with Pillow and encoded
as RLE before, timed apart); the two mAPs must agree to 1e-6."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import Row, sharded_dataset

DATA = Path(__file__).parent / "data"
GROUP = "evaluate"
CLASSES = 20
DETECTIONS = 20
SHARDS = 4


def _dataset(count: int) -> list[Path]:
    """``count`` records in :data:`SHARDS` files (made once)."""
    return sharded_dataset(DATA / f"evaluate-{count}", SHARDS, count, 2024, _record)


def _record(rng: np.random.Generator, i: int) -> dict[str, tuple[str, list]]:
    g = int(np.clip(rng.poisson(7), 1, 30))
    w = rng.uniform(0.03, 0.4, g)
    h = rng.uniform(0.03, 0.4, g)
    x = rng.uniform(0, 1 - w)
    y = rng.uniform(0, 1 - h)
    cls = rng.integers(1, CLASSES + 1, g)
    crowd = (rng.random(g) < 0.01).astype(int)
    near = rng.random(DETECTIONS) < 0.85
    src = rng.integers(0, g, DETECTIONS)
    jit = rng.normal(0, 0.05, (DETECTIONS, 4))
    dx = np.where(near, x[src] + jit[:, 0] * w[src], rng.uniform(0, 0.8, DETECTIONS))
    dy = np.where(near, y[src] + jit[:, 1] * h[src], rng.uniform(0, 0.8, DETECTIONS))
    dw = np.where(near, w[src] * (1 + jit[:, 2]), rng.uniform(0.03, 0.4, DETECTIONS))
    dh = np.where(near, h[src] * (1 + jit[:, 3]), rng.uniform(0.03, 0.4, DETECTIONS))
    x0, y0 = np.clip(dx, 0, 1), np.clip(dy, 0, 1)
    x1, y1 = np.clip(dx + np.abs(dw), 0, 1), np.clip(dy + np.abs(dh), 0, 1)
    dcls = np.where(
        near & (rng.random(DETECTIONS) < 0.9), cls[src], rng.integers(1, CLASSES + 1, DETECTIONS)
    )
    score = np.sort(
        np.where(near, rng.uniform(0.3, 1, DETECTIONS), rng.uniform(0, 0.5, DETECTIONS))
    )[::-1]
    return {
        "image/height": ("int64", [480]),
        "image/width": ("int64", [640]),
        "image/filename": ("bytes", [f"{i:06d}.jpg".encode()]),
        "image/source_id": ("bytes", [str(i).encode()]),
        "image/format": ("bytes", [b"jpeg"]),
        "image/object/bbox/xmin": ("float", x.tolist()),
        "image/object/bbox/xmax": ("float", (x + w).tolist()),
        "image/object/bbox/ymin": ("float", y.tolist()),
        "image/object/bbox/ymax": ("float", (y + h).tolist()),
        "image/object/class/label": ("int64", cls.tolist()),
        "image/object/is_crowd": ("int64", crowd.tolist()),
        "image/detection/score": ("float", score.tolist()),
        "image/detection/bbox/ymin": ("float", y0.tolist()),
        "image/detection/bbox/xmin": ("float", x0.tolist()),
        "image/detection/bbox/ymax": ("float", y1.tolist()),
        "image/detection/bbox/xmax": ("float", x1.tolist()),
        "image/detection/label": ("int64", dcls.tolist()),
    }


# pycocotools in a fresh interpreter: the records decoded into its dicts (untimed), then
# loadRes + evaluate + accumulate + summarize timed; boxes as [x, y, w, h] with w = xmax - xmin
# of the stored float32 values (what the evaluation reads), areas w * h.
_COCO = r"""
import contextlib, io, json, resource, sys, time
import numpy as np
from codec import TFRecordFile
from codec.example import decode
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

t0 = time.perf_counter()
images, anns, results, cats = [], [], [], set()
n = 0
OBJ = [f"image/object/{k}" for k in ("bbox/xmin", "bbox/ymin", "bbox/xmax", "bbox/ymax",
                                      "class/label", "is_crowd")]
DET = [f"image/detection/{k}" for k in ("bbox/xmin", "bbox/ymin", "bbox/xmax", "bbox/ymax",
                                         "label", "score")]
for path in sys.argv[1:]:
    with TFRecordFile(path) as f:
        for payload in f:
            feat = decode(payload).features
            images.append({"id": n})
            for x0, y0, x1, y1, c, crowd in zip(*(feat[k].values for k in OBJ)):
                w, h = x1 - x0, y1 - y0
                anns.append({"id": len(anns) + 1, "image_id": n, "category_id": c,
                             "bbox": [x0, y0, w, h], "area": w * h, "iscrowd": crowd})
                cats.add(c)
            for x0, y0, x1, y1, c, s in zip(*(feat[k].values for k in DET)):
                results.append({"image_id": n, "category_id": c,
                                "bbox": [x0, y0, x1 - x0, y1 - y0], "score": s})
                cats.add(c)
            n += 1
decoded = time.perf_counter() - t0
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO()
    categories = [{"id": c} for c in sorted(cats)]
    gt.dataset = {"images": images, "categories": categories, "annotations": anns}
    gt.createIndex()
    t1, c1 = time.perf_counter(), time.process_time()
    dt = gt.loadRes(results)
    t2 = time.perf_counter()
    e = COCOeval(gt, dt, "bbox")
    e.evaluate()
    t3 = time.perf_counter()
    e.accumulate()
    t4 = time.perf_counter()
    e.summarize()
    t5, c5 = time.perf_counter(), time.process_time()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"decode": decoded, "loadRes": t2 - t1, "evaluate": t3 - t2,
                  "accumulate": t4 - t3, "summarize": t5 - t4, "total": t5 - t1,
                  "cpu": c5 - c1, "map": float(e.stats[0]), "map50": float(e.stats[1]),
                  "rss_mb": rss}))
"""


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _ours(paths: list[Path], how: list[str]) -> dict[str, float]:
    """The command in a fresh interpreter: its wall time, and the CPU time of it and its
    workers."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    got = subprocess.run(
        [sys.executable, "-m", "browser_app", "evaluate", *map(str, paths), "--json", *how],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    doc = json.loads(got.stdout)
    return {"total": wall, "cpu": _children_cpu() - c0, "map": doc["map"]}


# The evaluation job alone (no command line), with and without the likely mistakes, in a
# fresh interpreter: its wall time on two processes.
_JOB = r"""
import json, sys, time
from codec.jobs import EvaluateJob, plan, run
mistakes = sys.argv[1] == "1"
t0 = time.perf_counter()
result = run(EvaluateJob(mistakes=mistakes), plan(sys.argv[2:]), "processes:2")
fields = result.record_fields()
print(json.dumps({"total": time.perf_counter() - t0, "map": result.evaluation.map}))
"""


def _job(paths: list[Path], mistakes: bool) -> dict[str, float]:
    got = subprocess.run(
        [sys.executable, "-c", _JOB, "1" if mistakes else "0", *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(got.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _pycocotools(paths: list[Path]) -> dict[str, float]:
    got = subprocess.run(
        [sys.executable, "-c", _COCO, *map(str, paths)], capture_output=True, text=True, check=True
    )
    return json.loads(got.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


SEGM_COUNT = 5_000


def _segm_dataset(count: int) -> list[Path]:
    """``count`` records with masks on both sides in two files (made once)."""
    folder = DATA / f"evaluate-segm-png-{count}"
    paths = [folder / f"part-{k}-of-2.tfrecord" for k in range(2)]
    if all(p.exists() for p in paths):
        return paths
    from browser_app.generators import write
    from browser_app.generators.evaluation import masked_dataset

    folder.mkdir(parents=True, exist_ok=True)
    data = masked_dataset(count, seed=2024, width=160, height=120, float_masks=False)
    half = count // 2
    for path, part in zip(paths, (data.records[:half], data.records[half:])):
        tmp = path.with_suffix(".part")
        write(tmp, part)
        tmp.rename(path)
    return paths


# pycocotools' segm evaluation in a fresh interpreter: the records' masks decoded and encoded
# as RLE (untimed), then loadRes + evaluate + accumulate + summarize timed.
_COCO_SEGM = r"""
import contextlib, io, json, sys, time
import numpy as np
from PIL import Image
from codec import TFRecordFile
from codec.example import decode
from pycocotools import mask as mu
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

def rle(m):
    return mu.encode(np.asfortranarray(m.astype(np.uint8)))

def masks(feat, key, h, w):
    f = feat.get(key)
    if f is None or not len(f.values):
        return []
    if isinstance(f.values[0], (bytes, bytearray)):
        return [np.asarray(Image.open(io.BytesIO(v))) > 0 for v in f.values]
    return list(np.asarray(f.values, np.float32).reshape(-1, h, w) > 0)

t0 = time.perf_counter()
images, anns, results, cats = [], [], [], set()
n = 0
for path in sys.argv[1:]:
    with TFRecordFile(path) as f:
        for payload in f:
            feat = decode(payload).features
            h, w = feat["image/height"].values[0], feat["image/width"].values[0]
            images.append({"id": n, "height": h, "width": w})
            g = masks(feat, "image/object/mask", h, w)
            for m, c, crowd in zip(g, feat["image/object/class/label"].values,
                                   feat["image/object/is_crowd"].values):
                r = rle(m)
                anns.append({"id": len(anns) + 1, "image_id": n, "category_id": c,
                             "segmentation": r, "area": float(mu.area(r)),
                             "bbox": mu.toBbox(r).tolist(), "iscrowd": crowd})
                cats.add(c)
            d = masks(feat, "image/detection/mask", h, w)
            for m, c, s in zip(d, feat["image/detection/label"].values,
                               feat["image/detection/score"].values):
                results.append({"image_id": n, "category_id": c, "segmentation": rle(m),
                                "score": s})
                cats.add(c)
            n += 1
decoded = time.perf_counter() - t0
with contextlib.redirect_stdout(io.StringIO()):
    gt = COCO()
    gt.dataset = {"images": images, "categories": [{"id": c} for c in sorted(cats)],
                  "annotations": anns}
    gt.createIndex()
    t1 = time.perf_counter()
    e = COCOeval(gt, gt.loadRes(results), "segm")
    e.evaluate()
    e.accumulate()
    e.summarize()
    t5 = time.perf_counter()
print(json.dumps({"total": t5 - t1, "decode": decoded, "map": float(e.stats[0])}))
"""


def _segm_rows(quick: bool) -> list[Row]:
    count = SEGM_COUNT // 5 if quick else SEGM_COUNT
    paths = _segm_dataset(count)
    ours = _ours(paths, ["--workers", "2", "--iou-type", "segm"])
    try:
        got = subprocess.run(
            [sys.executable, "-c", _COCO_SEGM, *map(str, paths)],
            capture_output=True,
            text=True,
            check=True,
        )
        coco = json.loads(got.stdout.strip().splitlines()[-1])
    except (subprocess.CalledProcessError, ModuleNotFoundError) as exc:  # not installed
        print(f"pycocotools segm not measured: {exc}", file=sys.stderr)
        return [Row(GROUP, f"evaluate --iou-type segm, {count:,} pictures", ours["total"], "s")]
    return [
        Row(
            GROUP,
            f"evaluate --iou-type segm, {count:,} pictures with masks, 2 processes (wall)",
            ours["total"],
            "s",
            f"< pycocotools segm ({coco['total']:.1f} s)",
            ours["total"] < coco["total"],
        ),
        Row(GROUP, "pycocotools segm loadRes + evaluate + accumulate", coco["total"], "s"),
        Row(
            GROUP,
            "  its masks decoded and encoded as RLE before (not timed above)",
            coco["decode"],
            "s",
        ),
        Row(
            GROUP,
            "|segm mAP - pycocotools segm mAP|",
            abs(ours["map"] - coco["map"]),
            "",
            "<= 1e-6",
            abs(ours["map"] - coco["map"]) <= 1e-6,
        ),
    ]


def run(quick: bool) -> list[Row]:
    count = 10_000 if quick else 100_000
    paths = _dataset(count)
    what = f"{count:,} pictures × {DETECTIONS} predictions"
    two = _ours(paths, ["--workers", "2"])
    one = _ours(paths, ["--executor", "inline"])
    plain, likely = _job(paths, False), _job(paths, True)
    try:
        coco = _pycocotools(paths)
    except (subprocess.CalledProcessError, ModuleNotFoundError) as exc:  # not installed
        print(f"pycocotools not measured: {exc}", file=sys.stderr)
        coco = None
    rows = [
        Row(GROUP, f"evaluate {what}, 2 processes (command, wall)", two["total"], "s"),
        Row(GROUP, "  CPU time (command and its workers)", two["cpu"], "s"),
        Row(GROUP, f"evaluate {what}, 1 process (command, wall)", one["total"], "s"),
        Row(GROUP, "  CPU time", one["cpu"], "s"),
        Row(GROUP, "evaluation job, 2 processes", plain["total"], "s"),
        Row(
            GROUP,
            "  with the likely mistakes (a second, class-agnostic match)",
            likely["total"],
            "s",
        ),
        Row(
            GROUP,
            "  the likely mistakes' share of the job",
            likely["total"] / plain["total"] - 1,
            "x",
            "< 1",
            likely["total"] < 2 * plain["total"] and likely["map"] == plain["map"],
        ),
    ]
    rows += _segm_rows(quick)
    if coco is None:
        return rows
    rows[0].target = f"< pycocotools ({coco['total']:.1f} s)"
    rows[0].ok = two["total"] < coco["total"]
    rows += [
        Row(GROUP, "pycocotools loadRes + evaluate + accumulate + summarize", coco["total"], "s"),
        Row(GROUP, "  CPU time", coco["cpu"], "s"),
        Row(GROUP, "  of which evaluate", coco["evaluate"], "s"),
        Row(GROUP, "  of which accumulate", coco["accumulate"], "s"),
        Row(
            GROUP,
            "pycocotools: records decoded into its dicts (not timed above)",
            coco["decode"],
            "s",
        ),
        Row(GROUP, "pycocotools peak memory", coco["rss_mb"], "MB"),
        Row(GROUP, "speed-up on 2 processes over pycocotools", coco["total"] / two["total"], "x"),
        Row(
            GROUP,
            "|mAP - pycocotools mAP|",
            abs(two["map"] - coco["map"]),
            "",
            "<= 1e-6",
            abs(two["map"] - coco["map"]) <= 1e-6 and two["map"] == one["map"],
        ),
    ]
    return rows
