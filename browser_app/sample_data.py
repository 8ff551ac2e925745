"""The bundled sample dataset: small, deterministic, and something for every view of the app.

``write_sample(folder)`` writes it with the project's own writer and message encoder; the
pictures are drawn procedurally with Pillow (shapes on gradients), so the same bytes come out
on every run. ``scripts/make_sample.py`` writes it into ``assets/sample/``;
:func:`sample_dir` finds it for the ``tfrecord-browser`` command: ``<repo>/assets/sample`` for a
source checkout or an editable install, else a copy generated on first use into the cache
folder (a wheel does not carry ``assets/``).

Files (see :data:`SAMPLE_FILES`):

- ``detection.tfrecord``: 60 Object Detection API records, JPEG and PNG, normalised boxes with
  class text and labels;
- ``damaged.tfrecord``: a picture dataset with one damaged record (a flipped payload byte, so
  its data CRC fails), junk bytes between two records (a skipped region), a cut-off JPEG and a
  declared size that does not match the picture;
- ``tensors.tfrecord``: serialized tensors of several dtypes and shapes, one of them an image;
- ``raw_pixels.tfrecord`` and its GZIP copy ``raw_pixels.tfrecord.gz``: raw uint8 pixel
  buffers described by ``height``/``width``/``depth``;
- ``sequence.tfrecord``: SequenceExamples (context + frame-level feature lists);
- ``raw.tfrecord``: payloads that are not protobufs (JSON, CSV, binary);
- ``tabular/train-0000{0,1,2}-of-00003.tfrecord``: a sharded table of small Examples;
- ``coco/instances.tfrecord``: photographs in ``create_coco_tf_record.py``'s layout with PNG
  instance masks and the 17 COCO keypoints of people, ``coco/predictions.tfrecord``: the same
  layout as ``infer_detections.py`` writes it, 20 scored detections beside the ground truth,
  and ``coco/label_map.pbtxt`` beside them (the app finds it there);
- ``segmentation.tfrecord``: DeepLab records, a photograph and its VOC class map;
- ``depth.tfrecord``: photographs with a 16-bit disparity PNG (DeepLab2's layout);
- ``tensor_images.tfrecord``: records that are each one serialized picture tensor;
- ``tfds/planted/1.0.0/``: a tensorflow-datasets folder (``dataset_info.json``,
  ``features.json``, train and test in two shards each) of photographs with copies planted
  in it — re-encoded, resized, cropped, mirrored, the same pixels as PNG, the same bytes —,
  some of them across the splits (leakage), and near decoys that are not copies;
- ``versions/v1.tfrecord`` and ``versions/v2.tfrecord``: two versions of a photo dataset,
  the second with records added, removed and changed, a new and a vanished feature, a new
  class and a shifted numeric feature;
- ``audio/speech.tfrecord`` (WAV in several sample formats and FLAC, ``audio/encoded``) and
  ``audio/nsynth-test.tfrecord`` (NSynth's layout: 64,000 float samples at 16 kHz);
- ``video/clips.tfrecord``: MediaPipe ``media_sequence`` clips (JPEG frames, per-frame boxes,
  the clip's label);
- ``text/pretraining_data.tfrecord`` with ``text/vocab.txt``: BERT pre-training records,
  token ids the app reads as WordPiece text.

The photographs and their layouts come from :mod:`browser_app.generators`.
"""

from __future__ import annotations

import io
import json
import math
import os
import random
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from codec import TFRecordFile, TFRecordWriter, encode_record, write_records
from codec import example as ex
from codec.framing import HEADER_SIZE
from codec.tensor import serialize_tensor

from . import generators as gen

__all__ = [
    "CHECK_CLASSES",
    "CLASSES",
    "LABEL_MAP",
    "PHOTO_SIDE",
    "PLANTS",
    "SAMPLE_FILES",
    "SAMPLE_VERSION",
    "Shape",
    "detection_payload",
    "draw_scene",
    "encode_picture",
    "sample_dir",
    "write_detection_checks",
    "write_sample",
]

