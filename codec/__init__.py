"""tfrecord-browser's codec: TFRecord files and the messages inside them, without TensorFlow.

Only :mod:`codec.reader` and :mod:`codec.writer` touch files; framing, messages, tensors and
image sniffing are pure functions over bytes.
"""

from .dataset import TFRecordDataset, expand_paths, looks_like_tfrecord, verify_paths
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
from .framing import PROBLEM_KINDS, Problem, encode_record, masked_crc32c, read_at
from .reader import RecordInfo, TFRecordFile, VerifyReport, sniff_compression
from .writer import TFRecordWriter, atomic_output, write_records

__all__ = [
    "PROBLEM_KINDS",
    "CodecError",
    "CorruptRecordError",
    "DecodeError",
    "EncodeError",
    "ImageError",
    "Problem",
    "ReaderClosedError",
    "RecordError",
    "RecordInfo",
    "TFRecordDataset",
    "TFRecordFile",
    "TFRecordWriter",
    "TruncatedRecordError",
    "UnsupportedError",
    "VerifyReport",
    "WriteError",
    "atomic_output",
    "encode_record",
    "expand_paths",
    "looks_like_tfrecord",
    "masked_crc32c",
    "read_at",
    "sniff_compression",
    "verify_paths",
    "write_records",
]
