"""Dataset-wide jobs in words: where they run (an executor spec as a person reads it) and a
running job's progress."""

from __future__ import annotations

from codec.jobs import ExecutorSpec, Progress
from codec.values import format_bytes, plural

__all__ = ["progress_text", "where_text"]


def where_text(spec: ExecutorSpec, cores: int) -> str:
    """Where jobs of ``spec`` run, in words: "this machine (2 cores)", "the Dask cluster at
    tcp://…"."""
    if spec.kind == "inline":
        return "this process (one core)"
    if spec.kind == "processes":
        if spec.workers is not None:
            return f"this machine ({plural(spec.workers, 'process', 'processes')})"
        return f"this machine ({plural(cores, 'core')})"
    if spec.kind == "dask-local":
        many = f" of {plural(spec.workers, 'worker')}" if spec.workers is not None else ""
        return f"a local Dask cluster{many}"
    return f"the Dask cluster at {spec.address}"


def progress_text(p: Progress) -> str:
    """``12 of 64 tasks · 1.2 GiB of 4.8 GiB · 310,000 records/s`` (and the tasks that failed,
    when any did)."""
    parts = [f"{p.tasks_done:,} of {plural(p.tasks_total, 'task')}"]
    if p.bytes_total > 0:
        parts.append(f"{format_bytes(p.bytes_done)} of {format_bytes(p.bytes_total)}")
    parts.append(f"{plural(round(p.records_per_s), 'record')}/s")
    if p.failed:
        parts.append(plural(p.failed, "task failed", "tasks failed"))
    return " · ".join(parts)