SAMPLE_VERSION = "3"
CLASSES = ("circle", "square", "triangle", "star")
SAMPLE_FILES = (
    "README.txt",
    "audio/nsynth-test.tfrecord",
    "audio/speech.tfrecord",
    "coco/instances.tfrecord",
    "coco/label_map.pbtxt",
    "coco/predictions.tfrecord",
    "damaged.tfrecord",
    "depth.tfrecord",
    "detection.tfrecord",
    "raw.tfrecord",
    "raw_pixels.tfrecord",
    "raw_pixels.tfrecord.gz",
    "segmentation.tfrecord",
    "sequence.tfrecord",
    "tabular/train-00000-of-00003.tfrecord",
    "tabular/train-00001-of-00003.tfrecord",
    "tabular/train-00002-of-00003.tfrecord",
    "tensor_images.tfrecord",
    "tensors.tfrecord",
    "text/pretraining_data.tfrecord",
    "text/vocab.txt",
    "tfds/planted/1.0.0/dataset_info.json",
    "tfds/planted/1.0.0/features.json",
    "tfds/planted/1.0.0/label.labels.txt",
    "tfds/planted/1.0.0/planted-test.tfrecord-00000-of-00002",
    "tfds/planted/1.0.0/planted-test.tfrecord-00001-of-00002",
    "tfds/planted/1.0.0/planted-train.tfrecord-00000-of-00002",
    "tfds/planted/1.0.0/planted-train.tfrecord-00001-of-00002",
    "versions/v1.tfrecord",
    "versions/v2.tfrecord",
    "video/clips.tfrecord",
)
# The photographs' longer side in the layout files: small files, yet large enough for the
# app to caption predictions (it does from 240 pixels on).
PHOTO_SIDE = 400

# Colours that read well on screen; backgrounds are gradients between two of the soft ones.
_LIGHT = [(214, 232, 252), (253, 226, 200), (212, 240, 218), (240, 216, 240), (252, 244, 196)]
_MID = [(120, 170, 220), (235, 170, 120), (130, 195, 150), (190, 150, 205), (225, 200, 110)]
# One colour per class, so a wrong label stands out when flipping through a gallery.
_CLASS_COLOURS = {
    "circle": (36, 99, 190),
    "square": (206, 64, 48),
    "triangle": (32, 140, 84),
    "star": (232, 160, 16),
}


@dataclass(frozen=True)
class Shape:
    """One drawn object: its class and its box in pixels (xmin, ymin, xmax, ymax)."""

    label: int  # 1-based index into CLASSES, as the Object Detection API numbers classes
    text: str
    box: tuple[int, int, int, int]


def _gradient(rng: random.Random, width: int, height: int) -> Image.Image:
    a = np.array(rng.choice(_LIGHT), dtype=np.float32)
    b = np.array(rng.choice(_MID), dtype=np.float32)
    angle = rng.uniform(0, math.pi)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    t = xs / max(width - 1, 1) * math.cos(angle) + ys / max(height - 1, 1) * math.sin(angle)
    t = (t - t.min()) / max(float(t.max() - t.min()), 1e-6)
    pixels = a[None, None, :] * (1 - t[..., None]) + b[None, None, :] * t[..., None]
    return Image.fromarray(pixels.round().astype(np.uint8), "RGB")


def _star(cx: float, cy: float, r: float) -> list[tuple[float, float]]:
    pts = []
    for k in range(10):
        rad = r if k % 2 == 0 else r * 0.45
        a = -math.pi / 2 + k * math.pi / 5
        pts.append((cx + rad * math.cos(a), cy + rad * math.sin(a)))
    return pts


