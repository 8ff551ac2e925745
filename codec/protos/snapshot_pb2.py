"""``tf.data`` snapshot messages (``tensorflow.data.experimental``) and the element spec's
``tensorflow.StructuredValue``, built at import time (see ``codec/protos/__init__.py``). Mirrors
``snapshot.proto`` and ``struct.proto`` beside this file; not protoc output.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2

from codec.protos import build_file, enum, field, map_field, message, message_class
from codec.protos import tensor_pb2 as _tensor  # noqa: F401  (TensorProto must be in the pool)

_T = ".tensorflow"
_DT = f"enum:{_T}.DataType"
_SHAPE = f"{_T}.TensorShapeProto"
_SV = f"{_T}.StructuredValue"


def _sint64(name: str, number: int, oneof: int) -> descriptor_pb2.FieldDescriptorProto:
    f = field(name, number, "int64", oneof=oneof)
    f.type = descriptor_pb2.FieldDescriptorProto.TYPE_SINT64
    return f


_fields_map, _fields_entry = map_field(f"{_T}.DictValue", "fields", 1, _SV)

_TYPE_SPEC = message(
    "TypeSpecProto",
    [
        field("type_spec_class", 1, f"enum:{_T}.TypeSpecProto.TypeSpecClass"),
        field("type_state", 2, _SV),
        field("type_spec_class_name", 3, "string"),
    ],
)
_TYPE_SPEC.enum_type.append(
    enum(
        "TypeSpecClass",
        [
            ("UNKNOWN", 0),
            ("SPARSE_TENSOR_SPEC", 1),
            ("INDEXED_SLICES_SPEC", 2),
            ("RAGGED_TENSOR_SPEC", 3),
            ("TENSOR_ARRAY_SPEC", 4),
            ("DATA_DATASET_SPEC", 5),
            ("DATA_ITERATOR_SPEC", 6),
            ("OPTIONAL_SPEC", 7),
            ("PER_REPLICA_SPEC", 8),
            ("VARIABLE_SPEC", 9),
            ("ROW_PARTITION_SPEC", 10),
            ("REGISTERED_TYPE_SPEC", 12),
        ],
    )
)

STRUCT_DESCRIPTOR = build_file(
    "tfrecord_browser/struct.proto",
    [
        message(
            "StructuredValue",
            [
                field("none_value", 1, f"{_T}.NoneValue", oneof=0),
                field("float64_value", 11, "double", oneof=0),
                _sint64("int64_value", 12, 0),
                field("string_value", 13, "string", oneof=0),
                field("bool_value", 14, "bool", oneof=0),
                field("tensor_shape_value", 31, _SHAPE, oneof=0),
                field("tensor_dtype_value", 32, _DT, oneof=0),
                field("tensor_spec_value", 33, f"{_T}.TensorSpecProto", oneof=0),
                field("type_spec_value", 34, f"{_T}.TypeSpecProto", oneof=0),
                field("bounded_tensor_spec_value", 35, f"{_T}.BoundedTensorSpecProto", oneof=0),
                field("list_value", 51, f"{_T}.ListValue", oneof=0),
                field("tuple_value", 52, f"{_T}.TupleValue", oneof=0),
                field("dict_value", 53, f"{_T}.DictValue", oneof=0),
                field("named_tuple_value", 54, f"{_T}.NamedTupleValue", oneof=0),
            ],
            oneofs=["kind"],
        ),
        message("NoneValue", []),
        message("ListValue", [field("values", 1, _SV, repeated=True)]),
        message("TupleValue", [field("values", 1, _SV, repeated=True)]),
        message("DictValue", [_fields_map], nested=[_fields_entry]),
        message("PairValue", [field("key", 1, "string"), field("value", 2, _SV)]),
        message(
            "NamedTupleValue",
            [field("name", 1, "string"), field("values", 2, f"{_T}.PairValue", repeated=True)],
        ),
        message(
            "TensorSpecProto",
            [field("name", 1, "string"), field("shape", 2, _SHAPE), field("dtype", 3, _DT)],
        ),
        message(
            "BoundedTensorSpecProto",
            [
                field("name", 1, "string"),
                field("shape", 2, _SHAPE),
                field("dtype", 3, _DT),
                field("minimum", 4, f"{_T}.TensorProto"),
                field("maximum", 5, f"{_T}.TensorProto"),
            ],
        ),
        _TYPE_SPEC,
    ],
    dependencies=["tfrecord_browser/tensor.proto"],
)

_E = ".tensorflow.data.experimental"

DESCRIPTOR = build_file(
    "tfrecord_browser/snapshot.proto",
    [
        message("SnapshotRecord", [field("tensor", 1, f"{_T}.TensorProto", repeated=True)]),
        message(
            "SnapshotMetadataRecord",
            [
                field("graph_hash", 1, "string"),
                field("run_id", 2, "string"),
                field("creation_timestamp", 3, "int64"),
                field("version", 4, "int64"),
                field("dtype", 5, _DT, repeated=True),
                field("num_elements", 6, "int64"),
                field("finalized", 1000, "bool"),
            ],
        ),
        message(
            "TensorMetadata",
            [field("tensor_shape", 2, _SHAPE), field("tensor_size_bytes", 3, "int64")],
        ),
        message(
            "SnapshotTensorMetadata",
            [field("tensor_metadata", 1, f"{_E}.TensorMetadata", repeated=True)],
        ),
        message(
            "DistributedSnapshotMetadata",
            [field("element_spec", 1, "bytes"), field("compression", 2, "string")],
        ),
    ],
    package="tensorflow.data.experimental",
    dependencies=["tfrecord_browser/tensor.proto"],
)

StructuredValue: Any = message_class("tensorflow.StructuredValue")
TensorSpecProto: Any = message_class("tensorflow.TensorSpecProto")
TypeSpecProto: Any = message_class("tensorflow.TypeSpecProto")
SnapshotRecord: Any = message_class("tensorflow.data.experimental.SnapshotRecord")
SnapshotMetadataRecord: Any = message_class("tensorflow.data.experimental.SnapshotMetadataRecord")
