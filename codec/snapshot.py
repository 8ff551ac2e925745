"""``tf.data.Dataset.save`` folders (``tf.data.experimental.save``), read without TensorFlow.

What TensorFlow writes (``tensorflow/python/data/ops/save_op.py``,
``tensorflow/core/kernels/data/experimental/save_dataset_op.cc``,
``tensorflow/core/data/snapshot_utils.cc``)::

    <folder>/snapshot.metadata              a binary SnapshotMetadataRecord: run_id, version
                                            (2), the dtype of each component, num_elements,
                                            finalized
    <folder>/dataset_spec.pb                the element spec, a binary StructuredValue
                                            (nested_structure_coder)
    <folder>/<run_id>/<%08d>.shard/<%08d>.snapshot
                                            one folder per shard, checkpoint files in it

File format version 2 (``snapshot_util::TFRecordWriter``, the only one ``save`` writes) is
TFRecord framing, GZIP- or ZLIB-wrapped when ``compression=`` says so (``SNAPPY`` is a
block-compressed stream this codec does not read). An element of ``k`` components is ``k``
consecutive records, each one component as a ``TensorProto`` (``Tensor::AsProtoTensorContent``:
``tensor_content`` for numbers, ``string_val`` for strings); a shard's files hold whole
elements, so record ``n`` of a file is component ``n % k`` of element ``n // k`` there.
Components are the element spec flattened in ``tf.nest`` order (dict keys sorted); a ragged,
sparse or nested-dataset component is one ``variant`` tensor, which is named but not decoded.

(Version 1, ``tf.data.experimental.snapshot``'s ``CustomWriter``, frames records with an 8-byte
length and no CRC, one ``SnapshotRecord`` per element: not TFRecord framing, said as a problem.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError as _ProtoDecodeError

from codec.errors import DecodeError, LimitError, UnsupportedError
from codec.protos import snapshot_pb2
from codec.protos.tensor_pb2 import DATA_TYPES
from codec.tensor import DTYPES, describe_tensor, parse_tensor

__all__ = [
    "DATASET_SPEC",
    "MAX_META_BYTES",
    "SNAPSHOT_METADATA",
    "Component",
    "ComponentSpec",
    "Snapshot",
    "decode_element",
    "element_of",
    "flatten_spec",
    "is_snapshot_folder",
    "open_snapshot",
]

SNAPSHOT_METADATA = "snapshot.metadata"
DATASET_SPEC = "dataset_spec.pb"
MAX_META_BYTES = 4 << 20  # metadata and element spec files are a few hundred bytes
MAX_SHARD_FILES = 100_000
_MAX_DEPTH = 64
_SHARD_DIR = re.compile(r"^(\d+)\.shard$")
_CHECKPOINT = re.compile(r"^(\d+)\.snapshot$")
_DTYPE_NAMES = {v: (DTYPES[v].name if v in DTYPES else n.lower()) for n, v in DATA_TYPES}
_SPEC_KINDS = {
    1: "sparse",
    2: "indexed slices",
    3: "ragged",
    4: "tensor array",
    5: "dataset",
    6: "iterator",
    7: "optional",
    9: "variable",
}


@dataclass(frozen=True)
class ComponentSpec:
    """One component of the element spec: its ``path`` in the nested structure (dict keys
    and tuple positions joined with ``/``: ``image``, ``features/label``, ``1``;
    ``element`` for an element that is a single tensor), ``dtype`` (TensorFlow's name),
    ``shape`` (``None`` for an unknown rank, ``None`` in it for an unknown dimension) and
    ``kind`` (``tensor``, or ``ragged``, ``sparse``, ``dataset`` … for components stored as a
    variant)."""

    path: str
    dtype: str | None
    shape: tuple[int | None, ...] | None
    kind: str = "tensor"


@dataclass(frozen=True)
class Snapshot:
    """A ``Dataset.save`` folder: what its metadata and element spec say, its checkpoint
    files in reading order (``shards``), and ``problems`` in words."""

    folder: str
    run_id: str | None
    version: int | None
    dtypes: tuple[str, ...]
    num_elements: int | None
    finalized: bool | None
    components: tuple[ComponentSpec, ...]
    shards: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def width(self) -> int:
        """Records per element: the components the metadata (else the element spec)
        names; 1 when neither says."""
        return len(self.dtypes) or len(self.components) or 1

    def component_names(self) -> list[str]:
        if self.components and (not self.dtypes or len(self.components) == len(self.dtypes)):
            return [c.path for c in self.components]
        return [str(i) for i in range(self.width)]


@dataclass(frozen=True)
class Component:
    """One decoded component of an element: ``name``, ``dtype`` and ``shape`` from the
    record, the ``value`` (``None`` when it did not decode; ``problem`` says why)."""

    name: str
    dtype: str | None
    shape: tuple[int, ...] | None
    value: np.ndarray | None
    problem: str | None = None


def _read_small(path: str) -> bytes:
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_META_BYTES:
            raise LimitError(f"{path}: {size:,} bytes is more than the {MAX_META_BYTES:,} read")
        return f.read(MAX_META_BYTES + 1)[:MAX_META_BYTES]


def _shape(proto: Any) -> tuple[int | None, ...] | None:
    if proto.unknown_rank:
        return None
    return tuple(int(d.size) if d.size >= 0 else None for d in proto.dim)


def _dtype(value: int) -> str:
    return _DTYPE_NAMES.get(int(value), f"dtype {int(value)}")


def flatten_spec(value: Any, path: str = "", depth: int = 0) -> list[ComponentSpec]:
    """The components of a ``StructuredValue`` element spec in ``tf.nest`` order."""
    if depth > _MAX_DEPTH:
        raise DecodeError("the element spec nests deeper than 64 levels")
    kind = value.WhichOneof("kind")
    here = path or "element"
    join = (lambda k: f"{path}/{k}") if path else (lambda k: str(k))
    if kind in ("tensor_spec_value", "bounded_tensor_spec_value"):
        spec = getattr(value, kind)
        return [ComponentSpec(here, _dtype(spec.dtype), _shape(spec.shape))]
    if kind in ("list_value", "tuple_value"):
        out: list[ComponentSpec] = []
        for i, item in enumerate(getattr(value, kind).values):
            out.extend(flatten_spec(item, join(i), depth + 1))
        return out
    if kind == "dict_value":
        fields = value.dict_value.fields
        return [c for k in sorted(fields) for c in flatten_spec(fields[k], join(k), depth + 1)]
    if kind == "named_tuple_value":
        return [
            c
            for pair in value.named_tuple_value.values
            for c in flatten_spec(pair.value, join(pair.key), depth + 1)
        ]
    if kind == "type_spec_value":
        ts = value.type_spec_value
        name = _SPEC_KINDS.get(int(ts.type_spec_class)) or ts.type_spec_class_name or "composite"
        dtype, shape = _first_dtype_and_shape(ts.type_state)
        return [ComponentSpec(here, dtype, shape, name)]
    return []  # None, numbers and strings in a structure hold no component


def _first_dtype_and_shape(state: Any) -> tuple[str | None, tuple[int | None, ...] | None]:
    """A composite spec's (``RaggedTensorSpec``, ``SparseTensorSpec``) values' dtype and
    shape: the first of each in its serialized state."""
    dtype: str | None = None
    shape: tuple[int | None, ...] | None = None
    items = [state]
    seen = 0
    while items and seen < 256:
        item = items.pop(0)
        seen += 1
        kind = item.WhichOneof("kind")
        if kind == "tensor_dtype_value" and dtype is None:
            dtype = _dtype(item.tensor_dtype_value)
        elif kind == "tensor_shape_value" and shape is None:
            shape = _shape(item.tensor_shape_value)
        elif kind in ("list_value", "tuple_value"):
            items.extend(getattr(item, kind).values)
    return dtype, shape


def _checkpoints(folder: str, runs: Sequence[str]) -> list[str]:
    def number(name: str, pattern: re.Pattern[str]) -> int | None:
        m = pattern.match(name)
        return int(m.group(1)) if m else None

    out: list[str] = []
    for run in runs:
        run_dir = os.path.join(folder, run)
        try:
            shard_dirs = [(number(n, _SHARD_DIR), n) for n in os.listdir(run_dir)]
        except OSError:
            continue
        for _, shard in sorted((k, n) for k, n in shard_dirs if k is not None):
            shard_dir = os.path.join(run_dir, shard)
            try:
                files = [(number(n, _CHECKPOINT), n) for n in os.listdir(shard_dir)]
            except OSError:
                continue
            for _, name in sorted((k, n) for k, n in files if k is not None):
                path = os.path.join(shard_dir, name)
                if os.path.isfile(path):
                    out.append(path)
                if len(out) >= MAX_SHARD_FILES:
                    return out
    return out


def is_snapshot_folder(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is a ``Dataset.save`` folder: it holds ``snapshot.metadata``, or a
    ``<run>/<n>.shard/<n>.snapshot`` file."""
    f = os.fspath(folder)
    if not os.path.isdir(f):
        return False
    if os.path.isfile(os.path.join(f, SNAPSHOT_METADATA)):
        return True
    try:
        runs = [n for n in os.listdir(f) if os.path.isdir(os.path.join(f, n))]
    except OSError:
        return False
    return bool(_checkpoints(f, runs[:64]))


def open_snapshot(folder: str | os.PathLike[str]) -> Snapshot:
    """What a ``Dataset.save`` folder holds (see the module docstring). The checkpoint files
    are listed run by run, shard by shard, file by file (numeric order); with a metadata
    file, only its run's. Metadata and element spec that are missing or unreadable are
    problems, not errors; raises ``FileNotFoundError`` when ``folder`` is not a folder."""
    f = os.fspath(folder)
    if not os.path.isdir(f):
        raise FileNotFoundError(f"{f}: not a folder")
    problems: list[str] = []
    run_id: str | None = None
    version: int | None = None
    dtypes: tuple[str, ...] = ()
    num_elements: int | None = None
    finalized: bool | None = None
    meta_path = os.path.join(f, SNAPSHOT_METADATA)
    if os.path.isfile(meta_path):
        try:
            meta = snapshot_pb2.SnapshotMetadataRecord()
            meta.ParseFromString(_read_small(meta_path))
            run_id = meta.run_id or None
            version = int(meta.version)
            dtypes = tuple(_dtype(d) for d in meta.dtype)
            num_elements = int(meta.num_elements)
            finalized = bool(meta.finalized)
        except (OSError, LimitError, _ProtoDecodeError, RuntimeError, ValueError) as exc:
            problems.append(f"{SNAPSHOT_METADATA} cannot be read: {exc}")
    else:
        problems.append(f"no {SNAPSHOT_METADATA}: components are not named by dtype")
    if version not in (None, 2):
        problems.append(
            f"snapshot file format version {version}: only version 2 is TFRecord framing"
        )
    if finalized is False:
        problems.append("the snapshot was not finalized: writing it stopped before the end")
    components: tuple[ComponentSpec, ...] = ()
    spec_path = os.path.join(f, DATASET_SPEC)
    if os.path.isfile(spec_path):
        try:
            spec = snapshot_pb2.StructuredValue()
            spec.ParseFromString(_read_small(spec_path))
            components = tuple(flatten_spec(spec))
        except (OSError, LimitError, DecodeError, _ProtoDecodeError, RuntimeError) as exc:
            problems.append(f"{DATASET_SPEC} cannot be read: {exc}")
    if components and dtypes and len(components) != len(dtypes):
        problems.append(
            f"the element spec names {len(components)} components, the metadata"
            f" {len(dtypes)}: components are numbered"
        )
    try:
        runs = sorted(n for n in os.listdir(f) if os.path.isdir(os.path.join(f, n)))
    except OSError as exc:
        raise FileNotFoundError(f"{f}: cannot be listed ({exc})") from exc
    if run_id is not None and run_id in runs:
        runs = [run_id]
    elif run_id is not None:
        problems.append(f"the metadata's run {run_id} has no folder")
    shards = tuple(_checkpoints(f, runs))
    if not shards:
        problems.append("no <run>/<n>.shard/<n>.snapshot files")
    return Snapshot(
        f, run_id, version, dtypes, num_elements, finalized, components, shards, tuple(problems)
    )


def element_of(record: int, width: int) -> tuple[int, int]:
    """``(element, component)`` of record ``record`` of a checkpoint file whose elements
    have ``width`` components."""
    w = max(1, width)
    return record // w, record % w


def decode_element(
    payloads: Sequence[bytes], names: Sequence[str] = (), *, max_bytes: int | None = None
) -> list[Component]:
    """The components of one element (its ``width`` consecutive records), each parsed as a
    ``TensorProto`` (:func:`codec.tensor.parse_tensor`, with its allocation limit unless
    ``max_bytes`` says otherwise). A component that does not decode (a ``variant``, a
    damaged record) has ``value`` ``None`` and its ``problem``."""
    out = []
    for i, payload in enumerate(payloads):
        name = names[i] if i < len(names) else str(i)
        try:
            dtype, shape = describe_tensor(payload)
        except DecodeError as exc:
            out.append(Component(name, None, None, None, str(exc)))
            continue
        try:
            kwargs = {} if max_bytes is None else {"max_bytes": max_bytes}
            value = parse_tensor(payload, **kwargs)
        except (DecodeError, UnsupportedError, LimitError) as exc:
            problem = str(exc)
            if dtype == "variant":
                problem = "a variant (ragged, sparse or nested value): not decoded"
            out.append(Component(name, dtype, shape, None, problem))
            continue
        out.append(Component(name, dtype, shape, value))
    return out
