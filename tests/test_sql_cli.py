"""``tfrecord-browser sql``: the table, ``--json`` and ``--csv`` give the index's answer;
the index is built once into the cache and reused; SQL errors and refused statements exit 2
with DuckDB's message or the refusal, never a traceback."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from cli_support import run_cli

from browser_app.generators import coco, records, write
from codec.example import encode_example


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    d = tmp_path_factory.mktemp("sqlcli")
    plain = [
        encode_example({"label": ("int64", [i % 3]), "name": ("bytes", [f"r{i}".encode()])})
        for i in range(30)
    ]
    paths = [str(d / "plain.tfrecord"), str(d / "boxes.tfrecord")]
    write(paths[0], plain)
    write(paths[1], records(coco, 3, seed=4, masks=False, keypoints=False))
    return paths


def test_the_table(data: list[str], tmp_path: Path) -> None:
    got = run_cli(
        "sql",
        *data,
        "SELECT label, count(*) AS n FROM records GROUP BY 1 ORDER BY 1 NULLS LAST",
        "--executor",
        "inline",
        cache=tmp_path,
    )
    assert got.returncode == 0, got.stderr
    lines = got.stdout.splitlines()
    assert lines[0].split() == ["label", "n"]
    assert [line.split() for line in lines[2:-1]] == [
        ["0", "10"],
        ["1", "10"],
        ["2", "10"],
        ["NULL", "3"],
    ]
    assert lines[-1] == "(4 rows)"
    assert "image/encoded" in got.stderr  # said to be left out
    stored = sorted((tmp_path / "columns").glob("*.parquet"))
    assert len(stored) == 2
    before = [p.stat().st_mtime_ns for p in stored]
    again = run_cli("sql", *data, "SELECT count(*) FROM records", cache=tmp_path)
    assert again.returncode == 0 and again.stdout.splitlines()[2].strip() == "33"
    assert [p.stat().st_mtime_ns for p in stored] == before  # reused, not made again


def test_json_and_csv(data: list[str], tmp_path: Path) -> None:
    sql = "SELECT record, name, classes, bytes FROM records WHERE record >= 29 ORDER BY record"
    got = run_cli("sql", *data, sql, "--json", cache=tmp_path)
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["columns"] == ["record", "name", "classes", "bytes"]
    assert [r[:2] for r in doc["rows"]] == [[29, "r29"], [30, None], [31, None], [32, None]]
    assert all(isinstance(r[2], list) for r in doc["rows"]) and doc["rows"][1][2]
    assert doc["records"] == 33 and not doc["truncated"]
    assert "image/encoded" in doc["left_out"]
    got = run_cli("sql", *data, sql, "--csv", cache=tmp_path)
    rows = list(csv.reader(io.StringIO(got.stdout)))
    assert rows[0] == doc["columns"]
    assert [r[0] for r in rows[1:]] == ["29", "30", "31", "32"]
    assert json.loads(rows[2][2]) == doc["rows"][1][2]
    cut = run_cli("sql", *data, "SELECT record FROM records", "--limit", "5", cache=tmp_path)
    assert cut.returncode == 0
    assert cut.stdout.splitlines()[-1] == "(5 rows (cut at the limit))"
    assert "only the first 5 rows" in cut.stderr


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("SELECT nope FROM records", 'Referenced column "nope" not found'),
        ("SELEC 1", "syntax error"),
        ("COPY records TO 'out.csv'", "COPY statement is not allowed"),
        ("SELECT * FROM read_csv('/etc/passwd')", "may not read, write or attach"),
    ],
)
def test_errors_exit_2_with_the_message(
    data: list[str], tmp_path: Path, sql: str, words: str
) -> None:
    got = run_cli("sql", data[0], sql, cache=tmp_path)
    assert got.returncode == 2
    assert words in got.stderr
    assert "Traceback" not in got.stderr and not got.stdout
