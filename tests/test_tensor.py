"""codec.tensor: parse_tensor / serialize_tensor without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from codec.errors import DecodeError, EncodeError, LimitError, UnsupportedError
from codec.protos import tensor_pb2
from codec.tensor import (
    DTYPES,
    MAX_BYTES,
    describe_tensor,
    dtype_by_name,
    is_serialized_tensor,
    parse_tensor,
    serialize_tensor,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

NUMERIC = [
    "float32",
    "float64",
    "float16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
    "complex64",
    "complex128",
]


def proto(dtype: int, shape: list[int], **fields: object) -> bytes:
    msg = tensor_pb2.TensorProto(dtype=dtype)
    msg.tensor_shape.SetInParent()
    for d in shape:
        msg.tensor_shape.dim.add().size = d
    for name, value in fields.items():
        if isinstance(value, list):
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, value)
    return msg.SerializeToString()


def test_dtype_table() -> None:
    assert DTYPES[1].name == "float32" and DTYPES[1].itemsize == 4
    assert DTYPES[7].name == "string" and DTYPES[7].field == "string_val"
    assert DTYPES[14].name == "bfloat16" and DTYPES[19].name == "float16"
    assert DTYPES[23].name == "uint64" and DTYPES[23].numpy == np.dtype(np.uint64)
    assert set(DTYPES) == set(range(1, 34))
    assert dtype_by_name("half") is DTYPES[19]
    with pytest.raises(UnsupportedError):
        dtype_by_name("float128")


@pytest.mark.parametrize("dtype", NUMERIC)
def test_layout_matches_tensorflow(dtype: str) -> None:
    """Fields 1, 2, 4 only; empty tensors have no tensor_content."""
    arr = np.ones((2, 3), dtype=dtype)
    msg = tensor_pb2.TensorProto.FromString(serialize_tensor(arr))
    assert [f.name for f, _ in msg.ListFields()] == ["dtype", "tensor_shape", "tensor_content"]
    assert len(msg.tensor_content) == arr.nbytes
    empty = serialize_tensor(np.zeros((0, 3), dtype=dtype))
    assert b"\x12\x06\x12\x00\x12\x02\x08\x03" in empty  # dim {} then dim { size: 3 }
    assert parse_tensor(empty).shape == (0, 3)


def test_spec_examples() -> None:
    assert serialize_tensor(np.array([True, False, True])) == proto(
        10, [3], tensor_content=b"\1\0\1"
    )
    assert serialize_tensor(np.array([1.0, 2.0], np.float16)).endswith(b"\x00\x3c\x00\x40")
    assert serialize_tensor(np.float32(1.5)) == b"\x08\x01\x12\x00\x22\x04\x00\x00\xc0\x3f"
    scalar = serialize_tensor(np.array(b"hi", dtype=object))
    assert parse_tensor(scalar).shape == () and parse_tensor(scalar).item() == b"hi"
    assert serialize_tensor(np.array(["é"])) == serialize_tensor(np.array(["é".encode()], object))


@st.composite
def arrays(draw: st.DrawFn) -> np.ndarray:
    dtype = draw(st.sampled_from([*NUMERIC, "string"]))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    if dtype == "string":
        values = draw(
            st.lists(
                st.binary(max_size=8), min_size=int(np.prod(shape)), max_size=int(np.prod(shape))
            )
        )
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
        return arr.reshape(shape)
    return draw(hnp.arrays(np.dtype(dtype), shape))


@SETTINGS
@given(arrays())
def test_round_trip(arr: np.ndarray) -> None:
    data = serialize_tensor(arr)
    back = parse_tensor(data)
    assert back.dtype == arr.dtype and back.shape == arr.shape
    if arr.dtype.kind in "fc":
        assert back.tobytes() == np.ascontiguousarray(arr).tobytes()  # NaN bits too
    else:
        assert back.tolist() == arr.tolist()
    name, shape = describe_tensor(data)
    assert shape == arr.shape
    assert name == ("string" if arr.dtype == object else arr.dtype.name)
    assert is_serialized_tensor(data)
    assert serialize_tensor(back) == data


def test_bfloat16() -> None:
    values = np.array([1.0, -2.5, 3.14159, np.inf, -np.inf, np.nan, 1e-40, 65504.0], np.float32)
    data = serialize_tensor(values, dtype="bfloat16")
    assert describe_tensor(data) == ("bfloat16", (8,))
    back = parse_tensor(data)
    assert back.dtype == np.float32
    assert back[0] == 1.0 and back[1] == -2.5 and back[2] == np.float32(3.140625)
    assert np.isinf(back[3]) and np.isinf(back[4]) and np.isnan(back[5])
    # Exactly representable in bfloat16: every value has zero low 16 bits.
    assert not np.any(back.view(np.uint32) & 0xFFFF)
    # Round to nearest even: 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
    tie = serialize_tensor(np.array([1 + 2**-8, 1 + 3 * 2**-8], np.float32), dtype="bfloat16")
    assert parse_tensor(tie).tolist() == [1.0, 1 + 2**-6]
    # A uint16 array is taken as raw bits; half_val bits are read as well.
    bits = serialize_tensor(np.array([0x3F80], np.uint16), dtype="bfloat16")
    assert parse_tensor(bits).tolist() == [1.0]
    assert parse_tensor(proto(14, [2], half_val=[0x4000])).tolist() == [2.0, 2.0]


def test_typed_values_and_broadcast() -> None:
    assert parse_tensor(proto(1, [2, 2], float_val=[1.5])).tolist() == [[1.5, 1.5], [1.5, 1.5]]
    assert parse_tensor(proto(1, [4], float_val=[1, 2])).tolist() == [1, 2, 2, 2]
    assert parse_tensor(proto(1, [2], float_val=[1, 2, 3])).tolist() == [1, 2]
    assert parse_tensor(proto(3, [3])).tolist() == [0, 0, 0]
    assert parse_tensor(proto(2, [], double_val=[0.1])).item() == 0.1
    assert parse_tensor(proto(6, [2], int_val=[-1, 200])).tolist() == [-1, -56]  # static_cast
    assert parse_tensor(proto(4, [2], int_val=[255, 7])).tolist() == [255, 7]
    assert parse_tensor(proto(17, [1], int_val=[65535])).tolist() == [65535]
    assert parse_tensor(proto(9, [2], int64_val=[-(2**63), 2**63 - 1])).tolist() == [
        -(2**63),
        2**63 - 1,
    ]
    assert parse_tensor(proto(10, [3], bool_val=[True, False])).tolist() == [True, False, False]
    assert parse_tensor(proto(19, [1], half_val=[0x3C00])).tolist() == [1.0]
    assert parse_tensor(proto(8, [2], scomplex_val=[1, 2, 3, 4])).tolist() == [1 + 2j, 3 + 4j]
    assert parse_tensor(proto(18, [1], dcomplex_val=[1, -1])).tolist() == [1 - 1j]
    assert parse_tensor(proto(22, [2], uint32_val=[2**32 - 1])).tolist() == [2**32 - 1] * 2
    assert parse_tensor(proto(23, [1], uint64_val=[2**64 - 1])).tolist() == [2**64 - 1]
    strings = parse_tensor(proto(7, [3], string_val=[b"a", b"b"]))
    assert strings.dtype == object and strings.tolist() == [b"a", b"b", b"b"]
    assert parse_tensor(proto(7, [2])).tolist() == [b"", b""]
    assert parse_tensor(proto(11, [1], int_val=[-3])).dtype == np.int8  # qint8 storage


def test_complex_and_unsigned_round_trip() -> None:
    for arr in (
        np.array([1 + 2j, -3.5j], np.complex64),
        np.array([[1 - 1j]], np.complex128),
        np.array([0, 2**32 - 1], np.uint32),
        np.array([0, 2**64 - 1], np.uint64),
    ):
        back = parse_tensor(serialize_tensor(arr))
        assert back.dtype == arr.dtype and back.tolist() == arr.tolist()


def test_huge_broadcast_is_refused_without_allocating() -> None:
    data = proto(7, [2**40], string_val=[b"x"])
    with pytest.raises(LimitError, match="more than the 268,435,456 allowed"):
        parse_tensor(data)
    with pytest.raises(LimitError, match="takes 4,398,046,511,104 bytes"):
        parse_tensor(proto(1, [1 << 20, 1 << 20], float_val=[1.0]))
    assert MAX_BYTES == 256 << 20
    assert describe_tensor(data) == ("string", (2**40,))
    assert not is_serialized_tensor(proto(1, [2**40], float_val=[]))
    # The limit counts bytes, not elements: 2**25 complex128 values are 512 MiB.
    with pytest.raises(LimitError):
        parse_tensor(proto(18, [1 << 25], dcomplex_val=[1.0, 2.0]))
    assert parse_tensor(proto(18, [4], dcomplex_val=[1.0, 2.0])).shape == (4,)
    assert parse_tensor(proto(1, [1 << 20], float_val=[2.0]), max_bytes=None).sum() == 2 << 20


@settings(max_examples=100, deadline=None)
@given(
    dtype=st.sampled_from([1, 2, 3, 4, 7, 8, 9, 10, 14, 18, 19]),
    dims=st.lists(st.integers(0, 1 << 20), min_size=0, max_size=4),
)
def test_no_declared_shape_allocates_past_the_limit(dtype: int, dims: list[int]) -> None:
    import tracemalloc

    data = proto(dtype, dims)
    tracemalloc.start()
    try:
        parse_tensor(data, max_bytes=1 << 20)
    except (LimitError, DecodeError, UnsupportedError):
        pass
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4 << 20


def test_inconsistent_tensors() -> None:
    with pytest.raises(DecodeError, match="tensor_content has 8 bytes"):
        parse_tensor(proto(1, [3], tensor_content=b"\0" * 8))
    with pytest.raises(DecodeError, match="invalid dtype"):
        parse_tensor(proto(0, [1]))
    with pytest.raises(DecodeError, match="invalid dtype"):
        parse_tensor(proto(99, [1]))
    with pytest.raises(DecodeError, match="negative"):
        parse_tensor(proto(1, [-1]))
    with pytest.raises(DecodeError, match="odd number"):
        parse_tensor(proto(8, [1], scomplex_val=[1.0]))
    with pytest.raises(DecodeError):
        parse_tensor(b"\xff\xff")


@pytest.mark.parametrize(
    "dtype", ["resource", "variant", "float8_e5m2", "float8_e4m3fn", "int4", "uint2"]
)
def test_unsupported_dtypes_are_named(dtype: str) -> None:
    enum = dtype_by_name(dtype).enum
    with pytest.raises(UnsupportedError, match=dtype):
        parse_tensor(proto(enum, [1]))
    with pytest.raises(UnsupportedError, match=dtype):
        serialize_tensor(np.zeros(1, np.uint8), dtype=dtype)
    assert describe_tensor(proto(enum, [1]))[0] == dtype


def test_serialize_rejections() -> None:
    with pytest.raises(UnsupportedError):
        serialize_tensor(np.array(["2020-01-01"], dtype="datetime64[D]"))
    with pytest.raises(EncodeError):
        serialize_tensor(np.array([1, "a"], dtype=object))
    with pytest.raises(EncodeError):
        serialize_tensor(np.array([1.5]), dtype="int32")


def test_string_tensor_content_encoding() -> None:
    # TensorFlow's own layout for strings in tensor_content: varint lengths, then the bytes.
    data = proto(7, [2], tensor_content=b"\x01\x02a" + b"bc")
    assert parse_tensor(data).tolist() == [b"a", b"bc"]
    with pytest.raises(DecodeError):
        parse_tensor(proto(7, [2], tensor_content=b"\x01\x05ab"))


@pytest.mark.parametrize(
    "data, want",
    [
        (serialize_tensor(np.arange(6, dtype=np.int32).reshape(2, 3)), True),
        (serialize_tensor(np.array([b"a", b"bc"], dtype=object)), True),
        (serialize_tensor(np.float64(2.5)), True),  # a scalar: an empty tensor_shape
        (proto(1, [4], float_val=[1.0]), True),  # fewer values than elements: broadcast
        (proto(1, [2], tensor_content=b"\0" * 8), True),
        (proto(1, [3], tensor_content=b"\0" * 8), False),  # 8 bytes are 2 floats, not 3
        (proto(1, [2], float_val=[1.0, 2.0, 3.0]), False),  # more values than elements
        (proto(18, [1], dcomplex_val=[1.0]), False),  # half a complex number
        (proto(0, [1]), False),  # no dtype
        (proto(99, [1], tensor_content=b"\0"), False),  # no such dtype
        (proto(1, [-1], float_val=[1.0]), False),  # a negative dimension
        (tensor_pb2.TensorProto(dtype=1, float_val=[1.0]).SerializeToString(), False),  # no shape
        (proto(1, [1], float_val=[1.0]) + b"\xf8\x06\x01", False),  # an unknown field (111)
        (serialize_tensor(np.arange(6, dtype=np.int32))[:-1], False),  # cut short
        (b"\x89PNG\r\n\x1a\n" + b"\0" * 16, False),
        (b"hello, world", False),
        (b"", False),
    ],
)
def test_is_serialized_tensor(data: bytes, want: bool) -> None:
    assert is_serialized_tensor(data) is want


# Any bytes; bytes that start as TensorFlow starts (the dtype); a tensor with bytes after it.
ANY_BYTES = st.one_of(
    st.binary(max_size=120),
    st.builds(lambda d, rest: bytes([0x08, d]) + rest, st.integers(1, 33), st.binary(max_size=60)),
    st.builds(lambda a, tail: serialize_tensor(a) + tail, arrays(), st.binary(max_size=6)),
)


@settings(max_examples=300, deadline=None)
@given(ANY_BYTES)
def test_random_bytes(b: bytes) -> None:
    """Any bytes: an error of the kind documented, or an answer that agrees with the others.
    What ``is_serialized_tensor`` accepts, ``describe_tensor`` reads and ``parse_tensor``
    parses (or names as unsupported or too large), with the same dtype and shape."""
    try:
        parsed: np.ndarray | None = parse_tensor(b)
    except (DecodeError, UnsupportedError, LimitError):
        parsed = None
    try:
        described: tuple[str, tuple[int, ...]] | None = describe_tensor(b)
    except DecodeError:
        described = None
    plausible = is_serialized_tensor(b)
    assert isinstance(plausible, bool)
    if plausible:
        assert b[0] == 0x08  # TensorFlow writes the dtype first
        # No unknown field: the message the protobuf library reads is written back as long.
        assert tensor_pb2.TensorProto.FromString(b).ByteSize() == len(b)
        assert described is not None
    if parsed is not None:
        # The shape as the protobuf library reads the message.
        msg = tensor_pb2.TensorProto.FromString(b)
        assert parsed.shape == tuple(d.size for d in msg.tensor_shape.dim)
        assert described is not None
        if described[0] not in ("bfloat16", "qint8", "quint8", "qint16", "quint16", "qint32"):
            # those come back in another numpy dtype (float32, their storage integers)
            name = "string" if parsed.dtype == object else parsed.dtype.name
            assert name == described[0]


def _content_start(data: bytes, arr: np.ndarray) -> int:
    """Where the little-endian values of a non-empty numeric ``arr`` start in its serialized
    form ``data``: they are its last bytes (tensor_content, field 4, is written last)."""
    values = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
    assert data.endswith(values)
    return len(data) - len(values)


def _from_le_bytes(content: bytes, like: np.ndarray) -> np.ndarray:
    """``like``'s dtype and shape, with values read from ``content`` by numpy alone (a bool
    is a byte, true when not zero, as TensorFlow reads it)."""
    if like.dtype == np.bool_:
        return (np.frombuffer(content, np.uint8) != 0).reshape(like.shape)
    return (
        np.frombuffer(content, like.dtype.newbyteorder("<")).astype(like.dtype).reshape(like.shape)
    )


@settings(max_examples=200, deadline=None)
@given(arrays(), st.data())
def test_damaged_tensors(arr: np.ndarray, data: st.DataObject) -> None:
    """One byte changed and the end maybe cut. A byte of the values changes that value only;
    a cut inside the values is an error; anything else is an error or an answer that agrees
    with :func:`describe_tensor`."""
    good = serialize_tensor(arr)
    numeric = arr.dtype != object and arr.size > 0
    start = _content_start(good, arr) if numeric else len(good)
    size = len(good) - start
    head = start - 1 - max(1, -(-size.bit_length() // 7))  # field 4's key and length
    anywhere = st.integers(0, len(good) - 1)
    b = bytearray(good)
    # Drawn anywhere, or (more often than by chance) in the values and at their edges.
    i = data.draw(st.one_of(anywhere, st.integers(start, len(good) - 1)) if numeric else anywhere)
    b[i] = data.draw(st.integers(0, 255))
    ends = [st.just(len(b)), st.integers(0, len(b))]
    cut = data.draw(st.one_of(*ends, st.integers(head, len(b))) if numeric else st.one_of(*ends))
    b = b[:cut]
    try:
        back: np.ndarray | None = parse_tensor(bytes(b))
    except (DecodeError, UnsupportedError, LimitError):
        back = None
    if numeric and i >= start and cut == len(good):
        # Only a value changed: the same tensor, that value read from the changed byte.
        want = _from_le_bytes(bytes(b[start:]), arr)
        assert back is not None and back.dtype == arr.dtype and back.shape == arr.shape
        assert back.tobytes() == want.tobytes()
    elif numeric and i >= cut and cut == head:
        # The changed byte cut off with every value: no values, so zeros (TensorFlow's rule).
        assert back is not None and back.dtype == arr.dtype
        assert back.tobytes() == np.zeros_like(arr).tobytes()
    elif numeric and i >= cut and head < cut < len(good):
        # Cut inside tensor_content's key, length or bytes: the message itself is broken.
        assert back is None
    elif back is not None:
        # The shape as the protobuf library reads the message.
        msg = tensor_pb2.TensorProto.FromString(bytes(b))
        assert back.shape == tuple(d.size for d in msg.tensor_shape.dim)


def test_describe_merges_a_repeated_tensor_shape() -> None:
    """A message field that comes twice is merged (protobuf's rule, and so TensorFlow's):
    a shape of one empty dimension followed by an empty shape is still one dimension of 0."""
    data = bytes.fromhex("0801120212001200")  # dtype float32; dim {}; then {} again
    assert parse_tensor(data).shape == (0,)
    assert describe_tensor(data) == ("float32", (0,))
