"""The dataset generators (``browser_app.generators``): every record decodes, and its keys,
value types and list lengths are the public writer's (the writers' sources are named in each
generator module's docstring)."""

from __future__ import annotations

import hashlib
import io
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

import browser_app.generators as g
from codec import TFRecordFile
from codec.example import decode, encode_example
from codec.labelmap import parse_label_map
from codec.tensor import parse_tensor

SMALL = 64  # max_side for records that only need to be well formed
SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

COCO_KEYS = [
    "image/height",
    "image/width",
    "image/filename",
    "image/source_id",
    "image/key/sha256",
    "image/encoded",
    "image/format",
    "image/object/bbox/xmin",
    "image/object/bbox/xmax",
    "image/object/bbox/ymin",
    "image/object/bbox/ymax",
    "image/object/class/text",
    "image/object/is_crowd",
    "image/object/area",
]
MASK_KEY = "image/object/mask"
KEYPOINT_KEYS = [
    "image/object/keypoint/x",
    "image/object/keypoint/y",
    "image/object/keypoint/num",
    "image/object/keypoint/visibility",
    "image/object/keypoint/text",
]
PASCAL_KEYS = [
    "image/height",
    "image/width",
    "image/filename",
    "image/source_id",
    "image/key/sha256",
    "image/encoded",
    "image/format",
    "image/object/bbox/xmin",
    "image/object/bbox/xmax",
    "image/object/bbox/ymin",
    "image/object/bbox/ymax",
    "image/object/class/text",
    "image/object/class/label",
    "image/object/difficult",
    "image/object/truncated",
    "image/object/view",
]
DEEPLAB_KEYS = [
    "image/encoded",
    "image/filename",
    "image/format",
    "image/height",
    "image/width",
    "image/channels",
    "image/segmentation/class/encoded",
    "image/segmentation/class/format",
]
DETECTION_KEYS = [
    "image/detection/score",
    "image/detection/bbox/ymin",
    "image/detection/bbox/xmin",
    "image/detection/bbox/ymax",
    "image/detection/bbox/xmax",
    "image/detection/label",
]
DEPTH_KEYS = [
    "image/encoded",
    "image/filename",
    "image/format",
    "image/height",
    "image/width",
    "image/channels",
    "video/sequence_id",
    "video/frame_id",
    "image/depth/encoded",
    "image/depth/format",
]
TYPES = {
    "image/height": "int64",
    "image/width": "int64",
    "image/channels": "int64",
    "image/object/is_crowd": "int64",
    "image/object/class/label": "int64",
    "image/object/difficult": "int64",
    "image/object/truncated": "int64",
    "image/object/keypoint/num": "int64",
    "image/object/keypoint/visibility": "int64",
    "image/detection/label": "int64",
    "image/object/area": "float",
    "image/object/keypoint/x": "float",
    "image/object/keypoint/y": "float",
    "image/detection/score": "float",
}
POSES = {b"Unspecified", b"Frontal", b"Left", b"Right", b"Rear"}


def _type(key: str) -> str:
    if key in TYPES:
        return TYPES[key]
    if "/bbox/" in key:
        return "float"
    return "bytes"


def features(payload: bytes) -> dict:
    rec = decode(payload)
    assert rec.kind == "example"
    return rec.features


def check_keys(f: dict, keys: list[str], *, float_mask: bool = False) -> None:
    """The record holds exactly ``keys``, in the writer's order, each of the writer's type."""
    assert list(f) == keys
    for key in keys:
        want = "float" if (key == MASK_KEY and float_mask) else _type(key)
        assert f[key].type == want, key


def values(f: dict, key: str) -> list:
    return f[key].values


def one(f: dict, key: str):
    assert len(f[key].values) == 1, key
    return f[key].values[0]


def check_picture(f: dict) -> None:
    encoded = one(f, "image/encoded")
    with Image.open(io.BytesIO(encoded)) as img:
        assert img.format == "JPEG"
        assert img.size == (one(f, "image/width"), one(f, "image/height"))
    assert one(f, "image/format") == b"jpeg"


