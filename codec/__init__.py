"""tfrecord-browser's codec: TFRecord files and the messages inside them, without TensorFlow.

Only :mod:`codec.reader` and :mod:`codec.writer` touch files; framing, messages, tensors and
image sniffing are pure functions over bytes.

The names below are imported from their modules on first use, not when the package is: a
command or a worker that only verifies records starts without loading protobuf, Pillow or
the schema code (a fresh process verifying a file spends a tenth of its time importing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_names

if TYPE_CHECKING:
    from . import example, images, kinds, tensor
    from .dataset import (
        DatasetLanding,
        Slot,
        TFRecordDataset,
    )
    from .errors import (
        CodecError,
        CorruptRecordError,
        DecodeError,
        EncodeError,
        ImageError,
        ReaderClosedError,
        RecordError,
        TruncatedRecordError,
        UnsupportedError,
        WriteError,
    )
    from .example import Feature, Record, decode, detect_kind, encode, encode_example, make_feature
    from .expand import expand_paths, looks_like_tfrecord
    from .framing import Problem, encode_record, masked_crc32c, read_at
    from .identity import FileIdentity
    from .jobs.verify import verify_paths
    from .kinds import PROBLEM_KINDS
    from .landing import Landing
    from .reader import RecordInfo, TFRecordFile, VerifyReport
    from .settings import default_cache_dir
    from .sources import sniff_compression
    from .tensor import describe_tensor, parse_tensor, serialize_tensor
    from .writer import TFRecordWriter, atomic_output, write_records

# name -> the module of this package it comes from (a submodule's name is that submodule)
_WHERE = {
    "CodecError": "errors",
    "CorruptRecordError": "errors",
    "DatasetLanding": "dataset",
    "DecodeError": "errors",
    "EncodeError": "errors",
    "Feature": "example",
    "FileIdentity": "identity",
    "ImageError": "errors",
    "Landing": "landing",
    "PROBLEM_KINDS": "kinds",
    "Problem": "framing",
    "ReaderClosedError": "errors",
    "Record": "example",
    "RecordError": "errors",
    "RecordInfo": "reader",
    "Slot": "dataset",
    "TFRecordDataset": "dataset",
    "TFRecordFile": "reader",
    "TFRecordWriter": "writer",
    "TruncatedRecordError": "errors",
    "UnsupportedError": "errors",
    "VerifyReport": "reader",
    "WriteError": "errors",
    "atomic_output": "writer",
    "decode": "example",
    "default_cache_dir": "settings",
    "describe_tensor": "tensor",
    "detect_kind": "example",
    "encode": "example",
    "encode_example": "example",
    "encode_record": "framing",
    "expand_paths": "expand",
    "looks_like_tfrecord": "expand",
    "make_feature": "example",
    "masked_crc32c": "framing",
    "parse_tensor": "tensor",
    "read_at": "framing",
    "serialize_tensor": "tensor",
    "sniff_compression": "sources",
    "verify_paths": "jobs.verify",
    "write_records": "writer",
}


__getattr__ = lazy_names(__name__, _WHERE)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "PROBLEM_KINDS",
    "CodecError",
    "CorruptRecordError",
    "DatasetLanding",
    "DecodeError",
    "EncodeError",
    "Feature",
    "FileIdentity",
    "ImageError",
    "Landing",
    "Problem",
    "ReaderClosedError",
    "Record",
    "RecordError",
    "RecordInfo",
    "Slot",
    "TFRecordDataset",
    "TFRecordFile",
    "TFRecordWriter",
    "TruncatedRecordError",
    "UnsupportedError",
    "VerifyReport",
    "WriteError",
    "atomic_output",
    "decode",
    "default_cache_dir",
    "describe_tensor",
    "detect_kind",
    "encode",
    "encode_example",
    "encode_record",
    "example",
    "expand_paths",
    "images",
    "kinds",
    "looks_like_tfrecord",
    "make_feature",
    "masked_crc32c",
    "parse_tensor",
    "read_at",
    "serialize_tensor",
    "sniff_compression",
    "tensor",
    "verify_paths",
    "write_records",
]
