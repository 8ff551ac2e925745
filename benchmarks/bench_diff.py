"""What changed between two datasets: two generated versions (``generators/versions.py``) of
50,000 records each (``--quick``: 5,000), every record a packaged photograph made small
(48 px, about 1.5 KB), its key, class, caption and numbers; B with records removed and added,
captions edited, a numeric distribution shifted, a feature new and one gone. Written once
under benchmarks/data/ and reused.

Measured: ``tfrecord-browser diff A B --json`` as a person runs it, in a fresh interpreter,
on one process and on two (wall time, records per second over both sides); and in this
process, one side's job alone (``DiffJob`` inline: statistics and digests, records per
second per core) and the comparison of the two sides' answers (``codec.diff.compare``: the
distances and the join), with the size of one side's answer pickled (what travels from the
workers: the digest table), in bytes per record."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import Row

DATA = Path(__file__).parent / "data"
GROUP = "diff"


def _pair(count: int) -> tuple[Path, Path]:
    folder = DATA / f"diff-{count}"
    a, b = folder / "v1.tfrecord", folder / "v2.tfrecord"
    if not (a.exists() and b.exists()):
        from browser_app.generators.versions import write_versions

        write_versions(folder, count, added=max(3, count // 50), max_side=48)
    return a, b


def _cli(a: Path, b: Path, how: list[str]) -> tuple[float, dict]:
    t0 = time.perf_counter()
    got = subprocess.run(
        [sys.executable, "-m", "browser_app", "diff", str(a), str(b), "--json", *how],
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - t0, json.loads(got.stdout)


def run(quick: bool) -> list[Row]:
    count = 5_000 if quick else 50_000
    a, b = _pair(count)
    rows: list[Row] = []
    one, doc1 = _cli(a, b, ["--executor", "inline"])
    two, doc2 = _cli(a, b, ["--workers", "2"])
    assert doc1 == doc2, "one process and two gave different answers"
    records = doc1["a"]["records"] + doc1["b"]["records"]
    mib = (a.stat().st_size + b.stat().st_size) / 2**20
    rows.append(
        Row(GROUP, f"diff --json, 1 process ({records:,} records, {mib:.0f} MiB)", one, "s")
    )
    rows.append(Row(GROUP, "  records per second, 1 process", records / one, "rec/s"))
    rows.append(Row(GROUP, "diff --json, 2 processes", two, "s"))
    rows.append(Row(GROUP, "  records per second, 2 processes", records / two, "rec/s"))

    from codec.diff import compare
    from codec.jobs import plan
    from codec.jobs import run as run_job
    from codec.jobs.diff import DiffJob

    t0 = time.perf_counter()
    side_a = run_job(DiffJob(), plan([str(a)]), "inline")
    t1 = time.perf_counter()
    side_b = run_job(DiffJob(), plan([str(b)]), "inline")
    rows.append(Row(GROUP, "one side's job, inline", side_a.records / (t1 - t0), "rec/s"))
    t2 = time.perf_counter()
    found = compare(side_a, side_b, categorical={"label"})
    t3 = time.perf_counter()
    assert found.join is not None and found.join.counts["changed"] > 0
    rows.append(Row(GROUP, "compare (distances and join) of the two answers", t3 - t2, "s"))
    size = len(pickle.dumps(side_a.table)) / side_a.records
    rows.append(Row(GROUP, "digest table, pickled", size, "B/record"))
    return rows