def draw_scene(
    rng: random.Random, width: int, height: int, max_objects: int = 3
) -> tuple[Image.Image, list[Shape]]:
    """A gradient with 1..``max_objects`` shapes on it, and the shapes' boxes."""
    img = _gradient(rng, width, height)
    draw = ImageDraw.Draw(img)
    shapes: list[Shape] = []
    for _ in range(rng.randint(1, max_objects)):
        label = rng.randint(1, len(CLASSES))
        size = rng.randint(min(width, height) // 5, min(width, height) // 2)
        x0 = rng.randint(0, width - size)
        y0 = rng.randint(0, height - size)
        x1, y1 = x0 + size - 1, y0 + size - 1
        text = CLASSES[label - 1]
        colour = _CLASS_COLOURS[text]
        if text == "circle":
            draw.ellipse((x0, y0, x1, y1), fill=colour)
        elif text == "square":
            draw.rectangle((x0, y0, x1, y1), fill=colour)
        elif text == "triangle":
            draw.polygon([((x0 + x1) / 2, y0), (x1, y1), (x0, y1)], fill=colour)
        else:
            draw.polygon(_star((x0 + x1) / 2, (y0 + y1) / 2, size / 2), fill=colour)
        shapes.append(Shape(label, text, (x0, y0, x1 + 1, y1 + 1)))
    return img, shapes


def encode_picture(img: Image.Image, fmt: str) -> bytes:
    """JPEG (quality 85) or PNG bytes of ``img``; the same bytes for the same picture."""
    out = io.BytesIO()
    if fmt == "jpeg":
        img.save(out, format="JPEG", quality=85, optimize=False)
    else:
        img.save(out, format="PNG", optimize=False, compress_level=9)
    return out.getvalue()


def detection_payload(rng: random.Random, index: int, fmt: str, size: tuple[int, int]) -> bytes:
    """One Object Detection API style Example with a freshly drawn picture."""
    width, height = size
    img, shapes = draw_scene(rng, width, height)
    encoded = encode_picture(img, fmt)
    ext = "jpg" if fmt == "jpeg" else "png"
    return ex.encode_example(
        {
            "image/encoded": ("bytes", [encoded]),
            "image/format": ("bytes", [fmt.encode()]),
            "image/filename": ("bytes", [f"scene_{index:05d}.{ext}".encode()]),
            "image/height": ("int64", [height]),
            "image/width": ("int64", [width]),
            "image/object/bbox/xmin": ("float", [s.box[0] / width for s in shapes]),
            "image/object/bbox/ymin": ("float", [s.box[1] / height for s in shapes]),
            "image/object/bbox/xmax": ("float", [s.box[2] / width for s in shapes]),
            "image/object/bbox/ymax": ("float", [s.box[3] / height for s in shapes]),
            "image/object/class/text": ("bytes", [s.text.encode() for s in shapes]),
            "image/object/class/label": ("int64", [s.label for s in shapes]),
        }
    )


# -- the files ---------------------------------------------------------------------------


def _detection(rng: random.Random) -> Iterator[bytes]:
    for i in range(60):
        fmt = "png" if i % 3 == 2 else "jpeg"
        size = (rng.choice((96, 128, 160)), rng.choice((96, 112, 128)))
        yield detection_payload(rng, i, fmt, size)


def _classification(rng: random.Random, i: int, picture: bytes, h: int, w: int) -> bytes:
    return ex.encode_example(
        {
            "image_raw": ("bytes", [picture]),
            "height": ("int64", [h]),
            "width": ("int64", [w]),
            "depth": ("int64", [3]),
            "label": ("int64", [i % len(CLASSES)]),
            "caption": ("bytes", [f"picture {i} of the damaged sample".encode()]),
        }
    )


def _write_damaged(path: Path, rng: random.Random) -> None:
    payloads = []
    for i in range(12):
        img, _ = draw_scene(rng, 96, 96, max_objects=2)
        picture = encode_picture(img, "jpeg")
        h = w = 96
        if i == 7:
            picture = picture[: len(picture) // 3]  # a cut-off JPEG: decoding must fail
        if i == 10:
            h = 64  # the declared size does not match the picture
        payloads.append(_classification(rng, i, picture, h, w))
    with TFRecordWriter(path) as out:
        for i, p in enumerate(payloads):
            if i == 9:
                # Junk between records 8 and 9: the reader skips it as a bad header and
                # resynchronises on the next record.
                out.write_framed(b"\x00junk between records\x00")
            if i == 5:
                framed = bytearray(encode_record(p))
                framed[12 + len(p) // 2] ^= 0x01  # one payload bit: the data CRC fails
                out.write_framed(bytes(framed))
            else:
                out.write(p)


def _tensors(rng: random.Random) -> Iterator[bytes]:
    nprng = np.random.default_rng(7)
    img, _ = draw_scene(rng, 64, 48)
    gray, _ = draw_scene(rng, 40, 40)
    tensors: list[tuple[str, Any, str]] = [
        ("image_rgb", np.asarray(img, dtype=np.uint8), "a 48x64x3 uint8 image"),
        (
            "image_gray",
            np.asarray(gray.convert("L"), dtype=np.uint8)[:, :, None],
            "a 40x40x1 uint8 image",
        ),
        ("embedding", nprng.standard_normal(16).astype(np.float32), "float32 vector"),
        ("logits", nprng.standard_normal((3, 4)).astype(np.float64), "float64 matrix"),
        ("token_ids", nprng.integers(0, 30000, size=12, dtype=np.int64), "int64 vector"),
        ("mask", nprng.random(10) > 0.5, "bool vector"),
        ("words", np.array([b"tf", b"record", b"browser"], dtype=object), "string vector"),
        ("half", np.linspace(-1, 1, 6, dtype=np.float16), "float16 vector"),
        ("scalar", np.array(3.25, dtype=np.float32), "float32 scalar"),
        ("empty", np.zeros((0, 3), dtype=np.int32), "empty int32 tensor"),
    ]
    for name, array, note in tensors:
        yield ex.encode_example(
            {
                "name": ("bytes", [name.encode()]),
                "tensor": ("bytes", [serialize_tensor(array)]),
                "note": ("bytes", [note.encode()]),
            }
        )


def _raw_pixels(rng: random.Random) -> Iterator[bytes]:
    for i in range(10):
        depth = 1 if i % 3 == 0 else 3
        w = rng.choice((32, 40, 48))
        h = rng.choice((32, 40))
        img, shapes = draw_scene(rng, w, h, max_objects=1)
        if depth == 1:
            img = img.convert("L")
        buf = np.asarray(img, dtype=np.uint8).tobytes()
        yield ex.encode_example(
            {
                "height": ("int64", [h]),
                "width": ("int64", [w]),
                "depth": ("int64", [depth]),
                "image_raw": ("bytes", [buf]),
                "label": ("int64", [shapes[0].label]),
            }
        )


def _sequences(rng: random.Random) -> Iterator[bytes]:
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "saw", "red", "ball"]
    for i in range(8):
        steps = rng.randint(3, 9)
        context: dict[str, ex.FeatureSpec] = {
            "video_id": ("bytes", [f"clip-{i:03d}".encode()]),
            "length": ("int64", [steps]),
            "label": ("int64", [rng.randint(0, 4)]),
        }
        lists: dict[str, list[ex.FeatureSpec]] = {
            "frame_id": [("int64", [k]) for k in range(steps)],
            "frame_score": [("float", [round(rng.random(), 3)]) for _ in range(steps)],
            "tokens": [
                ("bytes", [rng.choice(words).encode() for _ in range(rng.randint(1, 3))])
                for _ in range(steps)
            ],
        }
        yield ex.encode_sequence_example(context, lists)


def _raw(rng: random.Random) -> Iterator[bytes]:
    yield json.dumps({"id": 1, "text": "records need not be protobufs"}).encode()
    yield b"id,label,score\n2,cat,0.91\n"
    yield bytes(rng.randrange(256) for _ in range(96))
    yield "unicode text: größe, 大小, размер".encode()
    yield b""
    yield bytes(range(256))


def _tabular(rng: random.Random, shard: int) -> Iterator[bytes]:
    animals = ["cat", "dog", "bird", "fish", "horse"]
    for k in range(40):
        i = shard + 3 * k
        yield ex.encode_example(
            {
                "id": ("int64", [i]),
                "label": ("bytes", [rng.choice(animals).encode()]),
                "score": ("float", [round(rng.random(), 4)]),
                "is_valid": ("int64", [int(rng.random() > 0.2)]),
                "tags": ("bytes", [t.encode() for t in rng.sample(animals, rng.randint(0, 3))]),
            }
        )


# -- the layouts of public writers, over photographs (browser_app.generators) ----------------

# Objects per record: None, the photograph's own; a number, exactly that many (made-up ones
# added or the own ones cut): none, a few, a crowd.
_COCO_COUNTS = (None, None, None, None, None, 0, 5, 6, 9, 4, 12, 7)


def _coco() -> Iterator[bytes]:
    """``create_coco_tf_record.py --include_masks`` with keypoints, class ids added."""
    for i, count in enumerate(_COCO_COUNTS):
        yield gen.coco(
            1000 + i,
            count,
            photo=gen.PHOTOS[i % len(gen.PHOTOS)],
            max_side=PHOTO_SIDE,
            class_label=True,
            image_id=100 + i,
        )


def _predictions() -> Iterator[bytes]:
    """``infer_detections.py`` output over COCO records with masks and keypoints: 20
    scored detections each, beside every layer of the ground truth."""
    for i, count in enumerate(_COCO_COUNTS):
        yield gen.predictions(
            2000 + i,
            20,
            n_objects=count,
            photo=gen.PHOTOS[(i + 2) % len(gen.PHOTOS)],
            max_side=PHOTO_SIDE,
            masks=True,
            keypoints=True,
        )


def _segmentation() -> Iterator[bytes]:
    """DeepLab class maps: the photographs' own objects, then made-up ones added."""
    for i, count in enumerate((None, None, None, None, None, 4, 5, 8)):
        yield gen.segmentation(
            3000 + i, count, photo=gen.PHOTOS[i % len(gen.PHOTOS)], max_side=PHOTO_SIDE
        )


def _depth() -> Iterator[bytes]:
    """Crops of the motorcycle with their disparity PNG; the first one not cropped."""
    for i in range(4):
        yield gen.depth(4000 + i, crop=i > 0, max_side=PHOTO_SIDE)


def _tensor_images() -> list[bytes]:
    """Two photographs, each as uint8 RGB, uint8 gray, uint16 disparity and float32 RGB."""
    return gen.tensor_records(5000, photo_name="chelsea", max_side=128) + gen.tensor_records(
        5001, photo_name="coffee", max_side=96
    )


_README = """\
tfrecord-browser sample dataset (version {version}), made by browser_app/sample_data.py.
Regenerate with: python scripts/make_sample.py

detection.tfrecord          60 Object Detection API Examples: JPEG and PNG pictures with
                            normalised boxes, class text and labels
damaged.tfrecord            12 pictures: record 5 is damaged (data CRC), junk bytes sit
                            before record 9, record 7's JPEG is cut off, record 10
                            declares the wrong height
tensors.tfrecord            serialized tensors (tf.io.serialize_tensor) incl. image tensors
raw_pixels.tfrecord(.gz)    raw uint8 pixels with height/width/depth (plain and GZIP)
sequence.tfrecord           8 SequenceExamples: context + frame-level feature lists
raw.tfrecord                payloads that are not protobufs
tabular/train-*-of-00003    120 small Examples in three shards

Photographs in the layouts of public writers (pictures at most {side} pixels a side):

coco/instances.tfrecord     {coco} COCO records (create_coco_tf_record.py --include_masks):
                            boxes, class text and ids, PNG instance masks, the 17 COCO
                            keypoints of people; some with made-up objects, one with none
coco/predictions.tfrecord   {predictions} records as infer_detections.py writes them: 20 scored
                            detections (image/detection/*) beside the ground truth with
                            its masks and keypoints
coco/label_map.pbtxt        COCO's 80 classes, found by the app beside the records
segmentation.tfrecord       {segmentation} DeepLab records: a photograph and its VOC class map
                            (PNG, 255 = void border)
depth.tfrecord              {depth} photographs with a 16-bit disparity PNG (x256, 0 = unknown)
tensor_images.tfrecord      {tensors} records, each one serialized picture tensor: uint8 RGB,
                            uint8 gray, uint16 disparity, float32 RGB

Datasets to compare, clean and query (the Duplicates, Compare and SQL pages):

tfds/planted/1.0.0/         a tensorflow-datasets folder, train and test: {pictures} pictures,
                            {copies} of them planted copies of others (re-encoded, resized,
                            cropped, mirrored, same pixels, same bytes), some leaked across
                            the splits, and {decoys} near decoys that are not copies
versions/v1.tfrecord, v2    two versions of a photo dataset: records added, removed and
                            changed, a new and a vanished feature, a new class, a shift

Sound, video and text:

audio/speech.tfrecord       WAV (8/16/24/32-bit, float, stereo) and FLAC in audio/encoded
audio/nsynth-test.tfrecord  3 NSynth notes: 64,000 float samples at 16 kHz each
video/clips.tfrecord        MediaPipe media_sequence clips: JPEG frames with per-frame boxes
text/pretraining_data...    BERT pre-training records; text/vocab.txt turns ids into words
"""


def write_sample(folder: str | os.PathLike[str]) -> list[Path]:
    """Write the sample dataset into ``folder`` (created if needed); return the files."""
    root = Path(folder)
    (root / "tabular").mkdir(parents=True, exist_ok=True)
    rng = random.Random(20240521)
    with TFRecordWriter(root / "detection.tfrecord") as w:
        w.write_all(_detection(rng))
    _write_damaged(root / "damaged.tfrecord", random.Random(5))
    with TFRecordWriter(root / "tensors.tfrecord") as w:
        w.write_all(_tensors(random.Random(11)))
    pixels = list(_raw_pixels(random.Random(13)))
    with TFRecordWriter(root / "raw_pixels.tfrecord") as w:
        w.write_all(pixels)
    with TFRecordWriter(root / "raw_pixels.tfrecord.gz", compression="gzip") as w:
        w.write_all(pixels)
    with TFRecordWriter(root / "sequence.tfrecord") as w:
        w.write_all(_sequences(random.Random(17)))
    with TFRecordWriter(root / "raw.tfrecord") as w:
        w.write_all(_raw(random.Random(19)))
    for shard in range(3):
        name = root / "tabular" / f"train-{shard:05d}-of-00003.tfrecord"
        with TFRecordWriter(name) as w:
            w.write_all(_tabular(random.Random(100 + shard), shard))
    from codec.writer import atomic_output

    (root / "coco").mkdir(exist_ok=True)
    counts = {
        "coco": gen.write(root / "coco" / "instances.tfrecord", _coco()),
        "predictions": gen.write(root / "coco" / "predictions.tfrecord", _predictions()),
        "segmentation": gen.write(root / "segmentation.tfrecord", _segmentation()),
        "depth": gen.write(root / "depth.tfrecord", _depth()),
        "tensors": gen.write(root / "tensor_images.tfrecord", _tensor_images()),
    }
    with atomic_output(root / "coco" / "label_map.pbtxt", "w") as f:
        f.write(gen.coco_label_map())
    planted = _kinds_of_datasets(root)
    with atomic_output(root / "README.txt", "w") as f:
        f.write(
            _README.format(
                version=SAMPLE_VERSION,
                side=PHOTO_SIDE,
                pictures=planted.pictures,
                copies=len(planted.groups),
                decoys=len(planted.decoys),
                **counts,
            )
        )
    return [root / name for name in SAMPLE_FILES]


def _kinds_of_datasets(root: Path) -> Any:
    """The sample's dataset folders and its sound, video and text records; returns what the
    planted-copies folder holds (:class:`browser_app.generators.duplicates.Planted`)."""
    from .generators import audio, sequences, text, versions
    from .generators.duplicates import write_planted

    for sub in ("tfds", "versions", "audio", "video", "text"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    planted = write_planted(root / "tfds", originals=24, copied=8, decoys=3, size=(200, 150))
    versions.write_versions(root / "versions", count=60)
    audio.write_encoded_audio(root / "audio" / "speech.tfrecord")
    audio.write_nsynth(root / "audio" / "nsynth-test.tfrecord", count=3)
    sequences.write_media_sequences(root / "video" / "clips.tfrecord", frames=8)
    text.write_bert(root / "text", count=8)
    return planted


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in SAMPLE_FILES)


def bundled_sample_dir() -> Path:
    """``<repo>/assets/sample`` next to the package (a checkout or an editable install)."""
    return Path(__file__).resolve().parent.parent / "assets" / "sample"


def sample_dir() -> Path:
    """The folder holding the sample dataset: the bundled copy when present, else one
    generated (once) into ``<cache>/sample``."""
    bundled = bundled_sample_dir()
    if _complete(bundled):
        return bundled
    from codec.settings import default_cache_dir

    target = default_cache_dir() / "sample"
    stamp = target / ".version"
    if _complete(target) and stamp.is_file() and stamp.read_text() == SAMPLE_VERSION:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=".sample-"))
    try:
        write_sample(tmp)
        (tmp / ".version").write_text(SAMPLE_VERSION)
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        os.replace(tmp, target)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if _complete(target):  # another process won the race
            return target
        raise
    return target


