"""Several TFRecord files (a list, a glob, a shard pattern) opened as one dataset.

Global record numbers run across the files in order and map back to ``(file, local index)``.
Files are indexed lazily, in order, as far as the record asked for.
"""

from __future__ import annotations

import bisect
import glob
import os
import re
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, overload

from .errors import ReaderClosedError
from .framing import Problem
from .reader import TFRecordFile, VerifyReport

_SHARD_AT = re.compile(r"^(?P<base>.+)@(?P<n>\d+)$")
_GLOB_CHARS = re.compile(r"[*?\[]")


def expand_paths(specs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """Turn paths, globs (``data/*.tfrecord``), shard patterns (``train-*-of-00100``) and
    TensorFlow's ``train@100`` shorthand into a sorted, de-duplicated list of files.

    A plain path that does not exist raises :class:`FileNotFoundError`; so does a pattern that
    matches nothing. A directory expands to the TFRecord-looking files inside it."""
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    out: list[str] = []
    for spec in specs:
        s = os.fspath(spec)
        m = _SHARD_AT.match(s)
        if m and not os.path.exists(s):
            n = int(m.group("n"))
            base = m.group("base")
            names = [f"{base}-{k:05d}-of-{n:05d}" for k in range(n)]
            stem, ext = os.path.splitext(base)
            if ext and not os.path.exists(names[0]):
                # "train.tfrecord@3" may also mean train-00000-of-00003.tfrecord.
                names = [f"{stem}-{k:05d}-of-{n:05d}{ext}" for k in range(n)]
            missing = [p for p in names if not os.path.exists(p)]
            if missing:
                raise FileNotFoundError(
                    f"{s}: {len(missing)} of {n} shards are missing, first {missing[0]}"
                )
            out.extend(names)
        elif _GLOB_CHARS.search(s) and not os.path.exists(s):
            found = sorted(p for p in glob.glob(s) if os.path.isfile(p))
            if not found:
                raise FileNotFoundError(f"{s}: no file matches this pattern")
            out.extend(found)
        elif os.path.isdir(s):
            found = sorted(
                os.path.join(s, n)
                for n in os.listdir(s)
                if looks_like_tfrecord(n) and os.path.isfile(os.path.join(s, n))
            )
            if not found:
                raise FileNotFoundError(f"{s}: the folder holds no TFRecord files")
            out.extend(found)
        else:
            if not os.path.exists(s):
                raise FileNotFoundError(f"{s}: no such file")
            out.append(s)
    seen: set[str] = set()
    unique = []
    for p in out:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


_TFRECORD_NAME = re.compile(
    r"(\.tfrecords?|\.tfrec|\.records?|-\d{5}-of-\d{5})(\.gz|\.gzip|\.zlib|\.z)?$", re.I
)


def looks_like_tfrecord(name: str) -> bool:
    """Whether a file name looks like a TFRecord file (by extension or shard suffix)."""
    return bool(_TFRECORD_NAME.search(name))


class TFRecordDataset(Sequence[bytes]):
    """Many files as one sequence of payloads, with global record numbers."""

    def __init__(
        self,
        specs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        **reader_options: Any,
    ) -> None:
        self.paths = expand_paths(specs)
        self.files: list[TFRecordFile] = []
        try:
            for p in self.paths:
                self.files.append(TFRecordFile(p, **reader_options))
        except BaseException:
            self.close()
            raise
        # _starts[k] is the global number of file k's first record, known for files
        # 0.._known (all files before the first one whose index is incomplete).
        self._closed = False

    def _starts(self, upto: int) -> list[int]:
        starts = [0]
        for f in self.files[:upto]:
            starts.append(starts[-1] + len(f))
        return starts

    def locate(self, i: int) -> tuple[int, int]:
        """``(file number, local index)`` of global record ``i`` (negative counts from the end)."""
        self._check_open()
        if i < 0:
            i += len(self)
            if i < 0:
                raise IndexError("record index out of range")
        base = 0
        for k, f in enumerate(self.files):
            f._ensure(i - base + 1)
            n = f.indexed
            if i - base < n:
                return k, i - base
            if not f.index_complete:  # pragma: no cover - _ensure completes what it can
                continue
            base += n
        raise IndexError(f"record index {i} out of range ({base} records)")

    def global_index(self, file_number: int, local: int) -> int:
        return self._starts(file_number)[-1] + local

    def __len__(self) -> int:
        self._check_open()
        return sum(len(f) for f in self.files)

    @property
    def indexed(self) -> int:
        """Records known so far, counting only complete files and the first incomplete one."""
        total = 0
        for f in self.files:
            total += f.indexed
            if not f.index_complete:
                break
        return total

    @property
    def index_complete(self) -> bool:
        return all(f.index_complete for f in self.files)

    @property
    def index_progress(self) -> float:
        sizes = [max(f.size, 1) for f in self.files]
        done = sum(s * f.index_progress for s, f in zip(sizes, self.files))
        return done / sum(sizes) if sizes else 1.0

    def index_more(self, max_records: int = 1 << 18) -> bool:
        for f in self.files:
            if not f.index_complete:
                f.index_more(max_records)
                break
        return self.index_complete

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes]:
        if isinstance(i, slice):
            return [self.read(j) for j in range(*i.indices(len(self)))]
        return self.read(i)

    def read(self, i: int) -> bytes:
        k, j = self.locate(i)
        return self.files[k].read(j)

    def span(self, i: int) -> tuple[str, int, int]:
        """``(path, offset, length)`` of global record ``i``."""
        k, j = self.locate(i)
        off, n = self.files[k].span(j)
        return self.files[k].path, off, n

    def __iter__(self) -> Iterator[bytes]:
        for f in self.files:
            yield from f

    @property
    def problems(self) -> list[Problem]:
        return [p for f in self.files for p in f.problems]

    def verify(
        self, workers: int | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[VerifyReport]:
        """Verify every file; several files are checked in parallel processes."""
        self._check_open()
        return verify_paths(
            [f.path for f in self.files], workers=workers, progress=progress, readers=self.files
        )

    def _check_open(self) -> None:
        if self._closed:
            raise ReaderClosedError("the dataset is closed")

    def close(self) -> None:
        self._closed = True
        for f in self.files:
            f.close()

    def __enter__(self) -> TFRecordDataset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _verify_one(args: tuple[str, dict[str, Any]]) -> VerifyReport:
    path, options = args
    with TFRecordFile(path, **options) as f:
        return f.verify()


def verify_paths(
    paths: Sequence[str],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    readers: Sequence[TFRecordFile] | None = None,
    **options: Any,
) -> list[VerifyReport]:
    """Check every CRC of every file. With more than one file, files are spread over
    ``workers`` processes (default: every core)."""
    workers = workers or os.cpu_count() or 1
    if len(paths) > 1 and workers > 1:
        with ProcessPoolExecutor(max_workers=min(workers, len(paths))) as pool:
            reports = []
            for n, rep in enumerate(pool.map(_verify_one, [(p, options) for p in paths])):
                reports.append(rep)
                if progress:
                    progress(n + 1, len(paths))
        if readers is not None:
            for f, rep in zip(readers, reports):
                for prob in rep.problems:
                    if prob.kind == "data_crc" and prob.offset is not None:
                        idx = bisect.bisect_left(f._offsets, prob.offset)
                        f._damaged.setdefault(idx, prob)
        return reports
    reports = []
    for n, p in enumerate(paths):
        if readers is not None:
            reports.append(readers[n].verify())
        else:
            reports.append(_verify_one((p, options)))
        if progress:
            progress(n + 1, len(paths))
    return reports
