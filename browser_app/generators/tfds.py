"""Datasets that describe themselves, written as their tools write them: TensorFlow Datasets
folders, TFX ExampleGen splits, and the class names files of public layouts.

- :func:`write_image_classification`: an MNIST-like dataset ``<root>/<name>/<version>/``
  (28×28 grey PNG pictures of shapes, a ClassLabel with names), train and test shards.
- :func:`write_detection`: a PASCAL VOC-like dataset ``<root>/voc/2007/5.0.0/`` (a config
  level too): the packaged photographs (``photos/``, with their hand-drawn objects) when they
  are there, else drawn scenes; ``objects`` a ``Sequence`` of ``bbox`` (``BBoxFeature``),
  ``label`` and ``pose`` (ClassLabels), ``is_truncated`` / ``is_difficult`` (bools), and
  ``labels`` / ``labels_no_difficult`` (sequences of ClassLabel), as TFDS's ``voc.py`` has it.
- :func:`write_tfx_splits`: ``Split-train/`` and ``Split-eval/`` of GZIP ``data_tfrecord-*.gz``.
- :func:`write_names_files`: a names file of every kind :mod:`codec.names` reads.
- :func:`plant`: the lies of :data:`PLANTS` planted in a written TFDS folder.

The files are TFDS 4.9's: ``dataset_info.json`` as ``json_format.MessageToJson(info,
sort_keys=True)`` writes it (lowerCamelCase, int64 as strings, defaults left out),
``features.json`` as ``FeatureConnector.save_config`` does (``MessageToDict`` of the
``Feature`` proto, ``indent=4``, keys sorted), ``<feature>.labels.txt`` one name a line, and
the shards named by ``{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}``. Records are encoded as
``example_serializer`` does: an Image as its encoded PNG or JPEG bytes, a ClassLabel as
int64, a bool as int64, a ``BBoxFeature`` as four float32 per box
(``[ymin, xmin, ymax, xmax]``, normalised), a ``Sequence`` flattened into one list per key,
nested keys joined with ``/``.
"""

from __future__ import annotations

import io
import json
import os
import random
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from browser_app.generators.label_maps import VOC_CLASSES
from codec import example as ex
from codec.writer import write_records

__all__ = [
    "DETECTION_SPLITS",
    "PLANTS",
    "SHAPES",
    "VOC_LABELS",
    "VOC_POSES",
    "plant",
    "tensor_bytes",
    "write_detection",
    "write_features",
    "write_image_classification",
    "write_info",
    "write_labels",
    "write_names_files",
    "write_shards",
    "write_tfx_splits",
]

FEATURES = "tensorflow_datasets.core.features"
CLASS_LABEL = f"{FEATURES}.class_label_feature.ClassLabel"
IMAGE = f"{FEATURES}.image_feature.Image"
TENSOR = f"{FEATURES}.tensor_feature.Tensor"
TEXT = f"{FEATURES}.text_feature.Text"
BBOX = f"{FEATURES}.bounding_boxes.BBoxFeature"
SEQUENCE = f"{FEATURES}.sequence_feature.Sequence"
FEATURES_DICT = f"{FEATURES}.features_dict.FeaturesDict"
TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"

SHAPES = ("circle", "square", "triangle", "cross", "ring", "bar", "diamond", "dot")
# TFDS's voc.py: _VOC_LABELS, in its order: the VOC classes.
VOC_LABELS = VOC_CLASSES
VOC_POSES = ("frontal", "left", "rear", "right", "unspecified")
DETECTION_SPLITS = ("train", "validation", "test")


# -- the JSON files -----------------------------------------------------------------------------


def _shape(*dims: int | None) -> dict[str, Any]:
    """A ``Shape`` proto as ``MessageToDict`` writes it: int64 as strings, -1 for unknown,
    an empty shape as an empty object."""
    return {"dimensions": [str(-1 if d is None else d) for d in dims]} if dims else {}


