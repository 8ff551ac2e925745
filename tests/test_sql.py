"""SQL over the columnar index: the index holds every record exactly (features equal to the
decoder's, facts equal to the app's record facts), is the same table whatever the split and
wherever its tasks ran (this process, a pool of two, a Dask cluster), is stored in the cache
and reused, made again for a changed file only; damaged records are there with NULL features;
answers equal DuckDB's over the Parquet export of the same dataset; anything but reading the
index is refused in words; a row limit and a time limit hold."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pytest
from damage import damage
from dask_support import local_scheduler

import codec
from browser_app import export as E
from browser_app.generators import coco, records, write
from browser_app.selection import record_facts
from codec.columns_index import ColumnsIndex, columns_index, stored_path
from codec.example import decode, encode_example, encode_sequence_example
from codec.jobs import Task, executor, plan, run
from codec.jobs.columns import MAX_LIST, MAX_VALUE_BYTES, ColumnsJob, ColumnsResult
from codec.sql import SqlError, SqlRefused, SqlTimeout, connect, query


def _example(i: int) -> bytes:
    f: dict[str, Any] = {
        "label": ("int64", [i % 5]),
        "score": ("float", [i / 7]),
        "name": ("bytes", [f"n{i}".encode()]),
        "weights": ("float", [0.25 * k for k in range(i % 4)]),
    }
    if i % 3 == 0:
        f["tags"] = ("bytes", [b"a", b"b", "é".encode()][: i % 4])
    if i % 4 == 0:
        f["embedding"] = ("float", [0.5] * (MAX_LIST + 1 if i % 8 == 0 else 3))
    if i % 5 == 0:
        f["blob"] = ("bytes", [bytes(MAX_VALUE_BYTES + 1 if i == 10 else 5)])
    if i % 7 == 0:
        f["raw"] = ("bytes", [b"\xff\xfe"])
    if i % 11 == 0:
        f["status"] = ("int64", [i])  # named like a fact
    if i % 13 == 0:
        f["mixed"] = ("float", [1.5]) if i % 2 else ("int64", [2])
    return encode_example(f)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Three files: plain Examples (with a sequence example and a record that is no
    Example), detection records with boxes, and a damaged copy of the first."""
    d = tmp_path_factory.mktemp("sql")
    first = [_example(i) for i in range(400)]
    first[17] = encode_sequence_example({"label": ("int64", [9])}, {"frames": [("int64", [1])]})
    first[18] = b"not an example at all"
    paths = [str(d / "a.tfrecord"), str(d / "b.tfrecord"), str(d / "c.tfrecord")]
    write(paths[0], first)
    write(paths[1], records(coco, 6, seed=2, masks=False, keypoints=False))
    raw = Path(paths[0]).read_bytes()
    hurt = damage(random.Random(5), raw, hits=6)
    Path(paths[2]).write_bytes(hurt)
    with codec.TFRecordFile(paths[2]) as f:
        assert any(info.data is None for info in f.records())  # really damaged
    return paths


def _cut(paths: list[str], cuts: list[float]) -> list[Task]:
    tasks = []
    for t in plan(paths, split=1 << 40):
        at = sorted({int(c * t.end) for c in cuts if 0 < int(c * t.end) < t.end})
        edges = [0, *at, t.end]
        tasks += [Task(t.file, t.path, a, b, whole=False) for a, b in itertools.pairwise(edges)]
    return tasks


def _same(a: ColumnsResult, b: ColumnsResult) -> None:
    assert [f.path for f in a.files] == [f.path for f in b.files]
    for x, y in zip(a.files, b.files):
        assert x.notes == y.notes
        assert x.table.equals(y.table, check_metadata=True), x.path


def _index(paths: list[str], cache: Path, **kw: Any) -> ColumnsIndex:
    files = [codec.TFRecordFile(p) for p in paths]
    try:
        return columns_index(files, cache_dir=cache, executor="inline", **kw)
    finally:
        for f in files:
            f.close()


def _rows(idx: ColumnsIndex, sql: str, **kw: Any) -> list[dict[str, Any]]:
    return query(idx, sql, **kw).table.to_pylist()  # type: ignore[no-any-return]


