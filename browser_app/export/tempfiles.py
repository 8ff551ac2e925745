"""Temporary outputs that can be told apart, and cleaned up after an export that was killed.

An export writes its outputs to temporary files (or folders) beside their destinations and
renames them into place at the end (:mod:`~browser_app.export.staging`). A process killed with
SIGKILL, or a machine that loses power, leaves them behind; this module makes them safe to
remove later:

- every export run holds, in each folder it writes to, a lock file
  ``.tfb-export-<run>.lock`` with an exclusive :func:`fcntl.flock` on it for as long as it
  runs (``<run>``: 16 random hex digits). The kernel drops the lock when the process ends,
  however it ends; a process id would not say whether the process that holds it is ours;
- its temporary outputs are named ``.<name>.tfb-export-<run>.part``, files and folders alike
  (``<name>``: the destination's name, cut to :data:`NAME_BYTES` bytes, with ``~2``, ``~3``...
  when two cut names are the same); the TFRecord writer's
  own temporary file inside one is ``..<name>.tfb-export-<run>.part.<random>.tmp``;
- :func:`clean_stale` removes the temporary outputs of a run only when that run's lock file
  is there and nobody holds its lock: the run is over. A run's lock file is created locked
  (see :class:`RunLock`), before any of its temporary outputs, and removed after them, so a
  live run's lock is always held. Names that do not match, lock files that are held or that
  this user cannot open, and temporary outputs of a run without a lock file are never touched.

Where :mod:`fcntl` does not exist, nothing proves that a run is over, so nothing is cleaned.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from codec.writer import fsync_dir, new_file_mode

try:  # POSIX advisory locks: the proof that a run is alive
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not on POSIX
    _fcntl = None  # type: ignore[assignment]

__all__ = [
    "MARK",
    "NAME_BYTES",
    "Cleaned",
    "RunLock",
    "clean_stale",
    "is_ours",
    "lock_name",
    "new_temp",
    "run_alive",
    "run_of",
]

MARK = "tfb-export"
NAME_BYTES = 120  # of a destination's name kept in a temporary output's name

_RUN = r"(?P<run>[0-9a-f]{16})"
_LOCK = re.compile(rf"\.{MARK}-{_RUN}\.lock")
# A temporary output, or the TFRecord writer's temporary file inside one.
_TEMP = re.compile(rf"\..*\.{MARK}-{_RUN}\.part(?:\.[A-Za-z0-9_]+\.tmp)?", re.DOTALL)


def lock_name(run: str) -> str:
    """The name of the run ``run``'s lock file in a folder (and of its marker object beside a
    remote destination: :func:`browser_app.export.remote.mark_run`)."""
    return f".{MARK}-{run}.lock"


def run_of(name: str) -> tuple[str, str] | None:
    """``("lock", run)`` for a run's lock file name (or marker object), ``("temp", run)``
    for one of its temporary outputs, else None."""
    for kind, pattern in (("lock", _LOCK), ("temp", _TEMP)):
        m = pattern.fullmatch(name)
        if m is not None:
            return kind, m["run"]
    return None


def is_ours(name: str) -> bool:
    """Whether ``name`` (a file name, no folder) is a lock file or a temporary output of an
    export run."""
    return bool(_LOCK.fullmatch(name) or _TEMP.fullmatch(name))


def _short(name: str) -> str:
    """``name`` cut to :data:`NAME_BYTES` bytes (whole characters), so that a temporary
    output's name stays within the file system's limit."""
    raw = os.fsencode(name)
    if len(raw) <= NAME_BYTES:
        return name
    return os.fsdecode(raw[:NAME_BYTES].decode("utf-8", "ignore").encode("utf-8"))


@dataclass
class Cleaned:
    """What :func:`clean_stale` removed: ``entries`` (files and folders, lock files
    included) holding ``bytes`` bytes."""

    entries: int = 0
    bytes: int = 0

    def add(self, other: Cleaned) -> None:
        self.entries += other.entries
        self.bytes += other.bytes


class RunLock:
    """One export run's lock in one folder: created by the constructor, held until
    :meth:`release`. The run's temporary outputs in that folder are made by
    :meth:`new_temp`.

    The lock file is created with ``O_EXCL`` and locked; should a cleaner have taken it for
    stale in between (and removed it), the file at the name is no longer the one locked, and
    the constructor starts again with a new run name."""

    def __init__(self, directory: str, run: str | None = None) -> None:
        self.directory = directory
        while True:
            self.run = run or secrets.token_hex(8)
            self.path = os.path.join(directory, lock_name(self.run))
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_NOFOLLOW, 0o600)
            try:
                if _fcntl is not None:
                    _fcntl.flock(fd, _fcntl.LOCK_EX)
                if _same_file(fd, self.path):
                    os.write(fd, f"tfrecord-browser export, process {os.getpid()}\n".encode())
                    break
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
            run = None
        self._fd = fd

    def new_temp(self, dst: str, folder: bool = False) -> str:
        """Create a new, empty, private temporary file (``folder``: folder) for ``dst``, a
        path in this lock's folder, and return its path."""
        return new_temp(self.directory, self.run, dst, folder)

    def abandon(self) -> None:
        """End the run in this folder after a failure: the lock file goes first (a worker
        still writing for the run sees that and removes what it writes,
        :func:`run_alive`), then every temporary output of the run, then the lock."""
        if self._fd < 0:
            return
        try:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
            for name in _temps_of(self.directory, self.run):
                with contextlib.suppress(OSError):
                    _remove(os.path.join(self.directory, name))
        finally:
            os.close(self._fd)
            self._fd = -1

    def release(self) -> None:
        """Remove the lock file, unless a temporary output of this run is still there (then
        the next export to the folder cleans both up), and let the lock go."""
        if self._fd < 0:
            return
        try:
            if not _temps_of(self.directory, self.run):
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        finally:
            os.close(self._fd)
            self._fd = -1


