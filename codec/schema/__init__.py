"""Schema inference, drift and statistics over every record of a file or a shard set.

What is collected, per feature (an Example's features, a SequenceExample's context) and per
feature list (a SequenceExample's lists, one entry per step):

- the value types seen with record counts, how many records have the feature, list length
  min / mean / max and a count per length;
- numbers: count, min, max, mean, NaN / +Inf / -Inf counts, a histogram (at most 64 equal
  bins on a grid of powers of two, whole-number bins for int64, so counts are exact and the
  result does not depend on how the records were split) and, for int64, counts per value;
- bytes: distinct values and the most common ones (:class:`ValueCounter`: exact up to
  ``capacity`` distinct values, then a KMV distinct estimate and counts estimated from a
  sample of occurrences chosen by keys derived from their records, so memory stays bounded
  and the estimates do not depend on the split), values sniffed as images by their magic
  number with their format, width x
  height read from the header (PNG IHDR, JPEG SOF, GIF, BMP; Pillow's lazy open otherwise) and
  the images whose header cannot be read or whose end marker is missing (undecodable);
- drift, with record numbers: a type that differs from the feature's majority type, a
  feature missing from some records, a list length that differs where most records agree;
- Object Detection checks (:mod:`.detection`), with record numbers: boxes out of range, not
  finite or inverted, parallel object lists of different lengths, labels outside a label map
  or with more than one class text, declared picture sizes that differ from the picture's.

Record numbers are global over the files given (the first record of the second file follows
the last of the first). Lists of record numbers are capped (:data:`RECORD_CAP`: the smallest
numbers are kept); the counts beside them are exact. Bounded tables (list lengths whose
records are kept, picture sizes, label / text pairs) keep their smallest keys.

Everything collected merges exactly: the result is the same however the records were cut
into batches, byte ranges or processes, and in whichever order the parts are merged
(:class:`codec.jobs.SchemaJob` runs inference as tasks over files and byte ranges).

The package: :mod:`.counters` (bounded, mergeable counters), :mod:`.walk` (the vectorised walk
over Example payloads), :mod:`.stats` (per-feature accumulators), :mod:`.builder` (the
accumulator fed record batches), :mod:`.result` (:class:`Schema`, its JSON and chart data),
:mod:`.detection` (the Object Detection checks), :mod:`.drift` (the findings, in words
shared by the CLI and the app) and :mod:`.infer`
(files, ranges of records and processes).
"""

from __future__ import annotations

from .builder import SchemaBuilder
from .counters import RECORD_CAP, Histogram, NumericStats, RecordList, ValueCounter
from .drift import CHECKS, Finding, findings
from .infer import infer_schema
from .result import Schema, ShardInfo
from .stats import TYPE_NAMES, FeatureListStats, FeatureStats

__all__ = [
    "CHECKS",
    "RECORD_CAP",
    "TYPE_NAMES",
    "FeatureListStats",
    "FeatureStats",
    "Finding",
    "Histogram",
    "NumericStats",
    "RecordList",
    "Schema",
    "SchemaBuilder",
    "ShardInfo",
    "ValueCounter",
    "findings",
    "infer_schema",
]
