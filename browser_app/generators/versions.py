"""Two versions of one dataset over the packaged photographs, with the changes between them
planted and known: what ``tfrecord-browser diff`` and the Compare page must find.

Version A (``v1``) has ``count`` records; each is a photograph as a classification dataset
keeps it: ``image/encoded`` (a packaged photograph made small, one of five),
``image/source_id`` (the join key), ``image/filename``, ``image/height``, ``image/width``,
``label`` (a class, 0 to 4) with ``image/class/text`` (its name), ``caption`` (text),
``brightness`` (a float drawn from a normal distribution) and ``legacy/flag`` (an int64).

Version B (``v2``) is A with these changes:

- **removed**: every record whose number is 3 modulo 10;
- **edited**: every record whose number is 2 modulo 7 (and not removed) has a new
  ``caption``;
- **shifted**: ``brightness`` is drawn again, its mean moved by ``shift``;
- **vanished**: ``legacy/flag`` is gone from every record;
- **new feature**: every record has ``image/quality`` (a float);
- **added**: ``added`` new records after the others, with a new class (label 5, ``zebra``)
  among theirs; two of them share one ``image/source_id`` (a **duplicate key**).

:func:`write_versions` writes both files and gives the :class:`Versions` with every expected
answer; the same bytes for the same arguments.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codec import example as ex

from .library import PHOTOS, photo
from .wire import write

__all__ = ["CLASS_NAMES", "NEW_CLASS", "Versions", "version_records", "write_versions"]

CLASS_NAMES = ("astronaut", "coffee", "cat", "rocket", "motorcycle", "zebra")
NEW_CLASS = 5  # the class only the added records of version B have
VANISHED = "legacy/flag"
NEW_FEATURE = "image/quality"
SHIFTED = "brightness"
EDITED = "caption"


@dataclass
class Versions:
    """The two files and what changed between them: record numbers in A of the ``removed``
    records; record numbers in B of the ``added`` ones (the duplicate pair left out, given
    in ``duplicate_b``); ``(a, b)`` pairs of every record in both, and of those whose
    caption was ``edited``; the records of A and B (payloads) for direct computation."""

    a: Path
    b: Path
    removed: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    duplicate_b: list[int] = field(default_factory=list)
    pairs: list[tuple[int, int]] = field(default_factory=list)
    edited: list[tuple[int, int]] = field(default_factory=list)
    records_a: list[bytes] = field(default_factory=list)
    records_b: list[bytes] = field(default_factory=list)
    vanished: str = VANISHED
    new_feature: str = NEW_FEATURE
    shifted: str = SHIFTED
    new_class: int = NEW_CLASS


def _record(
    i: int, label: int, caption: str, brightness: float, extra: dict[str, Any], max_side: int
) -> bytes:
    pic = photo(PHOTOS[i % len(PHOTOS)], max_side)
    features: dict[str, Any] = {
        "image/encoded": ("bytes", [pic.encoded]),
        "image/format": ("bytes", [b"jpeg"]),
        "image/source_id": ("bytes", [f"{i:06d}".encode()]),
        "image/filename": ("bytes", [f"{pic.name}_{i:06d}.jpg".encode()]),
        "image/height": ("int64", [pic.height]),
        "image/width": ("int64", [pic.width]),
        "label": ("int64", [label]),
        "image/class/text": ("bytes", [CLASS_NAMES[label].encode()]),
        "caption": ("bytes", [caption.encode()]),
        "brightness": ("float", [brightness]),
    }
    features.update(extra)
    return ex.encode_example(features)


def version_records(
    count: int = 200,
    *,
    added: int = 12,
    shift: float = 0.25,
    seed: int = 0,
    max_side: int = 48,
) -> tuple[list[bytes], list[bytes], dict[str, Any]]:
    """The payloads of versions A and B and what changed (see the module's docstring)."""
    if added < 3:
        raise ValueError("at least 3 added records (two of them share a key)")
    rng = random.Random(f"versions:{seed}")
    words = ("a", "small", "photo", "of", "the", "on", "table", "sky", "in", "space")
    labels = [rng.randrange(5) for _ in range(count)]
    captions = [" ".join(rng.choice(words) for _ in range(4)) for _ in range(count)]
    bright_a = [rng.gauss(0.45, 0.1) for _ in range(count)]
    flags = [rng.randrange(2) for _ in range(count)]
    records_a = [
        _record(i, labels[i], captions[i], bright_a[i], {VANISHED: ("int64", [flags[i]])}, max_side)
        for i in range(count)
    ]
    records_b: list[bytes] = []
    removed: list[int] = []
    pairs: list[tuple[int, int]] = []
    edited: list[tuple[int, int]] = []
    for i in range(count):
        if i % 10 == 3:
            removed.append(i)
            continue
        caption = captions[i]
        if i % 7 == 2:
            caption = caption + " (edited)"
            edited.append((i, len(records_b)))
        pairs.append((i, len(records_b)))
        quality = {NEW_FEATURE: ("float", [round(rng.uniform(0.5, 1.0), 3)])}
        brightness = rng.gauss(0.45 + shift, 0.1)
        records_b.append(_record(i, labels[i], caption, brightness, quality, max_side))
    added_b: list[int] = []
    duplicate: list[int] = []
    for j in range(added):
        i = count + j
        key = count if j == added - 1 else i  # the last one takes the first one's key
        label = NEW_CLASS if j % 2 == 0 else rng.randrange(5)
        quality = {NEW_FEATURE: ("float", [round(rng.uniform(0.5, 1.0), 3)])}
        payload = _record(
            key, label, "new " + rng.choice(words), rng.gauss(0.7, 0.1), quality, max_side
        )
        if j == 0 or j == added - 1:
            duplicate.append(len(records_b))
        else:
            added_b.append(len(records_b))
        records_b.append(payload)
    known = {
        "removed": removed,
        "added": added_b,
        "duplicate_b": duplicate,
        "pairs": pairs,
        "edited": edited,
    }
    return records_a, records_b, known


def write_versions(
    folder: str | Path,
    count: int = 200,
    *,
    added: int = 12,
    shift: float = 0.25,
    seed: int = 0,
    max_side: int = 48,
    names: tuple[str, str] = ("v1.tfrecord", "v2.tfrecord"),
) -> Versions:
    """Write versions A and B into ``folder`` (as ``names``) and say what changed."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    records_a, records_b, known = version_records(
        count, added=added, shift=shift, seed=seed, max_side=max_side
    )
    a, b = folder / names[0], folder / names[1]
    write(a, records_a)
    write(b, records_b)
    return Versions(a, b, records_a=records_a, records_b=records_b, **known)
