"""The journal file: one JSON object per line, appended as edits are made.

Lines, in the order they were written::

    {"type": "header", "version": 1, "created": ts, "sources": [identity, ...]}   first line
    {"type": "change", "id", "ts", "target", "op", "section", "name", "before", "after",
     "detail", ["warnings"], ["payload"]}                       one edit (payload: new record)
    {"type": "undo", "ids": [...], "ts"}                        changes reverted together
    {"type": "redo", "ids": [...], "ts"}                        changes re-applied
    {"type": "mark", "target", "status", "comment", "ts"}       a review mark (status null clears)

The header names every source file with its identity (``codec.cache.FileIdentity``: size,
modification and inode-change times, the CRC32C of both ends, and a digest of every record's
offset, length and data CRC); a journal whose sources changed is refused with
:class:`~browser_app.errors.JournalMismatchError`. Several journal objects (tabs, processes)
may append to one file: each takes an advisory lock, first reads what the others appended,
then appends. A line is synced to disk as it is written (``fsync="change"``) or once at the
end of a batch.

A journal heals: a last line cut short by a crash (seen under the lock, so it is not another
writer's line in progress) is moved to a side file (``<name>.torn-<time>.jsonl``), the file is
cut back to its last whole line and :attr:`JournalFile.torn` says so; appends always start on
a clean line. A line that cannot be read names its own byte position.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from browser_app.edits.model import (
    ADD_RECORD,
    FEATURE_LISTS,
    FEATURES,
    MARK_STATUSES,
    OPS,
    SECTIONS,
    Change,
    ChangeValue,
    DetailValue,
    MarkStatus,
    Op,
    Part,
    RecordRef,
    Section,
)
from browser_app.edits.values import feature_from_json, feature_to_json
from browser_app.errors import JournalError, JournalMismatchError
from codec import example as ex
from codec.example import Feature
from codec.identity import FileIdentity
from codec.settings import CACHE_FILE_MODE, default_cache_dir

try:  # POSIX advisory locks keep two processes appending to one journal in order
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - not on POSIX
    _fcntl = None  # type: ignore[assignment]

__all__ = [
    "FSYNC_MODES",
    "JOURNAL_VERSION",
    "ChangeLine",
    "FsyncMode",
    "JournalFile",
    "Line",
    "MarkLine",
    "UndoLine",
    "discard_journal",
    "journal_path",
    "line_from_json",
    "line_to_json",
    "source_identity",
]

JOURNAL_VERSION = 1

FsyncMode = Literal["change", "batch"]
FSYNC_MODES: tuple[FsyncMode, ...] = ("change", "batch")

JsonObject = dict[str, Any]  # one parsed line; JSON values are what json.loads gives


@dataclass(frozen=True)
class ChangeLine:
    """A change as the journal holds it, with the payload of a new record."""

    change: Change
    payload: bytes | None = None


@dataclass(frozen=True)
class UndoLine:
    """Changes reverted together (with ``redo``: re-applied)."""

    ids: tuple[int, ...]
    timestamp: float
    redo: bool = False


@dataclass(frozen=True)
class MarkLine:
    """A review mark set on a record, or cleared (``status`` ``None``)."""

    target: RecordRef
    status: MarkStatus | None
    comment: str
    timestamp: float


Line = ChangeLine | UndoLine | MarkLine
"""A line of the journal after its header."""


# --------------------------------------------------------------------------------------------
# Where journals live, and what they remember about their sources


Digests = Callable[[int], str]
"""``digest(k)``: the index digest of source file ``k`` (its records' offsets, lengths and
data CRCs; :meth:`codec.TFRecordFile.index_digest`)."""


def source_identity(
    paths: Sequence[str | os.PathLike[str]],
    digests: Digests | None = None,
    *,
    anon: bool = False,
) -> list[FileIdentity]:
    """The identity of each source file, in order, with the CRC32C of both ends and, when
    ``digests`` is given, the digest of its index; remote objects asked about anonymously
    when ``anon`` (a public bucket the source was opened from so)."""
    out = []
    for k, p in enumerate(paths):
        ident = FileIdentity.of(p, content=True, anon=anon)
        if digests is not None:
            ident = dataclasses.replace(ident, index_digest=digests(k))
        out.append(ident)
    return out


def journal_path(
    paths: Sequence[str | os.PathLike[str]], cache_dir: str | os.PathLike[str] | None = None
) -> Path:
    """Where the journal of a source (its list of files) lives: keyed by the files' real
    paths, so a changed file finds its old journal and is told about the change."""
    base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = "\0".join(os.path.realpath(os.fspath(p)) for p in paths)
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return base / "journals" / f"{digest}.jsonl"


def discard_journal(path: str | os.PathLike[str], reason: str = "discarded") -> Path | None:
    """Move a journal file aside (``<name>.<reason>-<time>.jsonl``) so a fresh one can start;
    returns the new name, or ``None`` when there was no journal."""
    p = Path(path)
    if not p.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = p.with_name(f"{p.stem}.{reason}-{stamp}-{os.getpid()}.jsonl")
    os.replace(p, target)
    return target


# --------------------------------------------------------------------------------------------
# Lines to JSON and back


def _part_to_json(section: Section, value: ChangeValue) -> Any:
    if section == FEATURES and isinstance(value, Feature):
        return feature_to_json(value)
    if section == FEATURE_LISTS and isinstance(value, list):
        return [feature_to_json(f) for f in value]
    return None  # absent, or a new record (kept as its payload)


def _part_from_json(section: Section, value: Any) -> Part:
    if value is None:
        return None
    if section == FEATURES:
        return feature_from_json(value)
    if section == FEATURE_LISTS:
        return [feature_from_json(f) for f in value]
    return None


def _ref_from_json(v: Any) -> RecordRef:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise JournalError(f"bad record reference {v!r} in the journal")
    return v


_OPS: dict[str, Op] = {op: op for op in OPS}
_SECTIONS: dict[str, Section] = {s: s for s in SECTIONS}
_MARK_STATUSES: dict[str, MarkStatus] = {s: s for s in MARK_STATUSES}


def line_to_json(line: Line) -> JsonObject:
    """The JSON object of a line (the file's format, see the module docstring)."""
    if isinstance(line, UndoLine):
        return {
            "type": "redo" if line.redo else "undo",
            "ids": list(line.ids),
            "ts": line.timestamp,
        }
    if isinstance(line, MarkLine):
        return {
            "type": "mark",
            "target": line.target,
            "status": line.status,
            "comment": line.comment,
            "ts": line.timestamp,
        }
    ch = line.change
    obj: JsonObject = {
        "type": "change",
        "id": ch.id,
        "ts": ch.timestamp,
        "target": ch.target,
        "op": ch.op,
        "section": ch.section,
        "name": ch.name,
        "before": _part_to_json(ch.section, ch.before),
        "after": _part_to_json(ch.section, ch.after),
        "detail": dict(ch.detail),
    }
    if ch.warnings:
        obj["warnings"] = list(ch.warnings)
    if line.payload is not None:
        obj["payload"] = base64.b64encode(line.payload).decode("ascii")
    return obj


def _change_from_json(obj: Mapping[str, Any], path: Path) -> ChangeLine:
    try:
        op = _OPS[obj["op"]]
        section = _SECTIONS[obj["section"]]
        target = _ref_from_json(obj["target"])
        detail: dict[str, DetailValue] = dict(obj.get("detail") or {})
        if "after" in detail:
            detail["after"] = _ref_from_json(detail["after"])
        if detail.get("source") is not None:
            detail["source"] = _ref_from_json(detail["source"])
        after: ChangeValue = _part_from_json(section, obj.get("after"))
        payload = None
        if op == ADD_RECORD:
            payload = base64.b64decode(obj["payload"])
            kind = detail.get("kind", "auto")
            after = ex.decode(payload, kind if isinstance(kind, str) else "auto")
        change = Change(
            id=int(obj["id"]),
            target=target,
            op=op,
            section=section,
            name=obj.get("name"),
            before=_part_from_json(section, obj.get("before")),
            after=after,
            timestamp=float(obj.get("ts", 0.0)),
            detail=detail,
            warnings=tuple(obj.get("warnings") or ()),
        )
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise JournalError(f"{path}: a change line is damaged: {exc!r}") from exc
    return ChangeLine(change, payload)


def line_from_json(obj: Mapping[str, Any], path: Path) -> Line:
    """The line a JSON object (other than the header) stands for; :class:`JournalError`
    naming ``path`` when it is not one."""
    t = obj.get("type")
    if t == "change":
        return _change_from_json(obj, path)
    if t in ("undo", "redo"):
        ids = tuple(int(cid) for cid in obj.get("ids", []))
        return UndoLine(ids, obj.get("ts", 0.0), redo=t == "redo")
    if t == "mark":
        status = obj.get("status")
        if status is not None and status not in _MARK_STATUSES:
            raise JournalError(f"{path}: a mark line is damaged: status {status!r}")
        return MarkLine(
            _ref_from_json(obj["target"]),
            None if status is None else _MARK_STATUSES[status],
            obj.get("comment", ""),
            obj.get("ts", 0.0),
        )
    raise JournalError(f"{path}: unknown line type {t!r}")


# --------------------------------------------------------------------------------------------
# The file


class _Fresh:
    """``with file.fresh:`` holds the file's lock, having read what others appended. A plain
    class rather than a generator context manager: it is on the path of every read."""

    __slots__ = ("_file",)

    def __init__(self, file: JournalFile) -> None:
        self._file = file

    def __enter__(self) -> None:
        self._file.lock.acquire()
        try:
            self._file.catch_up()
        except BaseException:
            self._file.lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self._file.lock.release()


class JournalFile:
    """The journal file of a source: created on the first line written, read incrementally.

    ``on_line`` receives every line after the header, whoever wrote it (this object, another
    tab's or another process's); ``on_restart`` is called when the file was discarded and
    started again, so the reader drops what it had. The methods do not lock: the caller
    holds :attr:`lock` (a re-entrant lock, also taken by ``with file.fresh:``) around every
    call and around its own use of what the lines fed."""

    def __init__(
        self,
        path: Path,
        sources: Sequence[str],
        *,
        fsync: FsyncMode = "change",
        on_line: Callable[[Line], None],
        on_restart: Callable[[], None],
        digests: Digests | None = None,
        anon: bool = False,
    ) -> None:
        self.path = path
        self.sources = list(sources)
        self.digests = digests
        self.anon = anon  # how the sources' remote objects are asked about
        self.torn: Path | None = None  # where a cut-off last line was put, once healed
        self.damaged: str | None = None  # why a line of the file cannot be read, once seen
        self.fsync = fsync
        self.identity: list[FileIdentity] | None = None  # as the header remembers it
        self.offset = 0  # bytes of the file read (or written) so far
        self.lock = threading.RLock()
        self.fresh = _Fresh(self)
        self._on_line = on_line
        self._on_restart = on_restart
        self._fd = -1
        self._batch_depth = 0
        self._write_depth = 0
        self._dirty = False

    # -- opening and reading ---------------------------------------------------------------

    def open_existing(self) -> None:
        """Read the journal when there is one (checking its sources' identity)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot read the journal: {exc.strerror}") from exc
        if st.st_size == 0:
            return
        self._open_fd(create=False)
        with self._file_lock():
            self._heal()
        self.catch_up()

    def _heal(self) -> None:
        """Under the file lock: a last line without its newline was cut by a crash (a writer
        holds the lock while it writes). Keep it in a side file and cut the journal back to
        its last whole line, so the next append starts on a clean line."""
        size = os.fstat(self._fd).st_size
        if not size or os.pread(self._fd, 1, size - 1) == b"\n":
            return
        tail_from = max(0, size - (1 << 20))
        tail = os.pread(self._fd, size - tail_from, tail_from)
        cut = tail.rfind(b"\n") + 1
        whole = tail_from + cut if cut or tail_from == 0 else tail_from
        fragment = os.pread(self._fd, size - whole, whole)
        side = self.path.with_name(
            f"{self.path.stem}.torn-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.jsonl"
        )
        try:
            side.write_bytes(fragment)
            os.ftruncate(self._fd, whole)
            os.fsync(self._fd)
        except OSError as exc:
            raise JournalError(
                f"{self.path}: its last line was cut short at byte {whole:,} and cannot be set"
                f" aside: {exc.strerror or exc}"
            ) from exc
        self.torn = side
        if self.offset > whole:
            self.offset = 0
            self._on_restart()

    def _open_fd(self, create: bool) -> None:
        if self._fd >= 0:
            return
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT if create else 0)
        try:
            if create:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, flags, CACHE_FILE_MODE)
        except OSError as exc:
            raise JournalError(
                f"{self.path}: cannot open the journal: {exc.strerror or exc}"
            ) from exc

    def _close_fd(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        if _fcntl is None or self._fd < 0:
            yield
            return
        _fcntl.flock(self._fd, _fcntl.LOCK_EX)
        try:
            yield
        finally:
            _fcntl.flock(self._fd, _fcntl.LOCK_UN)

    def catch_up(self) -> None:
        """Hand on the lines appended since the file was last read (by this object, another
        tab's journal object or another process)."""
        if self._fd < 0:
            try:
                if not self.path.exists() or self.path.stat().st_size == 0:
                    return
            except OSError:
                return
            self._open_fd(create=False)
        size = os.fstat(self._fd).st_size
        if size < self.offset:
            # The journal was discarded and restarted (e.g. after replacing the source).
            self.offset = 0
            self._on_restart()
        if size == self.offset:
            return
        data = os.pread(self._fd, size - self.offset, self.offset)
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        at = self.offset
        for raw in data[:end].split(b"\n")[:-1]:
            here, at = at, at + len(raw) + 1
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                self.damaged = (
                    f"{self.path}: the line at byte {here:,} is not JSON ({exc.msg}); the"
                    " journal is damaged"
                )
                raise JournalError(self.damaged) from exc
            try:
                if obj.get("type") == "header":
                    remembered = [FileIdentity.from_json(x) for x in obj.get("sources", [])]
                    self._check_identity(remembered)
                else:
                    self._on_line(line_from_json(obj, self.path))
            except JournalError as exc:
                if isinstance(exc, JournalMismatchError):
                    raise
                self.damaged = f"{exc} (the line at byte {here:,})"
                raise JournalError(self.damaged) from exc
        # Only once every line was taken: a line that failed is read again next time.
        self.offset += end

    def _check_identity(self, remembered: list[FileIdentity]) -> None:
        now = source_identity(self.sources, anon=self.anon)
        problems: list[str] = []
        old_paths = [r.path for r in remembered]
        new_paths = [n.path for n in now]
        if old_paths != new_paths:
            problems.append(
                f"the journal is for {', '.join(old_paths)}, not {', '.join(new_paths)}"
            )
        else:
            for k, (then, cur) in enumerate(zip(remembered, now)):
                found = then.differences(cur)
                if not found and then.changed_since(cur) and self.digests is not None:
                    # Written to since (the inode-change time moved, and no one can set it
                    # back): the records themselves must be the same.
                    found = then.differences(dataclasses.replace(cur, index_digest=self.digests(k)))
                problems.extend(found)
        if problems:
            raise JournalMismatchError(str(self.path), problems)
        self.identity = remembered

    # -- writing ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Lock the file, catch up with other writers, and make sure the file and its header
        exist; :meth:`append` lines inside."""
        if self._write_depth:
            self._write_depth += 1
            try:
                yield
            finally:
                self._write_depth -= 1
            return
        self._open_fd(create=True)
        with self._file_lock():
            self._heal()
            self.catch_up()
            if self.offset == 0:
                ident = source_identity(self.sources, self.digests, anon=self.anon)
                self._write(
                    {
                        "type": "header",
                        "version": JOURNAL_VERSION,
                        "created": time.time(),
                        "sources": [i.to_json() for i in ident],
                    }
                )
                self.identity = ident
            self._write_depth = 1
            try:
                yield
            finally:
                self._write_depth = 0

    def append(self, line: Line) -> None:
        """Write one line (inside :meth:`writing`); synced now unless in a batch or with
        ``fsync="batch"``. A line that cannot be saved is taken back and raises
        :class:`JournalError`: the edit was not made."""
        self._write(line_to_json(line))

    def _write(self, obj: JsonObject) -> None:
        data = (json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            os.write(self._fd, data)
            if self._batch_depth == 0 and self.fsync == "change":
                os.fsync(self._fd)
            else:
                self._dirty = True
        except OSError as exc:
            # Take back a line that may have reached the file: the change was not made.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self.offset)
            raise JournalError(
                f"{self.path}: cannot save the change: {exc.strerror or exc}; it was not made"
            ) from exc
        self.offset += len(data)

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Sync once at the end of the block instead of once per line."""
        self._batch_depth += 1
        try:
            yield
        finally:
            self._batch_depth -= 1
            if self._batch_depth == 0:
                self.flush()

    def flush(self) -> None:
        """Sync every line written so far to disk."""
        if self._dirty and self._fd >= 0:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                raise JournalError(
                    f"{self.path}: cannot sync the journal: {exc.strerror or exc}"
                ) from exc
            self._dirty = False

    def close(self) -> None:
        """Sync what was written and close the file."""
        with contextlib.suppress(JournalError):
            self.flush()
        self._close_fd()

    def discard(self) -> Path | None:
        """Move the file aside (:func:`discard_journal`) and start empty; returns its new
        name, or ``None`` when there was no file."""
        self._close_fd()
        moved = discard_journal(self.path)
        self.offset = 0
        self.identity = None
        self._on_restart()
        return moved
