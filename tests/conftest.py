"""Shared fixtures: golden data from TensorFlow 2.21 (tests/data, see its README) and an
isolated cache directory for every test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
EXPECTED = DATA / "expected"

INTACT_GOLDEN = [
    "basic.tfrecord",
    "basic.tfrecord.gz",
    "basic.tfrecord.zlib",
    "detection.tfrecord",
    "drift.tfrecord",
    "edge_values.tfrecord",
    "images_jpeg.tfrecord",
    "images_png.tfrecord",
    "raw_pixels.tfrecord",
    "raw_records.tfrecord",
    "sequence.tfrecord",
    "tensors.tfrecord",
]


def expected_lines(name: str) -> list[dict]:
    with open(EXPECTED / f"{name}.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def damaged_expectations() -> dict:
    return json.loads((EXPECTED / "damaged.json").read_text())


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Indexes and inflated streams go to a fresh folder, never the user's cache."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(cache))
    return cache


@pytest.fixture
def data_dir() -> Path:
    return DATA
