"""TensorBoard event files (``events.out.tfevents.*``): TFRecord framing of
``tensorflow.Event`` protos, decoded without TensorFlow.

Messages and field numbers are TensorFlow's ``tensorflow/core/util/event.proto`` and
``tensorflow/core/framework/summary.proto`` (``codec/protos/event.proto``). What a value
holds is read two ways, as TensorBoard does:

- the TF1 fields: ``simple_value`` (a scalar), ``image`` (``encoded_image_string``, width,
  height), ``audio`` (``encoded_audio_string``, sample rate), ``histo`` (a
  ``HistogramProto``);
- a ``tensor`` (TF2's ``tf.summary``), read through its plugin: ``metadata.plugin_data
  .plugin_name`` ``scalars`` (a rank-0 float), ``images`` (a string vector: width, height,
  then encoded pictures), ``audio`` (a ``[k, 2]`` string tensor: encoded audio, label),
  ``histograms`` (a ``[k, 3]`` float tensor: left edge, right edge, count), ``text`` (a
  string tensor). TensorFlow's writer keeps the metadata only on the first value of each tag
  in a file, so a tensor without it is read by its shape and contents; ``decode_event``
  takes the plugins seen so far (``plugins``: tag → plugin name) to read later ones exactly.

Tensors go through :func:`codec.tensor.parse_tensor` with its allocation limit.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from google.protobuf.message import DecodeError as _ProtoDecodeError

from codec.errors import DecodeError, LimitError, UnsupportedError
from codec.protos import event_pb2
from codec.tensor import parse_tensor
from codec.values import format_float, image_size, plural

__all__ = [
    "EVENT_FILE_NAME",
    "MAX_TENSOR_BYTES",
    "Event",
    "Histogram",
    "SummaryValue",
    "decode_event",
    "encode_event",
    "is_event_file",
    "looks_like_event_file",
]

EVENT_FILE_NAME = re.compile(r"(^|[/\\])events\.out\.tfevents\.[^/\\]*$")
MAX_TENSOR_BYTES = 64 << 20  # a summary tensor decoded larger than this is described only
_FILE_VERSION = "brain.Event:"

_LEVELS = {0: "unknown", 10: "debug", 20: "info", 30: "warn", 40: "error", 50: "fatal"}
_STATUSES = {0: "unspecified", 1: "start", 2: "stop", 3: "checkpoint"}


@dataclass(frozen=True)
class Histogram:
    """A histogram summary: ``limits[i]`` is bucket ``i``'s right edge (the first bucket
    starts at ``min``), ``counts[i]`` its count."""

    min: float
    max: float
    num: float
    sum: float | None
    limits: tuple[float, ...]
    counts: tuple[float, ...]


@dataclass(frozen=True)
class SummaryValue:
    """One ``Summary.Value``: its ``tag``, the ``plugin`` its metadata names (``""`` when it
    has none), and what it holds by ``kind``:

    - ``"scalar"``: ``scalar``;
    - ``"image"``: ``images`` (encoded pictures), ``width``, ``height``;
    - ``"audio"``: ``audio`` (encoded), ``sample_rate`` when the value says it;
    - ``"histogram"``: ``histogram``;
    - ``"text"``: ``text``;
    - ``"tensor"``: another tensor, ``dtype`` and ``shape`` (and ``tensor``, the array, when
      it decoded);
    - ``"empty"``: a value with nothing set.

    ``problem`` says what could not be read (a tensor that does not decode, an obsolete
    histogram)."""

    tag: str
    kind: str
    plugin: str = ""
    scalar: float | None = None
    images: tuple[bytes, ...] = ()
    width: int | None = None
    height: int | None = None
    audio: tuple[bytes, ...] = ()
    sample_rate: float | None = None
    histogram: Histogram | None = None
    text: str | None = None
    dtype: str | None = None
    shape: tuple[int, ...] | None = None
    tensor: np.ndarray | None = field(default=None, compare=False, repr=False)
    problem: str | None = None

    def describe(self) -> str:
        """The value in words: ``loss = 0.25``, ``image 64×48 png``, ``histogram of 1,000
        values in 30 buckets`` …"""
        if self.kind == "scalar" and self.scalar is not None:
            return f"{self.tag} = {format_float(self.scalar)}"
        if self.kind == "image":
            size = f" {self.width}×{self.height}" if self.width and self.height else ""
            many = f" ({plural(len(self.images), 'picture')})" if len(self.images) > 1 else ""
            return f"{self.tag}: image{size}{many}"
        if self.kind == "audio":
            return f"{self.tag}: audio ({plural(len(self.audio), 'clip')})"
        if self.kind == "histogram" and self.histogram is not None:
            h = self.histogram
            return (
                f"{self.tag}: histogram of {plural(round(h.num), 'value')} in"
                f" {plural(len(h.counts), 'bucket')},"
                f" {format_float(h.min)} to {format_float(h.max)}"
            )
        if self.kind == "text" and self.text is not None:
            short = self.text if len(self.text) <= 80 else self.text[:79] + "…"
            return f"{self.tag}: {short!r}"
        if self.kind == "tensor":
            shape = list(self.shape) if self.shape is not None else "?"
            return f"{self.tag}: tensor {self.dtype or '?'} {shape}"
        return f"{self.tag}: {self.problem or self.kind}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tag": self.tag, "kind": self.kind}
        if self.plugin:
            out["plugin"] = self.plugin
        if self.scalar is not None:
            out["value"] = self.scalar if math.isfinite(self.scalar) else str(self.scalar)
        if self.images:
            out["images"] = len(self.images)
            out["width"], out["height"] = self.width, self.height
        if self.audio:
            out["audio"] = len(self.audio)
            if self.sample_rate:
                out["sample_rate"] = self.sample_rate
        if self.histogram is not None:
            out["count"] = self.histogram.num
            out["buckets"] = len(self.histogram.counts)
        if self.text is not None:
            out["text"] = self.text
        if self.dtype is not None:
            out["dtype"], out["shape"] = self.dtype, list(self.shape or ())
        if self.problem:
            out["problem"] = self.problem
        return out


@dataclass(frozen=True)
class Event:
    """One decoded ``Event``: ``wall_time`` (seconds since the epoch), ``step`` and ``what``
    it holds (``"file_version"``, ``"summary"``, ``"log_message"``, ``"session_log"``,
    ``"graph_def"``, ``"meta_graph_def"``, ``"tagged_run_metadata"``, or ``""``), with its
    parts: ``file_version``; summary ``values``; a log message's ``level`` and ``message`` (a
    session log's ``status`` and ``message``); ``tag`` of tagged run metadata; ``size``, the
    bytes of a graph, meta graph or run metadata (not decoded)."""

    wall_time: float
    step: int
    what: str
    file_version: str | None = None
    values: tuple[SummaryValue, ...] = ()
    level: str | None = None
    status: str | None = None
    message: str | None = None
    tag: str | None = None
    size: int | None = None

    @property
    def scalars(self) -> dict[str, float]:
        """``tag → value`` of the scalar values."""
        return {v.tag: v.scalar for v in self.values if v.scalar is not None}

    @property
    def when(self) -> str:
        """The wall time as UTC text, ``2024-05-01 12:00:03.250 UTC``."""
        try:
            t = _dt.datetime.fromtimestamp(self.wall_time, tz=_dt.timezone.utc)
        except (OverflowError, OSError, ValueError):
            return f"{self.wall_time!r} s"
        return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d} UTC"

    def text(self) -> str:
        """One line: ``step 100 · 2024-05-01 12:00:03.250 UTC · loss = 0.25; acc = 0.9``."""
        head = f"step {self.step:,} · {self.when}"
        if self.what == "summary":
            body = "; ".join(v.describe() for v in self.values) or "empty summary"
        elif self.what == "file_version":
            body = f"file version {self.file_version}"
        elif self.what == "log_message":
            body = f"log {self.level}: {self.message}"
        elif self.what == "session_log":
            body = f"session {self.status}" + (f": {self.message}" if self.message else "")
        elif self.what in ("graph_def", "meta_graph_def"):
            body = f"{self.what.replace('_', ' ')} ({self.size:,} bytes)"
        elif self.what == "tagged_run_metadata":
            body = f"run metadata {self.tag!r} ({self.size:,} bytes)"
        else:
            body = "no content"
        return f"{head} · {body}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"wall_time": self.wall_time, "step": self.step, "what": self.what}
        for name in ("file_version", "level", "status", "message", "tag", "size"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.values:
            out["values"] = [v.to_json() for v in self.values]
        return out


# --------------------------------------------------------------------------------------------
# Decoding


def looks_like_event_file(name: str) -> bool:
    """Whether a file name is TensorBoard's (``events.out.tfevents.<time>.<host>…``)."""
    return bool(EVENT_FILE_NAME.search(name))


