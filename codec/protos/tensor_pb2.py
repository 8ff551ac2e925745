"""``tensorflow.TensorProto`` and friends, built at import time (see
``codec/protos/__init__.py``). Mirrors ``tensor.proto`` beside this file; not protoc output.
"""

from __future__ import annotations

from typing import Any

from codec.protos import build_file, enum, field, message, message_class

_T = ".tensorflow"

DATA_TYPES: tuple[tuple[str, int], ...] = (
    ("DT_INVALID", 0),
    ("DT_FLOAT", 1),
    ("DT_DOUBLE", 2),
    ("DT_INT32", 3),
    ("DT_UINT8", 4),
    ("DT_INT16", 5),
    ("DT_INT8", 6),
    ("DT_STRING", 7),
    ("DT_COMPLEX64", 8),
    ("DT_INT64", 9),
    ("DT_BOOL", 10),
    ("DT_QINT8", 11),
    ("DT_QUINT8", 12),
    ("DT_QINT32", 13),
    ("DT_BFLOAT16", 14),
    ("DT_QINT16", 15),
    ("DT_QUINT16", 16),
    ("DT_UINT16", 17),
    ("DT_COMPLEX128", 18),
    ("DT_HALF", 19),
    ("DT_RESOURCE", 20),
    ("DT_VARIANT", 21),
    ("DT_UINT32", 22),
    ("DT_UINT64", 23),
    ("DT_FLOAT8_E5M2", 24),
    ("DT_FLOAT8_E4M3FN", 25),
    ("DT_FLOAT8_E4M3FNUZ", 26),
    ("DT_FLOAT8_E4M3B11FNUZ", 27),
    ("DT_FLOAT8_E5M2FNUZ", 28),
    ("DT_INT4", 29),
    ("DT_UINT4", 30),
    ("DT_INT2", 31),
    ("DT_UINT2", 32),
    ("DT_FLOAT4_E2M1FN", 33),
)

_DT = f"enum:{_T}.DataType"

DESCRIPTOR = build_file(
    "tfrecord_browser/tensor.proto",
    [
        message(
            "TensorShapeProto",
            [
                field("dim", 2, f"{_T}.TensorShapeProto.Dim", repeated=True),
                field("unknown_rank", 3, "bool"),
            ],
            nested=[message("Dim", [field("size", 1, "int64"), field("name", 2, "string")])],
        ),
        message(
            "ResourceHandleProto",
            [
                field("device", 1, "string"),
                field("container", 2, "string"),
                field("name", 3, "string"),
                field("hash_code", 4, "uint64"),
                field("maybe_type_name", 5, "string"),
                field(
                    "dtypes_and_shapes",
                    6,
                    f"{_T}.ResourceHandleProto.DtypeAndShape",
                    repeated=True,
                ),
            ],
            nested=[
                message(
                    "DtypeAndShape",
                    [field("dtype", 1, _DT), field("shape", 2, f"{_T}.TensorShapeProto")],
                )
            ],
        ),
        message(
            "VariantTensorDataProto",
            [
                field("type_name", 1, "string"),
                field("metadata", 2, "bytes"),
                field("tensors", 3, f"{_T}.TensorProto", repeated=True),
            ],
        ),
        message(
            "TensorProto",
            [
                field("dtype", 1, _DT),
                field("tensor_shape", 2, f"{_T}.TensorShapeProto"),
                field("version_number", 3, "int32"),
                field("tensor_content", 4, "bytes"),
                field("half_val", 13, "int32", repeated=True),
                field("float_val", 5, "float", repeated=True),
                field("double_val", 6, "double", repeated=True),
                field("int_val", 7, "int32", repeated=True),
                field("string_val", 8, "bytes", repeated=True),
                field("scomplex_val", 9, "float", repeated=True),
                field("int64_val", 10, "int64", repeated=True),
                field("bool_val", 11, "bool", repeated=True),
                field("dcomplex_val", 12, "double", repeated=True),
                field("resource_handle_val", 14, f"{_T}.ResourceHandleProto", repeated=True),
                field("variant_val", 15, f"{_T}.VariantTensorDataProto", repeated=True),
                field("uint32_val", 16, "uint32", repeated=True),
                field("uint64_val", 17, "uint64", repeated=True),
                field("float8_val", 18, "bytes"),
            ],
        ),
    ],
    enums=[enum("DataType", DATA_TYPES)],
)

TensorShapeProto: Any = message_class("tensorflow.TensorShapeProto")
ResourceHandleProto: Any = message_class("tensorflow.ResourceHandleProto")
VariantTensorDataProto: Any = message_class("tensorflow.VariantTensorDataProto")
TensorProto: Any = message_class("tensorflow.TensorProto")