def check_boxes(f: dict, n: int) -> None:
    for side in ("xmin", "xmax", "ymin", "ymax"):
        assert len(values(f, f"image/object/bbox/{side}")) == n
    for lo, hi in (("xmin", "xmax"), ("ymin", "ymax")):
        for a, b in zip(values(f, f"image/object/bbox/{lo}"), values(f, f"image/object/bbox/{hi}")):
            assert 0.0 <= a <= b <= 1.0


def png_pixels(data: bytes) -> tuple[np.ndarray, Image.Image]:
    img = Image.open(io.BytesIO(data))
    img.load()
    return np.asarray(img), img


# -- the photographs ---------------------------------------------------------------------


def test_photographs_are_small_real_pictures_with_consistent_annotations():
    folder = g.PHOTO_DIR
    total = sum(p.stat().st_size for p in folder.iterdir())
    assert total < 400_000
    doc = json.loads((folder / "annotations.json").read_text(encoding="utf-8"))
    assert doc["keypoint_names"] == list(g.KEYPOINT_NAMES)
    names = {entry["file_name"] for entry in doc["images"]}
    assert names == {f"{n}.jpg" for n in g.PHOTOS}
    for entry in doc["images"]:
        with Image.open(folder / entry["file_name"]) as img:
            assert img.format == "JPEG" and img.mode == "RGB"
            assert img.size == (entry["width"], entry["height"])
            assert max(img.size) <= 640
        assert entry["objects"]
        for obj in entry["objects"]:
            assert g.COCO_CATEGORIES[obj["category_id"]] == obj["category"]
            assert obj.get("voc") is None or obj["voc"] in g.VOC_CLASSES
            for poly in obj["segmentation"]:
                assert len(poly) >= 6 and len(poly) % 2 == 0
                assert all(0 <= x < entry["width"] for x in poly[0::2])
                assert all(0 <= y < entry["height"] for y in poly[1::2])
            kp = obj.get("keypoints")
            if kp is not None:
                assert obj["category"] == "person" and len(kp) == 51
                for x, y, v in zip(kp[0::3], kp[1::3], kp[2::3]):
                    assert v in (0, 1, 2)
                    if v == 0:
                        assert x == y == 0
                    else:
                        assert 0 <= x < entry["width"] and 0 <= y < entry["height"]
                assert obj["num_keypoints"] == sum(v > 0 for v in kp[2::3])
    people = [o for e in doc["images"] for o in e["objects"] if o["category"] == "person"]
    assert people and all("keypoints" in o for o in people)
    disparity, png = png_pixels((folder / "motorcycle_disparity.png").read_bytes())
    assert png.mode.startswith("I;16") and disparity.dtype == np.uint16
    with Image.open(folder / "motorcycle.jpg") as jpg:
        assert png.size == jpg.size
    assert (disparity == 0).any() and disparity.max() > 256 * 10