def is_event_file(name: str, first_payload: bytes) -> bool:
    """Whether a file holds TensorBoard events: its first record is an ``Event`` whose
    ``file_version`` starts ``brain.Event:`` (every writer writes that first), or the file is
    named like an event file and its first record decodes as an ``Event``."""
    event = decode_event(first_payload)
    if event is None:
        return False
    if event.file_version is not None and event.file_version.startswith(_FILE_VERSION):
        return True
    return looks_like_event_file(name)


def _parse(payload: bytes) -> Any:
    msg = event_pb2.Event()
    try:
        msg.ParseFromString(payload)
    except (_ProtoDecodeError, RuntimeError, ValueError):
        return None
    size = msg.ByteSize()
    msg.DiscardUnknownFields()
    if msg.ByteSize() != size:
        return None  # fields an Event does not have: another message
    if not (math.isfinite(msg.wall_time) and msg.wall_time > 0):
        return None
    return msg


def decode_event(
    payload: bytes, plugins: MutableMapping[str, str] | Mapping[str, str] | None = None
) -> Event | None:
    """The ``Event`` in ``payload``, or ``None`` when it is not one: it does not parse as an
    ``Event``, has a field an ``Event`` does not, or no positive wall time (every writer sets
    one; an Example, a tensor or text fail one of these).

    ``plugins`` maps tags to the plugin names seen on earlier values (the writer keeps the
    metadata on the first value of a tag only); a mutable mapping learns the ones this event
    names."""
    msg = _parse(payload)
    if msg is None:
        return None
    what = msg.WhichOneof("what") or ""
    common: dict[str, Any] = {
        "wall_time": float(msg.wall_time),
        "step": int(msg.step),
        "what": what,
    }
    if what == "file_version":
        return Event(**common, file_version=msg.file_version)
    if what == "summary":
        values = tuple(_value(v, plugins) for v in msg.summary.value)
        return Event(**common, values=values)
    if what == "log_message":
        level = _LEVELS.get(int(msg.log_message.level), str(msg.log_message.level))
        return Event(**common, level=level, message=msg.log_message.message)
    if what == "session_log":
        s = msg.session_log
        status = _STATUSES.get(int(s.status), str(s.status))
        return Event(**common, status=status, message=s.msg or s.checkpoint_path or None)
    if what in ("graph_def", "meta_graph_def"):
        return Event(**common, size=len(getattr(msg, what)))
    if what == "tagged_run_metadata":
        t = msg.tagged_run_metadata
        return Event(**common, tag=t.tag, size=len(t.run_metadata))
    return Event(**common)