def class_label(num_classes: int) -> dict[str, Any]:
    return {"classLabel": {"numClasses": str(num_classes)}, "pythonClassName": CLASS_LABEL}


def image(*dims: int | None, encoding: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"dtype": "uint8", "shape": _shape(*dims)}
    if encoding:
        body["encodingFormat"] = encoding
    return {"image": body, "pythonClassName": IMAGE}


def tensor(dtype: str, *dims: int | None, encoding: str = "none") -> dict[str, Any]:
    return {
        "pythonClassName": TENSOR,
        "tensor": {"dtype": dtype, "encoding": encoding, "shape": _shape(*dims)},
    }


def text() -> dict[str, Any]:
    return {"pythonClassName": TEXT, "text": {}}


def bbox() -> dict[str, Any]:
    return {"boundingBox": {"dtype": "float32", "shape": _shape(4)}, "pythonClassName": BBOX}


def sequence(feature: dict[str, Any], length: int | None = None) -> dict[str, Any]:
    return {
        "pythonClassName": SEQUENCE,
        "sequence": {"feature": feature, "length": str(-1 if length is None else length)},
    }


def features_dict(features: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"featuresDict": {"features": dict(features)}, "pythonClassName": FEATURES_DICT}


def write_features(folder: Path, features: dict[str, Any]) -> None:
    """``features.json`` into ``folder``, as TFDS writes it (``features_dict``'s document)."""
    (folder / "features.json").write_text(json.dumps(features, indent=4, sort_keys=True))


def write_labels(folder: Path, file_name: str, names: Sequence[str]) -> None:
    """A ClassLabel's names file (``<feature>.labels.txt``), one name a line, as TFDS writes
    it."""
    # ClassLabel._write_names_to_file
    (folder / file_name).write_text("\n".join(names) + "\n")


def write_info(
    folder: Path,
    *,
    name: str,
    version: str,
    description: str,
    citation: str,
    splits: Mapping[str, Sequence[int]],
    module: str,
    config: str | None = None,
    supervised: tuple[str, str] | None = None,
    homepage: str | None = None,
) -> None:
    """``dataset_info.json`` as ``DatasetInfo.write_to_directory`` writes it."""
    split_list = []
    for split, lengths in splits.items():
        n = len(lengths)
        num_bytes = sum(
            (folder / f"{name}-{split}.tfrecord-{k:05d}-of-{n:05d}").stat().st_size
            for k in range(n)
        )
        split_list.append(
            {
                "filepathTemplate": TEMPLATE,
                "name": split,
                "numBytes": str(num_bytes),
                "shardLengths": [str(x) for x in lengths],
            }
        )
    info: dict[str, Any] = {
        "citation": citation,
        "description": description,
        "fileFormat": "tfrecord",
        "moduleName": module,
        "name": name,
        "releaseNotes": {version: "Generated by tfrecord-browser's test data generator."},
        "splits": split_list,
        "version": version,
    }
    if config:
        info["configName"] = config
        info["configDescription"] = f"The {config} configuration."
    if homepage:
        info["location"] = {"urls": [homepage]}
    if supervised:
        info["supervisedKeys"] = {
            "tuple": {"items": [{"featureKey": supervised[0]}, {"featureKey": supervised[1]}]}
        }
    # json_format.MessageToJson(..., sort_keys=True): indent 2.
    (folder / "dataset_info.json").write_text(
        json.dumps(info, indent=2, sort_keys=True, ensure_ascii=False), encoding="utf-8"
    )


def write_shards(
    folder: Path, name: str, split: str, payloads: list[bytes], num_shards: int
) -> list[int]:
    """Write ``payloads`` into ``num_shards`` shards (TFDS's even split); their lengths."""
    n = len(payloads)
    bounds = [round(k * n / num_shards) for k in range(num_shards + 1)]
    lengths = []
    for k in range(num_shards):
        part = payloads[bounds[k] : bounds[k + 1]]
        write_records(folder / f"{name}-{split}.tfrecord-{k:05d}-of-{num_shards:05d}", part)
        lengths.append(len(part))
    return lengths


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def _jpeg(img: Image.Image) -> bytes:
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=85)
    return out.getvalue()


