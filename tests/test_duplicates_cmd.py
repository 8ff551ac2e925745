"""``tfrecord-browser duplicates``: a TFDS folder searched split by split, two files with
``--across``, the text report and ``--json`` naming each record's split, file and distance,
the same bytes on every executor, an embedding, damage counted with exit code 1, and usage
errors said before anything runs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cli_support import run_cli
from PIL import Image

import codec
from browser_app.cli import main
from browser_app.generators import photo
from browser_app.generators.duplicates import Planted, write_planted
from codec.example import encode_example


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def tfds(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    return write_planted(tmp_path_factory.mktemp("tfds"), originals=48, copied=18, decoys=6)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    root = tmp_path_factory.mktemp("files")
    return write_planted(root, originals=48, copied=18, decoys=6, layout="files", seed=1)


def _groups(doc: dict) -> set[frozenset[tuple[str, int]]]:
    return {frozenset((m["source"], m["record"]) for m in g["members"]) for g in doc["groups"]}


def test_a_dataset_folder_is_searched_split_by_split(capsys, tfds: Planted) -> None:
    code, out, err = run(capsys, "duplicates", str(tfds.root), "--json", "--executor", "inline")
    assert code == 0, err
    doc = json.loads(out)
    assert [s["label"] for s in doc["sources"]] == ["train", "test"]
    assert sum(s["records"] for s in doc["sources"]) == tfds.pictures
    assert _groups(doc) == {frozenset(g) for g in tfds.groups}
    near = next(g for g in doc["groups"] if g["kind"] == "near")
    second = near["members"][1]
    assert second["distance"] == max(second["phash_bits"], second["dhash_bits"])
    assert second["file"].startswith(str(tfds.root))
    assert "planted-" in second["file"]


def test_the_text_report(capsys, tfds: Planted) -> None:
    code, out, _ = run(capsys, "duplicates", str(tfds.root), "--executor", "inline")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"{tfds.pictures} records searched ({tfds.pictures} with a")
    assert "18 groups found, 18 copies beyond the first of each" in lines[0]
    assert lines[1] == "compared by pHash and dHash within 6 bits, mirrored copies too"
    heads = [line for line in lines if line.startswith("group ")]
    assert len(heads) == 18
    assert any(h.endswith("· train, test") or h.endswith("· test, train") for h in heads)
    assert any("identical bytes" in line and "record" in line for line in lines)
    assert any("near: pHash" in line and "dHash" in line for line in lines)
    assert any("mirrored" in line for line in lines)


def test_across_reports_only_the_leaks(capsys, files: Planted) -> None:
    train, other = files.splits["train"], files.splits["eval"]
    code, out, err = run(
        capsys, "duplicates", train, "--across", other, "--json", "--executor", "inline"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["search"]["across"] is True
    leaks = {frozenset(g) for g in files.groups if g[0][0] != g[1][0]}
    assert leaks
    labels = {"train": train, "eval": other}
    want = {frozenset((labels[s], n) for s, n in g) for g in leaks}
    assert _groups(doc) == want
    for g in doc["groups"]:
        assert sorted(g["sources"]) == sorted([train, other])


def test_every_executor_prints_the_same_bytes(capsys, files: Planted) -> None:
    args = ["duplicates", *files.splits.values(), "--json"]
    outs = []
    for how in (["--executor", "inline"], ["--workers", "2"]):
        code, out, err = run(capsys, *args, *how)
        assert code == 0, err
        outs.append(out)
    assert outs[0] == outs[1]
    assert json.loads(outs[0])["groups"]


def test_threshold_zero_keeps_only_equal_hashes(capsys, files: Planted) -> None:
    code, out, _ = run(
        capsys, "duplicates", *files.splits.values(), "--json", "--threshold", "0", "--no-mirror"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["search"]["threshold_bits"] == 0 and doc["search"]["mirrored"] is False
    for g in doc["groups"]:
        for m in g["members"][1:]:
            assert m.get("distance", 0) == 0
    assert len(doc["groups"]) < len(files.groups)


def test_an_embedding_and_damage(capsys, tmp_path: Path) -> None:
    img = Image.open(io.BytesIO(photo("coffee", 64).encoded)).convert("RGB")
    recs = []
    for i in range(6):
        buf = io.BytesIO()
        img.rotate(i * 30).save(buf, "PNG")
        vec = [1.0, float(i), 0.0] if i != 4 else [1.0, 1.0001, 0.0]
        recs.append(encode_example({"image": ("bytes", [buf.getvalue()]), "emb": ("float", vec)}))
    path = tmp_path / "emb.tfrecord"
    codec.write_records(path, recs)
    raw = bytearray(path.read_bytes())
    with codec.TFRecordFile(path) as f:
        off = int(f.spans()[0][5])
    raw[off + 20] ^= 0xFF
    path.write_bytes(bytes(raw))
    code, out, _ = run(
        capsys, "duplicates", str(path), "--embedding", "emb", "--cosine", "0.001", "--json"
    )
    assert code == 1  # a damaged record was found
    doc = json.loads(out)
    assert _groups(doc) == {frozenset({(str(path), 1), (str(path), 4)})}
    assert doc["records"]["left_out"]["its data CRC fails"]["count"] == 1


def test_usage_errors(tmp_path: Path) -> None:
    got = run_cli("duplicates", str(tmp_path / "nothing*.tfrecord"), "--threshold", "40")
    assert got.returncode == 2
    assert "from 0 to 16 bits" in got.stderr
    got = run_cli("duplicates", str(tmp_path), "--cosine", "0.1")
    assert got.returncode == 2
    assert "--embedding" in got.stderr
