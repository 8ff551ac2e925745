"""Dataset-wide jobs (verify, schema, ...) split into tasks — whole files, or byte ranges of
large files — whose small partial results merge into the answer one process would give, on
any executor: this process, a pool of processes, or a Dask cluster.

    tasks = plan(paths)                                   # whole files, or byte ranges
    with executor("dask:local:4") as ex:                  # or None: a process per core
        reports = run(VerifyJob(), tasks, ex, progress=print, cancel=event)
        found = run(FilterJob("label == 3", limit=100), tasks, ex)   # a codec.filters.FilterRun
"""

from .executors import (
    DaskExecutor,
    Executor,
    InlineExecutor,
    ProcessExecutor,
    executor,
    fit,
)
from .filter import FilterJob, FilterPart
from .plan import DEFAULT_SPLIT, Task, plan
from .run import Job, Progress, run
from .schema import SchemaJob, SchemaPart
from .verify import VerifyJob, VerifyPart, merge_verify, unreadable_report, verify_task
from .walk import RangeEnds, RangeWalk, stitch, walk_range, walk_task

__all__ = [
    "DEFAULT_SPLIT",
    "DaskExecutor",
    "Executor",
    "FilterJob",
    "FilterPart",
    "InlineExecutor",
    "Job",
    "ProcessExecutor",
    "Progress",
    "RangeEnds",
    "RangeWalk",
    "SchemaJob",
    "SchemaPart",
    "Task",
    "VerifyJob",
    "VerifyPart",
    "executor",
    "fit",
    "merge_verify",
    "plan",
    "run",
    "stitch",
    "unreadable_report",
    "verify_task",
    "walk_range",
    "walk_task",
]