# --------------------------------------------------------------------------------------------
# A detection dataset with planted problems, for the dataset checks

CHECK_CLASSES = {1: "cat", 2: "dog", 3: "bird"}
LABEL_MAP = "\n".join(f'item {{\n  id: {i}\n  name: "{n}"\n}}' for i, n in CHECK_CLASSES.items())
# The planted problems, in the order they are planted (every seventh record, the kinds in
# turn), and the filter expression that finds each.
PLANTS = {
    "box_range": "any(image/object/bbox/xmax > 1)",
    "box_not_finite": "any(image/object/bbox/ymin != image/object/bbox/ymin)",
    "box_inverted": "any(image/object/bbox/xmin >= image/object/bbox/xmax)",
    "object_lengths": "len(image/object/class/text) != len(image/object/bbox/xmin)",
    "label_map": "not all(image/object/class/label in [1, 2, 3])",
    "label_text": 'any(image/object/class/label == 1 and image/object/class/text != "cat")',
    "image_size": "image/height != 48",
    "undecodable": None,  # a cut JPEG: only decoding finds it
    "missing_label": "not has(image/object/class/label)",
    "damaged": "not intact",
}


def _small_jpeg(width: int, height: int, seed: int) -> bytes:
    img = Image.new("RGB", (width, height), ((seed * 37) % 256, (seed * 91) % 256, 120))
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=70)
    return out.getvalue()


