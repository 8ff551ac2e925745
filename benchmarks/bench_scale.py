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
   rows say "simulation (estimate, not measured)"; the model and its inputs are printed
   (on stderr) before the table.

This machine has 2 cores shared with other work: figures move by +-40 % from run to run, so
every comparison is made between figures measured in this run, interleaved, best of several.
Linux shares the CPU between sessions (autogroup), not processes: while other sessions keep
the cores busy, a pool of processes gets no more CPU than one process. So the CPU time of
each side is shown too (of the whole process tree; of the busiest pool worker), and the
load average at the start and end of the run.
Files are generated with the project's own writer under benchmarks/data/ and reused.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import pickle
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import crc32c
import numpy as np

from benchmarks.common import Row
from codec.jobs.executors import cores, start_method

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
GROUP = "scale"
SIM = "simulation (estimate, not measured)"
APP_SCHEMA = "schema, each file's statistics kept (the app)"
CORES = cores()  # the cores this process may run on

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
    imports included) and the JSON it printed last, with the CPU seconds of its whole process
    tree (pool workers included: they are waited for) as ``"cpu"``."""
    before = _tree_cpu()
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
    return wall, {**json.loads(out.stdout.strip().splitlines()[-1]), "cpu": _tree_cpu() - before}


def _tree_cpu() -> float:
    """CPU seconds of the finished (waited for) children of this process and theirs."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _load() -> float:
    return os.getloadavg()[0]


def _fresh_cache() -> None:
    """An empty index cache, so every run indexes its files (no saved index is used)."""
    folder = Path(os.environ["TFRECORD_BROWSER_CACHE"])
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)


# -- children: fresh interpreters ---------------------------------------------------------------

# The verify job over one file: byte ranges (at least one per core) on the process pool
# (every core; started as the command line starts it: forked, in a process with no other
# thread), through codec.jobs.run; the phases timed by its progress callback.
_POOL_VERIFY = """
import json, os, time
t0 = time.perf_counter()
from codec.jobs import ProcessExecutor, VerifyJob, plan, run
t1 = time.perf_counter()
marks = []
with ProcessExecutor(context={context!r}) as ex:
    tasks = plan([{path!r}], at_least=ex.workers)
    (report,) = run(VerifyJob(), tasks, ex, progress=lambda p: marks.append(time.perf_counter()))
    t2 = time.perf_counter()
t3 = time.perf_counter()
print(json.dumps({{"records": report.records, "problems": len(report.problems),
    "tasks": len(tasks), "import": t1 - t0, "first": marks[1] - t1, "tasks_done": marks[-1] - t1,
    "merge": t2 - marks[-1], "close": t3 - t2}}))
"""

