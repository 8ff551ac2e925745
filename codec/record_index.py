"""The record index of one stream: where its records are, as far as the header-only scan has
reached, and the damage found on the way.

The index grows by scan steps as records are asked for (:meth:`RecordIndex.step`), so opening
is instant whatever the size, and a complete index is saved (:mod:`codec.saved_index`) so the
next open of an unchanged file does not scan at all. A text index beside the data may stand
in for the scan (:meth:`RecordIndex.adopt`, with entries checked by :mod:`codec.text_index`).
A stream inflated in the background grows while it is indexed: the end of what is inflated so
far is never taken for the end of the stream.
"""

from __future__ import annotations

import bisect
import threading
from array import array

from .byte_source import ByteSource
from .framing import HEADER_SIZE, Problem, scan
from .identity import FileIdentity
from .kinds import COMPRESSION, DATA_CRC, NO_COMPRESSION, Compression
from .recovered import first_recovered
from .saved_index import IndexCache, SavedIndex
from .text_index import Checked

__all__ = ["SCAN_BYTES", "RecordIndex", "data_crc_problem"]

SCAN_BYTES = 128 << 20  # no scan step maps more than this much of the file


class RecordIndex:
    """The index of the stream of ``source`` (named ``path``): the header ``offsets`` and
    payload ``lengths`` of its records (``array("Q")``), the ``damaged`` ones by number, the
    problems of its framing and of opening it (``found``), where the next scan step starts
    (``next``) and whether it is complete (``done``).

    ``saved`` keeps complete indexes (None: none is loaded or saved); ``problems`` are those
    opening the stream found (inflating it)."""

    def __init__(
        self,
        source: ByteSource,
        path: str,
        compression: Compression,
        problems: list[Problem],
        identity: FileIdentity,
        saved: IndexCache | None,
    ) -> None:
        self._source = source
        self.path = path
        self.compression = compression
        self.identity = identity
        self._saved = saved
        self.stream_problems = problems
        # How far one step of the header scan reads: a remote object in a few blocks, so the
        # first page waits for megabytes, not for the 128 MiB a memory map takes at once.
        self.step_bytes = 2 * source.block or SCAN_BYTES
        self.lock = threading.RLock()
        self.offsets = array("Q")
        self.lengths = array("Q")
        self.found: list[Problem] = list(problems)
        self.damaged: dict[int, Problem] = {}
        self.next = 0
        self.done = source.size == 0 and source.complete
        # A saved index is taken only over a whole stream: one still inflated in the
        # background has not said yet what inflating it found (trailing junk, a cut end).
        if not self.done and saved is not None and source.complete:
            self._load()

    # -- saved indexes ---------------------------------------------------------------------

    def _load(self) -> None:
        assert self._saved is not None
        got = self._saved.load(self.identity, self.path)
        if got is None:
            return
        self.offsets, self.lengths = got.offsets, got.lengths
        # What opening or inflating the stream found is not in the saved index (it is the
        # stream's, kept with an inflated copy): taken from the source, as a scan would.
        self.stream_problems = self._source_problems()
        self.found = list(self.stream_problems)
        for p in got.problems:
            if p.kind == DATA_CRC:  # found by the scan: a record whose length was corrected
                self._adopt_damage(p)
            else:
                self.found.append(p)
        self.next = self._source.size
        self.done = True

    def _save(self) -> None:
        if self._saved is not None:
            scanned = [p for p in self.damaged.values() if p.end != p.offset]
            self._saved.save(
                self.identity, SavedIndex(self.offsets, self.lengths, [*self.found, *scanned])
            )

    def _adopt_damage(self, problem: Problem) -> None:
        i = bisect.bisect_left(self.offsets, problem.offset or 0)
        if i < len(self.offsets) and self.offsets[i] == problem.offset:
            self.damaged[i] = problem

    # -- scanning --------------------------------------------------------------------------

    def step(self, max_records: int) -> bool:
        """Scan up to ``max_records`` more headers; whether the index is complete."""
        source, need = self._source, self._source.need
        with self.lock:
            if self.done:
                return True
            start = self.next
            prev = (self.offsets[-1], self.lengths[-1]) if self.offsets else None
            growing = not source.complete
            if growing:  # wait until the stream is inflated past this step, or ends
                need(start, start + self.step_bytes + HEADER_SIZE)
                growing = not source.complete
            size = source.size
            chunk = scan(
                source.buffer,
                start,
                size,
                max_records=max_records,
                max_bytes=self.step_bytes,
                path=self.path,
                prev=prev,
                need=need,
            )
            if growing and (chunk.done or chunk.problems or chunk.damaged):
                # The walk met the end of what is inflated so far, which is not the end of
                # the stream: wait for more and walk this step again.
                need(size, size + self.step_bytes)
                return False
            if chunk.done and self.stream_problems is not self._source_problems():
                self._adopt_stream_problems()
            if chunk.prev_length is not None:
                self.lengths[-1] = chunk.prev_length
            self.offsets.extend(chunk.offsets)
            self.lengths.extend(chunk.lengths)
            self.found.extend(chunk.problems)
            for p in chunk.damaged:
                self._adopt_damage(p)
            self.next = chunk.next_offset
            source.release(start, self.next)
            if chunk.done:
                self.done = True
                self._explain_no_records()
                self._save()
            return self.done

    def adopt(self, checked: Checked, *, save: bool) -> None:
        """Take the entries of a text index that checked out instead of scanning them
        (``save``: keep the index when it is complete)."""
        with self.lock:
            self.offsets, self.lengths = checked.offsets, checked.lengths
            self.found = list(self.stream_problems)
            self.next = checked.end
            self.done = self.next >= self._source.size
            if self.done and save:
                self._save()

    # -- problems --------------------------------------------------------------------------

    def _source_problems(self) -> list[Problem]:
        """What the source found itself (a stream inflated in the background), else the
        problems of opening it."""
        found = self._source.problems
        return self.stream_problems if found is None else found

    def _adopt_stream_problems(self) -> None:
        """Take in what inflating found, now that a stream inflated in the background is
        complete (they come first, as for a file inflated at open)."""
        found = self._source_problems()
        self.found = [*found, *self.found[len(self.stream_problems) :]]
        self.stream_problems = found

    def _explain_no_records(self) -> None:
        """A compressed file whose inflated stream holds no record at all gets one clear
        message saying so, with the inflated size, instead of a framing message about bytes
        the person never sees."""
        size = self._source.size
        if self.offsets or self.compression == NO_COMPRESSION or not size:
            return
        for n, p in enumerate(self.found):
            if p.offset == 0 and p.kind != COMPRESSION:
                name = self.compression.upper()
                self.found[n] = Problem(
                    p.kind,
                    p.offset,
                    p.end,
                    f"the {name} file inflates to {size:,} bytes that are not TFRecord"
                    " framing: no record starts at the beginning of the inflated data, nor"
                    " anywhere after it",
                    self.path,
                )
                return

    def problems(self) -> list[Problem]:
        """Damage found so far, by offset: by the header scan, and data-CRC failures met."""
        if self.stream_problems is not self._source_problems() and self._source.complete:
            self._adopt_stream_problems()
        found = self.found + list(self.damaged.values())
        return sorted(found, key=lambda p: -1 if p.offset is None else p.offset)

    def recovered_from(self) -> int | None:
        """The number of the first recovered record so far (see :mod:`codec.recovered`)."""
        return first_recovered(
            self.offsets, [*self.found, *self.damaged.values()], self._source.size, self.done
        )

    def data_crc_problem(self, i: int) -> Problem:
        """The problem of record ``i`` whose data CRC fails, kept from now on."""
        prob = self.damaged.get(i)
        if prob is None:
            prob = data_crc_problem(self.path, i, self.offsets[i], self.lengths[i])
            self.damaged[i] = prob
        return prob

    def note_damage(self, problem: Problem) -> None:
        """Adopt a data-CRC failure found elsewhere, at a record the index reaches."""
        if problem.offset is None:
            return
        i = bisect.bisect_left(self.offsets, problem.offset)
        if i < len(self.offsets) and self.offsets[i] == problem.offset:
            self.damaged.setdefault(i, problem)

    # -- numbers ---------------------------------------------------------------------------

    def number_at(self, offset: int) -> int | None:
        """The number of the first record whose header starts at or after ``offset`` in what
        is indexed; ``None`` when there is none."""
        i = bisect.bisect_left(self.offsets, offset)
        return i if i < len(self.offsets) else None

    def known_number(self, offset: int) -> int | None:
        """The number of the record whose header is at ``offset`` when the index reaches it
        (no scanning); ``None`` otherwise, or when no record starts there."""
        if offset >= self.next and not self.done:
            return None
        i = bisect.bisect_left(self.offsets, offset)
        return i if i < len(self.offsets) and self.offsets[i] == offset else None


def data_crc_problem(path: str, i: int, offset: int, length: int) -> Problem:
    """The problem of record ``i`` (header at ``offset``) whose data CRC fails."""
    return Problem(
        DATA_CRC,
        offset,
        offset,
        f"corrupted record {i}: the data CRC does not match its"
        f" {length} payload bytes (payload at byte {offset + HEADER_SIZE})",
        path,
    )
