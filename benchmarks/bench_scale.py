"""Scale-out: dataset jobs on every core and on Dask, and an estimate for a cluster.

1. One file of 1,000,000 records of 100 B verified (index and every CRC) as a job of byte
   ranges over the local process pool, each run a fresh interpreter, with the file's page
   cache dropped before each cold run; against the ``tfrecords`` package's C++ iterator
   (which checks both CRCs of every record and stops at the first bad one) in the same run,
   interleaved, and ``TFRecordFile.verify()`` in one process for reference.
2. Large records (4 MiB): the verify job's GB/s against raw ``crc32c`` over the same mapped
   bytes, on as many threads as the pool has processes (and on one).
3. 64 shards of Examples: verify and schema on one core (this process) and on the process
   pool (every core); the speed-up.
4. The same verify job on a Dask LocalCluster of as many single-threaded workers.
5. An estimate, from figures measured here (seconds per MB of verify and of schema on one
   core, Dask's overhead per task, the client's merge time per part), of the wall time of
   2,000 shards of 300 MB on 10, 100 and 1,000 workers, and where it stops scaling. These
   rows say "simulation (estimate, not measured)"; the model is printed below the table.

This machine has 2 cores shared with other work: figures move by +-40 % from run to run, so
every comparison is made between figures measured in this run, interleaved, best of several.
Files are generated with the project's own writer under benchmarks/data/ and reused.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import crc32c
import numpy as np

from benchmarks.common import Row

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
GROUP = "scale"
SIM = "simulation (estimate, not measured)"
CORES = os.cpu_count() or 1

# The cluster the estimate is for.
SHARDS, SHARD_MB = 2_000, 300
WORKERS = (10, 100, 1_000)
STORAGE_MB_S = 100.0  # assumed read bandwidth per worker (object storage); not measured here


# -- data --------------------------------------------------------------------------------------


def _small_file(count: int) -> Path:
    """``count`` records of 100 bytes (contents vary, so the CRCs do)."""
    path = DATA / f"scale-{count}x100.tfrecord"
    if path.exists() and path.stat().st_size == count * 116:
        return path
    from codec import TFRecordWriter

    DATA.mkdir(parents=True, exist_ok=True)
    block = os.urandom(100 + 4096)
    with TFRecordWriter(path) as w:
        for i in range(count):
            s = (i * 7919) % 4096
            w.write(block[s : s + 100])
    return path


def _large_file(count: int) -> Path:
    """``count`` records of 4 MiB."""
    size = 4 << 20
    path = DATA / f"scale-{count}x4MiB.tfrecord"
    if path.exists() and path.stat().st_size == count * (size + 16):
        return path
    from codec import TFRecordWriter

    DATA.mkdir(parents=True, exist_ok=True)
    block = os.urandom(size + (1 << 20))
    with TFRecordWriter(path) as w:
        for i in range(count):
            s = (i * 104_729) % (1 << 20)
            w.write(block[s : s + size])
    return path


def _shards(count: int, per_shard: int) -> list[Path]:
    """``count`` shards of ``per_shard`` Examples of ~320 B: a label, a score, a 16-float
    embedding, a name and a 64-256 byte blob (each shard the same records, rotated)."""
    folder = DATA / f"scale-shards-{count}x{per_shard}"
    paths = [folder / f"part-{k:05d}-of-{count:05d}.tfrecord" for k in range(count)]
    if all(p.exists() for p in paths):
        return paths
    from codec import write_records
    from codec.example import encode_example

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    records = [
        encode_example(
            {
                "label": ("int64", [int(rng.integers(10))]),
                "score": ("float", [float(rng.random())]),
                "embedding": ("float", rng.standard_normal(16).astype(np.float32).tolist()),
                "name": ("bytes", [b"item-%d" % i]),
                "blob": ("bytes", [rng.bytes(int(rng.integers(64, 256)))]),
            }
        )
        for i in range(per_shard)
    ]
    for k, path in enumerate(paths):
        cut = (k * 7919) % per_shard
        write_records(path, records[cut:] + records[:cut])
    return paths


# -- helpers -----------------------------------------------------------------------------------


def _evict(path: Path) -> None:
    """Drop the file's pages from the page cache (no root needed: they are clean)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _resident_mb(path: Path) -> float | None:
    """MB of the file in the page cache (util-linux ``fincore``), if it can be told."""
    if not shutil.which("fincore"):
        return None
    out = subprocess.run(
        ["fincore", "--bytes", "--noheadings", "--output", "RES", str(path)],
        capture_output=True,
        text=True,
    )
    try:
        return int(out.stdout.split()[0]) / 1e6
    except (IndexError, ValueError):
        return None