def test_generators_need_no_streamlit_pandas_or_scikit_image():
    code = (
        "import sys, browser_app.generators as g\n"
        "g.coco(0, max_side=32); g.depth(0, max_side=32); g.tensor_records(0, max_side=16)\n"
        "print(sorted(m for m in ('streamlit', 'pandas', 'skimage') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert out.stdout.strip() == "[]"


# -- COCO -------------------------------------------------------------------------------------


def test_masks_are_rasterized_as_the_coco_writer_does():
    # create_coco_tf_record_test.py's own case: two triangles in an 8 x 8 picture.
    mask = g.polygon_mask([[4, 0, 0, 0, 0, 4], [8, 4, 4, 8, 8, 8]], 8, 8)
    assert mask.dtype == np.uint8
    assert mask.tolist() == [
        [1, 1, 1, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0, 0, 0],
        [1, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 1],
        [0, 0, 0, 0, 0, 0, 1, 1],
        [0, 0, 0, 0, 0, 1, 1, 1],
        [0, 0, 0, 0, 1, 1, 1, 1],
    ]
    png, img = png_pixels(g.mask_png(mask))
    assert img.mode == "L" and png.tolist() == mask.tolist()


def check_coco(payload: bytes, n: int | None = None, *, masks=True, keypoints=True) -> dict:
    f = features(payload)
    keys = COCO_KEYS + ([MASK_KEY] if masks else []) + (KEYPOINT_KEYS if keypoints else [])
    check_keys(f, keys)
    check_picture(f)
    width, height = one(f, "image/width"), one(f, "image/height")
    key = hashlib.sha256(one(f, "image/encoded")).hexdigest().encode()
    assert one(f, "image/key/sha256") == key
    assert one(f, "image/source_id").decode().isdigit()
    texts = values(f, "image/object/class/text")
    count = len(texts)
    if n is not None:
        assert count == n
    assert all(t.decode() in g.COCO_IDS for t in texts)
    check_boxes(f, count)
    assert values(f, "image/object/is_crowd") == [0] * count
    assert len(values(f, "image/object/area")) == count
    assert all(a > 0 for a in values(f, "image/object/area"))
    if masks:
        pngs = values(f, MASK_KEY)
        assert len(pngs) == count
        for data in pngs:
            pixels, img = png_pixels(data)
            assert img.format == "PNG" and img.mode == "L"
            assert img.size == (width, height)
            assert set(np.unique(pixels).tolist()) <= {0, 1}
    if keypoints:
        xs, ys = values(f, "image/object/keypoint/x"), values(f, "image/object/keypoint/y")
        vis = values(f, "image/object/keypoint/visibility")
        names = values(f, "image/object/keypoint/text")
        nums = values(f, "image/object/keypoint/num")
        assert len(xs) == len(ys) == len(vis) == len(names) == 17 * count
        assert len(nums) == count
        assert names == [k.encode() for k in g.KEYPOINT_NAMES] * count
        assert set(vis) <= {0, 1, 2}
        for i, text in enumerate(texts):
            v = vis[17 * i : 17 * i + 17]
            x, y = xs[17 * i : 17 * i + 17], ys[17 * i : 17 * i + 17]
            if text != b"person":  # the writer's filler for objects without keypoints
                assert v == [0] * 17 and x == [0.0] * 17 and y == [0.0] * 17
                assert nums[i] == 0
            assert nums[i] == sum(1 for a in v if a > 0)
            for a, px, py in zip(v, x, y):
                if a == 0:
                    assert px == py == 0.0
                else:
                    assert 0.0 <= px <= 1.0 and 0.0 <= py <= 1.0
    return f


@pytest.mark.parametrize("name", g.PHOTOS)
def test_coco_record_of_each_photograph(name):
    payload = g.coco(7, photo=name)
    f = check_coco(payload)
    pic = g.photo(name)
    assert one(f, "image/filename") == pic.file_name.encode()
    assert one(f, "image/encoded") == pic.encoded  # the file, byte for byte
    assert [t.decode() for t in values(f, "image/object/class/text")] == [
        o.category for o in pic.objects
    ]
    for data, obj in zip(values(f, MASK_KEY), pic.objects):
        pixels, _ = png_pixels(data)
        assert pixels.tolist() == g.polygon_mask(obj.segmentation, pic.height, pic.width).tolist()
        assert pixels.any()


def test_coco_astronaut_keypoints_are_the_annotated_ones_normalised():
    f = features(g.coco(0, photo="astronaut"))
    pic = g.photo("astronaut")
    person = pic.objects[0]
    assert person.category == "person" and person.keypoints is not None
    assert values(f, "image/object/class/text")[0] == b"person"
    xs = np.asarray([x / pic.width for x in person.keypoints[0::3]], dtype=np.float32)
    ys = np.asarray([y / pic.height for y in person.keypoints[1::3]], dtype=np.float32)
    assert values(f, "image/object/keypoint/x")[:17] == xs.tolist()
    assert values(f, "image/object/keypoint/y")[:17] == ys.tolist()
    assert values(f, "image/object/keypoint/visibility")[:17] == person.keypoints[2::3]
    assert values(f, "image/object/keypoint/num")[0] == person.num_keypoints > 0


def test_coco_options_drop_masks_and_keypoints_and_add_class_label():
    check_coco(
        g.coco(1, masks=False, keypoints=False, max_side=SMALL), masks=False, keypoints=False
    )
    f = features(g.coco(1, class_label=True, max_side=SMALL, image_id=397133))
    keys = [*COCO_KEYS[:12], "image/object/class/label", *COCO_KEYS[12:], MASK_KEY]
    check_keys(f, keys + KEYPOINT_KEYS)
    assert values(f, "image/object/class/label") == [
        g.COCO_IDS[t.decode()] for t in values(f, "image/object/class/text")
    ]
    assert one(f, "image/source_id") == b"397133"


@pytest.mark.parametrize("n", [0, 1, 17, 100])
def test_coco_object_counts(n):
    f = check_coco(g.coco(3, n_objects=n, max_side=SMALL), n)
    if n == 0:
        for key in [*COCO_KEYS[7:], MASK_KEY, *KEYPOINT_KEYS]:
            assert values(f, key) == []


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 100))
def test_coco_any_object_count(seed, n):
    check_coco(g.coco(seed, n_objects=n, max_side=40), n)


