"""Where a job's tasks run, as one parsed value: :class:`ExecutorSpec`.

Every form a person or a program names an executor in is read by :func:`parse_executor`,
once, wherever it comes from (``--executor``, ``--dask``, ``--workers``, the app's launch
options and sidebar, the library's ``executor=`` arguments); everything after works on the
parsed value, and its text (``str(spec)``) is the one way it is printed:

==========================  =========================================================
text                        runs the tasks on
==========================  =========================================================
(none), ``processes``       a process per core (at most one per task)
``processes:N``             N local processes
``inline``                  this process, one task after the other
``dask:local[:N]``          a Dask cluster of N workers started here for the job
``dask:tcp://HOST:PORT``    a running Dask scheduler (also ``tcp://…``, ``tls://…``,
                            ``dask:HOST:PORT`` and a bare ``HOST:PORT``)
==========================  =========================================================

This module imports nothing heavy: a command line parses its options before any job code
loads.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Literal

from ..errors import ExecutorError

__all__ = [
    "DEFAULT",
    "INLINE",
    "SCHEMES",
    "SPECS",
    "ExecutorSpec",
    "Kind",
    "cores",
    "dask_address",
    "parse_executor",
]

Kind = Literal["inline", "processes", "dask-local", "dask"]

SPECS = "inline, processes[:N], dask:local[:N] or dask:tcp://host:port"
SCHEMES = ("tcp", "tls", "ws", "wss", "inproc", "ucx")  # addresses a Dask scheduler listens on


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


@dataclass(frozen=True)
class ExecutorSpec:
    """An executor named: its ``kind``, how many ``workers`` (``processes`` and
    ``dask-local``; ``None``: one per core) and a running scheduler's ``address``
    (``dask``: ``scheme://host:port``). Make one with :func:`parse_executor`."""

    kind: Kind = "processes"
    workers: int | None = None
    address: str = ""

    def __str__(self) -> str:
        n = "" if self.workers is None else f":{self.workers}"
        if self.kind == "inline":
            return "inline"
        if self.kind == "processes":
            return f"processes{n}"
        if self.kind == "dask-local":
            return f"dask:local{n}"
        return f"dask:{self.address}"

    @property
    def is_dask(self) -> bool:
        """Whether the tasks run on a Dask cluster (started here or running)."""
        return self.kind in ("dask", "dask-local")

    @property
    def is_default(self) -> bool:
        """Whether this is the default: a process per core, not asked for by size."""
        return self.kind == "processes" and self.workers is None

    @property
    def planned_workers(self) -> int:
        """How many workers run the tasks, when that is known before anything starts: the
        pool's processes, a local cluster's workers; else 1 (this process, or a running
        cluster not asked yet)."""
        if self.kind in ("processes", "dask-local"):
            return self.workers or cores()
        return 1

    def fit(self, tasks: int, *, work: int = 0, inline_most: int | None = None) -> ExecutorSpec:
        """The executor a job of ``tasks`` tasks runs on: the one rule of how large a pool
        is, for the library, the commands and the app. A pool is never larger than the
        tasks. One task runs in this process (no process is worth starting for it) when the
        pool was not asked for by size, or, with ``inline_most``, when its ``work`` is at
        most that many bytes (a caller that must stay responsive keeps larger work out of
        its process, whatever it was asked). Other executors are returned as they are."""
        if self.kind != "processes":
            return self
        small = self.workers is None if inline_most is None else work <= inline_most
        if tasks <= 1 and small:
            return INLINE
        return replace(self, workers=min(self.workers or cores(), max(1, tasks)))


INLINE = ExecutorSpec("inline")
DEFAULT = ExecutorSpec()


def parse_executor(spec: ExecutorSpec | str | None) -> ExecutorSpec:
    """The executor ``spec`` names, in any of the forms of this module's table (``None`` or
    an empty text: the default). Raises :class:`~codec.errors.ExecutorError` for a text
    that names none, saying which forms there are."""
    if isinstance(spec, ExecutorSpec):
        return spec
    text = (spec or "").strip()
    if not text:
        return DEFAULT
    name, _, rest = text.partition(":")
    if name == "inline" and not rest:
        return INLINE
    if name == "processes":
        return ExecutorSpec("processes", _count(text, rest) if rest else None)
    if name == "dask":
        where, _, n = rest.partition(":")
        if where == "local":
            return ExecutorSpec("dask-local", _count(text, n) if n else None)
        address = _address(rest)
        if address:
            return ExecutorSpec("dask", address=address)
    elif name in SCHEMES and rest.startswith("//"):
        address = _address(text)
        if address:
            return ExecutorSpec("dask", address=address)
    elif _host_port(text):
        return ExecutorSpec("dask", address=f"tcp://{text}")
    raise ExecutorError(f"{text!r} is not an executor: use {SPECS}")


def dask_address(address: str) -> str:
    """The executor text of a Dask cluster as a person names it where only Dask is meant
    (``--dask``, the app's scheduler box): ``local`` or ``local:4`` (a cluster started
    here), ``tcp://host:8786`` (any scheme a scheduler listens on), ``host:8786``, or a
    ``dask:…`` text already. Parse it with :func:`parse_executor`."""
    text = address.strip()
    return text if text.startswith("dask:") else f"dask:{text}"


def _address(text: str) -> str:
    """A scheduler's address: ``scheme://…`` as given, ``host:port`` as ``tcp://host:port``;
    else empty."""
    scheme, sep, where = text.partition("://")
    if sep:
        return text if scheme in SCHEMES and where else ""
    return f"tcp://{text}" if _host_port(text) else ""


_NAMES = ("inline", "processes", "dask", "local")  # never a scheduler's host: a mistyped spec


def _host_port(text: str) -> bool:
    host, _, port = text.rpartition(":")
    return bool(host) and port.isdigit() and host not in _NAMES and not set(host) & set("/ \t")


def _count(spec: str, text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ExecutorError(f"{spec!r}: the number of workers must be a whole number from 1")
    return n
