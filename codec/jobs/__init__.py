"""Dataset-wide jobs (verify, schema, ...) split into tasks — whole files, or byte ranges of
large files — whose small partial results merge into the answer one process would give, on
any executor: this process, a pool of processes, or a Dask cluster."""

from .plan import DEFAULT_SPLIT, Task, plan
from .verify import VerifyPart, merge_verify, verify_task
from .walk import RangeWalk, walk_range

__all__ = [
    "DEFAULT_SPLIT",
    "RangeWalk",
    "Task",
    "VerifyPart",
    "merge_verify",
    "plan",
    "verify_task",
    "walk_range",
]