def test_coco_float_masks_are_the_png_masks_as_floats():
    for n in (0, 5, 100):
        png = features(g.coco(11, n_objects=n, max_side=SMALL))
        f = features(g.coco_float_masks(11, n_objects=n, max_side=SMALL))
        check_keys(f, [*COCO_KEYS, MASK_KEY, *KEYPOINT_KEYS], float_mask=True)
        h, w = one(f, "image/height"), one(f, "image/width")
        flat = values(f, MASK_KEY)
        assert len(flat) == n * h * w
        assert set(flat) <= {0.0, 1.0}
        stacked = np.asarray(flat, dtype=np.float32).reshape(n, h, w)
        pngs = [png_pixels(d)[0] for d in values(png, MASK_KEY)]
        assert np.array_equal(stacked, np.asarray(pngs, dtype=np.float32).reshape(n, h, w))
        for key in COCO_KEYS:
            assert values(f, key) == values(png, key)


# -- PASCAL VOC ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", g.PHOTOS)
def test_pascal_record_of_each_photograph(name):
    f = features(g.pascal(2, photo=name))
    check_keys(f, PASCAL_KEYS)
    check_picture(f)
    pic = g.photo(name)
    assert one(f, "image/filename") == one(f, "image/source_id") == pic.file_name.encode()
    own = [o for o in pic.objects if o.voc is not None]
    texts = values(f, "image/object/class/text")
    assert [t.decode() for t in texts] == [o.voc for o in own]
    assert values(f, "image/object/class/label") == [g.VOC_IDS[t.decode()] for t in texts]
    check_boxes(f, len(texts))
    w, h = one(f, "image/width"), one(f, "image/height")
    for key, size in (("xmin", w), ("xmax", w), ("ymin", h), ("ymax", h)):
        for v in values(f, f"image/object/bbox/{key}"):
            corner = round(v * size)  # VOC's 1-based pixel corners, divided as they are
            assert 1 <= corner <= size and abs(v * size - corner) < 1e-3
    assert set(values(f, "image/object/difficult")) <= {0, 1}
    assert set(values(f, "image/object/truncated")) <= {0, 1}
    assert set(values(f, "image/object/view")) <= POSES


@pytest.mark.parametrize("n", [0, 3, 100])
def test_pascal_object_counts_and_ignore_difficult(n):
    f = features(g.pascal(4, n_objects=n, max_side=SMALL))
    check_keys(f, PASCAL_KEYS)
    for key in PASCAL_KEYS[7:]:
        assert len(values(f, key)) == n
    assert set(values(f, "image/object/class/label")) <= set(range(1, 21))
    kept = features(g.pascal(4, n_objects=n, max_side=SMALL, ignore_difficult_instances=True))
    assert len(values(kept, "image/object/class/label")) == n - sum(
        values(f, "image/object/difficult")
    )
    assert set(values(kept, "image/object/difficult")) <= {0}


