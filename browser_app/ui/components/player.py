"""A clip's player drawn in the browser (``assets/player.js``): the frame with its boxes, a
frame slider, the previous and next frame, play and pause at the clip's frame rate, and a
film strip of the frames around the one shown.

Python sends the frames by URL (:func:`clip_data`: each frame's picture as stored when the
browser can show it, and its boxes as numbers the element draws over it) and the element
plays them on its own: no run of the script per frame, so a clip plays at its rate however
busy the server is, and stops at its last frame. A clip longer than :data:`WINDOW` frames is
sent a window at a time; the element asks for the window holding a frame it needs (the
trigger value ``want``: ``{"frame": N, "seq": K}``) and waits for it.

The host element (class ``tfb-player``, ``data-testid="tfb-player"``) says what it shows, for
tests: ``data-frame`` (the frame shown, from 1), ``data-count``, ``data-first`` (the first
frame, from 0, of the window it was sent), ``data-playing`` ("1" while it plays), ``data-rev``
(one more each time data from Python is applied)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from browser_app.ui.components import served
from browser_app.view import media as vm
from codec import example as ex
from codec.values import plural

__all__ = ["NAME", "WINDOW", "clip_data", "mount", "want_of", "window_start"]

NAME = "tfrecord_browser.player"
WINDOW = 240  # frames sent at once (a longer clip is sent a window at a time)


def window_start(count: int, frame: int, window: int = WINDOW) -> int:
    """The first frame of the window sent for a clip of ``count`` frames when frame
    ``frame`` (from 0) is wanted: the frame a quarter into it, the window kept inside the
    clip."""
    if count <= window:
        return 0
    first = max(0, min(frame, count - 1) - window // 4)
    return min(first, count - window)


def clip_data(
    key: str,
    record: ex.Record,
    frames: vm.Frames,
    urls: Callable[[Sequence[tuple[bytes | None, str]]], list[str | None]],
    *,
    first: int = 0,
    boxes: bool = True,
    hidden: Iterable[tuple[str | None, int | None]] = (),
    window: int = WINDOW,
) -> dict[str, Any]:
    """What the element is sent for ``frames`` of ``record``: the clip's facts and frames
    ``first`` … ``first + window`` (each its picture's URL from ``urls``, its size, caption,
    boxes — none unless ``boxes`` — and the problems of its boxes). ``key`` names the clip
    (the element keeps its frame across runs under it)."""
    first = max(0, min(first, max(0, frames.count - window)))
    stop = min(frames.count, first + window)
    pictures = [vm.frame_picture(frames, i) for i in range(first, stop)]
    links = urls([(p.data, p.mime) for p in pictures])
    hide = tuple(hidden)
    sent = []
    for p, url in zip(pictures, links):
        marks = (
            vm.frame_marks(record, frames, p.index, p.width, p.height, hidden=hide)
            if boxes and p.data is not None and frames.boxes is not None
            else []
        )
        caption = p.caption
        drawn = [m for m in marks if m["drawable"]]
        if marks:
            caption += f" · {plural(len(marks), 'box', 'boxes')}"
        sent.append(
            {
                "src": url,
                "w": p.width,
                "h": p.height,
                "caption": caption,
                "error": p.error,
                "boxes": drawn,
                "problems": [m["problems"] for m in marks if m["problems"]][:5],
            }
        )
    return {
        "key": key,
        "count": frames.count,
        "fps": frames.fps,
        "first": first,
        "frames": sent,
    }


def want_of(value: Any) -> tuple[int, int] | None:
    """``(frame, seq)`` of the trigger value ``want``, or None when it is not one (anything
    from the browser is checked, never trusted)."""
    if not isinstance(value, Mapping):
        return None
    frame, seq = value.get("frame"), value.get("seq")
    if not isinstance(frame, int) or isinstance(frame, bool) or frame < 0:
        return None
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None
    return frame, seq


def mount(key: str, data: Mapping[str, Any], on_want: Callable[[], None]) -> Any:
    """Draw the player with ``data`` (:func:`clip_data`); ``on_want`` runs when it asks for
    another window of frames. Returns its result (``want``)."""
    return served.renderer(NAME, "player")(key=key, data=dict(data), on_want_change=on_want)