def _checked_example(
    rnd: random.Random, seed: int, plant: str | None, pictures: dict[int, bytes]
) -> bytes:
    n = rnd.randrange(2, 4)
    labels = [rnd.randrange(1, 4) for _ in range(n)]
    xs = [rnd.uniform(0.0, 0.5) for _ in range(n)]
    ys = [rnd.uniform(0.0, 0.5) for _ in range(n)]
    x1 = [x + rnd.uniform(0.1, 0.45) for x in xs]
    y1 = [y + rnd.uniform(0.1, 0.45) for y in ys]
    texts = [CHECK_CLASSES[v].encode() for v in labels]
    width, height = 64, 48
    picture = pictures.setdefault(seed % 8, _small_jpeg(width, height, seed % 8))
    if plant == "box_range":
        x1[0] = 1.35
    elif plant == "box_not_finite":
        ys[1] = math.nan
    elif plant == "box_inverted":
        xs[0], x1[0] = 0.8, 0.2
    elif plant == "object_lengths":
        texts = texts[:-1]
    elif plant == "label_map":
        labels[0] = 99
        texts[0] = b"yak"
    elif plant == "label_text":
        labels[0], texts[0] = 1, b"dog"
    elif plant == "image_size":
        height = 49
    elif plant == "undecodable":
        picture = picture[: len(picture) // 2]
    features: dict[str, tuple[str, list[Any]]] = {
        "image/encoded": ("bytes", [picture]),
        "image/format": ("bytes", [b"jpeg"]),
        "image/height": ("int64", [height]),
        "image/width": ("int64", [width]),
        "image/source_id": ("bytes", [f"img-{seed:06d}".encode()]),
        "image/object/bbox/xmin": ("float", xs),
        "image/object/bbox/ymin": ("float", ys),
        "image/object/bbox/xmax": ("float", x1),
        "image/object/bbox/ymax": ("float", y1),
        "image/object/class/text": ("bytes", texts),
        "image/object/class/label": ("int64", labels),
    }
    if plant == "missing_label":
        del features["image/object/class/label"]
    return ex.encode_example(features)


def write_detection_checks(
    path: str | os.PathLike[str], n: int = 200, seed: int = 0, plant: bool = True
) -> dict[str, list[int]]:
    """Write ``n`` Object Detection records to ``path``, every seventh one carrying one of
    the problems of :data:`PLANTS` in turn (with ``plant``); return the planted records by
    problem. Used to try the dataset checks (``schema --label-map``) and the filters."""
    rnd = random.Random(seed)
    kinds = list(PLANTS) if plant else []
    planted: dict[str, list[int]] = {k: [] for k in kinds}
    payloads = []
    pictures: dict[int, bytes] = {}
    for i in range(n):
        what = None
        if kinds and i % 7 == 3:  # every seventh record, the kinds in turn
            what = kinds[(i // 7) % len(kinds)]
            planted[what].append(i)
        payloads.append(_checked_example(rnd, i, what, pictures))
    write_records(path, payloads)
    damaged = planted.get("damaged", [])
    if damaged:
        data = bytearray(Path(path).read_bytes())
        with TFRecordFile(path, use_cache=False) as f:
            for i in damaged:
                off, _n = f.span(i)
                data[off + HEADER_SIZE + 5] ^= 0xFF
        Path(path).write_bytes(bytes(data))
    return planted