def test_pascal_motorcycle_has_a_difficult_truncated_bicycle():
    f = features(g.pascal(0, photo="motorcycle"))
    texts = values(f, "image/object/class/text")
    i = texts.index(b"bicycle")
    assert values(f, "image/object/difficult")[i] == 1
    assert values(f, "image/object/truncated")[i] == 1
    assert values(f, "image/object/view")[texts.index(b"motorbike")] == b"Left"


# -- DeepLab segmentation -----------------------------------------------------------------------


@pytest.mark.parametrize("name", g.PHOTOS)
def test_segmentation_record_of_each_photograph(name):
    f = features(g.segmentation(5, photo=name))
    check_keys(f, DEEPLAB_KEYS)
    check_picture(f)
    assert one(f, "image/filename") == name.encode()  # no extension
    assert one(f, "image/channels") == 3
    assert one(f, "image/segmentation/class/format") == b"png"
    labels, img = png_pixels(one(f, "image/segmentation/class/encoded"))
    assert img.format == "PNG" and img.mode == "L"
    assert img.size == (one(f, "image/width"), one(f, "image/height"))
    found = set(np.unique(labels).tolist())
    assert found <= set(range(21)) | {255}
    voc = {g.VOC_IDS[o.voc] for o in g.photo(name).objects if o.voc and not o.difficult}
    assert voc <= found and 255 in found and 0 in found


@pytest.mark.parametrize("n", [0, 4, 100])
def test_segmentation_object_counts(n):
    f = features(g.segmentation(6, n_objects=n, max_side=SMALL))
    check_keys(f, DEEPLAB_KEYS)
    labels, _ = png_pixels(one(f, "image/segmentation/class/encoded"))
    assert np.array_equal(labels, g.class_map(6, n_objects=n, max_side=SMALL))
    assert set(np.unique(labels).tolist()) <= set(range(21)) | {255}
    if n == 0:
        assert not labels.any()


def test_segmentation_void_band_runs_along_the_outline():
    labels = g.class_map(0, photo="chelsea")
    pic = g.photo("chelsea")
    cat = g.polygon_mask(pic.objects[0].segmentation, pic.height, pic.width).astype(bool)
    void = labels == 255
    assert void.any() and (labels[cat & ~void] == g.VOC_IDS["cat"]).all()
    # Three pixels or more inside the outline (in every direction, diagonals too): no void.
    inner = np.pad(cat, 2)
    for _ in range(2):
        core = inner[1:-1, 1:-1].copy()
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                core &= inner[1 + dy : inner.shape[0] - 1 + dy, 1 + dx : inner.shape[1] - 1 + dx]
        inner = np.pad(core, 1)
    inner = inner[2:-2, 2:-2]
    assert inner.any() and not void[inner].any()
    # ... and closer to the outline, away from the picture's edges, every pixel is void.
    edge = cat & ~inner
    edge[:3, :] = edge[-3:, :] = edge[:, :3] = edge[:, -3:] = False
    assert edge.any() and void[edge].all()


# -- predictions --------------------------------------------------------------------------------


def _iou(a, b) -> float:
    ih = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iw = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ih * iw
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def check_detections(f: dict, n: int, classes: set[int]) -> list[tuple]:
    for key in DETECTION_KEYS:
        assert len(values(f, key)) == n, key
    scores = values(f, "image/detection/score")
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert set(values(f, "image/detection/label")) <= classes
    boxes = list(
        zip(*(values(f, f"image/detection/bbox/{k}") for k in ("ymin", "xmin", "ymax", "xmax")))
    )
    for ymin, xmin, ymax, xmax in boxes:
        assert 0.0 <= ymin <= ymax <= 1.0 and 0.0 <= xmin <= xmax <= 1.0
    return boxes