# -- the job -----------------------------------------------------------------------------------


@pytest.mark.parametrize("cuts", [[0.5], [0.01, 0.3, 0.31, 0.9], [0.2, 0.4, 0.6, 0.8]])
def test_any_split_gives_the_same_tables(shards: list[str], cuts: list[float]) -> None:
    job = ColumnsJob()
    whole = run(job, plan(shards, split=0), "inline")
    _same(whole, run(job, _cut(shards, cuts), "inline"))
    parts = [job.task(t) for t in _cut(shards, cuts)]
    random.Random(len(cuts)).shuffle(parts)
    _same(whole, job.merge(parts))


def test_a_pool_and_a_dask_cluster_give_the_same_tables(shards: list[str]) -> None:
    job = ColumnsJob()
    whole = run(job, plan(shards, split=0), "inline")
    tasks = _cut(shards, [0.25, 0.5, 0.75])
    _same(whole, run(job, tasks, "processes:2"))
    with (
        local_scheduler(2, threads_per_worker=1) as cluster,
        executor(f"dask:{cluster.scheduler_address}") as ex,
    ):
        _same(whole, run(job, tasks, ex))


def test_every_record_as_the_reader_and_decoder_see_it(shards: list[str], tmp_path: Path) -> None:
    idx = _index(shards, tmp_path)
    rows = _rows(idx, "SELECT * FROM records ORDER BY record", limit=10**6)
    ds = codec.TFRecordDataset(shards)
    assert len(rows) == len(ds) == idx.records
    kept = {c.feature: c for c in idx.columns}
    base = 0
    for f in ds.files:
        for info in f.records():
            row = rows[base + info.index]
            assert row["record"] == base + info.index and row["local"] == info.index
            assert row["file"] == f.path
            if info.data is None:
                assert row["status"] == "damaged"
                assert all(row[c.name] is None for c in idx.columns), row
                continue
            assert row["status"] == ("recovered" if f.is_recovered(info.index) else "intact")
            assert row["bytes"] == len(info.data)
            rec = decode(info.data)
            for name, col in kept.items():
                feat = rec.features.get(name) if rec.kind != "raw" else None
                got = row[col.name]
                if feat is None:
                    assert got is None, (name, row["record"])
                    continue
                values = [v.decode() if col.type == "string" else v for v in feat.values]
                values = [float(np.float32(v)) if col.type == "float" else v for v in values]
                if col.scalar:
                    assert got == (values[0] if values else None), (name, row["record"])
                else:
                    assert got == values, (name, row["record"])
        base += len(f)
    ds.close()


def test_what_is_left_out_and_why(shards: list[str], tmp_path: Path) -> None:
    idx = _index(shards, tmp_path)
    assert f"up to {MAX_LIST + 1} values" in idx.left_out["embedding"]
    assert f"{MAX_VALUE_BYTES + 1:,} bytes" in idx.left_out["blob"]
    assert "image/encoded" in idx.left_out  # pictures
    assert "two types in different records: float and int64" in idx.left_out["mixed"]
    cols = {c.feature: c for c in idx.columns}
    assert cols["status"].name == "feature:status"  # the fact keeps its name
    assert cols["raw"].type == "bytes" and cols["name"].type == "string"
    assert cols["label"].scalar and not cols["weights"].scalar and not cols["tags"].scalar
    assert not cols["image/object/bbox/xmin"].scalar
    described = {r["column_name"]: r["column_type"] for r in _rows(idx, "DESCRIBE records")}
    assert described["raw"] == "BLOB" and described["weights"] == "DOUBLE[]"
    assert described["label"] == "BIGINT" and described["tags"] == "VARCHAR[]"
    assert described["classes"] == "VARCHAR[]" and described["feature:status"] == "BIGINT"


