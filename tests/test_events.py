"""codec.events (TensorBoard event files) and codec.snapshot (tf.data.Dataset.save folders):
TensorFlow's field numbers checked on hand-built wire bytes, the .proto sources against the
descriptors, junk refused, and the generators' folders read back."""

from __future__ import annotations

import random
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from browser_app.generators import events as gen
from codec import TFRecordFile
from codec import example as ex
from codec.events import (
    SummaryValue,
    decode_event,
    encode_event,
    is_event_file,
    looks_like_event_file,
)
from codec.protos import POOL, event_pb2, snapshot_pb2
from codec.snapshot import (
    decode_element,
    element_of,
    flatten_spec,
    is_snapshot_folder,
    open_snapshot,
)
from codec.tensor import serialize_tensor
from codec.values import sniff_image
from codec.writer import write_records

# -- the .proto sources describe the descriptors ----------------------------------------------

_FIELD = re.compile(
    r"^\s*(?:repeated\s+)?(map<\s*\w+\s*,\s*[\w.]+\s*>|[\w.]+)\s+(\w+)\s*=\s*(\d+)", re.M
)


def _proto_fields(path: Path) -> tuple[str, dict[str, dict[str, int]]]:
    package = ""
    out: dict[str, dict[str, int]] = {}
    stack: list[tuple[str, str]] = []
    for line in path.read_text().splitlines():
        line = line.split("//")[0]
        if m := re.match(r"\s*package\s+([\w.]+);", line):
            package = m.group(1)
            continue
        m = re.match(r"\s*(message|enum|oneof)\s+(\w+)\s*{\s*(})?", line)
        if m:
            if m.group(1) == "message":
                out[".".join([*(n for k, n in stack if k == "message"), m.group(2)])] = {}
            if not m.group(3):
                stack.append((m.group(1), m.group(2)))
            continue
        if line.strip() == "}":
            stack.pop()
            continue
        f = _FIELD.match(line)
        if f and stack and stack[-1][0] != "enum" and f.group(1) != "reserved":
            owner = ".".join(n for k, n in stack if k == "message")
            out[owner][f.group(2)] = int(f.group(3))
    return package, out


@pytest.mark.parametrize("name", ["event", "snapshot", "struct"])
def test_proto_sources_match_descriptors(name):
    path = Path(event_pb2.__file__).with_name(f"{name}.proto")
    package, declared = _proto_fields(path)
    assert declared and package
    for message, fields in declared.items():
        desc = POOL.FindMessageTypeByName(f"{package}.{message}")
        assert {f.name: f.number for f in desc.fields} == fields, message


# -- TensorFlow's field numbers, on bytes built by hand ---------------------------------------


def ld(field: int, body: bytes) -> bytes:
    """A length-delimited field (a message, string or bytes): key, varint length, body."""
    n, length = len(body), b""
    while True:
        length += bytes([(n & 0x7F) | (0x80 if n > 0x7F else 0)])
        n >>= 7
        if not n:
            break
    return bytes([field << 3 | 2]) + length + body


def wall(t: float) -> bytes:
    return b"\x09" + struct.pack("<d", t)  # wall_time = 1, double


def test_file_version_event_by_hand():
    payload = wall(1.5e9) + b"\x10\x07" + ld(3, b"brain.Event:2")  # step = 2, file_version = 3
    event = decode_event(payload)
    assert event is not None and event.what == "file_version"
    assert (event.wall_time, event.step, event.file_version) == (1.5e9, 7, "brain.Event:2")
    assert event.when == "2017-07-14 02:40:00.000 UTC"
    assert is_event_file("anything.bin", payload)