def _value(v: Any, plugins: Mapping[str, str] | MutableMapping[str, str] | None) -> SummaryValue:
    tag = v.tag or v.node_name
    plugin = v.metadata.plugin_data.plugin_name if v.HasField("metadata") else ""
    if plugin and isinstance(plugins, MutableMapping):
        plugins.setdefault(tag, plugin)
    if not plugin and plugins is not None:
        plugin = plugins.get(tag, "")
    kind = v.WhichOneof("value")
    if kind == "simple_value":
        return SummaryValue(tag, "scalar", plugin, scalar=float(v.simple_value))
    if kind == "image":
        img = v.image
        return SummaryValue(
            tag,
            "image",
            plugin,
            images=(bytes(img.encoded_image_string),),
            width=int(img.width) or None,
            height=int(img.height) or None,
        )
    if kind == "audio":
        a = v.audio
        rate = float(a.sample_rate) or None
        return SummaryValue(
            tag, "audio", plugin, audio=(bytes(a.encoded_audio_string),), sample_rate=rate
        )
    if kind == "histo":
        h = v.histo
        histogram = Histogram(
            float(h.min), float(h.max), float(h.num), float(h.sum),
            tuple(float(x) for x in h.bucket_limit), tuple(float(x) for x in h.bucket),
        )  # fmt: skip
        return SummaryValue(tag, "histogram", plugin, histogram=histogram)
    if kind == "obsolete_old_style_histogram":
        return SummaryValue(tag, "histogram", plugin, problem="an obsolete histogram, not read")
    if kind == "tensor":
        return _tensor_value(tag, plugin, v.tensor)
    return SummaryValue(tag, "empty", plugin)