# -- an MNIST-like image classification dataset -------------------------------------------------


def _draw_shape(kind: str, rng: random.Random, size: int = 28) -> np.ndarray:
    img = Image.new("L", (size, size), 0)
    d = ImageDraw.Draw(img)
    c = size / 2 + rng.uniform(-3, 3)
    r = size * rng.uniform(0.25, 0.38)
    box = (c - r, c - r, c + r, c + r)
    ink = rng.randint(170, 255)
    if kind == "circle":
        d.ellipse(box, fill=ink)
    elif kind == "square":
        d.rectangle(box, fill=ink)
    elif kind == "triangle":
        d.polygon([(c, c - r), (c + r, c + r), (c - r, c + r)], fill=ink)
    elif kind == "cross":
        d.line([(c - r, c - r), (c + r, c + r)], fill=ink, width=3)
        d.line([(c - r, c + r), (c + r, c - r)], fill=ink, width=3)
    elif kind == "ring":
        d.ellipse(box, outline=ink, width=3)
    elif kind == "bar":
        d.rectangle((c - r, c - 2, c + r, c + 2), fill=ink)
    elif kind == "diamond":
        d.polygon([(c, c - r), (c + r, c), (c, c + r), (c - r, c)], fill=ink)
    else:
        d.ellipse((c - 3, c - 3, c + 3, c + 3), fill=ink)
    pixels = np.asarray(img, dtype=np.uint8)
    noise = np.array([rng.randint(0, 24) for _ in range(size * size)], dtype=np.uint8)
    return np.maximum(pixels, noise.reshape(size, size))[:, :, None]


def write_image_classification(
    root: str | os.PathLike[str],
    *,
    name: str = "shapes",
    version: str = "3.0.1",
    classes: Sequence[str] = SHAPES,
    records: Mapping[str, int] | None = None,
    shards: Mapping[str, int] | None = None,
    names_file: bool = True,
    embedding: str | None = None,
    seed: int = 0,
) -> Path:
    """Write an MNIST-like TFDS dataset into ``root/name/version/`` and return that folder:
    ``image`` (28×28×1 PNG) and ``label`` (a ClassLabel over ``classes``, its names in
    ``label.labels.txt``; ``names_file=False`` declares ``numClasses`` only, as MNIST does),
    split into ``records`` (default train 40, test 12) in ``shards`` (default train 2, test
    1). Supervised keys (image, label). ``embedding`` (``none``, ``bytes`` or ``zlib``) adds
    an ``embedding`` feature, a ``Tensor`` of 8 float32 stored with that encoding."""
    records = dict(records or {"train": 40, "test": 12})
    shards = dict(shards or {"train": 2, "test": 1})
    folder = Path(root) / name / version
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    lengths: dict[str, list[int]] = {}
    for split, count in records.items():
        payloads = []
        for i in range(count):
            label = (i * 7 + len(split)) % len(classes)
            values: dict[str, ex.FeatureSpec] = {
                "image": ("bytes", [_png(_draw_shape(classes[label], rng)[:, :, 0])]),
                "label": ("int64", [label]),
            }
            if embedding is not None:
                vec = np.array([rng.uniform(-1, 1) for _ in range(8)], dtype=np.float32)
                if embedding == "none":
                    values["embedding"] = ("float", [float(v) for v in vec])
                else:
                    values["embedding"] = ("bytes", [tensor_bytes(vec, embedding)])
            payloads.append(ex.encode_example(values))
        lengths[split] = write_shards(folder, name, split, payloads, shards.get(split, 1))
    declared = {"image": image(28, 28, 1, encoding="png"), "label": class_label(len(classes))}
    if embedding is not None:
        declared["embedding"] = tensor("float32", 8, encoding=embedding)
    write_features(folder, features_dict(declared))
    if names_file:
        write_labels(folder, "label.labels.txt", classes)
    write_info(
        folder,
        name=name,
        version=version,
        description=f"Pictures of {len(classes)} shapes, 28×28 grey, MNIST-like.",
        citation="@misc{shapes, title={Shapes}, note={generated}}",
        splits=lengths,
        module=f"tensorflow_datasets.image_classification.{name}",
        supervised=("image", "label"),
        homepage="https://example.invalid/shapes",
    )
    return folder


