"""``tf.io.parse_tensor`` / ``tf.io.serialize_tensor`` without TensorFlow.

A serialized tensor is a ``tensorflow.TensorProto`` (field numbers in docs/format.md §3). What
TensorFlow 2.21 writes, and what :func:`serialize_tensor` reproduces byte for byte:

- numeric and bool dtypes: ``dtype`` (1), ``tensor_shape`` (2), ``tensor_content`` (4), the
  row-major little-endian buffer; no ``tensor_content`` at all when the tensor is empty;
- a scalar has an *empty* ``tensor_shape`` message; a dimension of size 0 is an empty ``dim``;
- ``string``: one ``string_val`` (8) entry per element.

:func:`parse_tensor` also reads the typed ``*_val`` fields other writers use (e.g.
``tf.make_tensor_proto``), with TensorFlow's broadcast: no values gives zeros, fewer values
than elements repeats the last one, extra values are ignored.

Values come back as numpy arrays: strings as an ``object`` array of ``bytes``; ``bfloat16``
(which numpy lacks) as ``float32`` holding exactly the bfloat16 values; the trivially-stored
quantized types (``qint8``, ``quint8``, ``qint16``, ``quint16``, ``qint32``) as their storage
integers. ``resource``, ``variant``, the float8/int4/int2/float4 types raise
:class:`~codec.errors.UnsupportedError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError as _ProtoDecodeError

from codec.errors import DecodeError, EncodeError, LimitError, UnsupportedError
from codec.protos import tensor_pb2
from codec.wire import WIRE_LEN, WIRE_VARINT, WireError, read_varint, skip_field

__all__ = [
    "DTYPES",
    "MAX_BYTES",
    "DType",
    "describe_tensor",
    "dtype_by_name",
    "is_serialized_tensor",
    "parse_tensor",
    "serialize_tensor",
    "tensor_bytes",
]

# The most bytes parse_tensor allocates for a tensor unless told otherwise: a few bytes of
# TensorProto can declare a shape of billions of elements to be filled by broadcasting.
MAX_BYTES = 256 << 20


@dataclass(frozen=True)
class DType:
    """One TensorFlow dtype: enum value, TensorFlow's name (``tf.DType.name``), the numpy
    dtype :func:`parse_tensor` returns (``None``: not supported), the size of one element in
    ``tensor_content`` (0 for strings, resources and variants), and the typed ``*_val``
    field holding values when there is no ``tensor_content``."""

    enum: int
    name: str
    numpy: np.dtype[Any] | None
    itemsize: int
    field: str


def _d(enum: int, name: str, np_name: str | None, itemsize: int, field: str) -> DType:
    return DType(enum, name, np.dtype(np_name) if np_name else None, itemsize, field)


DTYPES: dict[int, DType] = {
    d.enum: d
    for d in (
        _d(1, "float32", "float32", 4, "float_val"),
        _d(2, "float64", "float64", 8, "double_val"),
        _d(3, "int32", "int32", 4, "int_val"),
        _d(4, "uint8", "uint8", 1, "int_val"),
        _d(5, "int16", "int16", 2, "int_val"),
        _d(6, "int8", "int8", 1, "int_val"),
        _d(7, "string", "object", 0, "string_val"),
        _d(8, "complex64", "complex64", 8, "scomplex_val"),
        _d(9, "int64", "int64", 8, "int64_val"),
        _d(10, "bool", "bool", 1, "bool_val"),
        _d(11, "qint8", "int8", 1, "int_val"),
        _d(12, "quint8", "uint8", 1, "int_val"),
        _d(13, "qint32", "int32", 4, "int_val"),
        _d(14, "bfloat16", "float32", 2, "half_val"),  # returned as float32, see module doc
        _d(15, "qint16", "int16", 2, "int_val"),
        _d(16, "quint16", "uint16", 2, "int_val"),
        _d(17, "uint16", "uint16", 2, "int_val"),
        _d(18, "complex128", "complex128", 16, "dcomplex_val"),
        _d(19, "float16", "float16", 2, "half_val"),
        _d(20, "resource", None, 0, "resource_handle_val"),
        _d(21, "variant", None, 0, "variant_val"),
        _d(22, "uint32", "uint32", 4, "uint32_val"),
        _d(23, "uint64", "uint64", 8, "uint64_val"),
        _d(24, "float8_e5m2", None, 1, "float8_val"),
        _d(25, "float8_e4m3fn", None, 1, "float8_val"),
        _d(26, "float8_e4m3fnuz", None, 1, "float8_val"),
        _d(27, "float8_e4m3b11fnuz", None, 1, "float8_val"),
        _d(28, "float8_e5m2fnuz", None, 1, "float8_val"),
        _d(29, "int4", None, 1, "int_val"),
        _d(30, "uint4", None, 1, "int_val"),
        _d(31, "int2", None, 1, "int_val"),
        _d(32, "uint2", None, 1, "int_val"),
        _d(33, "float4_e2m1fn", None, 1, "float8_val"),
    )
}

_BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES.values()}
_BY_NAME.update({"half": DTYPES[19], "float": DTYPES[1], "double": DTYPES[2]})

# numpy dtype kind/size -> DataType enum, for serialize_tensor without an override.
_FROM_NUMPY: dict[str, int] = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "uint16": 17,
    "complex128": 18,
    "float16": 19,
    "uint32": 22,
    "uint64": 23,
}

_BF16 = 14
_STRING = 7


def dtype_by_name(name: str) -> DType:
    """The :class:`DType` for a TensorFlow dtype name (``"float32"``, ``"bfloat16"``…)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise UnsupportedError(f"unknown tensor dtype {name!r}") from None


