"""How a feature's values are written in one cell of the record editor's table, and why a
cell's text was not saved. The form of a cell's text is described, and read back into an edit,
in :mod:`browser_app.edits.cells`.
"""

from __future__ import annotations

import json

from browser_app.edits.cells import placeholder
from browser_app.edits.values import BYTES_PREFIXES, render_value
from codec import example as ex
from codec.kinds import BYTES, FLOAT, INT64
from codec.values import is_text, sniff_image

__all__ = ["MAX_TEXT_CELL", "cell_reason", "cell_text"]

MAX_TEXT_CELL = 2000  # longer values are shown as a placeholder
_MAX_HEX_CELL = 64  # longer binary values are shown as a placeholder
_FIRST = "value 0: "  # how a list's reason names its first value


def _bytes_text(v: bytes, i: int, in_list: bool) -> str:
    if len(v) > MAX_TEXT_CELL or sniff_image(v):
        return placeholder(v, i)
    if is_text(v):
        s = v.decode("utf-8")
        if s[:7].lower().startswith(BYTES_PREFIXES) or (not in_list and s.startswith("[")):
            return "text:" + s
        return s
    if len(v) <= _MAX_HEX_CELL:
        return "hex:" + v.hex()
    return placeholder(v, i)


def cell_text(feat: ex.Feature) -> str:
    """A feature's values as they are written in the editor's table (see the module doc)."""
    if feat.type == BYTES:
        values = [bytes(v) for v in feat.values]
        if len(values) == 1:
            return _bytes_text(values[0], 0, in_list=False)
        return json.dumps(
            [_bytes_text(v, i, in_list=True) for i, v in enumerate(values)], ensure_ascii=False
        )
    if feat.type in (INT64, FLOAT):
        return ", ".join(render_value(feat.type, v) for v in feat.values)
    return ""


def cell_reason(text: str, reason: str) -> str:
    """Why a cell's ``text`` was not saved, as the cell says it: a cell of one value leaves
    out which value it was (``value 0: ``)."""
    if reason.startswith(_FIRST) and len(text.replace(",", " ").split()) <= 1:
        return reason[len(_FIRST) :]
    return reason