# -- a VOC-like detection dataset ---------------------------------------------------------------


def _photo_scenes(max_side: int) -> list[tuple[str, bytes, int, int, list[dict[str, Any]]]] | None:
    """The packaged photographs with their VOC objects, or None when they are not there."""
    try:
        from browser_app.generators import library
    except ImportError:
        return None
    scenes = []
    try:
        for name in library.PHOTOS:
            p = library.photo(name, max_side)
            objects = []
            for o in p.objects:
                if o.voc is None or o.voc not in VOC_LABELS:
                    continue
                xs = [v for poly in o.segmentation for v in poly[0::2]]
                ys = [v for poly in o.segmentation for v in poly[1::2]]
                if not xs or not ys:
                    continue
                objects.append(
                    {
                        "label": o.voc,
                        "pose": (o.pose or "unspecified").lower(),
                        "box": (
                            min(ys) / p.height,
                            min(xs) / p.width,
                            max(ys) / p.height,
                            max(xs) / p.width,
                        ),
                        "truncated": bool(o.truncated),
                        "difficult": bool(o.difficult),
                    }
                )
            scenes.append((p.file_name, p.encoded, p.width, p.height, objects))
    except (OSError, ValueError, KeyError):
        return None
    return scenes


def _drawn_scene(i: int, rng: random.Random) -> tuple[str, bytes, int, int, list[dict[str, Any]]]:
    w, h = 160 + 16 * (i % 3), 120
    grad = np.linspace(60, 200, w, dtype=np.float64)[None, :, None]
    base = np.broadcast_to(grad, (h, w, 3)).astype(np.uint8).copy()
    img = Image.fromarray(base)
    d = ImageDraw.Draw(img)
    objects = []
    for k in range(1 + i % 3):
        label = VOC_LABELS[(i * 3 + k * 5) % len(VOC_LABELS)]
        x0, y0 = rng.randint(0, w // 2), rng.randint(0, h // 2)
        x1, y1 = x0 + rng.randint(20, w // 2), y0 + rng.randint(20, h // 2)
        d.rectangle((x0, y0, x1, y1), fill=(40 * k % 255, 120, 200 - 30 * k))
        objects.append(
            {
                "label": label,
                "pose": VOC_POSES[(i + k) % len(VOC_POSES)],
                "box": (y0 / h, x0 / w, min(y1, h) / h, min(x1, w) / w),
                "truncated": x1 >= w or y1 >= h,
                "difficult": k == 2,
            }
        )
    return f"{i:06d}.jpg", _jpeg(img), w, h, objects


def _f32(x: float) -> float:
    return float(np.float32(x))


def _voc_payload(file_name: str, encoded: bytes, objects: list[dict[str, Any]]) -> bytes:
    flat: list[float] = []
    for o in objects:
        flat.extend(_f32(v) for v in o["box"])
    labels = [VOC_LABELS.index(o["label"]) for o in objects]
    return ex.encode_example(
        {
            "image": ("bytes", [encoded]),
            "image/filename": ("bytes", [file_name.encode()]),
            "labels": ("int64", sorted(set(labels))),
            "labels_no_difficult": (
                "int64",
                sorted({lab for lab, o in zip(labels, objects) if not o["difficult"]}),
            ),
            "objects/bbox": ("float", flat),
            "objects/is_difficult": ("int64", [int(o["difficult"]) for o in objects]),
            "objects/is_truncated": ("int64", [int(o["truncated"]) for o in objects]),
            "objects/label": ("int64", labels),
            "objects/pose": ("int64", [VOC_POSES.index(o["pose"]) for o in objects]),
        }
    )


def _flipped(
    scene: tuple[str, bytes, int, int, list[dict[str, Any]]],
) -> tuple[str, bytes, int, int, list[dict[str, Any]]]:
    file_name, encoded, w, h, objects = scene
    with Image.open(io.BytesIO(encoded)) as img:
        mirrored = img.convert("RGB").transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    flipped = [
        {**o, "box": (o["box"][0], 1 - o["box"][3], o["box"][2], 1 - o["box"][1])} for o in objects
    ]
    return "flipped_" + file_name, _jpeg(mirrored), w, h, flipped


def write_detection(
    root: str | os.PathLike[str],
    *,
    name: str = "voc",
    config: str = "2007",
    version: str = "5.0.0",
    max_side: int = 160,
    photos: bool = True,
    seed: int = 0,
) -> Path:
    """Write a PASCAL VOC-like TFDS dataset into ``root/name/config/version/`` and return that
    folder: splits train (2 shards), validation and test (1 each). The pictures are the packaged
    photographs (made at most ``max_side`` pixels a side; their mirror images too) when they
    are there and ``photos`` is true, else drawn scenes; stored as JPEG, as VOC's files are
    (``Image()`` without an encoding format keeps a file's own bytes)."""
    folder = Path(root) / name / config / version
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    scenes = _photo_scenes(max_side) if photos else None
    if scenes:
        scenes = scenes + [_flipped(s) for s in scenes]
    else:
        scenes = [_drawn_scene(i, rng) for i in range(12)]
    payloads = [_voc_payload(s[0], s[1], s[4]) for s in scenes]
    third = max(1, len(payloads) // 5)
    parts = {
        "train": payloads[: len(payloads) - 2 * third],
        "validation": payloads[len(payloads) - 2 * third : len(payloads) - third],
        "test": payloads[len(payloads) - third :],
    }
    lengths = {
        split: write_shards(folder, name, split, part, 2 if split == "train" else 1)
        for split, part in parts.items()
    }
    write_features(
        folder,
        features_dict(
            {
                "image": image(None, None, 3),
                "image/filename": text(),
                "labels": sequence(class_label(len(VOC_LABELS))),
                "labels_no_difficult": sequence(class_label(len(VOC_LABELS))),
                "objects": sequence(
                    features_dict(
                        {
                            "bbox": bbox(),
                            "is_difficult": tensor("bool"),
                            "is_truncated": tensor("bool"),
                            "label": class_label(len(VOC_LABELS)),
                            "pose": class_label(len(VOC_POSES)),
                        }
                    )
                ),
            }
        ),
    )
    for file_name, names in (
        ("labels.labels.txt", VOC_LABELS),
        ("labels_no_difficult.labels.txt", VOC_LABELS),
        ("objects-label.labels.txt", VOC_LABELS),
        ("objects-pose.labels.txt", VOC_POSES),
    ):
        write_labels(folder, file_name, names)
    write_info(
        folder,
        name=name,
        version=version,
        config=config,
        description="PASCAL VOC-like object detection: pictures, boxes, classes and poses.",
        citation="@misc{voc_like, title={VOC-like}, note={generated}}",
        splits=lengths,
        module=f"tensorflow_datasets.object_detection.{name}",
        homepage="https://example.invalid/voc",
    )
    return folder


# -- TFX ExampleGen -----------------------------------------------------------------------------


def write_tfx_splits(
    root: str | os.PathLike[str],
    *,
    records: Mapping[str, int] | None = None,
    shards: Mapping[str, int] | None = None,
    seed: int = 0,
) -> Path:
    """Write a TFX ExampleGen output into ``root``: ``Split-train/`` and ``Split-eval/``
    (``records`` and ``shards`` by split; default train 30 in 2, eval 10 in 1) of GZIP
    ``data_tfrecord-0000K-of-0000N.gz``, the Chicago-taxi-like table TFX's examples use.
    Returns ``root``."""
    records = dict(records or {"train": 30, "eval": 10})
    shards = dict(shards or {"train": 2, "eval": 1})
    rng = random.Random(seed)
    out = Path(root)
    companies = (b"Flash Cab", b"Taxi Affiliation Services", b"Sun Taxi", b"")
    for split, count in records.items():
        folder = out / f"Split-{split}"
        folder.mkdir(parents=True, exist_ok=True)
        payloads = []
        for _ in range(count):
            miles = round(rng.uniform(0.1, 20.0), 2)
            payloads.append(
                ex.encode_example(
                    {
                        "trip_miles": ("float", [_f32(miles)]),
                        "fare": ("float", [_f32(3.25 + 2.25 * miles)]),
                        "tips": ("float", [_f32(rng.choice([0.0, 1.0, 2.5]))]),
                        "company": ("bytes", [rng.choice(companies)]),
                        "trip_start_hour": ("int64", [rng.randint(0, 23)]),
                        "payment_type": ("bytes", [rng.choice([b"Cash", b"Credit Card"])]),
                    }
                )
            )
        n = shards.get(split, 1)
        bounds = [round(k * count / n) for k in range(n + 1)]
        for k in range(n):
            write_records(
                folder / f"data_tfrecord-{k:05d}-of-{n:05d}.gz",
                payloads[bounds[k] : bounds[k + 1]],
                compression="gzip",
            )
    return out


# -- names files ----------------------------------------------------------------------------------


def write_names_files(folder: str | os.PathLike[str]) -> dict[str, Path]:
    """A names file of each kind into ``folder``, by kind (:data:`codec.names.NAMES_KINDS`):
    ``label.labels.txt`` (TFDS), ``vocabulary.csv`` (YouTube-8M's columns, a description
    with commas and a line break quoted), ``class_labels_indices.csv`` (AudioSet's, names
    with commas quoted), ``classes.txt`` (plain, a blank line at index 2), ``label_map.pbtxt``
    and ``classes.csv`` (a CSV whose header says ``id,class_name``)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "tfds_labels": out / "label.labels.txt",
        "vocabulary_csv": out / "vocabulary.csv",
        "class_labels_csv": out / "class_labels_indices.csv",
        "plain": out / "classes.txt",
        "label_map": out / "label_map.pbtxt",
        "csv": out / "classes.csv",
    }
    write_labels(out, "label.labels.txt", SHAPES)
    paths["vocabulary_csv"].write_text(
        "Index,TrainVideoCount,KnowledgeGraphId,Name,WikiUrl,Vertical1,Vertical2,Vertical3,"
        "WikiDescription\n"
        '0,378135,/m/03bt1gh,Game,https://en.wikipedia.org/wiki/Game,Games,,,"A game is a'
        ' structured form of play, usually undertaken for enjoyment."\n'
        '1,233311,/m/01mw1,Video game,https://en.wikipedia.org/wiki/Video_game,Games,,,"A'
        ' video game is an electronic game.\nIt involves a user interface."\n'
        "2,197534,/m/07yv9,Vehicle,https://en.wikipedia.org/wiki/Vehicle,Autos & Vehicles,,,"
        "A vehicle is a mobile machine.\n"
        "3,178611,/m/01jddz,Concert,https://en.wikipedia.org/wiki/Concert,Arts & Entertainment"
        ",,,A concert is a live music performance.\n",
        encoding="utf-8",
    )
    paths["class_labels_csv"].write_text(
        "index,mid,display_name\n"
        '0,/m/09x0r,"Speech"\n'
        '1,/m/05zppz,"Male speech, man speaking"\n'
        '2,/m/02zsn,"Female speech, woman speaking"\n'
        '3,/m/0ytgt,"Child speech, kid speaking"\n'
        '4,/m/01h8n0,"Conversation"\n',
        encoding="utf-8",
    )
    paths["plain"].write_text("background\nperson\n\nbicycle\ncar\n", encoding="utf-8")
    paths["label_map"].write_text(
        "item {\n  id: 1\n  name: '/m/01g317'\n  display_name: 'person'\n}\n"
        "item {\n  id: 2\n  name: '/m/0199g'\n  display_name: 'bicycle'\n}\n",
        encoding="utf-8",
    )
    paths["csv"].write_text("id,class_name\n0,cat\n1,dog\n", encoding="utf-8")
    return paths


# -- planted lies ---------------------------------------------------------------------------------

PLANTS = {
    "shard_lengths": "dataset_info.json declares 3 records more in the first train shard",
    "missing_shard": "the last train shard is removed",
    "short_labels": "label.labels.txt loses its last names (labels past them are used)",
    "wrong_shape": "features.json declares the image 32×32×3 (the pictures are 28×28×1)",
    "bad_info": "dataset_info.json is cut off mid-way (not JSON)",
    "bad_features": "features.json is cut off mid-way (not JSON)",
    "huge_info": "dataset_info.json is 100 MB (sparse: nothing is written)",
    "huge_labels": "label.labels.txt is 100 MB (sparse: nothing is written)",
    "outside_template": "the train split's filepathTemplate names ../ files",
}
HUGE = 100 << 20


def plant(folder: str | os.PathLike[str], what: str) -> None:
    """Plant ``what`` (one of :data:`PLANTS`) in the TFDS version folder ``folder`` written
    by :func:`write_image_classification`."""
    f = Path(folder)
    info_path, features_path = f / "dataset_info.json", f / "features.json"
    if what == "shard_lengths":
        info = json.loads(info_path.read_text())
        train = next(s for s in info["splits"] if s["name"] == "train")
        train["shardLengths"][0] = str(int(train["shardLengths"][0]) + 3)
        info_path.write_text(json.dumps(info, indent=2, sort_keys=True))
    elif what == "missing_shard":
        info = json.loads(info_path.read_text())
        train = next(s for s in info["splits"] if s["name"] == "train")
        n = len(train["shardLengths"])
        (f / f"{info['name']}-train.tfrecord-{n - 1:05d}-of-{n:05d}").unlink()
    elif what == "short_labels":
        names = (f / "label.labels.txt").read_text().split()
        write_labels(f, "label.labels.txt", names[: max(1, len(names) // 2)])
    elif what == "wrong_shape":
        doc = json.loads(features_path.read_text())
        doc["featuresDict"]["features"]["image"]["image"]["shape"] = _shape(32, 32, 3)
        write_features(f, doc)
    elif what in ("bad_info", "bad_features"):
        path = info_path if what == "bad_info" else features_path
        text_ = path.read_text()
        path.write_text(text_[: len(text_) // 2])
    elif what in ("huge_info", "huge_labels"):
        path = info_path if what == "huge_info" else f / "label.labels.txt"
        with open(path, "r+b") as fh:
            fh.truncate(HUGE)
    elif what == "outside_template":
        info = json.loads(info_path.read_text())
        train = next(s for s in info["splits"] if s["name"] == "train")
        train["filepathTemplate"] = "../{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"
        info_path.write_text(json.dumps(info, indent=2, sort_keys=True))
    else:
        raise ValueError(f"nothing to plant called {what!r} (one of {', '.join(PLANTS)})")


def tensor_bytes(values: np.ndarray, encoding: str) -> bytes:
    """``values`` as ``tfds.features.Tensor(encoding=...)`` stores them: ``bytes`` is the raw
    array (``tobytes``), ``zlib`` that compressed."""
    raw = np.ascontiguousarray(values).tobytes()
    return zlib.compress(raw) if encoding == "zlib" else raw
