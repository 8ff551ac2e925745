"""A Dask scheduler for the job tests: one ``LocalCluster`` in this process (its workers are
threads of it), on 127.0.0.1 over TCP and without a dashboard, so it is reached by its
``tcp://`` address as a remote one is. Dask is imported only when one is started (the test is
skipped where it is not installed). The tests import this module as ``dask_support``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest


@contextlib.contextmanager
def local_scheduler(n_workers: int, threads_per_worker: int | None = None) -> Iterator[Any]:
    """The ``distributed.LocalCluster`` (address: ``.scheduler_address``) with ``n_workers``
    workers (none: its tasks wait), closed at the end."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=n_workers,
        threads_per_worker=threads_per_worker,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    )
    try:
        yield cluster
    finally:
        cluster.close()
