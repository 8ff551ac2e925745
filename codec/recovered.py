"""Recovered records: those reached by resynchronising after damage.

A record after damage whose own CRCs check out was not reached through an unbroken chain of
checked lengths from the start of the stream, so it might be content of the damaged record
before it (a TFRecord stored inside a record looks exactly like records of the file). Every
record from the first one past a problem's skipped bytes on is *recovered*: shown, verified
and counted apart from the intact ones. One rule, for a reader's index
(:attr:`codec.reader.TFRecordFile.recovered_from`) and for ranges checked apart and merged
(:mod:`codec.jobs`).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from .framing import Problem

__all__ = ["first_recovered"]


def first_recovered(
    offsets: Sequence[int], problems: Sequence[Problem], size: int, done: bool = True
) -> int | None:
    """The number of the first record reached by resynchronising after one of ``problems``,
    given the record ``offsets`` indexed so far (``done``: all of them); ``None`` when
    there is none (so far)."""
    resumes = [
        p.end
        for p in problems
        if p.offset is not None and p.end is not None and p.offset < p.end < size
    ]
    if not resumes:
        return None
    i = bisect.bisect_left(offsets, min(resumes))
    return i if i < len(offsets) or not done else None