def test_boxes_and_classes_are_the_record_facts(shards: list[str], tmp_path: Path) -> None:
    idx = _index(shards, tmp_path)
    rows = _rows(idx, "SELECT record, status, bytes, boxes, classes FROM records", limit=10**6)
    ds = codec.TFRecordDataset(shards)
    facts = record_facts(ds)
    ds.close()
    assert [r["boxes"] for r in rows] == facts.boxes.tolist()
    assert [r["bytes"] for r in rows] == facts.nbytes.tolist()
    assert [r["status"] for r in rows] == [
        ("intact", "recovered", "damaged")[s] for s in facts.status.tolist()
    ]
    assert sum(facts.boxes) > 0
    for key, holders in facts.classes.items():
        if " = " in key:
            continue  # a class label feature: its column answers for it
        assert [r["record"] for r in rows if key in (r["classes"] or [])] == holders.tolist()


# -- the cache ---------------------------------------------------------------------------------


def test_stored_reused_and_made_again_for_a_changed_file(shards: list[str], tmp_path: Path) -> None:
    paths = [str(tmp_path / "x.tfrecord"), shards[1]]
    write(paths[0], [_example(i) for i in range(50)])
    first = _index(paths, tmp_path / "cache")
    assert first.built == 2
    with codec.TFRecordFile(paths[0]) as f:
        assert stored_path(f, tmp_path / "cache").is_file()
    again = _index(paths, tmp_path / "cache")
    assert again.built == 0
    assert _rows(again, "SELECT count(*) AS n FROM records") == [{"n": 56}]
    write(paths[0], [_example(i) for i in range(80)])  # the same file, rewritten
    changed = _index(paths, tmp_path / "cache")
    assert changed.built == 1
    assert _rows(changed, "SELECT count(*) AS n FROM records") == [{"n": 86}]
    assert _rows(changed, "SELECT min(record) AS r FROM records WHERE file LIKE '%b.tfrecord'") == [
        {"r": 80}
    ]


# -- answers against DuckDB over the Parquet export ---------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT label, count(*) AS n FROM records GROUP BY 1 ORDER BY 1 NULLS LAST",
        "SELECT record, name FROM records WHERE label = 3 AND CAST(score AS DOUBLE) > 20"
        " ORDER BY record",
        "SELECT len(weights) AS k, count(*) AS n FROM records GROUP BY 1 ORDER BY 1 NULLS LAST",
        "SELECT t, count(*) AS n FROM records, unnest(tags) AS u(t) GROUP BY 1 ORDER BY 1",
        "SELECT sum(CAST(score AS DOUBLE)) AS s, max(name) AS m FROM records",
    ],
)
def test_answers_equal_duckdb_over_the_parquet_export(
    shards: list[str], tmp_path: Path, sql: str
) -> None:
    idx = _index(shards[:1], tmp_path)
    out = tmp_path / "export.parquet"
    E.export_table(shards[0], out)
    con = duckdb.connect()
    con.execute(
        f"CREATE VIEW records AS SELECT _index AS record, * EXCLUDE (_index)"
        f" FROM read_parquet('{out}')"
    )
    want = con.sql(sql).to_arrow_table().to_pylist()
    assert want
    assert _rows(idx, sql) == want


# -- damage ------------------------------------------------------------------------------------


def test_a_damaged_file_never_fails_the_index(tmp_path: Path, shards: list[str]) -> None:
    raw = Path(shards[0]).read_bytes()
    for seed in range(6):
        p = tmp_path / f"d{seed}.tfrecord"
        p.write_bytes(damage(random.Random(seed), raw, hits=8))
        idx = _index([str(p)], tmp_path / "cache")
        with codec.TFRecordFile(str(p)) as f:
            bad = [info.index for info in f.records() if info.data is None]
            n = len(f)
        got = _rows(idx, "SELECT record FROM records WHERE status = 'damaged'", limit=n)
        assert [r["record"] for r in got] == bad
        assert _rows(idx, "SELECT count(*) AS n FROM records") == [{"n": n}]


