"""Settings from the environment, in one place: every ``TFRECORD_BROWSER_*`` variable the code
reads, its default, and the one size parser they share.

Each function reads its variable when called (a test or a command line may set it after
import), and a value that cannot be read falls back to the default rather than failing:

=====================================  =======================================================
``TFRECORD_BROWSER_CACHE``             the cache folder (:func:`default_cache_dir`)
``TFRECORD_BROWSER_MAX_INFLATE``       how far a GZIP/ZLIB file may inflate
                                       (:func:`given_inflate_limit`; unset: each file's own)
``TFRECORD_BROWSER_INFLATED_CAP``      the inflated copies together (:func:`inflated_cap`)
``TFRECORD_BROWSER_REMOTE_BLOCK``      the block size of remote reads (:func:`block_size`)
``TFRECORD_BROWSER_REMOTE_CACHE_CAP``  the remote block cache (:func:`remote_cache_cap`)
``TFRECORD_BROWSER_REMOTE_TIMEOUT``    seconds before a stalled connection is an error
                                       (:func:`remote_timeout`)
=====================================  =======================================================
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = [
    "BLOCK_ENV",
    "CACHE_ENV",
    "DEFAULT_BLOCK",
    "DEFAULT_REMOTE_CAP",
    "DEFAULT_TIMEOUT",
    "INFLATED_CAP",
    "INFLATED_CAP_ENV",
    "INFLATE_RATIO",
    "MAX_INFLATE_ENV",
    "REMOTE_CAP_ENV",
    "TIMEOUT_ENV",
    "block_size",
    "default_cache_dir",
    "given_inflate_limit",
    "inflated_cap",
    "parse_size",
    "remote_cache_cap",
    "remote_timeout",
]

CACHE_ENV = "TFRECORD_BROWSER_CACHE"
MAX_INFLATE_ENV = "TFRECORD_BROWSER_MAX_INFLATE"
INFLATED_CAP_ENV = "TFRECORD_BROWSER_INFLATED_CAP"
BLOCK_ENV = "TFRECORD_BROWSER_REMOTE_BLOCK"
REMOTE_CAP_ENV = "TFRECORD_BROWSER_REMOTE_CACHE_CAP"
TIMEOUT_ENV = "TFRECORD_BROWSER_REMOTE_TIMEOUT"

INFLATE_RATIO = 100  # inflate at most this many times a file's compressed size, by default
INFLATED_CAP = 10 << 30  # the inflated copies together, by default
# 4 MiB, measured (python -m benchmarks.bench_remote --sweep: 50 ms a request, 100 MB/s):
# 1-2 MiB blocks reach only 66-75 % of the link, 8 MiB double the first page's bytes and a
# jump's time for a few % more, 16 MiB read 80 MiB for the first page and jump in > 1 s.
DEFAULT_BLOCK = 4 << 20
DEFAULT_REMOTE_CAP = 4 << 30
DEFAULT_TIMEOUT = 30.0

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(?:([kmgt])(?:i?b)?|b|bytes?)?\s*", re.I)
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """Bytes from ``"10G"``, ``"500M"``, ``"1.5GiB"``, ``"64k"`` or ``"123"`` (units are
    binary: ``1K`` is 1024 bytes). Raises ``ValueError`` with a message for anything else."""
    m = _SIZE.fullmatch(text)
    if not m:
        raise ValueError(f"{text!r} is not a size: give bytes, or a number with K, M, G or T")
    value = float(m.group(1)) * _UNITS.get((m.group(2) or "").lower(), 1)
    return int(value)


def _size(name: str) -> int | None:
    """The size in ``$name``; None when it is unset, empty or not a size."""
    text = os.environ.get(name)
    if not text:
        return None
    try:
        return parse_size(text)
    except ValueError:
        return None


CACHE_FILE_MODE = 0o600
"""Every file the cache holds (indexes, remote blocks, inflated copies, edit journals) is
the user's alone: what is read, and what is being edited, is nobody else's to see."""


def default_cache_dir() -> Path:
    """Where indexes, inflated streams and journals are kept: ``$TFRECORD_BROWSER_CACHE``,
    else the XDG cache directory. Never next to the source, which may be read-only."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfrecord-browser"


def given_inflate_limit(limit: int | None = None) -> int | None:
    """The inflate limit a person set: ``limit`` when given, else
    ``$TFRECORD_BROWSER_MAX_INFLATE``, else None (each file's default applies)."""
    return limit if limit is not None else _size(MAX_INFLATE_ENV)


def inflated_cap() -> int:
    """The total size the inflated copies may take: ``$TFRECORD_BROWSER_INFLATED_CAP`` (a
    size such as ``20G``), else :data:`INFLATED_CAP`."""
    return _size(INFLATED_CAP_ENV) or INFLATED_CAP


def block_size() -> int:
    """The block size of remote reads: ``$TFRECORD_BROWSER_REMOTE_BLOCK`` or 4 MiB."""
    return _positive_size(BLOCK_ENV, DEFAULT_BLOCK)


def remote_cache_cap() -> int:
    """The size the remote block cache is kept under (``$TFRECORD_BROWSER_REMOTE_CACHE_CAP``,
    a size such as ``20G``; default 4 GiB)."""
    return _positive_size(REMOTE_CAP_ENV, DEFAULT_REMOTE_CAP)


def _positive_size(name: str, default: int) -> int:
    """The size in ``$name``, 1 at least; ``default`` when it is unset or not a size."""
    text = os.environ.get(name)
    if not text:
        return default
    try:
        return max(1, parse_size(text))
    except ValueError:
        return default


def remote_timeout() -> float:
    """Seconds a remote connection may stall before it is an error (and retried):
    ``$TFRECORD_BROWSER_REMOTE_TIMEOUT``, 0.1 at least; 30 when it is not a number."""
    try:
        return max(0.1, float(os.environ.get(TIMEOUT_ENV, "30")))
    except ValueError:
        return DEFAULT_TIMEOUT