@pytest.mark.parametrize("n_detections", [0, 1, 20, 100])
def test_predictions_on_coco(n_detections):
    payload = g.predictions(8, n_detections, photo="astronaut", max_side=SMALL)
    f = features(payload)
    check_keys(f, COCO_KEYS + DETECTION_KEYS)
    check_picture(f)
    check_detections(f, n_detections, set(g.COCO_CATEGORIES))
    base = features(g.coco(8, masks=False, keypoints=False, photo="astronaut", max_side=SMALL))
    for key in COCO_KEYS:
        assert values(f, key) == values(base, key)


def test_predictions_find_the_objects_and_add_low_scored_false_positives():
    f = features(g.predictions(0, photo="motorcycle"))
    boxes = check_detections(f, 20, set(g.COCO_CATEGORIES))
    scores = values(f, "image/detection/score")
    truth = list(
        zip(*(values(f, f"image/object/bbox/{k}") for k in ("ymin", "xmin", "ymax", "xmax")))
    )
    best = [max((_iou(b, t) for t in truth), default=0.0) for b in boxes]
    assert any(iou > 0.7 and s >= 0.5 for iou, s in zip(best, scores))
    assert sum(s < 0.5 for s in scores) >= 20 - 2 * len(truth)


def test_predictions_on_pascal_and_without_pixels():
    f = features(g.predictions(9, 30, layout="pascal", n_objects=6, max_side=SMALL))
    check_keys(f, PASCAL_KEYS + DETECTION_KEYS)
    check_detections(f, 30, set(range(1, 21)))
    bare = features(
        g.predictions(
            9, 30, layout="pascal", n_objects=6, max_side=SMALL, discard_image_pixels=True
        )
    )
    assert list(bare) == [k for k in f if k != "image/encoded"]
    for key in bare:
        assert values(bare, key) == values(f, key)
    coco_bare = features(g.predictions(1, discard_image_pixels=True, masks=True, max_side=SMALL))
    assert "image/encoded" not in coco_bare and MASK_KEY in coco_bare


# -- depth ------------------------------------------------------------------------------------


def test_depth_record_png_and_raw():
    f = features(g.depth(3))
    check_keys(f, DEPTH_KEYS)
    check_picture(f)
    h, w = one(f, "image/height"), one(f, "image/width")
    assert one(f, "image/channels") == 3 and one(f, "image/depth/format") == b"png"
    assert one(f, "image/filename") == b"motorcycle.jpg"
    coded, img = png_pixels(one(f, "image/depth/encoded"))
    assert img.mode.startswith("I;16") and coded.dtype == np.uint16
    assert coded.shape == (h, w)
    assert np.array_equal(coded, g.depth_map(3))
    assert (coded == 0).any() and coded.max() > 256
    raw = features(g.depth(3, depth_format="raw"))
    check_keys(raw, DEPTH_KEYS)
    assert one(raw, "image/depth/format") == b"raw"
    data = one(raw, "image/depth/encoded")
    assert len(data) == h * w * 4
    assert np.array_equal(np.frombuffer(data, dtype=np.int32).reshape(h, w), coded)
    whole = features(g.depth(0, crop=False))
    assert one(whole, "image/encoded") == g.photo("motorcycle").encoded
    assert np.array_equal(png_pixels(one(whole, "image/depth/encoded"))[0], g.disparity())


# -- tensors ----------------------------------------------------------------------------------


def test_tensor_records():
    payloads = g.tensor_records(4, max_side=48)
    assert len(payloads) == 4
    arrays = [parse_tensor(p) for p in payloads]
    rgb, gray, disp, unit = arrays
    assert rgb.dtype == np.uint8 and rgb.ndim == 3 and rgb.shape[2] == 3
    assert max(rgb.shape[:2]) <= 48
    assert gray.dtype == np.uint8 and gray.shape == rgb.shape[:2]
    assert disp.dtype == np.uint16 and disp.ndim == 2 and max(disp.shape) <= 48
    assert unit.dtype == np.float32 and unit.shape == rgb.shape
    assert unit.min() >= 0.0 and unit.max() <= 1.0
    assert np.allclose(unit * 255, rgb, atol=1e-3)
    for p in payloads:  # a tensor record is not an Example
        assert decode(p).kind == "raw"