def test_a_file_that_cannot_be_read_is_said(tmp_path: Path, shards: list[str]) -> None:
    gone = tmp_path / "gone.tfrecord"
    gone.write_bytes(Path(shards[1]).read_bytes())
    tasks = plan([shards[1], str(gone)], split=0)
    gone.unlink()
    result = run(ColumnsJob(), tasks, "inline")
    assert [f.path for f in result.files] == [shards[1]]
    assert [p for p, _why in result.unreadable] == [str(gone)]


# -- only reading the index --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "words"),
    [
        ("COPY records TO '{tmp}/out.csv'", "COPY statement is not allowed"),
        ("COPY (SELECT 1) TO '{tmp}/out.parquet' (FORMAT parquet)", "COPY"),
        ("ATTACH '{tmp}/other.db' AS other", "ATTACH statement is not allowed"),
        ("INSTALL httpfs", "INSTALL"),
        ("LOAD httpfs", "LOAD"),
        ("SET enable_external_access = true", "SET"),
        ("CREATE TABLE t AS SELECT * FROM records", "CREATE"),
        ("SELECT 1; SELECT 2", "one statement at a time"),
        ("SELECT * FROM read_csv('/etc/passwd')", "may not read, write or attach other files"),
        ("SELECT * FROM read_parquet('http://127.0.0.1:9/x.parquet')", "other files"),
        ("SELECT * FROM read_text('{tmp}/secret.txt')", "other files"),
        ("SELECT * FROM glob('/etc/*')", "other files"),
    ],
)
def test_anything_but_reading_the_index_is_refused(
    shards: list[str], tmp_path: Path, sql: str, words: str
) -> None:
    (tmp_path / "secret.txt").write_text("secret")
    idx = _index(shards[:1], tmp_path / "cache")
    with pytest.raises(SqlRefused, match=words):
        query(idx, sql.format(tmp=tmp_path))
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.db").exists()
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize(
    "sql",
    [
        "COPY records TO '{tmp}/out.csv'",
        "ATTACH '{tmp}/other.db' AS other",
        "INSTALL httpfs",
        "LOAD httpfs",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_parquet('http://127.0.0.1:9/x.parquet')",
        "SET enable_external_access = true",
    ],
)
def test_the_connection_itself_refuses(shards: list[str], tmp_path: Path, sql: str) -> None:
    """Below the statement check, DuckDB is configured so and locked."""
    idx = _index(shards[:1], tmp_path / "cache")
    con = connect(idx)
    try:
        assert con.execute("SELECT count(*) FROM records").fetchone() == (400,)
        with pytest.raises(duckdb.Error, match=r"disabled|locked"):
            con.execute(sql.format(tmp=tmp_path)).fetchall()
    finally:
        con.close()
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.db").exists()


def test_errors_carry_duckdbs_message(shards: list[str], tmp_path: Path) -> None:
    idx = _index(shards[:1], tmp_path)
    with pytest.raises(SqlError, match='column "nope" not found'):
        query(idx, "SELECT nope FROM records")
    with pytest.raises(SqlError, match="syntax error"):
        query(idx, "SELEC 1")


def test_the_row_limit_and_the_time_limit(shards: list[str], tmp_path: Path) -> None:
    idx = _index(shards, tmp_path)
    got = query(idx, "SELECT record FROM records", limit=7)
    assert got.table.num_rows == 7 and got.truncated
    assert got.records() == list(range(7))
    whole = query(idx, "SELECT record FROM records", limit=idx.records)
    assert whole.table.num_rows == idx.records and not whole.truncated
    with pytest.raises(SqlTimeout, match=r"longer than 0\.2 s"):
        query(
            idx,
            "SELECT count(*) FROM range(10000000000) a(x), records WHERE (x * record) % 7 = 3",
            timeout=0.2,
        )


def test_review_marks_join_by_record(shards: list[str], tmp_path: Path) -> None:
    idx = _index(shards, tmp_path)
    marks = {3: "passed", 5: "flagged", 450: "flagged"}
    got = _rows(idx, "SELECT record, mark FROM records WHERE mark IS NOT NULL", marks=marks)
    assert got == [{"record": r, "mark": m} for r, m in sorted(marks.items())]
    assert _rows(idx, "SELECT count(mark) AS n FROM records") == [{"n": 0}]
