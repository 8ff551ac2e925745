"""The file picker's options: the TFRecord files found under the root, with shard sets
(``train-00000-of-00003`` …) offered once more as one pattern."""

from __future__ import annotations

import re
from collections.abc import Sequence

from browser_app.paths import RootEntry
from codec.values import format_bytes

from .values import label_text

__all__ = ["file_options"]

_SHARD = re.compile(r"^(?P<stem>.*-)(?P<k>\d{5})-of-(?P<n>\d{5})(?P<ext>(\.[^/]*)?)$")


def file_options(entries: Sequence[RootEntry]) -> list[tuple[str, str]]:
    """``(spec, label)`` options: shard sets first (as one pattern, with their count and total
    size), then every single file with its size. Labels show bidirectional controls in names
    instead of obeying them."""
    groups: dict[tuple[str, str, str], list[RootEntry]] = {}
    for e in entries:
        m = _SHARD.match(e.rel)
        if m:
            groups.setdefault((m["stem"], m["n"], m["ext"]), []).append(e)
    options: list[tuple[str, str]] = []
    for (stem, n, ext), members in sorted(groups.items()):
        if len(members) > 1:
            total = sum(m.size for m in members)
            spec = f"{stem}*-of-{n}{ext}"
            label = f"{spec}  ·  {len(members)} of {int(n)} shards, {format_bytes(total)}"
            options.append((spec, label_text(label)))
    for e in entries:
        options.append((e.rel, label_text(f"{e.rel}  ·  {format_bytes(e.size)}")))
    return options