def _parse_proto(data: bytes) -> Any:
    msg = tensor_pb2.TensorProto()
    try:
        msg.ParseFromString(data)
    except (_ProtoDecodeError, RuntimeError, ValueError) as exc:
        raise DecodeError(f"not a serialized tensor (TensorProto): {exc}") from exc
    return msg


def _dtype_of(msg: Any) -> DType:
    value = int(msg.dtype)
    dt = DTYPES.get(value)
    if dt is None:
        raise DecodeError(f"serialized tensor has an invalid dtype ({value})")
    return dt


def _shape_of(msg: Any) -> tuple[int, ...]:
    shape = msg.tensor_shape
    if shape.unknown_rank:
        raise DecodeError("serialized tensor has an unknown rank")
    dims = tuple(int(d.size) for d in shape.dim)
    if any(d < 0 for d in dims):
        raise DecodeError(f"serialized tensor has an unknown or negative dimension: {list(dims)}")
    return dims


def _num_elements(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= d
    return n


def describe_tensor(data: bytes) -> tuple[str, tuple[int, ...]]:
    """``(dtype name, shape)`` of a serialized tensor, reading only its header.

    Walks the top-level wire fields and skips ``tensor_content`` and the value fields by their
    lengths, so nothing of the content is copied. Raises :class:`DecodeError`."""
    mv = memoryview(data)
    n = len(mv)
    pos = 0
    dtype = 0
    shape_bytes: bytes | None = None
    try:
        while pos < n:
            key, pos = read_varint(mv, pos)
            number, wire = key >> 3, key & 7
            if number == 0:
                raise DecodeError("serialized tensor: field number 0")
            start, end = skip_field(mv, pos, wire)
            if wire == WIRE_VARINT and number == 1:
                dtype, _ = read_varint(mv, start)
            elif wire == WIRE_LEN and number == 2:
                # A message field that comes again is merged into the first (protobuf's
                # rule, so TensorFlow's): its bytes parsed after the earlier ones.
                shape_bytes = (shape_bytes or b"") + bytes(mv[start:end])
            pos = end
    except WireError as exc:
        raise DecodeError(f"serialized tensor: {exc}") from exc
    finally:
        mv.release()
    dt = DTYPES.get(dtype)
    if dt is None:
        raise DecodeError(f"serialized tensor has an invalid dtype ({dtype})")
    shape_msg = tensor_pb2.TensorShapeProto()
    if shape_bytes:
        try:
            shape_msg.ParseFromString(shape_bytes)
        except (_ProtoDecodeError, RuntimeError, ValueError) as exc:
            raise DecodeError(f"serialized tensor: bad tensor_shape: {exc}") from exc
    holder = tensor_pb2.TensorProto()
    holder.tensor_shape.CopyFrom(shape_msg)
    return dt.name, _shape_of(holder)


def is_serialized_tensor(data: bytes) -> bool:
    """Whether ``data`` is plausibly a serialized tensor: it parses as a TensorProto with no
    unknown fields, has a known dtype and a shape, and its content matches the shape."""
    # TensorFlow always writes the (non-zero) dtype first: a cheap filter for text and images.
    if len(data) < 4 or data[0] != 0x08:
        return False
    try:
        msg = tensor_pb2.TensorProto()
        msg.ParseFromString(data)
        msg.DiscardUnknownFields()
        if msg.ByteSize() != len(data) or not msg.HasField("tensor_shape"):
            return False
        dt = _dtype_of(msg)
        dims = _shape_of(msg)
    except (_ProtoDecodeError, DecodeError, RuntimeError, ValueError):
        return False
    n = _num_elements(dims)
    content = msg.tensor_content
    if content:
        return dt.itemsize > 0 and len(content) == n * dt.itemsize
    count = len(getattr(msg, dt.field))
    if dt.field == "float8_val":
        count = len(msg.float8_val)
    elif dt.field in ("scomplex_val", "dcomplex_val"):
        if count % 2:
            return False
        count //= 2
    return count == n or 1 <= count <= n


def tensor_bytes(dtype: str, shape: Sequence[int]) -> int:
    """The bytes :func:`parse_tensor` allocates for a tensor of ``dtype`` and ``shape`` (a
    string element counts as its pointer; its bytes are bounded by the input)."""
    dt = dtype_by_name(dtype)
    item = dt.numpy.itemsize if dt.numpy is not None else max(dt.itemsize, 1)
    return _num_elements(shape) * item


def parse_tensor(data: bytes, *, max_bytes: int | None = MAX_BYTES) -> np.ndarray:
    """``tf.io.parse_tensor`` for any dtype: a numpy array of the tensor's shape.

    Raises :class:`DecodeError` when ``data`` is not a consistent TensorProto,
    :class:`UnsupportedError` for dtypes numpy cannot hold (see the module docstring) and
    :class:`~codec.errors.LimitError`, before allocating anything, when the array would take
    more than ``max_bytes`` (``None``: no limit)."""
    msg = _parse_proto(data)
    dt = _dtype_of(msg)
    dims = _shape_of(msg)
    if dt.numpy is None:
        raise UnsupportedError(f"tensor dtype {dt.name} is not supported")
    n = _num_elements(dims)
    need = n * dt.numpy.itemsize
    if max_bytes is not None and need > max_bytes:
        raise LimitError(
            f"a {dt.name} tensor of shape {list(dims)} takes {need:,} bytes, more than the"
            f" {max_bytes:,} allowed"
        )
    content = msg.tensor_content
    flat = _from_content(dt, content, n, dims) if content else _from_values(msg, dt, n, dims)
    return flat.reshape(dims)


def _from_content(dt: DType, content: bytes, n: int, dims: Sequence[int]) -> np.ndarray:
    if dt.enum == _STRING:
        return _strings_from_content(content, n)
    need = n * dt.itemsize
    if len(content) != need:
        raise DecodeError(
            f"serialized tensor: tensor_content has {len(content)} bytes but a {dt.name} tensor"
            f" of shape {list(dims)} needs {need}"
        )
    if dt.enum == _BF16:
        return _bf16_to_float32(np.frombuffer(content, dtype="<u2"))
    if dt.enum == 10:
        return np.frombuffer(content, dtype=np.uint8) != 0
    assert dt.numpy is not None
    return np.frombuffer(content, dtype=dt.numpy.newbyteorder("<")).astype(dt.numpy)


def _strings_from_content(content: bytes, n: int) -> np.ndarray:
    # TensorFlow's string encoding in tensor_content: n varint32 lengths, then the bytes.
    if n > len(content):  # every element has a length of at least one byte
        raise DecodeError("serialized tensor: string tensor_content does not match its shape")
    mv = memoryview(content)
    pos = 0
    lengths = []
    try:
        for _ in range(n):
            length, pos = read_varint(mv, pos)
            lengths.append(length)
    except WireError as exc:
        raise DecodeError(f"serialized tensor: {exc}") from exc
    if pos + sum(lengths) != len(content):
        raise DecodeError("serialized tensor: string tensor_content does not match its shape")
    out = np.empty(n, dtype=object)
    for i, length in enumerate(lengths):
        out[i] = bytes(mv[pos : pos + length])
        pos += length
    return out


def _from_values(msg: Any, dt: DType, n: int, dims: Sequence[int]) -> np.ndarray:
    assert dt.numpy is not None
    values = getattr(msg, dt.field)
    count = len(values)
    if dt.field in ("scomplex_val", "dcomplex_val"):
        if count % 2:
            raise DecodeError(f"serialized tensor: {dt.field} has an odd number of values")
        count //= 2
    if dt.enum == _STRING:
        out = np.full(n, values[count - 1] if count else b"", dtype=object)
        head = list(values[: min(count, n)])
        out[: len(head)] = head
        return out
    if dt.enum == _BF16:
        base = _bf16_to_float32(np.array(values[:n], dtype=np.int64).astype(np.uint16))
    elif dt.enum == 19:
        base = np.array(values[:n], dtype=np.int64).astype(np.uint16).view(np.float16)
    elif dt.field == "scomplex_val":
        base = np.array(values[: 2 * n], dtype=np.float32).view(np.complex64)
    elif dt.field == "dcomplex_val":
        base = np.array(values[: 2 * n], dtype=np.float64).view(np.complex128)
    elif dt.field == "int_val":
        # TensorFlow static_casts each int32 to the element type: wrap the same way.
        base = np.array(values[:n], dtype=np.int32).astype(dt.numpy)
    else:
        base = np.array(values[:n], dtype=dt.numpy)
    if count >= n:
        return base
    out = np.zeros(n, dtype=dt.numpy)
    out[:count] = base
    if count:
        out[count:] = base[-1]
    return out


def _bf16_to_float32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def _float32_to_bf16(values: np.ndarray) -> np.ndarray:
    """Round to nearest even, as TensorFlow's (Eigen's) float -> bfloat16 conversion does;
    NaN stays a quiet NaN with its sign."""
    f = np.ascontiguousarray(values, dtype=np.float32)
    bits = f.view(np.uint32)
    rounded = (
        (bits + (((bits >> np.uint32(16)) & np.uint32(1)) + np.uint32(0x7FFF))) >> 16
    ).astype(np.uint16)
    nan = np.isnan(f)
    if nan.any():
        sign = (bits >> np.uint32(16)).astype(np.uint16) & np.uint16(0x8000)
        rounded = np.where(nan, sign | np.uint16(0x7FC0), rounded)
    return rounded


def _as_bytes(value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview, np.bytes_)):
        return bytes(value)
    if isinstance(value, (str, np.str_)):
        return str(value).encode("utf-8")
    raise EncodeError(f"string tensor: {value!r} is not bytes or str")