# A pool's fixed cost: start it and run one trivial task of the package (imports it there).
_POOL_START = """
import json, time
from codec.jobs import ProcessExecutor
from codec.jobs.executors import cores, start_method
t0 = time.perf_counter()
with ProcessExecutor(context={context!r}) as ex:
    ex.pool().submit(cores).result()
    t1 = time.perf_counter()
print(json.dumps({{"start": t1 - t0, "close": time.perf_counter() - t1}}))
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
    repeat = 1 if quick else 4
    path = _small_file(count)
    kinds = {
        "ours": _POOL_VERIFY.format(path=str(path), context="auto"),
        "tfrecords": _TFRECORDS.format(path=str(path)),
        "spawn": _POOL_VERIFY.format(path=str(path), context="spawn"),
        "single": _SINGLE_VERIFY.format(path=str(path)),
    }
    runs: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    inner: list[dict[str, Any]] = []
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
                cpu.setdefault(f"{kind} {cache}", []).append(out["cpu"])
                if kind == "ours" and cache == "warm":
                    inner.append({**out, "wall": wall})
    again = range(2 if quick else 3)
    fixed = {
        f"interpreter + import {m}": [_child(_IMPORT_ONLY.format(module=m))[0] for _ in again]
        for m in ("codec.jobs", "tfrecords")
    }
    fixed["interpreter alone"] = [_child(_IMPORT_ONLY.format(module="json"))[0] for _ in again]
    starts = {
        c: [_child(_POOL_START.format(context=c))[1] for _ in again] for c in ("spawn", "fork")
    }
    rate = {k: count / min(v) / 1e6 for k, v in runs.items()}
    n = f"{count:,} x 100 B"
    if resident:
        rows.append(Row(GROUP, "page cache left after each eviction (max)", max(resident), "MB"))
    for cache in ("cold", "warm"):
        theirs, ours = rate[f"tfrecords {cache}"], rate[f"ours {cache}"]
        rows.append(
            Row(GROUP, f"tfrecords C++ iterator, {n}, {cache}, fresh process", theirs, "M rec/s")
        )
        rows.append(
            Row(
                GROUP,
                f"verify job, process pool, byte ranges, {cache}, fresh process",
                ours,
                "M rec/s",
            )
        )
        rows.append(
            Row(GROUP, f"  ours / tfrecords, {cache}", ours / theirs, "x", ">= 1", ours >= theirs)
        )
        spawned = rate[f"spawn {cache}"]
        rows.append(
            Row(GROUP, f"  same job, pool started by spawn (the app), {cache}", spawned, "M rec/s")
        )
        rows.append(Row(GROUP, f"  spawned / tfrecords, {cache}", spawned / theirs, "x"))
        rows.append(
            Row(
                GROUP,
                f"TFRecordFile.verify(), 1 process, {cache}, fresh process",
                rate[f"single {cache}"],
                "M rec/s",
            )
        )
    for kind, label in (
        ("tfrecords", "tfrecords iterator"),
        ("ours", "verify job, pool by fork"),
        ("spawn", "verify job, pool by spawn"),
        ("single", "TFRecordFile.verify()"),
    ):
        rows.append(
            Row(
                GROUP,
                f"CPU time, whole process tree, warm: {label}",
                min(cpu[f"{kind} warm"]),
                "CPU s",
            )
        )
    best = min(inner, key=lambda o: o["wall"])
    rows.append(
        Row(GROUP, f"  the job's best warm run, {best['tasks']} tasks: whole", best["wall"], "s")
    )
    for key, label in (
        ("import", "import codec.jobs"),
        ("first", "start pool .. first task done"),
        ("tasks_done", "import done .. last task done"),
        ("merge", "merge"),
        ("close", "pool shut down"),
    ):
        rows.append(Row(GROUP, f"    {label}", best[key], "s"))
    for label, times in fixed.items():
        rows.append(Row(GROUP, f"  {label} (best)", min(times), "s"))
    for context, outs in starts.items():
        rows.append(
            Row(
                GROUP,
                f"  pool start by {context} + first task of codec (best)",
                min(o["start"] for o in outs),
                "s",
            )
        )


# -- 2. large records -------------------------------------------------------------------------


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


def _verify(paths: Sequence[Path], ex: Any, split: int | None = None) -> list[Any]:
    """The verify job over ``paths`` on executor ``ex``."""
    from codec.jobs import VerifyJob, plan, run

    tasks = plan([str(p) for p in paths], **({} if split is None else {"split": split}))
    return list(run(VerifyJob(), tasks, ex))


def _bench_large(quick: bool, rows: list[Row]) -> None:
    from codec import TFRecordFile
    from codec.jobs import executor

    count = 64 if quick else 256
    repeat = 3 if quick else 5
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
    with executor(f"processes:{CORES}") as ex:
        _verify([path], ex)  # the pool started
        for _ in range(repeat):
            timed("job", lambda: _verify([path], ex))
            timed("raw", lambda: _raw_crc(path, CORES))
            timed("raw1", lambda: _raw_crc(path, 1))
            timed("reader", reader)
    rate = {k: gb / min(v) for k, v in times.items()}
    rows.append(
        Row(GROUP, f"raw crc32c of {count} x 4 MiB, mapped, {CORES} threads", rate["raw"], "GB/s")
    )
    rows.append(Row(GROUP, "raw crc32c, same bytes, 1 thread", rate["raw1"], "GB/s"))
    rows.append(
        Row(GROUP, f"verify job, pool of {CORES} (started), 4 MiB records", rate["job"], "GB/s")
    )
    share = 100 * rate["job"] / rate["raw"]
    rows.append(
        Row(GROUP, f"  as share of raw crc32c on {CORES} threads", share, "%", ">= 75", share >= 75)
    )
    rows.append(
        Row(GROUP, "  as share of raw crc32c on 1 thread", 100 * rate["job"] / rate["raw1"], "%")
    )
    rows.append(Row(GROUP, "TFRecordFile.verify(), 1 process", rate["reader"], "GB/s"))


# -- 3, 4. 64 shards: one core, the pool, Dask --------------------------------------------------


@dataclass(frozen=True)
class _Nothing:
    """A job whose tasks do nothing: what a task costs the executor itself."""

    name: str = "nothing"

    def task(self, task: Any) -> int:
        return 0

    def merge(self, parts: list[Any], rerun: Callable[[Any], Any]) -> int:
        return len(parts)

    def records(self, part: Any) -> int:
        return 0


def _result_text(out: Any) -> str:
    if isinstance(out, list):
        return json.dumps([r.to_json() for r in out], sort_keys=True)
    return json.dumps(out.to_json(), sort_keys=True, default=str)


@dataclass(frozen=True)
class _Timed:
    """``job`` with each task's CPU seconds and worker process noted (for what the pool
    would do on idle cores, whatever else this machine runs)."""

    job: Any

    @property
    def name(self) -> str:
        return str(self.job.name)

    def task(self, task: Any) -> tuple[Any, float, int]:
        t0 = time.process_time()
        answer = self.job.task(task)
        return answer, time.process_time() - t0, os.getpid()

    def merge(self, parts: list[Any], rerun: Callable[[Any], Any]) -> Any:
        return self.job.merge([p[0] for p in parts], lambda t: rerun(t)[0])

    def records(self, part: Any) -> int:
        return int(self.job.records(part[0]))

    def merger(self, rerun: Callable[[Any], Any]) -> _Feed:
        return _Feed(self.job, lambda t: rerun(t)[0], lambda p: p[0])

    def combine(self, parts: list[tuple[Any, float, int]]) -> list[tuple[Any, float, int]]:
        """As the job combines a group's answers, the group's CPU seconds noted once."""
        t0 = time.process_time()
        answers = self.job.combine([p[0] for p in parts])
        seconds = sum(p[1] for p in parts) + time.process_time() - t0
        return [(a, seconds if i == 0 else 0.0, os.getpid()) for i, a in enumerate(answers)]


class _Feed:
    """A wrapped job's merge, fed as :func:`codec.jobs.run` feeds a merger (answers in task
    order as they come, each mapped by ``strip`` first): the job's own merger when it has
    one, else its ``merge`` of them all at the end. ``kept`` holds the answers as given."""

    def __init__(self, job: Any, rerun: Callable[[Any], Any], strip: Callable[[Any], Any]):
        make = getattr(job, "merger", None)
        self.merging = make(rerun) if make is not None else None
        self.job, self.rerun, self.strip = job, rerun, strip
        self.parts: list[Any] = []
        self.kept: list[Any] = []

    def add(self, parts: list[Any]) -> None:
        self.kept.extend(parts)
        got = [self.strip(p) for p in parts]
        if self.merging is not None:
            self.merging.add(got)
        else:
            self.parts.extend(got)

    def result(self) -> Any:
        if self.merging is not None:
            return self.merging.result()
        return self.job.merge(self.parts, self.rerun)


class _Kept(_Feed):
    def result(self) -> tuple[Any, list[Any]]:
        return super().result(), self.kept


def _bench_shards(quick: bool, rows: list[Row], found: dict[str, float]) -> None:
    from codec.jobs import SchemaJob, VerifyJob, executor, plan, run

    count, per_shard = 64, (1_500 if quick else 10_000)
    repeat = 2 if quick else 4
    paths = _shards(count, per_shard)
    tasks = plan([str(p) for p in paths])
    mb = sum(p.stat().st_size for p in paths) / 1e6
    records = count * per_shard
    # schema as the command runs it, and as the app's Statistics page does (which keeps each
    # file's statistics: every file's answer then travels to the client and is merged there)
    jobs = {"verify": VerifyJob(), "schema": SchemaJob(per_shard=False), APP_SCHEMA: SchemaJob()}
    times: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    results: dict[str, str] = {}

    def timed(name: str, job: str, ex: Any) -> None:
        _fresh_cache()
        t0, c0 = time.perf_counter(), time.process_time()
        out, answers = run(_Keep(_Timed(jobs[job])), tasks, ex)
        times.setdefault(f"{job} {name}", []).append(time.perf_counter() - t0)
        here = time.process_time() - c0
        if name == "1":
            cpu.setdefault(f"{job} {name}", []).append(here)
        else:  # the busiest worker's CPU, and this process's (it merges)
            busy: dict[int, float] = {}
            for _, seconds, pid in answers:
                busy[pid] = busy.get(pid, 0.0) + seconds
            cpu.setdefault(f"{job} {name}", []).append(max(busy.values()) + here)
        text = _result_text(out)
        if results.setdefault(job, text) != text:
            raise RuntimeError(f"{job} on {name}: a different result from the first run")

    with executor("inline") as one, executor(f"processes:{CORES}") as pool:
        how = start_method()  # as the pool is about to start
        t0 = time.perf_counter()
        run(_Nothing(), tasks[:CORES], pool)
        rows.append(
            Row(GROUP, f"process pool of {CORES}: start ({how})", time.perf_counter() - t0, "s")
        )
        for _ in range(repeat):
            for job in jobs:
                timed("1", job, one)
                timed("pool", job, pool)
        where = f"{count} shards, {records:,} Examples, {mb:,.0f} MB"
        target = 0.9 * CORES
        for job in jobs:
            aim = "" if job == APP_SCHEMA else f">= {target:.1f}"
            t1, tp = min(times[f"{job} 1"]), min(times[f"{job} pool"])
            c1, cp = min(cpu[f"{job} 1"]), min(cpu[f"{job} pool"])
            rows.append(
                Row(GROUP, f"{job} job, {where}, 1 core (inline)", records / t1 / 1e3, "k rec/s")
            )
            rows.append(
                Row(GROUP, f"{job} job, process pool of {CORES}", records / tp / 1e3, "k rec/s")
            )
            rows.append(
                Row(
                    GROUP,
                    f"  speed-up on {CORES} cores (wall)",
                    t1 / tp,
                    "x",
                    aim,
                    None if not aim else t1 / tp >= target,
                )
            )
            rows.append(
                Row(
                    GROUP,
                    "  speed-up from CPU time (busiest worker + merging process)",
                    c1 / cp,
                    "x",
                )
            )
            found[f"{job}_s_per_mb"] = c1 / mb
        _bench_merge_parts(paths, found)
        _bench_dask(quick, tasks, pool, rows, found)


@dataclass(frozen=True)
class _Keep:
    """``job`` whose result also carries its answers (as the merge got them)."""

    job: Any

    @property
    def name(self) -> str:
        return str(self.job.name)

    def task(self, task: Any) -> Any:
        return self.job.task(task)

    def merge(self, parts: list[Any], rerun: Callable[[Any], Any]) -> tuple[Any, list[Any]]:
        return self.job.merge(list(parts), rerun), parts

    def merger(self, rerun: Callable[[Any], Any]) -> _Kept:
        return _Kept(self.job, rerun, lambda p: p)

    def combine(self, parts: list[Any]) -> list[Any]:
        return list(self.job.combine(parts))

    def records(self, part: Any) -> int:
        return int(self.job.records(part))


def _bench_merge_parts(paths: Sequence[Path], found: dict[str, float]) -> None:
    """The client's merge cost per answer, unpickling included (as answers arrive from the
    workers), and the answers' pickled size: verify and schema answers of byte ranges (as
    plan() makes of large shards), four per shard of 16 shards."""
    from codec.jobs import SchemaJob, VerifyJob, plan

    some = [str(p) for p in paths[:16]]
    tasks = plan(some, split=-(-max(Path(p).stat().st_size for p in some) // 4))
    for name, job in (("verify", VerifyJob()), ("schema", SchemaJob())):
        blobs = [pickle.dumps(job.task(t)) for t in tasks]
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            job.merge([pickle.loads(b) for b in blobs], job.task)
            best = min(best, time.perf_counter() - t0)
        found[f"{name}_merge_s_per_part"] = best / len(blobs)
        found[f"{name}_part_kb"] = sum(len(b) for b in blobs) / len(blobs) / 1e3


def _bench_dask(
    quick: bool, tasks: Sequence[Any], pool: Any, rows: list[Row], found: dict[str, float]
) -> None:
    from codec.jobs import SchemaJob, Task, VerifyJob, executor, run
    from codec.jobs.plan import group

    try:
        import distributed  # noqa: F401
    except ImportError:
        rows.append(Row(GROUP, "Dask: distributed is not installed", 0, ""))
        return
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    t0 = time.perf_counter()
    with executor(f"dask:local:{CORES}") as dask:
        rows.append(Row(GROUP, f"Dask local:{CORES}: start", time.perf_counter() - t0, "s"))
        run(_Nothing(), [Task(i, "") for i in range(CORES)], dask)
        times: dict[str, list[float]] = {}
        # verify: a short job (a few ms a task), where the executors' fixed costs show;
        # schema: a job of seconds, where the work does
        # verify's runs are short and move with every blip of the machine: more of them,
        # interleaved, and their medians beside their bests
        jobs = {
            "verify": (VerifyJob(), 3 if quick else 12),
            "schema": (SchemaJob(per_shard=False), 1 if quick else 4),
        }
        for job, (the_job, repeat) in jobs.items():
            for _ in range(repeat):
                for name, ex in (("pool", pool), ("dask", dask)):
                    _fresh_cache()
                    t0 = time.perf_counter()
                    run(the_job, tasks, ex)
                    times.setdefault(f"{job} {name}", []).append(time.perf_counter() - t0)
        for job in jobs:
            tp, td = min(times[f"{job} pool"]), min(times[f"{job} dask"])
            runs = len(times[f"{job} pool"])
            rows.append(
                Row(GROUP, f"{job} job, {len(tasks)} shards, Dask local:{CORES} (best)", td, "s")
            )
            rows.append(
                Row(GROUP, f"  same job, process pool of {CORES}, same run (best)", tp, "s")
            )
            rows.append(
                Row(
                    GROUP,
                    f"  Dask time / pool time (bests of {runs} runs each)",
                    td / tp,
                    "x",
                    "<= 1.15",
                    td / tp <= 1.15,
                )
            )
            if runs >= 3:
                mp = statistics.median(times[f"{job} pool"])
                md = statistics.median(times[f"{job} dask"])
                rows.append(Row(GROUP, "  Dask time / pool time (medians)", md / mp, "x"))
        # What Dask itself costs a job of this many groups: a bare map and gather of as many
        # empty tasks (the floor under the verify job's difference).
        groups = len(group(tasks, dask.workers))
        floor = math.inf
        for _ in range(5 if quick else 15):
            t0 = time.perf_counter()
            dask.client.gather(dask.client.map(_nothing, range(groups), pure=False))
            floor = min(floor, time.perf_counter() - t0)
        rows.append(
            Row(
                GROUP,
                f"  Dask's own floor: client.map + gather of {groups} empty tasks (best)",
                1e3 * floor,
                "ms",
            )
        )
        n = 200 if quick else 2_000
        nothing = [Task(i, "") for i in range(n)]
        best = raw = math.inf
        for _ in range(1 if quick else 2):
            t0 = time.perf_counter()
            run(_Nothing(), nothing, dask)
            best = min(best, time.perf_counter() - t0)
            t0 = time.perf_counter()
            dask.client.gather(dask.client.map(_nothing, range(n), pure=False))
            raw = min(raw, time.perf_counter() - t0)
        found["dask_s_per_task"] = best / n
        rows.append(
            Row(
                GROUP,
                f"Dask per task: {n:,} empty tasks through codec.jobs.run",
                1e3 * best / n,
                "ms",
            )
        )
        rows.append(Row(GROUP, "  same through client.map / gather", 1e3 * raw / n, "ms"))


def _nothing(x: int) -> int:
    return x


# -- 5. the estimate -----------------------------------------------------------------------------


def _estimate(rows: list[Row], found: dict[str, float]) -> str:
    """Wall time of SHARDS x SHARD_MB on each of WORKERS (rows labelled as a simulation) and
    the text explaining how it was reckoned."""
    from codec.jobs import DEFAULT_SPLIT

    over = found.get("dask_s_per_task")
    pieces = math.ceil(SHARD_MB * 1e6 / DEFAULT_SPLIT)  # plan() cuts a shard into ranges
    tasks = SHARDS * pieces
    task_mb = SHARD_MB / pieces
    lines = [
        f"Estimate (not measured) for {SHARDS:,} shards of {SHARD_MB} MB"
        f" ({SHARDS * SHARD_MB / 1e3:,.0f} GB): plan() cuts each shard into {pieces} ranges, so"
        f" {tasks:,} tasks of {task_mb:.0f} MB. Inputs measured in this run:",
        f"  CPU on one core: verify {found['verify_s_per_mb'] * 1e3:.2f} ms/MB, schema"
        f" {found['schema_s_per_mb'] * 1e3:.2f} ms/MB (the 64-shard rows, ~320-byte Examples;"
        " CPU time, as a dedicated core would take);",
        f"  per task through codec.jobs.run on Dask local:{CORES}:"
        f" {'n/a' if over is None else f'{over * 1e3:.2f} ms'} (scheduler, client and worker"
        " overhead of an empty task, on this loaded 2-core machine; a dedicated scheduler is"
        " faster);",
        f"  merge per range answer on the client (unpickled): verify"
        f" {found['verify_merge_s_per_part'] * 1e3:.3f} ms, schema"
        f" {found['schema_merge_s_per_part'] * 1e3:.2f} ms; answer sizes: verify"
        f" {found['verify_part_kb']:.1f} kB, schema {found['schema_part_kb']:.0f} kB"
        f" (verify's client holds {tasks:,} of them until the merge,"
        f" {tasks * found['verify_part_kb'] / 1e3:,.0f} MB; schema's folds each in as soon as"
        " every answer before it is in).",
        f"  Assumed, not measured: {STORAGE_MB_S:.0f} MB/s read per worker (object storage),"
        " reading overlapped with checking, so a task takes max(CPU, read).",
        "  Model: verify (merged after the last task): wall = max(waves x task time, tasks x"
        " per-task overhead) + tasks x merge per answer; schema (merged as answers come, in"
        " task order): wall = max(waves x task time, tasks x per-task overhead, tasks x merge"
        " per answer) + one task's merge; waves = tasks / workers, rounded up.",
    ]
    if over is None:
        return "\n".join(lines)
    from codec.jobs import SchemaJob, VerifyJob

    streams = {"verify": hasattr(VerifyJob, "merger"), "schema": hasattr(SchemaJob, "merger")}
    for job in ("verify", "schema"):
        cpu = found[f"{job}_s_per_mb"] * task_mb
        read = task_mb / STORAGE_MB_S
        task = max(cpu, read)
        merge = found[f"{job}_merge_s_per_part"]
        lines.append(
            f"  {job}: a task takes {task:.2f} s ({'read' if read >= cpu else 'CPU'}-bound:"
            f" CPU {cpu:.2f} s, read {read:.2f} s)"
        )
        for w in WORKERS:
            waves = math.ceil(tasks / w)
            work, sched, client = waves * task, tasks * over, tasks * merge
            wall = max(work, sched, client) + merge if streams[job] else max(work, sched) + client
            bound = max(
                (work, "the workers"), (sched, "the scheduler"), (client, "the client's merge")
            )[1]
            rows.append(
                Row(
                    GROUP,
                    f"{SIM}: {job}, {SHARDS:,} x {SHARD_MB} MB, {w:,} workers",
                    wall / 60,
                    "min",
                )
            )
            lines.append(
                f"    {w:>5,} workers: {waves:,} waves x {task:.2f} s = {work:,.0f} s;"
                f" scheduler {sched:,.0f} s; merge {client:,.1f} s -> {wall / 60:,.1f} min"
                f" (bound by {bound})"
            )
        knee = task / over
        rows.append(Row(GROUP, f"{SIM}: {job}, scheduler is the limit from", knee, "workers"))
        rows.append(
            Row(GROUP, f"{SIM}: {job}, client merge (any workers)", tasks * merge / 60, "min")
        )
        lines.append(
            f"    stops scaling near {knee:,.0f} workers: the scheduler hands out"
            f" {1 / over:,.0f} tasks/s, and {knee:,.0f} workers finish {task:.2f}-s tasks at"
            " that rate; more workers wait for tasks (fewer, larger tasks move the limit: it"
            " is tasks x per-task overhead against the work spread over the workers)."
            + (
                f" The client's merge, {tasks * merge:,.1f} s, overlaps the tasks and is the"
                " limit once the work spread over the workers takes less."
                if streams[job]
                else f" Below any number of workers lies the client's merge,"
                f" {tasks * merge:,.1f} s, after the last task."
            )
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
            for section, bench in (
                ("one file of small records", lambda: _bench_small(quick, rows, found)),
                ("large records", lambda: _bench_large(quick, rows)),
                ("64 shards: inline, pool, Dask", lambda: _bench_shards(quick, rows, found)),
            ):
                print(f"  scale: {section} ...", file=sys.stderr, flush=True)
                bench()
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
