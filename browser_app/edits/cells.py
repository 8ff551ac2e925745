"""A feature's values as one cell of the record editor's table holds them, read back.

int64 and float lists are numbers separated by commas (``1, 2, 3``; floats as the shortest
text that reads back as the same float32). A bytes value is UTF-8 text, or ``hex:00ff`` /
``base64:AP8=`` for binary (``text:`` keeps text that starts with one of those prefixes);
several bytes values are a JSON list of such strings (``["cat", "hex:00ff"]``). Pictures and
long binary values appear as ``‹…›`` placeholders (:func:`placeholder`) that stand for the
stored value as it is.

Writing values into a cell is :mod:`browser_app.view.cells`'; turning a cell's text into an
edit is here and in :func:`browser_app.edits.commands.set_cell`.
"""

from __future__ import annotations

import json

from browser_app.edits.values import check_value
from browser_app.errors import ValueParseError
from codec import example as ex
from codec.kinds import BYTES
from codec.values import is_text, sniff_image

__all__ = ["parse_bytes_cell", "placeholder"]


def placeholder(v: bytes, i: int) -> str:
    """The text that stands for value ``i`` (``v``) when it is not written out."""
    fmt = sniff_image(v)
    what = f"{fmt.upper()} picture" if fmt else ("text" if is_text(v) else "binary")
    return f"‹value {i}: {what}, {len(v):,} bytes›"


def parse_bytes_cell(text: str, old: ex.Feature | None) -> list[bytes]:
    """The bytes values a cell stands for. Placeholders of ``old``'s values keep those values
    as stored. Raises :class:`~browser_app.errors.ValueParseError` naming the bad value."""
    keep: dict[str, bytes] = {}
    if old is not None and old.type == BYTES:
        keep = {placeholder(bytes(v), i): bytes(v) for i, v in enumerate(old.values)}
    parts: list[str] = [text]
    is_list = False
    if text.strip().startswith("["):
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError:
            loaded = None
        if isinstance(loaded, list) and all(isinstance(x, str) for x in loaded):
            parts = loaded
            is_list = True
    out: list[bytes] = []
    for i, part in enumerate(parts):
        if part in keep:
            out.append(keep[part])
            continue
        try:
            value = check_value(BYTES, part).value
        except ValueParseError as exc:
            where = f"value {i}: " if is_list else ""
            raise ValueParseError(BYTES, part, where + exc.reason) from None
        if not isinstance(value, bytes):  # pragma: no cover - a bytes value is bytes
            raise ValueParseError(BYTES, part, "not a bytes value")
        out.append(value)
    return out