def serialize_tensor(array: Any, dtype: str | None = None) -> bytes:
    """``tf.io.serialize_tensor``: the TensorProto bytes TensorFlow writes for ``array``.

    ``array`` is anything ``numpy.asarray`` accepts; object, ``S`` and ``U`` arrays become
    ``string`` tensors (``str`` is UTF-8 encoded). ``dtype`` overrides the TensorFlow dtype by
    name, e.g. ``"bfloat16"`` (float values are rounded to nearest even; a ``uint16`` array is
    taken as raw bfloat16 bits) or ``"qint8"``. Python ints follow numpy (``int64``), not
    TensorFlow's ``int32`` default. Raises :class:`UnsupportedError` for other dtypes."""
    arr = np.asarray(array)
    if dtype is not None:
        dt = dtype_by_name(dtype)
    elif arr.dtype.kind in "OSU":
        dt = DTYPES[_STRING]
    else:
        enum = _FROM_NUMPY.get(arr.dtype.name)
        if enum is None:
            raise UnsupportedError(f"numpy dtype {arr.dtype} has no TensorFlow dtype")
        dt = DTYPES[enum]
    if dt.numpy is None:
        raise UnsupportedError(f"tensor dtype {dt.name} is not supported")
    msg = tensor_pb2.TensorProto()
    msg.dtype = dt.enum
    msg.tensor_shape.SetInParent()
    for d in arr.shape:
        msg.tensor_shape.dim.add().size = d
    if dt.enum == _STRING:
        msg.string_val.extend([_as_bytes(v) for v in arr.reshape(-1).tolist()])
    elif arr.size:
        if dt.enum == _BF16:
            bits = arr if arr.dtype == np.uint16 else _float32_to_bf16(arr)
            content = np.ascontiguousarray(bits, dtype="<u2").tobytes()
        else:
            assert dt.numpy is not None
            try:
                cast = arr.astype(dt.numpy.newbyteorder("<"), casting="same_kind", copy=False)
            except TypeError as exc:
                raise EncodeError(f"cannot store a {arr.dtype} array as {dt.name}: {exc}") from exc
            content = np.ascontiguousarray(cast).tobytes()
        msg.tensor_content = content
    return bytes(msg.SerializeToString(deterministic=True))