def new_temp(directory: str, run: str, dst: str, folder: bool = False) -> str:
    """Create a new, empty, private temporary output (a file, or a ``folder``) of the run
    ``run`` for ``dst``, a path in ``directory``, and return its path: the run's lock is held
    by this process (:class:`RunLock`) or by the export that sent this process the run's
    work (see :func:`run_alive`)."""
    name = _short(os.path.basename(dst))
    for k in itertools.count(1):
        tag = f"~{k}" if k > 1 else ""  # two long names cut to the same bytes
        tmp = os.path.join(directory, f".{name}{tag}.{MARK}-{run}.part")
        try:
            if folder:
                os.mkdir(tmp, 0o700)
            else:
                os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            continue
        return tmp
    raise AssertionError("unreachable")


def run_alive(directory: str, run: str) -> bool:
    """Whether the run ``run`` still holds its lock file in ``directory``: what a worker
    writing for an export in another process asks before and after it writes (an export
    that failed or was cancelled removes its lock file first, :meth:`RunLock.abandon`)."""
    return os.path.isfile(os.path.join(directory, lock_name(run)))


def _same_file(fd: int, path: str) -> bool:
    """Whether ``path`` still names the regular file open as ``fd``."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    mine = os.fstat(fd)
    return stat.S_ISREG(mine.st_mode) and (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


def _listing(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _temps_of(directory: str, run: str, names: list[str] | None = None) -> list[str]:
    out = []
    for name in _listing(directory) if names is None else names:
        m = _TEMP.fullmatch(name)
        if m is not None and m["run"] == run:
            out.append(name)
    return out


def _size(path: str) -> int:
    """Bytes in the file, or in every file under the folder (links not followed)."""
    try:
        st = os.lstat(path)
    except OSError:
        return 0
    if not os.path.isdir(path) or os.path.islink(path):
        return st.st_size
    total = 0
    for top, _dirs, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(top, f)).st_size
    return total


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


def clean_stale(directory: str) -> Cleaned:
    """Remove from ``directory`` the temporary outputs and lock files of export runs that are
    over (see the module docstring). Returns what was removed; never raises for a file that
    cannot be read or removed (it stays for a later run)."""
    cleaned = Cleaned()
    if _fcntl is None:
        return cleaned
    names = _listing(directory)
    for name in names:
        m = _LOCK.fullmatch(name)
        if m is not None:
            cleaned.add(_clean_run(directory, m["run"], names))
    return cleaned


def _clean_run(directory: str, run: str, names: list[str]) -> Cleaned:
    cleaned = Cleaned()
    lock = os.path.join(directory, lock_name(run))
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return cleaned  # gone, a link, or not this user's
    try:
        assert _fcntl is not None
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except OSError:
            return cleaned  # held: the run is alive
        if not _same_file(fd, lock):
            return cleaned  # replaced or removed meanwhile
        left = 0
        for name in _temps_of(directory, run, names):
            path = os.path.join(directory, name)
            size = _size(path)
            try:
                _remove(path)
            except FileNotFoundError:
                continue
            except OSError:
                left += 1
                continue
            cleaned.entries += 1
            cleaned.bytes += size
        if not left:
            size = os.fstat(fd).st_size
            with contextlib.suppress(OSError):
                os.unlink(lock)
                cleaned.entries += 1
                cleaned.bytes += size
    finally:
        os.close(fd)
    return cleaned


@contextlib.contextmanager
def atomic_file(lock: RunLock, path: str) -> Iterator[IO[Any]]:
    """Open a temporary output of ``lock``'s run for ``path`` (in its folder); on success
    sync it and rename it over ``path``, on any failure remove it."""
    tmp = lock.new_temp(path)
    try:
        with open(tmp, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, new_file_mode())
        os.replace(tmp, path)
        fsync_dir(lock.directory)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