def _tensor_value(tag: str, plugin: str, proto: Any) -> SummaryValue:
    data = proto.SerializeToString()
    try:
        arr = parse_tensor(data, max_bytes=MAX_TENSOR_BYTES)
    except (DecodeError, UnsupportedError, LimitError) as exc:
        return SummaryValue(tag, "tensor", plugin, problem=str(exc))
    dtype = arr.dtype.name if arr.dtype != object else "string"
    shape = tuple(int(d) for d in arr.shape)
    base: dict[str, Any] = {"tag": tag, "plugin": plugin, "dtype": dtype, "shape": shape}
    guess = plugin or _guess_plugin(arr)
    if guess == "scalars" and arr.size == 1 and arr.dtype.kind in "fiub":
        return SummaryValue(**base, kind="scalar", scalar=float(arr.reshape(-1)[0]))
    if guess == "images" and arr.dtype == object and arr.ndim == 1 and arr.size >= 2:
        width, height = _int_text(arr[0]), _int_text(arr[1])
        pictures = tuple(bytes(x) for x in arr[2:])
        if width is None and pictures:
            found = image_size(pictures[0])
            width, height = (found[1], found[2]) if found else (None, None)
        return SummaryValue(
            **base, kind="image", images=pictures, width=width, height=height, tensor=arr
        )
    if guess == "audio" and arr.dtype == object and arr.size:
        clips = arr.reshape(-1, arr.shape[-1])[:, 0] if arr.ndim == 2 else arr.reshape(-1)
        return SummaryValue(**base, kind="audio", audio=tuple(bytes(x) for x in clips), tensor=arr)
    if guess == "histograms" and arr.ndim == 2 and arr.shape[1] == 3 and arr.dtype.kind == "f":
        left, right, counts = arr[:, 0], arr[:, 1], arr[:, 2]
        histogram = Histogram(
            float(left[0]) if arr.shape[0] else 0.0,
            float(right[-1]) if arr.shape[0] else 0.0,
            float(counts.sum()),
            None,
            tuple(float(x) for x in right),
            tuple(float(x) for x in counts),
        )
        return SummaryValue(**base, kind="histogram", histogram=histogram, tensor=arr)
    if guess == "text" and arr.dtype == object:
        text = "\n".join(bytes(x).decode("utf-8", errors="replace") for x in arr.reshape(-1))
        return SummaryValue(**base, kind="text", text=text, tensor=arr)
    return SummaryValue(**base, kind="tensor", tensor=arr)


def _int_text(b: Any) -> int | None:
    try:
        n = int(bytes(b).decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return n if n > 0 else None


def _guess_plugin(arr: np.ndarray) -> str:
    """The plugin a tensor without metadata most likely came from, by its shape."""
    if arr.size == 1 and arr.dtype.kind == "f":
        return "scalars"
    if arr.dtype == object:
        if (
            arr.ndim == 1
            and arr.size >= 3
            and _int_text(arr[0])
            and _int_text(arr[1])
            and image_size(bytes(arr[2])) is not None
        ):
            return "images"
        if (
            arr.ndim == 2
            and arr.shape[1] == 2
            and bytes(arr.reshape(-1)[0])[:4]
            in (
                b"RIFF",
                b"fLaC",
                b"OggS",
            )
        ):
            return "audio"
        return "text"
    if arr.ndim == 2 and arr.shape[1] == 3 and arr.dtype.kind == "f":
        return "histograms"
    return ""


# --------------------------------------------------------------------------------------------
# Encoding (for the generators and tests)


def encode_event(
    wall_time: float,
    step: int = 0,
    *,
    file_version: str | None = None,
    scalars: Mapping[str, float] | None = None,
    images: Mapping[str, tuple[bytes, int, int]] | None = None,
    tensors: Mapping[str, tuple[bytes, str]] | None = None,
    log: tuple[int, str] | None = None,
) -> bytes:
    """A serialized ``Event``: a ``file_version`` event, a log message (``(level, text)``),
    or a summary of TF1 ``scalars`` (``simple_value``), TF1 ``images`` (``tag → (encoded,
    width, height)``) and TF2 ``tensors`` (``tag → (serialized TensorProto, plugin name)``,
    with the plugin in the value's metadata)."""
    msg = event_pb2.Event(wall_time=wall_time, step=step)
    if file_version is not None:
        msg.file_version = file_version
    elif log is not None:
        msg.log_message.level = log[0]
        msg.log_message.message = log[1]
    else:
        msg.summary.SetInParent()
        for tag, value in (scalars or {}).items():
            msg.summary.value.add(tag=tag, simple_value=value)
        for tag, (encoded, width, height) in (images or {}).items():
            v = msg.summary.value.add(tag=tag)
            v.image.encoded_image_string = encoded
            v.image.width, v.image.height = width, height
            v.image.colorspace = 3
        for tag, (tensor, plugin) in (tensors or {}).items():
            v = msg.summary.value.add(tag=tag)
            v.tensor.ParseFromString(tensor)
            if plugin:
                v.metadata.plugin_data.plugin_name = plugin
    return bytes(msg.SerializeToString())