def _child(code: str) -> tuple[float, dict[str, Any]]:
    """Run ``code`` in a fresh interpreter; its wall time seen from here (start-up and
    imports included) and the JSON it printed last."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wall = time.perf_counter() - t0
    if out.returncode:
        raise RuntimeError(f"benchmark child failed:\n{out.stderr[-3000:]}")
    return wall, json.loads(out.stdout.strip().splitlines()[-1])


def _best(runs: dict[str, list[float]], key: str) -> float:
    return min(runs[key])


def _load() -> float:
    return os.getloadavg()[0]


def _fresh_cache() -> None:
    """An empty index cache, so every run indexes its files (no saved index is used)."""
    folder = Path(os.environ["TFRECORD_BROWSER_CACHE"])
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)


# -- executors: the job model's own (codec.jobs.run) when present, else driven here -------------


def _have_run() -> bool:
    try:
        import codec.jobs.executors
        import codec.jobs.run  # noqa: F401
    except ImportError:
        return False
    return True


# The child's verify job: plan byte ranges, run the tasks on the pool, merge.
_POOL_VERIFY = """
import json, os, time
t0 = time.perf_counter()
from codec.jobs import DEFAULT_SPLIT, merge_verify, plan, verify_task
try:
    from codec.jobs import VerifyJob
    from codec.jobs.executors import executor
    from codec.jobs.run import run
except ImportError:
    run = None
