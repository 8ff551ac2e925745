"""The codec's vocabularies, each written down once: problem kinds, feature types, record
kinds and compressions.

They are plain strings (they appear in JSON output and in the journal), named by constants and
typed with ``Literal`` so a misspelt kind is a type error rather than a silent mismatch.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "BYTES",
    "COMPRESSION",
    "COMPRESSIONS",
    "DATA_CRC",
    "EXAMPLE",
    "FEATURE_TYPES",
    "FLOAT",
    "GZIP",
    "INT64",
    "LENGTH_CRC",
    "NONE",
    "NO_COMPRESSION",
    "PROBLEM_KINDS",
    "RAW",
    "RECORD_KINDS",
    "SEQUENCE_EXAMPLE",
    "TRUNCATED",
    "UNREADABLE",
    "ZLIB",
    "Compression",
    "FeatureType",
    "ProblemKind",
    "RecordKind",
]

# -- damage ---------------------------------------------------------------------------------

ProblemKind = Literal["data_crc", "length_crc", "truncated", "compression", "unreadable"]
DATA_CRC: ProblemKind = "data_crc"  # the payload does not match its CRC; the length is trusted
LENGTH_CRC: ProblemKind = "length_crc"  # a header's length CRC failed (bit rot, junk)
TRUNCATED: ProblemKind = "truncated"  # the stream ends inside a record, or 1-11 stray bytes
COMPRESSION: ProblemKind = "compression"  # the GZIP/ZLIB stream itself is damaged or cut
UNREADABLE: ProblemKind = "unreadable"  # a file a job could not read at all (gone, refused)
PROBLEM_KINDS: tuple[ProblemKind, ...] = get_args(ProblemKind)

# -- feature types --------------------------------------------------------------------------

FeatureType = Literal["int64", "float", "bytes", "none"]
INT64: FeatureType = "int64"
FLOAT: FeatureType = "float"
BYTES: FeatureType = "bytes"
NONE: FeatureType = "none"  # a Feature message with no list set
# The types a value can have, in the order they are offered to people.
FEATURE_TYPES: tuple[FeatureType, ...] = (INT64, FLOAT, BYTES)

# -- record kinds ---------------------------------------------------------------------------

RecordKind = Literal["example", "sequence_example", "raw"]
EXAMPLE: RecordKind = "example"
SEQUENCE_EXAMPLE: RecordKind = "sequence_example"
RAW: RecordKind = "raw"
RECORD_KINDS: tuple[RecordKind, ...] = get_args(RecordKind)

# -- compression ----------------------------------------------------------------------------

Compression = Literal["none", "gzip", "zlib"]
NO_COMPRESSION: Compression = "none"
GZIP: Compression = "gzip"
ZLIB: Compression = "zlib"
COMPRESSIONS: tuple[Compression, ...] = get_args(Compression)
