"""Protobuf messages of TensorFlow's record formats, without TensorFlow.

Regeneration: nothing to regenerate. ``example_pb2`` and ``tensor_pb2`` are *not* protoc output;
they build their descriptors at import time from the tables in those modules (a
``FileDescriptorProto`` assembled with ``descriptor_pb2``, turned into classes with
``message_factory.GetMessageClass``), so there is no coupling between a protoc version and the
protobuf runtime: any ``protobuf>=4.21`` works. The ``.proto`` files beside them are the readable
schema (package ``tensorflow`` and TensorFlow's message names, so ``json_format.MessageToDict``
output equals TensorFlow's); ``tests/test_example.py`` and ``tests/test_tensor.py`` check that
every field of the ``.proto`` files matches the built descriptors. To compare with protoc output
anyway::

    pip install grpcio-tools
    python -m grpc_tools.protoc -I codec/protos --python_out=/tmp/gen \
        codec/protos/example.proto codec/protos/tensor.proto

The descriptors live in a private :data:`POOL`, not the default pool, so importing TensorFlow or
another copy of these messages in the same process does not clash.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["POOL", "build_file", "enum", "field", "message", "message_class"]

POOL = descriptor_pool.DescriptorPool()

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {
    "double": _F.TYPE_DOUBLE,
    "float": _F.TYPE_FLOAT,
    "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64,
    "int32": _F.TYPE_INT32,
    "uint32": _F.TYPE_UINT32,
    "bool": _F.TYPE_BOOL,
    "string": _F.TYPE_STRING,
    "bytes": _F.TYPE_BYTES,
}


def _json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def field(
    name: str,
    number: int,
    type_: str,
    *,
    repeated: bool = False,
    oneof: int | None = None,
) -> descriptor_pb2.FieldDescriptorProto:
    """One field. ``type_`` is a scalar name, ``"enum:.pkg.Name"`` or ``".pkg.Message"``."""
    f = descriptor_pb2.FieldDescriptorProto(name=name, number=number, json_name=_json_name(name))
    f.label = _F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL
    if type_ in _SCALARS:
        f.type = _SCALARS[type_]
    elif type_.startswith("enum:"):
        f.type = _F.TYPE_ENUM
        f.type_name = type_[5:]
    else:
        f.type = _F.TYPE_MESSAGE
        f.type_name = type_
    if oneof is not None:
        f.oneof_index = oneof
    return f


def message(
    name: str,
    fields: Iterable[descriptor_pb2.FieldDescriptorProto],
    *,
    nested: Iterable[descriptor_pb2.DescriptorProto] = (),
    oneofs: Sequence[str] = (),
    map_entry: bool = False,
) -> descriptor_pb2.DescriptorProto:
    m = descriptor_pb2.DescriptorProto(name=name)
    m.field.extend(fields)
    m.nested_type.extend(nested)
    for o in oneofs:
        m.oneof_decl.add(name=o)
    if map_entry:
        m.options.map_entry = True
    return m


def map_field(
    owner: str, name: str, number: int, value_type: str
) -> tuple[descriptor_pb2.FieldDescriptorProto, descriptor_pb2.DescriptorProto]:
    """A ``map<string, value_type>`` field of message ``owner`` (full name with leading dot):
    the repeated field and its nested ``...Entry`` type, named as protoc names them."""
    entry = "".join(p[:1].upper() + p[1:] for p in name.split("_")) + "Entry"
    nested = message(
        entry, [field("key", 1, "string"), field("value", 2, value_type)], map_entry=True
    )
    return field(name, number, f"{owner}.{entry}", repeated=True), nested


def enum(name: str, values: Iterable[tuple[str, int]]) -> descriptor_pb2.EnumDescriptorProto:
    e = descriptor_pb2.EnumDescriptorProto(name=name)
    for n, v in values:
        e.value.add(name=n, number=v)
    return e


def build_file(
    name: str,
    messages: Iterable[descriptor_pb2.DescriptorProto],
    enums: Iterable[descriptor_pb2.EnumDescriptorProto] = (),
    package: str = "tensorflow",
    dependencies: Sequence[str] = (),
) -> Any:
    """Add a proto3 file to :data:`POOL` and return its ``FileDescriptor``."""
    fdp = descriptor_pb2.FileDescriptorProto(name=name, package=package, syntax="proto3")
    fdp.dependency.extend(dependencies)
    fdp.enum_type.extend(enums)
    fdp.message_type.extend(messages)
    POOL.AddSerializedFile(fdp.SerializeToString())
    return POOL.FindFileByName(name)


def message_class(full_name: str) -> Any:
    """The message class for ``full_name`` (e.g. ``"tensorflow.Example"``) from :data:`POOL`."""
    return message_factory.GetMessageClass(POOL.FindMessageTypeByName(full_name))
