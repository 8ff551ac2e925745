"""The file picker's options: the datasets that are folders (a TFDS dataset and each of its
splits, a TFX ExampleGen output, TensorBoard logs, a ``tf.data.Dataset.save`` folder), then
the TFRecord files found under the root, with shard sets (``train-00000-of-00003`` …) offered
once more as one pattern."""

from __future__ import annotations

import re
from collections.abc import Sequence

from browser_app.paths import (
    EVENTS_FOLDER,
    FILE,
    SAVED_FOLDER,
    TFDS_FOLDER,
    TFDS_SPLIT,
    TFX_FOLDER,
    RootEntry,
)
from codec.values import format_bytes, plural

from .values import label_text

__all__ = ["FOLDER_WORDS", "file_options", "folder_label"]

FOLDER_WORDS = {
    TFDS_FOLDER: "TFDS dataset",
    TFDS_SPLIT: "TFDS split",
    TFX_FOLDER: "TFX ExampleGen output",
    EVENTS_FOLDER: "TensorBoard logs",
    SAVED_FOLDER: "tf.data.Dataset.save folder",
}
_PARTS_SHOWN = 6


def folder_label(e: RootEntry) -> str:
    """A dataset folder as the picker offers it: ``voc/2007/5.0.0  ·  TFDS dataset: train,
    validation, test · 65.7 KB``."""
    what = FOLDER_WORDS.get(e.kind, "folder")
    parts = list(e.parts)
    if e.kind in (TFDS_FOLDER, TFX_FOLDER) and parts:
        shown = ", ".join(parts[:_PARTS_SHOWN])
        more = f" and {len(parts) - _PARTS_SHOWN:,} more" if len(parts) > _PARTS_SHOWN else ""
        what += f": {plural(len(parts), 'split')} ({shown}{more})"
    elif e.kind == EVENTS_FOLDER:
        what += f": {plural(len(parts), 'event file')}"
    return label_text(f"{e.rel}  ·  {what}  ·  {format_bytes(e.size)}")


_SHARD = re.compile(r"^(?P<stem>.*-)(?P<k>\d{5})-of-(?P<n>\d{5})(?P<ext>(\.[^/]*)?)$")


def file_options(entries: Sequence[RootEntry]) -> list[tuple[str, str]]:
    """``(spec, label)`` options: dataset folders first (:func:`folder_label`), shard sets next
    (as one pattern, with their count and total size), then every single file with its size.
    Labels show bidirectional controls in names instead of obeying them."""
    options: list[tuple[str, str]] = [(e.rel, folder_label(e)) for e in entries if e.kind != FILE]
    entries = [e for e in entries if e.kind == FILE]
    groups: dict[tuple[str, str, str], list[RootEntry]] = {}
    for e in entries:
        m = _SHARD.match(e.rel)
        if m:
            groups.setdefault((m["stem"], m["n"], m["ext"]), []).append(e)
    for (stem, n, ext), members in sorted(groups.items()):
        if len(members) > 1:
            total = sum(m.size for m in members)
            spec = f"{stem}*-of-{n}{ext}"
            label = f"{spec}  ·  {len(members)} of {int(n)} shards, {format_bytes(total)}"
            options.append((spec, label_text(label)))
    for e in entries:
        options.append((e.rel, label_text(f"{e.rel}  ·  {format_bytes(e.size)}")))
    return options
