"""The plain-text form of records (``dump`` without ``--json``)."""

from __future__ import annotations

import numpy as np

from browser_app.view.text import format_record_text, hex_preview
from codec import example as ex
from codec.tensor import serialize_tensor


def test_format_record_text() -> None:
    tensor = serialize_tensor(np.zeros((2, 3), np.uint8))
    payload = ex.encode_example(
        {
            "label": ("int64", [3]),
            "score": ("float", [0.9876]),
            "name": ("bytes", ["cat"]),
            "jpeg": ("bytes", [b"\xff\xd8\xff\xe0" + b"\x00" * 10]),
            "blob": ("bytes", [bytes(range(40))]),
            "t": ("bytes", [tensor]),
            "many": ("int64", list(range(30))),
        }
    )
    text = format_record_text(ex.decode(payload))
    assert text.splitlines()[0] == "kind: example"
    assert "label (int64, 1): [3]" in text
    assert "score (float, 1): [0.9876]" in text
    assert "name (bytes, 1): ['cat']" in text
    assert "<image/jpeg: 14 bytes>" in text
    assert "<binary: 40 bytes: 00 01 02" in text
    assert "<tensor uint8 [2, 3]:" in text
    assert "… 10 more" in text
    seq = ex.decode(ex.encode_sequence_example({}, {"tok": [("bytes", [b"a"]), ("bytes", [])]}))
    text = format_record_text(seq)
    assert "feature_lists:" in text and "tok (2 steps):" in text and "[1] (bytes, 0): []" in text
    assert format_record_text(ex.decode(b"\xff")).startswith("kind: raw\nraw: <binary: 1")


def test_hex_preview() -> None:
    assert hex_preview(b"ab\x00") == "61 62 00  |ab.| (3 bytes)"
    assert hex_preview(bytes(100), limit=2) == "00 00  |..| … (100 bytes)"
