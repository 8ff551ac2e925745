"""What the record view remembers about a record's media between runs: the sample rate a
person gave a sample list (per source and feature, so every record of the source plays at
it), a clip's playback (when it started and from which frame), the spectrograms asked for,
and what was read once per file (a vocab, whether a file holds TensorBoard events)."""

from __future__ import annotations

from typing import Any

from browser_app.ui.state.store import read, write

__all__ = [
    "Playback",
    "event_file",
    "keep_snapshot",
    "keep_vocab",
    "kept_snapshot",
    "kept_vocab",
    "playback",
    "sample_rate",
    "set_event_file",
    "set_playback",
    "set_sample_rate",
    "show_spectrogram",
    "spectrogram_shown",
]

Playback = tuple[float, int]
"""A clip playing: the monotonic time it started at, and the frame it started from."""


def sample_rate(spec: str, feature: str) -> int | None:
    """The sample rate (Hz) the person gave the sample list ``feature`` of source ``spec``."""
    value = read(f"media:rate:{spec}\0{feature}", int)
    return value if value is not None and value > 0 else None


def set_sample_rate(spec: str, feature: str, rate: int | None) -> None:
    """Play and draw the sample list ``feature`` of ``spec`` at ``rate`` Hz (None forgets)."""
    write(f"media:rate:{spec}\0{feature}", int(rate) if rate else None)


def playback(key: str) -> Playback | None:
    """The playback of the clip ``key`` (:data:`Playback`), or None when it is not playing."""
    value = read(f"media:play:{key}", tuple)
    if value is None or len(value) != 2:
        return None
    started, frame = value
    if not isinstance(started, float) or not isinstance(frame, int):
        return None
    return started, frame


def set_playback(key: str, value: Playback | None) -> None:
    """Start (``(now, frame)``) or stop (None) the playback of the clip ``key``."""
    write(f"media:play:{key}", value)


def spectrogram_shown(key: str) -> bool:
    """Whether the spectrogram of the audio ``key`` was asked for."""
    return bool(read(f"media:spectrogram:{key}", bool))


def show_spectrogram(key: str, shown: bool = True) -> None:
    write(f"media:spectrogram:{key}", shown)


def kept_vocab(path: str, identity: object) -> Any | None:
    """The vocab read from ``path`` when the file was ``identity`` (its size and time), or
    None (never read, or changed since)."""
    value = read(f"media:vocab:{path}", tuple)
    if value is None or len(value) != 2 or value[0] != identity:
        return None
    return value[1]


def keep_vocab(path: str, identity: object, vocab: Any) -> None:
    write(f"media:vocab:{path}", (identity, vocab))


def event_file(path: str, identity: object) -> bool | None:
    """Whether the file ``path`` (as ``identity``) was found to hold TensorBoard events;
    None when not looked at yet."""
    value = read(f"media:events:{path}", tuple)
    if value is None or len(value) != 2 or value[0] != identity:
        return None
    return bool(value[1])


def set_event_file(path: str, identity: object, holds: bool) -> None:
    write(f"media:events:{path}", (identity, holds))


def kept_snapshot(folder: str, identity: object) -> Any | None:
    """What the ``Dataset.save`` folder ``folder`` was found to hold (a
    :class:`codec.snapshot.Snapshot`, or False for a folder that is not one) when its
    metadata was ``identity``; None when not looked at since."""
    value = read(f"media:snapshot:{folder}", tuple)
    if value is None or len(value) != 2 or value[0] != identity:
        return None
    return value[1]


def keep_snapshot(folder: str, identity: object, found: Any) -> None:
    write(f"media:snapshot:{folder}", (identity, found))
