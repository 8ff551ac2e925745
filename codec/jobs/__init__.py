"""Dataset-wide jobs (verify, schema, ...) split into tasks — whole files, or byte ranges of
large files — whose small partial results merge into the answer one process would give, on
any executor: this process, a pool of processes, or a Dask cluster."""

from .plan import DEFAULT_SPLIT, Task, plan
from .schema import SchemaJob, SchemaPart
from .verify import VerifyPart, merge_verify, verify_task
from .walk import RangeEnds, RangeWalk, stitch, walk_range

__all__ = [
    "DEFAULT_SPLIT",
    "RangeEnds",
    "RangeWalk",
    "SchemaJob",
    "SchemaPart",
    "Task",
    "VerifyPart",
    "merge_verify",
    "plan",
    "stitch",
    "verify_task",
    "walk_range",
]
