"""What the record view remembers about a record's media between runs: the sample rate a
person gave a sample list (per source and feature, so every record of the source plays at
it), the window of a long clip's frames its player was sent, the spectrograms asked for,
and what was read once per file (a vocab, whether a file holds TensorBoard events)."""

from __future__ import annotations

from typing import Any

from browser_app.ui.state.store import read, write

__all__ = [
    "event_file",
    "frame_window",
    "keep_snapshot",
    "keep_vocab",
    "kept_snapshot",
    "kept_vocab",
    "sample_rate",
    "set_event_file",
    "set_frame_window",
    "set_sample_rate",
    "show_spectrogram",
    "spectrogram_shown",
]


def sample_rate(spec: str, feature: str) -> int | None:
    """The sample rate (Hz) the person gave the sample list ``feature`` of source ``spec``."""
    value = read(f"media:rate:{spec}\0{feature}", int)
    return value if value is not None and value > 0 else None


def set_sample_rate(spec: str, feature: str, rate: int | None) -> None:
    """Play and draw the sample list ``feature`` of ``spec`` at ``rate`` Hz (None forgets)."""
    write(f"media:rate:{spec}\0{feature}", int(rate) if rate else None)


def frame_window(key: str) -> int:
    """The first frame of the window of the clip ``key`` its player was last sent (0 until it
    asked for another)."""
    value = read(f"media:window:{key}", int)
    return value if value is not None and value >= 0 else 0


def set_frame_window(key: str, first: int) -> None:
    """Send the player of the clip ``key`` its frames from ``first`` on."""
    write(f"media:window:{key}", max(0, int(first)))


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
