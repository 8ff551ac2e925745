"""How a feature's values are written in one cell of the record editor's table, and read back.

int64 and float lists are numbers separated by commas (``1, 2, 3``; floats as the shortest
text that reads back as the same float32). A bytes value is UTF-8 text, or ``hex:00ff`` /
``base64:AP8=`` for binary (``text:`` keeps text that starts with one of those prefixes);
several bytes values are a JSON list of such strings (``["cat", "hex:00ff"]``). Pictures and
long binary values appear as ``‹…›`` placeholders that stand for the stored value as it is.
"""

from __future__ import annotations

import json

from browser_app.edits.values import BYTES_PREFIXES, check_value, render_value
from browser_app.errors import ValueParseError
from codec import example as ex
from codec.kinds import BYTES, FLOAT, INT64
from codec.values import is_text, sniff_image

__all__ = ["MAX_TEXT_CELL", "cell_text", "parse_bytes_cell", "placeholder"]

MAX_TEXT_CELL = 2000  # longer values are shown as a placeholder
_MAX_HEX_CELL = 64  # longer binary values are shown as a placeholder


def placeholder(v: bytes, i: int) -> str:
    """The text that stands for value ``i`` (``v``) when it is not written out."""
    fmt = sniff_image(v)
    what = f"{fmt.upper()} picture" if fmt else ("text" if is_text(v) else "binary")
    return f"‹value {i}: {what}, {len(v):,} bytes›"


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
