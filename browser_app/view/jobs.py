"""Dataset-wide jobs in words: where they run (an executor spec as a person reads it), an
address typed for a Dask cluster turned into a spec, and a running job's progress."""

from __future__ import annotations

from codec.jobs import Progress
from codec.values import format_bytes, plural

__all__ = ["dask_spec", "is_dask", "progress_text", "where_text"]


def is_dask(spec: str | None) -> bool:
    """Whether ``spec`` names a Dask cluster (``dask:…``, or a scheduler's ``tcp://…``)."""
    text = (spec or "").strip()
    return text.startswith("dask:") or "://" in text


def dask_spec(address: str) -> str:
    """The executor spec of a Dask cluster as a person names it: ``local`` or ``local:4`` (a
    cluster started here), ``tcp://host:8786`` (or any ``scheme://``), ``host:8786`` (tcp),
    or a spec already (``dask:…``)."""
    text = address.strip()
    if text.startswith("dask:"):
        return text
    if text == "local" or text.startswith("local:"):
        return f"dask:{text}"
    if "://" in text:
        return f"dask:{text}"
    return f"dask:tcp://{text}"


def where_text(spec: str | None, cores: int) -> str:
    """Where jobs of ``spec`` run, in words: "this machine (2 cores)", "the Dask cluster at
    tcp://…"."""
    text = (spec or "processes").strip()
    name, _, rest = text.partition(":")
    if name == "inline":
        return "this process (one core)"
    if name == "processes":
        if rest.isdigit():
            return f"this machine ({plural(int(rest), 'process', 'processes')})"
        return f"this machine ({plural(cores, 'core')})"
    if name == "dask":
        where, _, n = rest.partition(":")
        if where == "local":
            many = f" of {plural(int(n), 'worker')}" if n.isdigit() else ""
            return f"a local Dask cluster{many}"
        return f"the Dask cluster at {rest}"
    return f"the Dask cluster at {text}"


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
