"""tfrecord-browser's codec: TFRecord files and the messages inside them, without TensorFlow.

Only :mod:`codec.reader` and :mod:`codec.writer` touch files; framing, messages, tensors and
image sniffing are pure functions over bytes.
"""

from . import example, images, kinds, tensor
from .cache import FileIdentity, default_cache_dir
from .dataset import (
    DatasetLanding,
    Slot,
    TFRecordDataset,
    expand_paths,
    looks_like_tfrecord,
    verify_paths,
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
from .framing import Problem, encode_record, masked_crc32c, read_at
from .kinds import PROBLEM_KINDS
from .reader import Landing, RecordInfo, TFRecordFile, VerifyReport
from .sources import sniff_compression
from .tensor import describe_tensor, parse_tensor, serialize_tensor
from .writer import TFRecordWriter, atomic_output, write_records

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