def test_summary_values_by_hand():
    scalar = ld(1, b"loss") + b"\x15" + struct.pack("<f", 0.25)  # tag = 1, simple_value = 2
    png = b"\x89PNG\r\n\x1a\n" + bytes(8) + b"IHDR" + struct.pack(">II", 4, 3)
    image = ld(4, b"\x08\x03\x10\x04\x18\x03" + ld(4, png))  # height 1, width 2, colourspace 3
    value_image = ld(1, b"pic") + image
    histo = ld(
        5,  # Summary.Value.histo = 5: min 1, max 2, num 3, sum 4, bucket_limit 6, bucket 7
        b"\x09"
        + struct.pack("<d", -1.0)
        + b"\x11"
        + struct.pack("<d", 2.0)
        + b"\x19"
        + struct.pack("<d", 10.0)
        + b"\x21"
        + struct.pack("<d", 3.0)
        + ld(6, struct.pack("<2d", 0.0, 2.0))
        + ld(7, struct.pack("<2d", 4.0, 6.0)),
    )
    value_histo = ld(1, b"w") + histo
    tensor = ld(8, b"\x08\x01\x12\x00" + b"\x2d" + struct.pack("<f", 0.5))  # float32 scalar
    metadata = ld(9, ld(1, ld(1, b"scalars")))  # metadata.plugin_data.plugin_name
    value_tensor = ld(1, b"acc") + metadata + tensor
    summary = ld(5, ld(1, scalar) + ld(1, value_image) + ld(1, value_histo) + ld(1, value_tensor))
    event = decode_event(wall(2.0e9) + b"\x10\x64" + summary)
    assert event is not None and event.what == "summary" and event.step == 100
    loss, pic, w, acc = event.values
    assert loss == SummaryValue("loss", "scalar", scalar=0.25)
    assert (pic.kind, pic.width, pic.height, pic.images) == ("image", 4, 3, (png,))
    assert w.kind == "histogram" and w.histogram is not None
    assert (w.histogram.min, w.histogram.max, w.histogram.num) == (-1.0, 2.0, 10.0)
    assert w.histogram.limits == (0.0, 2.0) and w.histogram.counts == (4.0, 6.0)
    assert (acc.kind, acc.plugin, acc.scalar, acc.dtype, acc.shape) == (
        "scalar",
        "scalars",
        0.5,
        "float32",
        (),
    )
    assert event.scalars == {"loss": 0.25, "acc": 0.5}
    assert "loss = 0.25" in event.text() and "pic: image 4×3" in event.text()


def test_log_message_and_session_log_by_hand():
    log = decode_event(wall(1e9) + ld(6, b"\x08\x1e" + ld(2, b"disk full")))  # WARN = 30
    assert (log.what, log.level, log.message) == ("log_message", "warn", "disk full")
    session = decode_event(wall(1e9) + ld(7, b"\x08\x03" + ld(2, b"/ckpt/model-10")))
    assert (session.what, session.status, session.message) == (
        "session_log",
        "checkpoint",
        "/ckpt/model-10",
    )
    graph = decode_event(wall(1e9) + ld(4, b"\x0a\x00"))
    assert graph.what == "graph_def" and graph.size == 2 and "graph def (2 bytes)" in graph.text()
    meta = decode_event(wall(1e9) + ld(8, ld(1, b"step_3") + ld(2, b"xyz")))
    assert (meta.what, meta.tag, meta.size) == ("tagged_run_metadata", "step_3", 3)


@pytest.mark.parametrize(
    "payload",
    [
        b"",
        b"hello, this is text",
        b"\x00" * 16,
        ex.encode_example({"label": ("int64", [1])}),
        ex.encode_sequence_example({}, {"f": [("float", [1.0])]}),
        serialize_tensor(np.arange(4, dtype=np.float32)),
        b"\x10\x05",  # a step and no wall time
        wall(-1.0),
        wall(float("nan")),
        wall(1e9) + ld(3, b"\xff\xfe"),  # a file version that is not UTF-8
        wall(1e9) + b"\x58\x01",  # field 11: not an Event's
        wall(1e9) + ld(5, b"\x12\x00"),  # a Summary with a field it does not have
        b"\x09\x00\x00",  # cut inside the double
    ],
)
def test_junk_is_not_an_event(payload):
    assert decode_event(payload) is None
    assert not is_event_file("events.out.tfevents.1.host", payload)


def test_mutated_events_never_raise():
    png = gen._png(np.zeros((4, 4, 3), dtype=np.uint8))
    good = encode_event(
        1e9,
        3,
        scalars={"a": 1.0},
        images={"i": (png, 4, 4)},
        tensors={"t": (serialize_tensor(np.ones((2, 3), np.float64)), "histograms")},
    )
    rng = random.Random(26)
    decoded = 0
    for _ in range(3000):
        b = bytearray(good)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        cut = bytes(b[: rng.randint(0, len(b))]) if rng.random() < 0.3 else bytes(b)
        event = decode_event(cut)
        decoded += event is not None
        if event is not None:
            event.text()
            event.to_json()
    assert decoded > 100


