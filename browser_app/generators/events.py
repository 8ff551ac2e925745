"""Folders that TensorFlow's own tools write, found by their content: TensorBoard event files
and ``tf.data.Dataset.save`` folders.

- :func:`write_tensorboard`: a Keras-style log folder, ``train/`` and ``validation/`` event
  files as TF2's ``tf.summary`` writes them (``events.out.tfevents.<time>.<host>.<pid>.<n>.v2``:
  a ``brain.Event:2`` file version first, then summaries whose values are tensors, the plugin
  — ``scalars``, ``images``, ``histograms``, ``text`` — in the metadata of a tag's first value
  only, as TensorFlow's writer does), and a TF1 event file beside them (``simple_value``
  scalars, a ``Summary.Image``, a log message).
- :func:`write_saved_dataset`: a ``Dataset.save`` folder of ``{"image", "label", "name"}``
  elements: ``snapshot.metadata`` (a ``SnapshotMetadataRecord``: run id, version 2, dtypes,
  ``num_elements``, finalized), ``dataset_spec.pb`` (the element spec as a
  ``StructuredValue``), and ``<run_id>/<%08d>.shard/00000000.snapshot`` files in TFRecord
  framing, one record per component (a ``TensorProto``), elements dealt round-robin to the
  shards as ``save`` does without a ``shard_func``.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from codec.events import encode_event
from codec.protos import snapshot_pb2
from codec.tensor import serialize_tensor
from codec.writer import write_records

from .library import photo

__all__ = ["write_saved_dataset", "write_tensorboard"]

_T0 = 1_717_171_717.0  # the logs' start: 2024-05-31 16:08:37 UTC
_HOST = "trainer-0"


def _png(pixels: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


def _pictures(count: int, side: int) -> list[np.ndarray]:
    """``count`` ``side``×``side`` crops of the packaged photographs."""
    out = []
    names = ("astronaut", "coffee", "chelsea", "rocket")
    for i in range(count):
        pixels = photo(names[i % len(names)], max_side=160).pixels()
        h, w = pixels.shape[:2]
        s = min(h, w)
        y, x = (h - s) // 2, (i * 17) % max(1, w - s + 1)
        crop = Image.fromarray(pixels[y : y + s, x : x + s]).resize((side, side))
        out.append(np.asarray(crop))
    return out


def _curve(step: int, start: float, end: float, rate: float, noise: float, seed: int) -> float:
    rng = np.random.default_rng(seed * 1000 + step)
    return float(end + (start - end) * np.exp(-rate * step) + rng.normal(0, noise))


def _tf2_events(validation: bool, steps: int, pictures: list[np.ndarray]) -> list[bytes]:
    out = [encode_event(_T0, 0, file_version="brain.Event:2")]
    seen: set[str] = set()

    def tensor(tag: str, value: bytes, plugin: str) -> dict[str, tuple[bytes, str]]:
        first = tag not in seen
        seen.add(tag)
        return {tag: (value, plugin if first else "")}

    for step in range(steps):
        t = _T0 + 12.5 * (step + 1) + (3.0 if validation else 0.0)
        loss = _curve(step, 2.3, 0.35 if validation else 0.2, 0.15, 0.03, 2 if validation else 1)
        accuracy = 1.0 - loss / 2.6
        for tag, value in (("epoch_loss", loss), ("epoch_accuracy", accuracy)):
            scalar = serialize_tensor(np.float32(value))
            out.append(encode_event(t, step, tensors=tensor(tag, scalar, "scalars")))
        if not validation and step % 5 == 0:
            weights = np.random.default_rng(step).normal(0, 1.0 / (1 + step / 10), 2000)
            counts, edges = np.histogram(weights, bins=30)
            buckets = np.stack([edges[:-1], edges[1:], counts], axis=1).astype(np.float64)
            hist = serialize_tensor(buckets)
            out.append(
                encode_event(t + 0.1, step, tensors=tensor("dense/kernel_0", hist, "histograms"))
            )
        if not validation and step % 10 == 0:
            picture = pictures[(step // 10) % len(pictures)]
            h, w = picture.shape[:2]
            images = serialize_tensor(np.array([str(w), str(h), _png(picture)], dtype=object))
            out.append(
                encode_event(t + 0.2, step, tensors=tensor("input_images", images, "images"))
            )
    if not validation:
        note = serialize_tensor(np.array(b"learning rate 1e-3, batch 64", dtype=object))
        out.append(encode_event(_T0 + 1.0, 0, tensors=tensor("hparams/notes", note, "text")))
    return out


def _tf1_events(steps: int, pictures: list[np.ndarray]) -> list[bytes]:
    out = [encode_event(_T0 - 3600, 0, file_version="brain.Event:2")]
    out.append(encode_event(_T0 - 3599, 0, log=(20, "training started")))
    for step in range(0, steps * 100, 100):
        t = _T0 - 3600 + step * 0.5 + 2
        loss = _curve(step // 100, 1.8, 0.4, 0.2, 0.02, 3)
        out.append(encode_event(t, step, scalars={"loss": loss, "learning_rate": 0.01}))
        if step % 500 == 0:
            picture = pictures[(step // 500) % len(pictures)]
            h, w = picture.shape[:2]
            out.append(encode_event(t + 0.1, step, images={"input/image/0": (_png(picture), w, h)}))
    return out


def write_tensorboard(folder: str | Path, steps: int = 30) -> list[Path]:
    """A log folder: ``train/`` and ``validation/`` TF2 event files and a TF1 one at the
    top; returns the files written."""
    root = Path(folder)
    pictures = _pictures(4, 64)
    written = []
    for sub, validation in (("train", False), ("validation", True)):
        (root / sub).mkdir(parents=True, exist_ok=True)
        name = f"events.out.tfevents.{int(_T0)}.{_HOST}.4242.{1 if validation else 0}.v2"
        path = root / sub / name
        write_records(path, _tf2_events(validation, steps, pictures))
        written.append(path)
    root.mkdir(parents=True, exist_ok=True)
    tf1 = root / f"events.out.tfevents.{int(_T0) - 3600}.{_HOST}"
    write_records(tf1, _tf1_events(steps, pictures))
    written.append(tf1)
    return written


# --------------------------------------------------------------------------------------------
# tf.data.Dataset.save

_RUN_ID = "7214863209951834571"  # save's run id: a random 64-bit number, printed with %llu
_NAMES = ("astronaut", "coffee", "chelsea", "rocket")


def _spec(value: snapshot_pb2.StructuredValue, dtype: int, shape: tuple[int, ...]) -> None:
    spec = value.tensor_spec_value
    spec.dtype = dtype
    spec.shape.SetInParent()
    for d in shape:
        spec.shape.dim.add(size=d)


def write_saved_dataset(
    folder: str | Path, count: int = 12, *, shards: int = 3, compression: str = "none"
) -> Path:
    """A ``Dataset.save`` folder of ``count`` elements ``{"image": uint8 [32, 32, 3],
    "label": int64 [], "name": string []}`` in ``shards`` shards (``compression``:
    ``none`` or ``gzip``, as ``save(compression="GZIP")``)."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    pictures = _pictures(count, 32)
    per_shard: list[list[bytes]] = [[] for _ in range(shards)]
    for i in range(count):
        element = (  # flattened in tf.nest order: the dict's keys sorted
            serialize_tensor(pictures[i]),
            serialize_tensor(np.int64(i % len(_NAMES))),
            serialize_tensor(np.array(f"{_NAMES[i % len(_NAMES)]}-{i:03d}".encode(), dtype=object)),
        )
        per_shard[i % shards].extend(element)
    suffix = ".snapshot"
    for k, payloads in enumerate(per_shard):
        if not payloads:
            continue
        shard_dir = root / _RUN_ID / f"{k:08d}.shard"
        shard_dir.mkdir(parents=True, exist_ok=True)
        write_records(shard_dir / f"{0:08d}{suffix}", payloads, compression)
    meta = snapshot_pb2.SnapshotMetadataRecord(
        run_id=_RUN_ID,
        creation_timestamp=int(_T0 * 1e6),
        version=2,
        dtype=[4, 9, 7],
        num_elements=count,
        finalized=True,
    )
    (root / "snapshot.metadata").write_bytes(meta.SerializeToString())
    spec = snapshot_pb2.StructuredValue()
    fields = spec.dict_value.fields
    _spec(fields["image"], 4, (32, 32, 3))
    _spec(fields["label"], 9, ())
    _spec(fields["name"], 7, ())
    (root / "dataset_spec.pb").write_bytes(spec.SerializeToString())
    return root
