"""``tensorflow.Example`` and friends, built at import time (see ``codec/protos/__init__.py``).

Mirrors ``example.proto`` beside this file; not protoc output.
"""

from __future__ import annotations

from typing import Any

from codec.protos import build_file, field, map_field, message, message_class

_T = ".tensorflow"

_features_map, _features_entry = map_field(f"{_T}.Features", "feature", 1, f"{_T}.Feature")
_lists_map, _lists_entry = map_field(f"{_T}.FeatureLists", "feature_list", 1, f"{_T}.FeatureList")

DESCRIPTOR = build_file(
    "tfrecord_browser/example.proto",
    [
        message("BytesList", [field("value", 1, "bytes", repeated=True)]),
        message("FloatList", [field("value", 1, "float", repeated=True)]),
        message("Int64List", [field("value", 1, "int64", repeated=True)]),
        message(
            "Feature",
            [
                field("bytes_list", 1, f"{_T}.BytesList", oneof=0),
                field("float_list", 2, f"{_T}.FloatList", oneof=0),
                field("int64_list", 3, f"{_T}.Int64List", oneof=0),
            ],
            oneofs=["kind"],
        ),
        message("Features", [_features_map], nested=[_features_entry]),
        message("FeatureList", [field("feature", 1, f"{_T}.Feature", repeated=True)]),
        message("FeatureLists", [_lists_map], nested=[_lists_entry]),
        message("Example", [field("features", 1, f"{_T}.Features")]),
        message(
            "SequenceExample",
            [
                field("context", 1, f"{_T}.Features"),
                field("feature_lists", 2, f"{_T}.FeatureLists"),
            ],
        ),
    ],
)

BytesList: Any = message_class("tensorflow.BytesList")
FloatList: Any = message_class("tensorflow.FloatList")
Int64List: Any = message_class("tensorflow.Int64List")
Feature: Any = message_class("tensorflow.Feature")
Features: Any = message_class("tensorflow.Features")
FeatureList: Any = message_class("tensorflow.FeatureList")
FeatureLists: Any = message_class("tensorflow.FeatureLists")
Example: Any = message_class("tensorflow.Example")
SequenceExample: Any = message_class("tensorflow.SequenceExample")

# Wire-order twins of Features, FeatureLists, Example and SequenceExample. A protobuf map is
# wire-compatible with a repeated entry message (key = 1, value = 2); parsing through these
# keeps the entries in the order they were written, and serializing them writes entries in the
# order given. That is what lets codec.example reproduce TensorFlow's bytes exactly: the map
# order TensorFlow writes is its hash-table order, which a map parse does not preserve.
_W = ".tfrecord_browser.wire"
WIRE_DESCRIPTOR = build_file(
    "tfrecord_browser/example_wire.proto",
    [
        message("FeatureEntry", [field("key", 1, "string"), field("value", 2, f"{_T}.Feature")]),
        message("Features", [field("feature", 1, f"{_W}.FeatureEntry", repeated=True)]),
        message(
            "FeatureListEntry",
            [field("key", 1, "string"), field("value", 2, f"{_T}.FeatureList")],
        ),
        message(
            "FeatureLists", [field("feature_list", 1, f"{_W}.FeatureListEntry", repeated=True)]
        ),
        message("Example", [field("features", 1, f"{_W}.Features")]),
        message(
            "SequenceExample",
            [
                field("context", 1, f"{_W}.Features"),
                field("feature_lists", 2, f"{_W}.FeatureLists"),
            ],
        ),
    ],
    package="tfrecord_browser.wire",
    dependencies=["tfrecord_browser/example.proto"],
)

WireFeatures: Any = message_class("tfrecord_browser.wire.Features")
WireFeatureLists: Any = message_class("tfrecord_browser.wire.FeatureLists")
WireExample: Any = message_class("tfrecord_browser.wire.Example")
WireSequenceExample: Any = message_class("tfrecord_browser.wire.SequenceExample")