# -- determinism, map order, files, label maps -------------------------------------------------


GENERATORS = {
    "coco": lambda s: g.coco(s, max_side=SMALL),
    "coco_float_masks": lambda s: g.coco_float_masks(s, max_side=24),
    "pascal": lambda s: g.pascal(s, max_side=SMALL),
    "segmentation": lambda s: g.segmentation(s, max_side=SMALL),
    "predictions": lambda s: g.predictions(s, max_side=SMALL),
    "depth": lambda s: g.depth(s, max_side=SMALL),
}


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generators_are_deterministic(name):
    make = GENERATORS[name]
    assert make(12) == make(12)
    assert len({make(s) for s in range(4)}) > 1
    assert g.tensor_records(12, max_side=16) == g.tensor_records(12, max_side=16)


@SETTINGS
@given(
    name=st.sampled_from(sorted(GENERATORS)),
    seed=st.integers(0, 999),
    order=st.integers(0, 2**32 - 1),
)
def test_shuffled_features_moves_entries_and_keeps_every_value(name, seed, order):
    payload = GENERATORS[name](seed)
    shuffled = g.shuffled_features(payload, random.Random(order))
    assert shuffled != payload and len(shuffled) == len(payload)
    before, after = decode(payload), decode(shuffled)
    assert after.kind == "example"
    assert after.features == before.features
    assert list(after.features) != list(before.features)
    assert sorted(after.features) == sorted(before.features)


def test_shuffled_features_with_numpy_generator_and_edge_cases():
    payload = g.pascal(0, max_side=SMALL)
    shuffled = g.shuffled_features(payload, np.random.default_rng(5))
    assert shuffled != payload and decode(shuffled).features == decode(payload).features
    single = encode_example({"a": ("int64", [1])})
    assert g.shuffled_features(single, random.Random(0)) == single
    assert g.shuffled_features(b"", random.Random(0)) == b""
    # Two Features fields (two Examples back to back): protobuf merges them, the last "a"
    # wins; the order of one key's entries is kept.
    merged = encode_example({"a": ("int64", [1]), "b": ("int64", [2])}) + encode_example(
        {"c": ("int64", [3]), "a": ("int64", [4])}
    )
    for s in range(10):
        out = decode(g.shuffled_features(merged, random.Random(s)))
        assert {k: v.values for k, v in out.features.items()} == {"a": [4], "b": [2], "c": [3]}


def test_write_makes_a_readable_tfrecord_file(tmp_path):
    payloads = g.records(g.pascal, 3, seed=10, max_side=SMALL) + g.tensor_records(1, max_side=8)
    path = tmp_path / "mixed.tfrecord"
    assert g.write(path, payloads) == len(payloads)
    with TFRecordFile(str(path)) as f:
        assert list(f) == payloads
    gz = tmp_path / "mixed.tfrecord.gz"
    assert g.write(gz, payloads, compression="gzip") == len(payloads)
    assert gz.read_bytes()[:2] == b"\x1f\x8b"


def test_label_maps():
    coco = parse_label_map(g.coco_label_map())
    assert len(coco) == 80 and coco.names == g.COCO_CATEGORIES
    assert coco.names[1] == "person" and coco.names[17] == "cat" and coco.names[47] == "cup"
    assert coco.names[90] == "toothbrush" and 12 not in coco
    voc = parse_label_map(g.voc_label_map())
    assert len(voc) == 20 and voc.names == {i: n for n, i in g.VOC_IDS.items()}
    assert voc.names[1] == "aeroplane" and voc.names[20] == "tvmonitor"
    assert "item {\n  id: 1\n  name: 'aeroplane'\n}\n" in g.voc_label_map()