t1 = time.perf_counter()
size = os.path.getsize({path!r})
tasks = plan([{path!r}], split=min(DEFAULT_SPLIT, -(-size // {cores})))  # a range per core at least
if run is not None:
    with executor("processes") as ex:
        t2 = time.perf_counter()
        (report,) = run(VerifyJob(), tasks, ex)
        t3 = t4 = time.perf_counter()
else:
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor({cores}) as pool:
        t2 = time.perf_counter()
        parts = list(pool.map(verify_task, tasks))
        t3 = time.perf_counter()
    (report,) = merge_verify(parts)
    t4 = time.perf_counter()
print(json.dumps({{"records": report.records, "problems": len(report.problems),
    "tasks": len(tasks), "import": t1 - t0, "start": t2 - t1, "work": t3 - t2,
    "merge": t4 - t3, "inside": t4 - t0}}))
"""

_SINGLE_VERIFY = """
import json
from codec import TFRecordFile
with TFRecordFile({path!r}, use_cache=False) as f:
    report = f.verify()
print(json.dumps({{"records": report.records, "problems": len(report.problems)}}))
"""

_TFRECORDS = """
import json
import tfrecords
n = 0
for _ in tfrecords.tf_record_iterator({path!r}):
    n += 1
print(json.dumps({{"records": n, "problems": 0}}))
"""

_IMPORT_ONLY = """
import json, time
t0 = time.perf_counter()
import {module}
print(json.dumps({{"import": time.perf_counter() - t0}}))
"""


def _tfrecords_checks_crcs(folder: Path) -> bool:
    """Whether the ``tfrecords`` iterator refuses a record whose data CRC fails (so the
    comparison is with a reader that checks what ours checks)."""
    import tfrecords

    from codec import write_records

    path = folder / "flipped.tfrecord"
    write_records(path, [b"x" * 100] * 4)
    raw = bytearray(path.read_bytes())
    raw[116 * 2 + 40] ^= 1
    path.write_bytes(bytes(raw))
    try:
        sum(1 for _ in tfrecords.tf_record_iterator(str(path)))
    except Exception:
        return True
    return False


# -- 1. one file of small records ----------------------------------------------------------------


def _bench_small(quick: bool, rows: list[Row], found: dict[str, float]) -> None:
    count = 250_000 if quick else 1_000_000
    repeat = 2 if quick else 5
    path = _small_file(count)
    mb = path.stat().st_size / 1e6
    kinds = {
        "ours": _POOL_VERIFY.format(path=str(path), cores=CORES),
        "tfrecords": _TFRECORDS.format(path=str(path)),
        "single": _SINGLE_VERIFY.format(path=str(path)),
    }
    runs: dict[str, list[float]] = {}
    inner: dict[str, list[dict[str, Any]]] = {}
    resident: list[float] = []
    for _ in range(repeat):
        for kind, code in kinds.items():
            for cache in ("cold", "warm"):
                if cache == "cold":
                    _evict(path)
                    left = _resident_mb(path)
                    if left is not None:
                        resident.append(left)
                wall, out = _child(code)
                if out["records"] != count or out["problems"]:
                    raise RuntimeError(f"{kind} read {out['records']} of {count} records")
                runs.setdefault(f"{kind} {cache}", []).append(wall)
                if kind == "ours":
                    inner.setdefault(cache, []).append(out)
    imports = {
        m: min(_child(_IMPORT_ONLY.format(module=m))[1]["import"] for _ in range(3))
        for m in ("codec.jobs", "tfrecords")
    }
    rate = {k: count / _best(runs, k) / 1e6 for k in runs}
    n = f"{count:,} x 100 B"
    if resident:
        rows.append(Row(GROUP, "page cache left after eviction (max)", max(resident), "MB"))
    for cache in ("cold", "warm"):
        theirs, ours = rate[f"tfrecords {cache}"], rate[f"ours {cache}"]
        rows.append(Row(GROUP, f"tfrecords C++ iterator, {n}, {cache}", theirs, "M rec/s"))
        rows.append(
            Row(GROUP, f"verify job, {CORES} processes, byte ranges, {cache}", ours, "M rec/s")
        )
        rows.append(
            Row(GROUP, f"  ours / tfrecords, {cache}", ours / theirs, "x", ">= 1", ours >= theirs)
        )
        rows.append(
            Row(
                GROUP,
                f"TFRecordFile.verify(), 1 process, {cache}",
                rate[f"single {cache}"],
                "M rec/s",
            )
        )
    best = min(inner["warm"], key=lambda o: o["inside"])
    rows.append(
        Row(
            GROUP,
            f"  of the job's best warm run ({best['tasks']} tasks): import",
            best["import"],
            "s",
        )
    )
    for key in ("start", "work", "merge"):
        rows.append(Row(GROUP, f"    {key}", best[key], "s"))
    rows.append(Row(GROUP, "  interpreter + import codec.jobs (best)", imports["codec.jobs"], "s"))
    rows.append(Row(GROUP, "  interpreter + import tfrecords (best)", imports["tfrecords"], "s"))
    found["range_merge_s_per_part"] = best["merge"] / best["tasks"]
    found["range_part_mb"] = mb / best["tasks"]


# -- 2. large records -------------------------------------------------------------------------


def _verify_job(paths: Sequence[Path], workers: int, split: int | None = None) -> list[Any]:
    """The verify job over ``paths``: in this process (``workers == 0``) or on a pool."""
    from codec.jobs import merge_verify, plan, verify_task

    kw = {} if split is None else {"split": split}
    tasks = plan([str(p) for p in paths], **kw)
    if workers == 0:
        return merge_verify([verify_task(t) for t in tasks])
    if _have_run():
        from codec.jobs.executors import executor  # type: ignore[import-not-found]
        from codec.jobs.run import run  # type: ignore[import-not-found]

        from codec.jobs import VerifyJob  # type: ignore[attr-defined]

        with executor(f"processes:{workers}") as ex:
            return list(run(VerifyJob(), tasks, ex))
    with ProcessPoolExecutor(workers) as pool:
        return merge_verify(list(pool.map(verify_task, tasks)))


def _raw_crc(path: Path, threads: int) -> None:
    """crc32c of the whole file, mapped afresh (as a verify maps it), in ``threads`` equal
    pieces at once."""
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        if threads == 1:
            crc32c.crc32c(mm)
            return
        n = len(mm)
        with memoryview(mm) as mv, ThreadPoolExecutor(threads) as pool:
            pieces = [mv[n * i // threads : n * (i + 1) // threads] for i in range(threads)]
            list(pool.map(crc32c.crc32c, pieces))
            for p in pieces:
                p.release()


def _bench_large(quick: bool, rows: list[Row]) -> None:
    from codec import TFRecordFile

    count = 64 if quick else 256
    repeat = 3 if quick else 4
    path = _large_file(count)
    gb = path.stat().st_size / 1e9
    times: dict[str, list[float]] = {}

    def timed(name: str, fn: Callable[[], object]) -> None:
        t0 = time.perf_counter()
        fn()
        times.setdefault(name, []).append(time.perf_counter() - t0)

    def reader() -> None:
        with TFRecordFile(path, use_cache=False) as f:
            f.verify()

    _raw_crc(path, 1)  # the page cache holds the file: warm figures
    for _ in range(repeat):
        _fresh_cache()
        timed("job", lambda: _verify_job([path], CORES))
        timed("raw", lambda: _raw_crc(path, CORES))
        timed("raw1", lambda: _raw_crc(path, 1))
        timed("reader", reader)
    rate = {k: gb / min(v) for k, v in times.items()}
    rows.append(
        Row(GROUP, f"raw crc32c of {count} x 4 MiB, mapped, {CORES} threads", rate["raw"], "GB/s")
    )
    rows.append(Row(GROUP, "raw crc32c, same bytes, 1 thread", rate["raw1"], "GB/s"))
    rows.append(Row(GROUP, f"verify job, {CORES} processes, 4 MiB records", rate["job"], "GB/s"))
    share = 100 * rate["job"] / rate["raw"]
    rows.append(
        Row(GROUP, f"  as share of raw crc32c on {CORES} threads", share, "%", ">= 75", share >= 75)
    )
    rows.append(
        Row(GROUP, "  as share of raw crc32c on 1 thread", 100 * rate["job"] / rate["raw1"], "%")
    )
    rows.append(Row(GROUP, "TFRecordFile.verify(), 1 process", rate["reader"], "GB/s"))


# -- 3, 4. 64 shards: one core, the pool, Dask --------------------------------------------------


def _schema(paths: Sequence[Path], workers: int) -> Any:
    """The schema of ``paths`` on one core (``workers == 0``) or ``workers`` processes."""
    try:
        from codec.jobs import SchemaJob  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        from codec.schema import infer_schema

        return infer_schema([str(p) for p in paths], workers=max(1, workers))
    return _schema_job(paths, workers)


def _schema_job(paths: Sequence[Path], workers: int) -> Any:
    from codec.jobs import SchemaJob, plan  # type: ignore[attr-defined]

    tasks = plan([str(p) for p in paths])
    job = SchemaJob()
    if workers == 0:
        return job.merge([job.task(t) for t in tasks], job.task)
    from codec.jobs.executors import executor  # type: ignore[import-not-found]
    from codec.jobs.run import run  # type: ignore[import-not-found]

    with executor(f"processes:{workers}") as ex:
        return run(job, tasks, ex)


def _schema_label() -> str:
    try:
        from codec.jobs import SchemaJob  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        return "infer_schema(workers=)"
    return "schema job"


def _bench_shards(quick: bool, rows: list[Row], found: dict[str, float]) -> None:
    count, per_shard = 64, (2_500 if quick else 20_000)
    repeat = 2 if quick else 3
    paths = _shards(count, per_shard)
    mb = sum(p.stat().st_size for p in paths) / 1e6
    records = count * per_shard
    label = _schema_label()
    times: dict[str, list[float]] = {}
    results: dict[str, str] = {}

    def timed(name: str, fn: Callable[[], Any]) -> None:
        _fresh_cache()
        t0 = time.perf_counter()
        out = fn()
        times.setdefault(name, []).append(time.perf_counter() - t0)
        text = _result_text(out)
        if results.setdefault(name.split()[0], text) != text:
            raise RuntimeError(f"{name}: a different result from the one-core run")

    for _ in range(repeat):
        timed("verify 1", lambda: _verify_job(paths, 0))
        timed("verify pool", lambda: _verify_job(paths, CORES))
        timed("schema 1", lambda: _schema(paths, 0))
        timed("schema pool", lambda: _schema(paths, CORES))
    where = f"{count} shards, {records:,} Examples, {mb:,.0f} MB"
    for job in ("verify", "schema"):
        one, pool = min(times[f"{job} 1"]), min(times[f"{job} pool"])
        name = "verify job" if job == "verify" else label
        rows.append(Row(GROUP, f"{name}, {where}, 1 core", records / one / 1e3, "k rec/s"))
        rows.append(Row(GROUP, f"{name}, process pool of {CORES}", records / pool / 1e3, "k rec/s"))
        target = 0.9 * CORES
        rows.append(
            Row(
                GROUP,
                f"  speed-up on {CORES} cores",
                one / pool,
                "x",
                f">= {target:.1f}",
                one / pool >= target,
            )
        )
        found[f"{job}_s_per_mb"] = one / mb
    found["verify_pool_s"] = min(times["verify pool"])
    _bench_merge_parts(paths, found)
    _bench_dask(quick, paths, rows, found)


def _result_text(out: Any) -> str:
    if isinstance(out, list):
        return json.dumps([r.to_json() for r in out], sort_keys=True)
    return json.dumps(out.to_json(), sort_keys=True, default=str)


def _bench_merge_parts(paths: Sequence[Path], found: dict[str, float]) -> None:
    """The client's merge cost per part: verify reports of whole shards, and schema
    builders (unpickled, as they arrive from a worker, then merged)."""
    from codec.jobs import merge_verify, plan, verify_task
    from codec.schema import infer_schema

    parts = [verify_task(t) for t in plan([str(p) for p in paths])]
    blobs = [pickle.dumps(p) for p in parts]
    t0 = time.perf_counter()
    merge_verify([pickle.loads(b) for b in blobs])
    found["verify_merge_s_per_part"] = (time.perf_counter() - t0) / len(parts)
    schema = infer_schema([str(p) for p in paths], per_shard=True)
    builders = [pickle.dumps(s.builder) for s in schema.shards.values()]
    t0 = time.perf_counter()
    acc = pickle.loads(builders[0])
    for b in builders[1:]:
        acc.merge(pickle.loads(b))
    found["schema_merge_s_per_part"] = (time.perf_counter() - t0) / len(builders)
    found["schema_part_kb"] = sum(len(b) for b in builders) / len(builders) / 1e3


def _noop(x: int) -> int:
    return x


def _bench_dask(
    quick: bool, paths: Sequence[Path], rows: list[Row], found: dict[str, float]
) -> None:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        rows.append(Row(GROUP, "Dask: distributed is not installed", 0, ""))
        return
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=CORES, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = Client(cluster)
    rows.append(
        Row(GROUP, f"Dask LocalCluster of {CORES} workers: start", time.perf_counter() - t0, "s")
    )
    try:
        repeat = 2 if quick else 3
        times: dict[str, list[float]] = {}
        via = "its executor" if _have_run() else "client.map"
        for _ in range(repeat):
            for name, fn in (
                ("pool", lambda: _verify_job(paths, CORES)),
                ("dask", lambda: _verify_dask(client, paths)),
            ):
                _fresh_cache()
                t0 = time.perf_counter()
                fn()
                times.setdefault(name, []).append(time.perf_counter() - t0)
        pool, dask = min(times["pool"]), min(times["dask"])
        rows.append(Row(GROUP, f"verify job on Dask local:{CORES} ({via}), 64 shards", dask, "s"))
        rows.append(Row(GROUP, "  process pool, same job, same run", pool, "s"))
        rows.append(
            Row(GROUP, "  Dask time / pool time", dask / pool, "x", "<= 1.15", dask / pool <= 1.15)
        )
        n = 300 if quick else 2_000
        best = math.inf
        for _ in range(2):
            t0 = time.perf_counter()
            client.gather(client.map(_noop, range(n), pure=False))
            best = min(best, time.perf_counter() - t0)
        found["dask_s_per_task"] = best / n
        rows.append(
            Row(GROUP, f"Dask overhead per trivial task ({n:,} tasks)", 1e3 * best / n, "ms")
        )
    finally:
        client.close()
        cluster.close()


def _verify_dask(client: Any, paths: Sequence[Path]) -> list[Any]:
    from codec.jobs import merge_verify, plan, verify_task

    tasks = plan([str(p) for p in paths])
    if _have_run():
        from codec.jobs.executors import executor  # type: ignore[import-not-found]
        from codec.jobs.run import run  # type: ignore[import-not-found]

        from codec.jobs import VerifyJob  # type: ignore[attr-defined]

        with executor(client.scheduler.address) as ex:
            return list(run(VerifyJob(), tasks, ex))
    return merge_verify(client.gather(client.map(verify_task, tasks, pure=False)))


# -- 5. the estimate -----------------------------------------------------------------------------


def _estimate(rows: list[Row], found: dict[str, float]) -> str:
    """Wall time of SHARDS x SHARD_MB on each of WORKERS, and the lines explaining it."""
    lines = [
        f"Estimate for {SHARDS:,} shards of {SHARD_MB} MB ({SHARDS * SHARD_MB / 1e3:,.0f} GB),"
        " one task per shard, from figures measured in this run:"
    ]
    over = found.get("dask_s_per_task")
    lines.append(
        f"  one core: verify {found['verify_s_per_mb'] * 1e3:.2f} ms/MB, schema"
        f" {found['schema_s_per_mb'] * 1e3:.2f} ms/MB (64-shard rows); Dask per task"
        f" {'n/a' if over is None else f'{over * 1e3:.2f} ms'}; client merge per part:"
        f" verify {found['verify_merge_s_per_part'] * 1e3:.3f} ms, schema"
        f" {found['schema_merge_s_per_part'] * 1e3:.2f} ms"
        f" ({found['schema_part_kb']:.0f} kB pickled)."
    )
    lines.append(
        f"  assumed, not measured: {STORAGE_MB_S:.0f} MB/s read per worker (object storage),"
        " reading overlapped with checking; the scheduler and the client's merge each run"
        " tasks one at a time (serial), overlapped with the workers."
    )
    lines.append(
        "  model: wall = max(tasks/workers rounded up x per-task time, tasks x scheduler"
        " overhead, tasks x merge per part) + one task (the last wave's tail)."
    )
    if over is None:
        return "\n".join(lines)
    for job in ("verify", "schema"):
        cpu = found[f"{job}_s_per_mb"] * SHARD_MB
        task = max(cpu, SHARD_MB / STORAGE_MB_S)
        merge = found[f"{job}_merge_s_per_part"]
        bound = "storage" if task > cpu else "CPU"
        lines.append(
            f"  {job}: a task is {task:.1f} s ({bound}-bound: CPU {cpu:.1f} s, read"
            f" {SHARD_MB / STORAGE_MB_S:.1f} s)"
        )
        for w in WORKERS:
            waves = math.ceil(SHARDS / w)
            work, sched, client = waves * task, SHARDS * over, SHARDS * merge
            wall = max(work, sched, client) + task
            limit = (
                "work"
                if work >= max(sched, client)
                else ("scheduler" if sched >= client else "client merge")
            )
            rows.append(
                Row(
                    GROUP,
                    f"{SIM}: {job}, {SHARDS:,} x {SHARD_MB} MB, {w:,} workers",
                    wall / 60,
                    "min",
                )
            )
            lines.append(
                f"    {w:>5,} workers: {waves} wave(s) x {task:.1f} s = {work:,.0f} s of work,"
                f" scheduler {sched:,.1f} s, merge {client:,.1f} s -> {wall / 60:,.1f} min"
                f" (bound by {limit})"
            )
        knee = task / max(over, merge)
        rows.append(Row(GROUP, f"{SIM}: {job}, workers where it stops scaling", knee, "workers"))
        lines.append(
            f"    stops scaling near {knee:,.0f} workers: there the scheduler hands out"
            f" {1 / over:,.0f} tasks/s and {knee:,.0f} workers finish that many (more workers"
            f" only wait); beyond {SHARDS:,} workers there are no more tasks (split shards"
            " into byte ranges for more)."
        )
    return "\n".join(lines)


def run(quick: bool) -> list[Row]:
    rows: list[Row] = [Row(GROUP, "load average (1 min) at start", _load(), f"on {CORES} cores")]
    found: dict[str, float] = {}
    saved = os.environ.get("TFRECORD_BROWSER_CACHE")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        os.environ["TFRECORD_BROWSER_CACHE"] = str(Path(tmp) / "cache")
        try:
            checks = _tfrecords_checks_crcs(Path(tmp))
            rows.append(
                Row(
                    GROUP,
                    "tfrecords iterator refuses a bad data CRC",
                    float(checks),
                    "1 = yes",
                    "1",
                    checks,
                )
            )
            _bench_small(quick, rows, found)
            _bench_large(quick, rows)
            _bench_shards(quick, rows, found)
            text = _estimate(rows, found)
        finally:
            if saved is None:
                os.environ.pop("TFRECORD_BROWSER_CACHE", None)
            else:
                os.environ["TFRECORD_BROWSER_CACHE"] = saved
    rows.append(Row(GROUP, "load average (1 min) at end", _load(), f"on {CORES} cores"))
    print(text, file=sys.stderr)
    return rows


if __name__ == "__main__":
    from benchmarks.common import table

    print(table(run("--quick" in sys.argv)))
