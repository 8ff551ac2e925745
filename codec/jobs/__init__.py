"""Dataset-wide jobs (verify, schema, ...) split into tasks — whole files, or byte ranges of
large files — whose small partial results merge into the answer one process would give, on
any executor: this process, a pool of processes, or a Dask cluster.

    tasks = plan(paths)                                   # or tasks_of(open files)
    with executor("dask:local:4") as ex:                  # or None: a process per core
        reports = run(VerifyJob(), tasks, ex, progress=print, cancel=event)
        found = run(FilterJob("label == 3", limit=100), tasks, ex)   # a codec.filters.FilterRun
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .executors import (
    DaskExecutor,
    Executor,
    InlineExecutor,
    ProcessExecutor,
    executor,
)
from .plan import DEFAULT_SPLIT, Task, plan, tasks_of
from .run import Job, Progress, run
from .spec import ExecutorSpec, parse_executor
from .verify import (
    VerifyJob,
    VerifyPart,
    merge_verify,
    unreadable_report,
    verify_paths,
    verify_task,
)
from .walk import RangeEnds, RangeWalk, stitch, walk_range, walk_task

if TYPE_CHECKING:
    from .evaluate import EvaluateJob
    from .filter import FilterJob, FilterPart
    from .schema import SchemaJob, SchemaPart

# The filter and schema jobs, imported when first asked for: a verify needs neither (nor the
# protobuf and picture code they load).
_LATER = {
    "EvaluateJob": "evaluate",
    "FilterJob": "filter",
    "FilterPart": "filter",
    "SchemaJob": "schema",
    "SchemaPart": "schema",
}


__getattr__ = lazy_names(__name__, _LATER)

__all__ = [
    "DEFAULT_SPLIT",
    "DaskExecutor",
    "EvaluateJob",
    "Executor",
    "ExecutorSpec",
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
    "merge_verify",
    "parse_executor",
    "plan",
    "run",
    "stitch",
    "tasks_of",
    "unreadable_report",
    "verify_paths",
    "verify_task",
    "walk_range",
    "walk_task",
]