def test_a_summary_tensor_declaring_a_huge_shape_is_a_problem_not_an_allocation():
    from codec.protos import tensor_pb2

    proto = tensor_pb2.TensorProto(dtype=1, float_val=[1.0])
    proto.tensor_shape.dim.add(size=1 << 40)
    event = decode_event(encode_event(1e9, tensors={"big": (proto.SerializeToString(), "")}))
    (value,) = event.values
    assert value.kind == "tensor" and value.tensor is None
    assert "bytes, more than" in (value.problem or "")


def test_plugins_are_learned_from_a_tags_first_value():
    first = encode_event(1e9, 0, tensors={"x": (serialize_tensor(np.float64(2.0)), "scalars")})
    later = encode_event(1e9, 1, tensors={"x": (serialize_tensor(np.int32(7)), "")})
    plugins: dict[str, str] = {}
    assert decode_event(first, plugins).values[0].plugin == "scalars"
    assert plugins == {"x": "scalars"}
    value = decode_event(later, plugins).values[0]
    assert (value.kind, value.scalar, value.plugin) == ("scalar", 7.0, "scalars")
    alone = decode_event(later).values[0]  # an int32 without its metadata: a tensor
    assert alone.kind == "tensor" and alone.dtype == "int32"


def test_event_file_names():
    assert looks_like_event_file("logs/train/events.out.tfevents.1717171717.host.42.0.v2")
    assert looks_like_event_file("events.out.tfevents.1717171717.host")
    assert not looks_like_event_file("events.out.tfevents/other")
    assert not looks_like_event_file("my_events.out.tfevents.1")
    summary = encode_event(1e9, scalars={"a": 1.0})
    assert is_event_file("events.out.tfevents.1.h", summary)
    assert not is_event_file("data.tfrecord", summary)  # no file version, no event name


def test_tensorboard_folder(tmp_path):
    files = gen.write_tensorboard(tmp_path / "logs", steps=12)
    names = sorted(p.relative_to(tmp_path / "logs").as_posix() for p in files)
    assert names[0].startswith("events.out.tfevents.") and names[1].startswith("train/")
    for path in files:
        plugins: dict[str, str] = {}
        with TFRecordFile(path) as f:
            payloads = list(f)
        assert is_event_file(path.name, payloads[0])
        events = [decode_event(p, plugins) for p in payloads]
        assert all(e is not None for e in events)
        assert events[0].file_version == "brain.Event:2"
        values = [v for e in events for v in e.values]
        kinds = {v.kind for v in values}
        scalars = [v for v in values if v.kind == "scalar"]
        assert len(scalars) >= 12
        if "train" in path.parts:
            assert kinds == {"scalar", "histogram", "image", "text"}
            assert set(plugins.values()) == {"scalars", "histograms", "images", "text"}
            # TensorFlow's writer: the plugin only on a tag's first value
            with_metadata = [
                v for p in payloads for v in event_pb2.Event.FromString(p).summary.value
            ]
            tagged = [v.tag for v in with_metadata if v.HasField("metadata")]
            assert len(tagged) == len(set(tagged))
        if "train" in path.parts or path.parent.name == "logs":
            images = [v for v in values if v.kind == "image"]
            assert images and all(sniff_image(v.images[0]) == "png" for v in images)
            assert (images[0].width, images[0].height) == (64, 64)
    top = [decode_event(p) for p in TFRecordFile(files[-1])]
    assert top[1].what == "log_message" and top[1].message == "training started"


# -- tf.data.Dataset.save ---------------------------------------------------------------------


