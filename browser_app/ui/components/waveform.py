"""The waveform of audio the server does not decode (FLAC, Ogg, MP3), drawn in the browser
(``assets/waveform.js``): the browser decodes the clip it already plays (Web Audio's
``decodeAudioData``) and draws each column's span from the smallest to the largest sample,
as the server draws a WAV's (:func:`browser_app.view.media.waveform_png`). A clip the browser
cannot decode says so in place of the waveform.

The host element (class ``tfb-wave``, ``data-testid="tfb-wave"``) says what it shows, for
tests: ``data-state`` (``drawn``, ``failed``, or empty while it decodes), ``data-seconds``
(the clip's length as decoded) and ``data-channels``."""

from __future__ import annotations

from typing import Any

from browser_app.ui.components import served
from browser_app.view import media as vm

__all__ = ["NAME", "mount", "wave_data"]

NAME = "tfrecord_browser.waveform"


def wave_data(src: str, width: int, height: int = 96) -> dict[str, Any]:
    """What the element is sent: the clip's URL (the bytes the player plays), the picture's
    size in CSS pixels and the colours of the wave and its zero line."""
    r, g, b = vm.WAVE_COLOR
    mr, mg, mb, ma = vm.MID_COLOR
    return {
        "src": src,
        "width": int(width),
        "height": int(height),
        "color": f"rgb({r}, {g}, {b})",
        "mid": f"rgba({mr}, {mg}, {mb}, {ma / 255:.3f})",
    }


def mount(key: str, data: dict[str, Any]) -> Any:
    """Draw the waveform element with ``data`` (:func:`wave_data`)."""
    return served.renderer(NAME, "waveform")(key=key, data=data)
