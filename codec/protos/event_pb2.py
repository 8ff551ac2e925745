"""``tensorflow.Event`` and ``tensorflow.Summary`` (TensorBoard's event files), built at import
time (see ``codec/protos/__init__.py``). Mirrors ``event.proto`` beside this file; not protoc
output.
"""

from __future__ import annotations

from typing import Any

from codec.protos import build_file, enum, field, message, message_class
from codec.protos import tensor_pb2 as _tensor  # noqa: F401  (TensorProto must be in the pool)

_T = ".tensorflow"

_LOG_MESSAGE = message(
    "LogMessage",
    [field("level", 1, f"enum:{_T}.LogMessage.Level"), field("message", 2, "string")],
)
_LOG_MESSAGE.enum_type.append(
    enum(
        "Level",
        [
            ("UNKNOWN", 0),
            ("DEBUGGING", 10),
            ("INFO", 20),
            ("WARN", 30),
            ("ERROR", 40),
            ("FATAL", 50),
        ],
    )
)
_SESSION_LOG = message(
    "SessionLog",
    [
        field("status", 1, f"enum:{_T}.SessionLog.SessionStatus"),
        field("checkpoint_path", 2, "string"),
        field("msg", 3, "string"),
    ],
)
_SESSION_LOG.enum_type.append(
    enum(
        "SessionStatus",
        [("STATUS_UNSPECIFIED", 0), ("START", 1), ("STOP", 2), ("CHECKPOINT", 3)],
    )
)

DESCRIPTOR = build_file(
    "tfrecord_browser/event.proto",
    [
        message(
            "Event",
            [
                field("wall_time", 1, "double"),
                field("step", 2, "int64"),
                field("file_version", 3, "string", oneof=0),
                field("graph_def", 4, "bytes", oneof=0),
                field("summary", 5, f"{_T}.Summary", oneof=0),
                field("log_message", 6, f"{_T}.LogMessage", oneof=0),
                field("session_log", 7, f"{_T}.SessionLog", oneof=0),
                field("tagged_run_metadata", 8, f"{_T}.TaggedRunMetadata", oneof=0),
                field("meta_graph_def", 9, "bytes", oneof=0),
            ],
            oneofs=["what"],
        ),
        _LOG_MESSAGE,
        _SESSION_LOG,
        message(
            "TaggedRunMetadata",
            [field("tag", 1, "string"), field("run_metadata", 2, "bytes")],
        ),
        message(
            "HistogramProto",
            [
                field("min", 1, "double"),
                field("max", 2, "double"),
                field("num", 3, "double"),
                field("sum", 4, "double"),
                field("sum_squares", 5, "double"),
                field("bucket_limit", 6, "double", repeated=True),
                field("bucket", 7, "double", repeated=True),
            ],
        ),
        message("SummaryDescription", [field("type_hint", 1, "string")]),
        message(
            "SummaryMetadata",
            [
                field("plugin_data", 1, f"{_T}.SummaryMetadata.PluginData"),
                field("display_name", 2, "string"),
                field("summary_description", 3, "string"),
                field("data_class", 4, f"enum:{_T}.DataClass"),
            ],
            nested=[
                message(
                    "PluginData",
                    [field("plugin_name", 1, "string"), field("content", 2, "bytes")],
                )
            ],
        ),
        message(
            "Summary",
            [field("value", 1, f"{_T}.Summary.Value", repeated=True)],
            nested=[
                message(
                    "Image",
                    [
                        field("height", 1, "int32"),
                        field("width", 2, "int32"),
                        field("colorspace", 3, "int32"),
                        field("encoded_image_string", 4, "bytes"),
                    ],
                ),
                message(
                    "Audio",
                    [
                        field("sample_rate", 1, "float"),
                        field("num_channels", 2, "int64"),
                        field("length_frames", 3, "int64"),
                        field("encoded_audio_string", 4, "bytes"),
                        field("content_type", 5, "string"),
                    ],
                ),
                message(
                    "Value",
                    [
                        field("node_name", 7, "string"),
                        field("tag", 1, "string"),
                        field("metadata", 9, f"{_T}.SummaryMetadata"),
                        field("simple_value", 2, "float", oneof=0),
                        field("obsolete_old_style_histogram", 3, "bytes", oneof=0),
                        field("image", 4, f"{_T}.Summary.Image", oneof=0),
                        field("histo", 5, f"{_T}.HistogramProto", oneof=0),
                        field("audio", 6, f"{_T}.Summary.Audio", oneof=0),
                        field("tensor", 8, f"{_T}.TensorProto", oneof=0),
                    ],
                    oneofs=["value"],
                ),
            ],
        ),
    ],
    enums=[
        enum(
            "DataClass",
            [
                ("DATA_CLASS_UNKNOWN", 0),
                ("DATA_CLASS_SCALAR", 1),
                ("DATA_CLASS_TENSOR", 2),
                ("DATA_CLASS_BLOB_SEQUENCE", 3),
            ],
        )
    ],
    dependencies=["tfrecord_browser/tensor.proto"],
)

Event: Any = message_class("tensorflow.Event")
LogMessage: Any = message_class("tensorflow.LogMessage")
SessionLog: Any = message_class("tensorflow.SessionLog")
TaggedRunMetadata: Any = message_class("tensorflow.TaggedRunMetadata")
HistogramProto: Any = message_class("tensorflow.HistogramProto")
SummaryMetadata: Any = message_class("tensorflow.SummaryMetadata")
Summary: Any = message_class("tensorflow.Summary")