def test_saved_dataset_folder(tmp_path):
    folder = gen.write_saved_dataset(tmp_path / "saved", count=7, shards=3)
    assert is_snapshot_folder(folder) and not is_snapshot_folder(tmp_path)
    snap = open_snapshot(folder)
    assert snap.problems == ()
    assert (snap.version, snap.num_elements, snap.finalized) == (2, 7, True)
    assert snap.dtypes == ("uint8", "int64", "string") and snap.width == 3
    assert snap.component_names() == ["image", "label", "name"]
    assert [c.shape for c in snap.components] == [(32, 32, 3), (), ()]
    rel = [Path(p).relative_to(folder).as_posix() for p in snap.shards]
    assert rel == [f"{gen._RUN_ID}/{k:08d}.shard/00000000.snapshot" for k in range(3)]
    elements = []
    for shard in snap.shards:
        with TFRecordFile(shard) as f:
            payloads = list(f)
        assert len(payloads) % snap.width == 0
        for start in range(0, len(payloads), snap.width):
            assert element_of(start + 2, snap.width) == (start // 3, 2)
            elements.append(decode_element(payloads[start : start + 3], snap.component_names()))
    assert len(elements) == 7
    for element in elements:
        image, label, name = element
        assert image.value is not None and image.value.shape == (32, 32, 3)
        assert image.value.dtype == np.uint8 and image.value.std() > 5  # a photograph
        assert label.value is not None and label.value.shape == () and label.dtype == "int64"
        assert name.value is not None and name.value.item().decode().count("-") == 1


def test_saved_dataset_gzip(tmp_path):
    folder = gen.write_saved_dataset(tmp_path / "gz", count=3, shards=1, compression="gzip")
    snap = open_snapshot(folder)
    with TFRecordFile(snap.shards[0]) as f:
        assert f.compression == "gzip" and len(list(f)) == 9


def test_snapshot_problems(tmp_path):
    folder = gen.write_saved_dataset(tmp_path / "s", count=2, shards=1)
    (folder / "snapshot.metadata").write_bytes(b"\xff\xff\xff")
    (folder / "dataset_spec.pb").write_bytes(b"\x0a\xff")
    snap = open_snapshot(folder)
    assert any("snapshot.metadata cannot be read" in p for p in snap.problems)
    assert any("dataset_spec.pb cannot be read" in p for p in snap.problems)
    assert len(snap.shards) == 1 and snap.width == 1
    (folder / "snapshot.metadata").unlink()
    (folder / "dataset_spec.pb").unlink()
    assert "no snapshot.metadata" in open_snapshot(folder).problems[0]
    old = snapshot_pb2.SnapshotMetadataRecord(run_id="99", version=1, finalized=False)
    (folder / "snapshot.metadata").write_bytes(old.SerializeToString())
    problems = " / ".join(open_snapshot(folder).problems)
    assert "version 1" in problems and "not finalized" in problems
    assert "run 99 has no folder" in problems
    (folder / "snapshot.metadata").write_bytes(b"\x00" * (5 << 20))
    assert "cannot be read" in open_snapshot(folder).problems[0]
    with pytest.raises(FileNotFoundError):
        open_snapshot(tmp_path / "missing")


def test_element_spec_flattening():
    v = snapshot_pb2.StructuredValue()
    fields = v.dict_value.fields
    inner = fields["features"].tuple_value
    a = inner.values.add().tensor_spec_value
    a.dtype, a.shape.unknown_rank = 1, True
    b = inner.values.add().tensor_spec_value
    b.dtype = 9
    b.shape.dim.add(size=-1)
    ragged = fields["tokens"].type_spec_value
    ragged.type_spec_class = 3
    state = ragged.type_state.tuple_value
    state.values.add().tensor_shape_value.dim.add(size=-1)
    state.values.add().tensor_dtype_value = 9
    nt = fields["a_pair"].named_tuple_value
    pair = nt.values.add()
    pair.key = "x"
    pair.value.bounded_tensor_spec_value.dtype = 2
    fields["plain"].int64_value = 5  # not a component
    got = flatten_spec(v)
    assert [(c.path, c.dtype, c.shape, c.kind) for c in got] == [
        ("a_pair/x", "float64", (), "tensor"),
        ("features/0", "float32", None, "tensor"),
        ("features/1", "int64", (None,), "tensor"),
        ("tokens", "int64", (None,), "ragged"),
    ]
    lone = snapshot_pb2.StructuredValue()
    lone.tensor_spec_value.dtype = 4
    assert flatten_spec(lone)[0].path == "element"


def test_elements_that_do_not_decode():
    from codec.protos import tensor_pb2

    variant = tensor_pb2.TensorProto(dtype=21)
    variant.tensor_shape.SetInParent()
    parts = decode_element([variant.SerializeToString(), b"junk", serialize_tensor(np.int8(3))])
    assert parts[0].dtype == "variant" and parts[0].value is None
    assert "variant" in (parts[0].problem or "")
    assert parts[1].value is None and parts[1].problem
    assert parts[2].name == "2" and parts[2].value == 3


def test_a_snapshot_file_is_tfrecord_framing(tmp_path):
    path = tmp_path / "00000000.snapshot"
    write_records(path, [serialize_tensor(np.float32(1.5))])
    with TFRecordFile(path) as f:
        assert decode_element(list(f))[0].value == np.float32(1.5)
