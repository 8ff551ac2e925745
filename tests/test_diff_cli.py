"""``tfrecord-browser diff A B`` as a person runs it: the planted changes of two generated
versions in the text report and in ``--json``; the same JSON on every executor; ``--key``;
class names from ``--names``; damage said with exit code 1; a missing input is exit code 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import run_cli

from browser_app.cli import main
from browser_app.generators.versions import Versions, write_versions


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    return write_versions(tmp_path_factory.mktemp("cli-versions"), 120, added=8, max_side=32)


def test_the_json_says_every_planted_change(capsys, versions: Versions) -> None:
    code, out, err = run(
        capsys, "diff", str(versions.a), str(versions.b), "--json", "--executor", "inline"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["a"]["records"] == 120 and doc["b"]["records"] == len(versions.records_b)
    j = doc["join"]
    assert j["key"] == "image/source_id"
    assert j["added"] == versions.added and j["removed"] == versions.removed
    assert [[c["a"], c["b"]] for c in j["changed"]] == [list(p) for p in versions.pairs]
    edited = [[c["a"], c["b"]] for c in j["changed"] if "caption" in c["features"]]
    assert edited == [list(p) for p in versions.edited]
    assert j["duplicates_b"] == [{"key": "000120", "records": versions.duplicate_b}]
    rows = {f["feature"]: f for f in doc["features"]}
    assert rows["legacy/flag"]["status"] == "vanished"
    assert rows["image/quality"]["status"] == "new"
    assert rows["label"]["new_values"] == [["5", 4]]  # label is a class feature by its name
    assert rows["label"]["kind"] == "categorical"
    assert rows["brightness"]["js"] > 0.3


def test_the_report(capsys, versions: Versions) -> None:
    code, out, _ = run(capsys, "diff", str(versions.a), str(versions.b), "--executor", "inline")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"A: {versions.a}: 120 records"
    head = next(i for i, line in enumerate(lines) if line.startswith("feature "))
    assert lines[head].split()[:7] == ["feature", "status", "type", "in", "A", "in", "B"]
    row = {line.split()[0]: line for line in lines[head + 2 :] if line.strip()}
    assert "gone from B" in row["legacy/flag"]
    assert "new in B" in row["image/quality"]
    assert "5: 0.0% → " in row["label"]
    assert "label: new classes 5 (4)" in lines
    assert f"  removed (in A only): {len(versions.removed)} records: 3, 13, 23," in out
    assert f"    caption: {len(versions.edited)} records" in lines
    assert "  duplicate keys in B: 1 key held by 2 records (left out of the counts above)" in lines


def test_every_executor_prints_the_same_json(capsys, versions: Versions) -> None:
    outs = []
    for how in (["--executor", "inline"], ["--workers", "2"]):
        code, out, err = run(capsys, "diff", str(versions.a), str(versions.b), "--json", *how)
        assert code == 0, err
        outs.append(out)
    assert outs[0] == outs[1]


def test_key_and_names(capsys, versions: Versions, tmp_path: Path) -> None:
    names = tmp_path / "label.labels.txt"
    names.write_text("\n".join(["astronaut", "coffee", "cat", "rocket", "motorcycle", "zebra"]))
    code, out, _ = run(
        capsys,
        "diff",
        str(versions.a),
        str(versions.b),
        "--key",
        "image/filename",
        "--names",
        f"label={names}",
        "--executor",
        "inline",
    )
    assert code == 0
    assert "records joined by image/filename:" in out
    assert "label: new classes zebra (5) (4)" in out
    code, out, _ = run(
        capsys, "diff", str(versions.a), str(versions.b), "--key", "nope", "--executor", "inline"
    )
    assert code == 0
    assert "no record of A or B has the key feature nope" in out


def test_damage_is_said_and_exit_code_1(capsys, versions: Versions, tmp_path: Path) -> None:
    raw = bytearray(versions.b.read_bytes())
    raw[len(raw) // 2] ^= 0x01
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(raw))
    code, out, _ = run(capsys, "diff", str(versions.a), str(bad), "--executor", "inline")
    assert code == 1
    assert "1 damaged record left out" in out.splitlines()[1]
    assert "DAMAGED in B (left out): " in out


def test_a_missing_input_in_a_fresh_process(tmp_path: Path, versions: Versions) -> None:
    got = run_cli("diff", str(versions.a), str(tmp_path / "nothing.tfrecord"))
    assert got.returncode == 2, got.stderr
    assert "nothing.tfrecord" in got.stderr
