"""What the launcher passed to the app after ``--``."""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from codec.errors import ExecutorError
from codec.jobs.spec import DEFAULT as DEFAULT_EXECUTOR
from codec.jobs.spec import INLINE, ExecutorSpec, parse_executor
from codec.locations import is_url

__all__ = ["AppArgs", "app_args"]


@dataclass(frozen=True)
class AppArgs:
    """What the launcher passed after ``--``: the root (a folder, or a URL prefix), the paths
    to open first, whether remote objects are read anonymously (public buckets), and where
    dataset-wide jobs run (:class:`codec.jobs.ExecutorSpec`; by default every core), the
    other executors the operator offers, and how long to try to reach a Dask scheduler
    (seconds; None: the app's default)."""

    root: str
    paths: tuple[str, ...]
    anon: bool = False
    executor: ExecutorSpec = DEFAULT_EXECUTOR
    dask_timeout: float | None = None
    allowed: tuple[ExecutorSpec, ...] = ()

    @property
    def executors(self) -> tuple[ExecutorSpec, ...]:
        """Every executor a visitor may choose, the launch's own first: it, a process per
        core, this process alone, and what ``--allow-executor`` offers. Nothing else is
        ever run on, whatever a page sends: where jobs run is the operator's decision."""
        out: list[ExecutorSpec] = []
        for spec in (self.executor, DEFAULT_EXECUTOR, INLINE, *self.allowed):
            if spec not in out:
                out.append(spec)
        return tuple(out)


def app_args(argv: Sequence[str] | None = None) -> AppArgs:
    """Parse ``--root ROOT [--anon] [--executor SPEC] [--allow-executor SPEC]...
    [--dask-timeout S] [PATH...]`` from
    ``sys.argv`` (unknown arguments are ignored).

    The root defaults to the current directory; a URL root is kept as given (less a
    trailing ``/``). Parsed once per command line and working directory (a run asks a
    dozen times; each parse built a parser anew)."""
    return _parsed(tuple(sys.argv[1:] if argv is None else argv), os.getcwd())


@functools.lru_cache(maxsize=8)
def _parsed(argv: tuple[str, ...], cwd: str) -> AppArgs:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--root", default=None)
    parser.add_argument("--anon", action="store_true")
    parser.add_argument("--executor", default=None)
    parser.add_argument("--dask-timeout", type=float, default=None)
    parser.add_argument("--allow-executor", action="append", default=[])
    parser.add_argument("paths", nargs="*")
    args, _ = parser.parse_known_args(list(argv))
    if args.root and is_url(args.root):
        root = args.root.rstrip("/") if not args.root.endswith("://") else args.root
    else:
        root = os.path.realpath(args.root or cwd)
    try:
        executor = parse_executor(args.executor)
    except ExecutorError:  # the launcher refuses it first: only a hand-made command has one
        executor = DEFAULT_EXECUTOR
    allowed = []
    for text in args.allow_executor:
        with contextlib.suppress(ExecutorError):  # refused by the launcher already
            allowed.append(parse_executor(text))
    timeout = args.dask_timeout if args.dask_timeout and args.dask_timeout > 0 else None
    return AppArgs(
        root=root,
        paths=tuple(args.paths),
        anon=bool(args.anon),
        executor=executor,
        dask_timeout=timeout,
        allowed=tuple(allowed),
    )
