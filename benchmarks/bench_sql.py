"""SQL over the columnar index: 1,000,000 records (``--quick``: 100,000) in eight shards, the
index built on one process and on two, then queries once it exists; a count by class against
the app's own schema job on the same data (the Statistics page's per-value bars).

The records are a detection dataset without pictures (as ``infer_detections.py
--discard_image_pixels`` leaves one): ``label`` (ten classes), ``score``, ``image/filename``,
``image/source_id``, picture sizes, one to five ground-truth boxes with their class labels
and texts. Written once under benchmarks/data/ and reused.

The build is :func:`codec.columns_index.columns_index` into a fresh cache folder (every
record read, its data CRC checked, the Parquet written), wall time, in this process with the
job's pool where asked. A query's time is :func:`codec.sql.query`'s whole call (a connection
made, the view over the Parquet files, the query, the rows fetched), best of five. The
schema job is :class:`codec.jobs.SchemaJob` on two processes over the same files; both
answers must give the same count per label.

Facets and a feature sort as the app's sidebar makes them (the record facts, the sort keys of
``score``, a class facet resolved and sorted, the facets counted) from the records
(:func:`browser_app.selection.record_facts`) and from the stored index
(:func:`browser_app.selection.index_facts`) on the first shards (at least 60,000 records, past
the app's 50,000-record automatic limit), and from the index over every record; the two
answers must be equal."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import Row, best_of, sharded_dataset

DATA = Path(__file__).parent / "data"
GROUP = "sql"
SHARDS = 8
CLASSES = ("person", "bicycle", "car", "dog", "cat", "bird", "boat", "bus", "train", "cup")
GOAL_QUERY = 1.0  # seconds: a group-by over 1,000,000 records once the index exists


def _dataset(count: int) -> list[Path]:
    """``count`` records in :data:`SHARDS` files (made once)."""
    return sharded_dataset(DATA / f"sql-{count}", SHARDS, count, 29, _record)


def _record(rng: np.random.Generator, i: int) -> dict[str, tuple[str, list]]:
    g = int(rng.integers(1, 6))
    x = rng.uniform(0, 0.6, g)
    y = rng.uniform(0, 0.6, g)
    cls = rng.integers(0, len(CLASSES), g)
    return {
        "label": ("int64", [int(rng.integers(0, 10))]),
        "score": ("float", [float(rng.random())]),
        "image/height": ("int64", [480]),
        "image/width": ("int64", [640]),
        "image/filename": ("bytes", [f"{i:07d}.jpg".encode()]),
        "image/source_id": ("bytes", [str(i).encode()]),
        "image/object/bbox/xmin": ("float", x.tolist()),
        "image/object/bbox/xmax": ("float", (x + 0.3).tolist()),
        "image/object/bbox/ymin": ("float", y.tolist()),
        "image/object/bbox/ymax": ("float", (y + 0.3).tolist()),
        "image/object/class/label": ("int64", (cls + 1).tolist()),
        "image/object/class/text": ("bytes", [CLASSES[c].encode() for c in cls]),
    }


def _build(paths: list[Path], executor: str, cache: Path) -> tuple[float, object]:
    import codec
    from codec.columns_index import columns_index

    files = [codec.TFRecordFile(str(p)) for p in paths]
    try:
        for f in files:
            len(f)  # the record index, as an open source has it: not the index job's time
        t0 = time.perf_counter()
        index = columns_index(files, executor=executor, cache_dir=cache)
        return time.perf_counter() - t0, index
    finally:
        for f in files:
            f.close()


def _facets_and_sort(paths: list[Path], cache: Path, indexed: bool) -> tuple[float, object]:
    """The sidebar's facets and a descending sort by ``score`` narrowed to one class: its
    time (the files opened and their record index read beforehand) and its answer."""
    import codec
    from browser_app.selection import (
        Selection,
        facet_counts,
        feature_keys,
        index_facts,
        index_feature_keys,
        record_facts,
        resolve,
    )
    from codec.columns_index import stored_index

    sel = Selection(facets=(("class", "dog (4)"),), sort="feature:score", descending=True)
    with codec.TFRecordDataset([str(p) for p in paths]) as ds:
        len(ds)
        t0 = time.perf_counter()
        if indexed:
            index = stored_index(ds.files, cache_dir=cache)
            assert index is not None
            facts, keys = index_facts(index, ds), index_feature_keys(index, "score")
            assert facts is not None and keys is not None
        else:
            facts, keys = record_facts(ds), feature_keys(ds, "score")
        order = resolve(sel, facts, marks={}, sort_keys=keys)
        counts = facet_counts(order, facts, {})
        return time.perf_counter() - t0, (order.tolist(), counts)


def run(quick: bool) -> list[Row]:
    from codec.jobs import SchemaJob, plan
    from codec.jobs import run as run_job
    from codec.sql import query

    count = 100_000 if quick else 1_000_000
    paths = _dataset(count)
    what = f"{count:,} records"
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-sql-") as tmp:
        one, _ = _build(paths, "inline", Path(tmp) / "one")
        two, index = _build(paths, "processes:2", Path(tmp) / "two")
        rows.append(Row(GROUP, f"index build, 1 process ({what})", one, "s"))
        rows.append(Row(GROUP, "index build rate, 1 process", count / one, "records/s"))
        rows.append(Row(GROUP, f"index build, 2 processes ({what})", two, "s"))
        rows.append(Row(GROUP, "index build rate, 2 processes", count / two, "records/s"))
        size = sum(f.parquet.stat().st_size for f in index.files)  # type: ignore[attr-defined]
        rows.append(Row(GROUP, "index size on disk", size / 2**20, "MiB"))
        queries = {
            "count by label": "SELECT label, count(*) AS n FROM records GROUP BY 1 ORDER BY 1",
            "count by box class": "SELECT c, count(*) AS n FROM records, unnest(classes) AS"
            " t(c) GROUP BY 1 ORDER BY 2 DESC",
            "filter, sort, first 100": "SELECT record, score FROM records WHERE label = 3"
            " AND boxes >= 3 ORDER BY score DESC LIMIT 100",
            "all record numbers of a filter": "SELECT record FROM records WHERE score < 0.5",
        }
        answers = {}
        for name, sql in queries.items():
            answers[name] = query(index, sql, limit=count)  # type: ignore[arg-type]
            t = best_of(lambda sql=sql: query(index, sql, limit=count), 5)  # type: ignore[misc, arg-type]
            goal = GOAL_QUERY if count >= 1_000_000 else None
            rows.append(
                Row(
                    GROUP,
                    f"query: {name} ({what})",
                    t,
                    "s",
                    f"< {GOAL_QUERY:g} s" if goal else "",
                    (t < goal) if goal else None,
                )
            )
        t0 = time.perf_counter()
        schema = run_job(SchemaJob(), plan([str(p) for p in paths]), "processes:2")
        took = time.perf_counter() - t0
        rows.append(Row(GROUP, f"the app's schema job, 2 processes ({what})", took, "s"))
        bars = schema.statistics()["features"]["label"]["bars"]
        by_sql = [[r["label"], r["n"]] for r in answers["count by label"].table.to_pylist()]
        if sorted(bars) != by_sql:
            raise AssertionError(f"the schema job counts {bars}, SQL {by_sql}")
        best = min(r.value for r in rows if r.name.startswith("query: count by label"))
        rows.append(Row(GROUP, "count by label: schema job ÷ SQL over the index", took / best, "×"))
        cache = Path(tmp) / "two"
        per = -(-count // SHARDS)
        some = paths[: max(1, -(-60_000 // per))]
        part = f"{min(count, per * len(some)):,} records"
        read, want = _facets_and_sort(some, cache, indexed=False)
        fast = min(_facets_and_sort(some, cache, indexed=True)[0] for _ in range(3))
        if _facets_and_sort(some, cache, indexed=True)[1] != want:
            raise AssertionError("facets and sort from the index differ from those read")
        rows.append(Row(GROUP, f"facets + feature sort, records read ({part})", read, "s"))
        rows.append(Row(GROUP, f"facets + feature sort, from the index ({part})", fast, "s"))
        rows.append(Row(GROUP, "facets + feature sort: records read ÷ index", read / fast, "×"))
        whole = min(_facets_and_sort(paths, cache, indexed=True)[0] for _ in range(3))
        rows.append(Row(GROUP, f"facets + feature sort, from the index ({what})", whole, "s"))
    return rows
