"""Planted duplicates over real photographs, with the answer known: for ``duplicates``' tests
and benchmark.

Every original is a distinct picture made of the packaged photographs (``photos/``): a 2×2
mosaic of tiles cut from them (a grid of 3×3 and one of 4×4 over each photograph: 125
tiles). Original ``(a, b)`` holds the tiles ``a, a+b, a+2b, a+3b`` (mod 113) in its four
places, so two originals share at most one tile in the same place (the values of two lines
over a prime field meet once at most). Some originals get copies, one of each kind in turn:

- ``quality``: the same picture encoded again as JPEG at another quality;
- ``resized``: made 10 % smaller (each side 90 %), encoded again;
- ``identical``: the very same JPEG bytes;
- ``pixels``: the decoded picture stored as PNG (its pixels equal the original's);
- ``cropped``: 1 % cut from each side (2 % of the width and of the height), encoded again;
- ``mirrored``: flipped left to right, encoded again.

and some get a **decoy**: a distinct but similar picture that must not be found with it — the
same top half (two tiles), the bottom half cut from other photographs.

The records are TFDS's image-classification layout (``image`` JPEG or PNG, ``label`` the
photograph of the mosaic's first tile, ``file_name``), spread over two splits in a shuffled
order, copies in the original's split or in the other one (a leak). Written as a TFDS folder
(:func:`write_planted` with ``layout="tfds"``: ``<root>/planted/1.0.0/``, splits ``train`` and
``test``) or as two files (``layout="files"``: ``<root>/train.tfrecord``, ``<root>/eval.tfrecord``).
:class:`Planted` says which records are copies of which, and which pairs are decoys.
"""

from __future__ import annotations

import io
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from PIL import Image, ImageOps

from browser_app.generators.library import PHOTOS, photo
from browser_app.generators.tfds import (
    class_label,
    features_dict,
    image,
    text,
    write_features,
    write_info,
    write_labels,
    write_shards,
)
from codec import example as ex
from codec.writer import write_records

__all__ = ["COPY_KINDS", "Planted", "write_planted"]

COPY_KINDS = ("quality", "resized", "identical", "pixels", "cropped", "mirrored")
WIDTH, HEIGHT = 320, 240
QUALITY = 85
OTHER_QUALITIES = (50, 65, 95)
_Q = 113  # a prime at most the number of tiles: originals (a, b) for a, b below it
_GRIDS = (3, 4)
_TILES = len(PHOTOS) * sum(g * g for g in _GRIDS)  # 25 of each photograph, in turn


@cache
def _tiles(width: int, height: int) -> tuple[Image.Image, ...]:
    tiles = []
    for name in PHOTOS:
        img = Image.open(io.BytesIO(photo(name).encoded)).convert("RGB")
        w, h = img.size
        for g in _GRIDS:
            tw, th = w // g, h // g
            for a in range(g):
                for b in range(g):
                    cut = img.crop((a * tw, b * th, (a + 1) * tw, (b + 1) * th))
                    tiles.append(cut.resize((width // 2, height // 2), Image.Resampling.BILINEAR))
    return tuple(tiles)


def _mosaic(ids: Sequence[int], width: int, height: int) -> Image.Image:
    tiles = _tiles(width, height)
    out = Image.new("RGB", (width, height))
    for k, t in enumerate(ids):
        out.paste(tiles[t], ((k % 2) * (width // 2), (k // 2) * (height // 2)))
    return out


def _label(ids: Sequence[int]) -> int:
    """A picture's label: the photograph its first (top-left) tile is cut from, an index of
    :data:`PHOTOS` (the names in ``label.labels.txt``)."""
    return ids[0] // (_TILES // len(PHOTOS))


def _ids(n: int) -> list[int]:
    """The tiles of original ``n`` (a point of a line over the field of :data:`_Q`)."""
    a, b = divmod((n * 7919) % (_Q * _Q), _Q)  # spread over the lines, still all different
    return [(a + k * b) % _Q for k in range(4)]


def _encode(img: Image.Image, fmt: str = "JPEG", quality: int = QUALITY) -> bytes:
    out = io.BytesIO()
    if fmt == "PNG":
        img.save(out, format="PNG")
    else:
        img.save(out, format="JPEG", quality=quality)
    return out.getvalue()


def _decoded(b: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(b))
    img.load()
    return img.convert("RGB")


def _copy(kind: str, original: bytes, rng: random.Random) -> bytes:
    if kind == "identical":
        return original
    img = _decoded(original)
    w, h = img.size
    if kind == "quality":
        return _encode(img, quality=rng.choice(OTHER_QUALITIES))
    if kind == "resized":
        return _encode(img.resize((round(w * 0.9), round(h * 0.9)), Image.Resampling.BILINEAR))
    if kind == "pixels":
        return _encode(img, "PNG")
    if kind == "cropped":
        dx, dy = round(w * 0.01), round(h * 0.01)
        return _encode(img.crop((dx, dy, w - dx, h - dy)))
    if kind == "mirrored":
        return _encode(ImageOps.mirror(img))
    raise ValueError(f"no copy kind {kind!r}: one of {', '.join(COPY_KINDS)}")


@dataclass
class Planted:
    """What :func:`write_planted` wrote: ``splits`` (name → the spec that opens it: a split
    of the TFDS folder, or a file), ``groups`` (each original with copies: its records and its
    copies', as ``(split, number in the split)``, the original first), ``kinds`` (the kind of
    each copy, by record), ``decoys`` (pairs of records that must not be found together) and
    the number of ``pictures`` written."""

    root: Path
    splits: dict[str, str]
    groups: list[list[tuple[str, int]]] = field(default_factory=list)
    kinds: dict[tuple[str, int], str] = field(default_factory=dict)
    decoys: list[tuple[tuple[str, int], tuple[str, int]]] = field(default_factory=list)
    pictures: int = 0


def write_planted(
    root: str | Path,
    *,
    originals: int = 60,
    copied: int = 24,
    decoys: int = 6,
    kinds: Sequence[str] = COPY_KINDS,
    layout: str = "tfds",
    splits: tuple[str, str] | None = None,
    across: float = 0.5,
    shards: int = 2,
    size: tuple[int, int] = (WIDTH, HEIGHT),
    seed: int = 0,
) -> Planted:
    """Write ``originals`` distinct pictures, a copy of each of the first ``copied`` (kinds
    in turn from ``kinds``) and a decoy of each of the next ``decoys``, over two splits
    (``across``: the share of copies put in the other split than their original's), and
    return where everything went (:class:`Planted`)."""
    if copied + decoys > originals:
        raise ValueError("copies and decoys are of different originals: too few originals")
    if originals > _Q * _Q:
        raise ValueError(f"at most {_Q * _Q:,} originals")
    for k in kinds:
        if k not in COPY_KINDS:
            raise ValueError(f"no copy kind {k!r}: one of {', '.join(COPY_KINDS)}")
    names = splits or (("train", "test") if layout == "tfds" else ("train", "eval"))
    width, height = size
    rng = random.Random(seed)
    # (picture bytes, file name, label, its original, what it is)
    items: list[list[tuple[bytes, str, int, int, str]]] = [[], []]
    home: dict[int, int] = {}
    for n in range(originals):
        ids = _ids(n)
        jpeg = _encode(_mosaic(ids, width, height))
        side = rng.randrange(2)
        home[n] = side
        items[side].append((jpeg, f"original_{n:05d}.jpg", _label(ids), n, "original"))
        if n < copied:
            kind = kinds[n % len(kinds)]
            there = 1 - side if rng.random() < across else side
            ext = "png" if kind == "pixels" else "jpg"
            copy = _copy(kind, jpeg, rng)
            items[there].append((copy, f"copy_{n:05d}.{ext}", _label(ids), n, kind))
        elif n < copied + decoys:
            other = [ids[0], ids[1], (ids[2] + 50) % _TILES, (ids[3] + 75) % _TILES]
            decoy = _encode(_mosaic(other, width, height))
            there = rng.randrange(2)
            items[there].append((decoy, f"decoy_{n:05d}.jpg", _label(ids), n, "decoy"))
    for listed in items:
        rng.shuffle(listed)
    planted = Planted(Path(root), {})
    where: dict[tuple[int, str], tuple[str, int]] = {}
    for s, listed in enumerate(items):
        for i, (_, _, _, n, what) in enumerate(listed):
            where[(n, what)] = (names[s], i)
    for n in range(originals):
        first = where[(n, "original")]
        if n < copied:
            kind = kinds[n % len(kinds)]
            planted.groups.append([first, where[(n, kind)]])
            planted.kinds[where[(n, kind)]] = kind
        elif n < copied + decoys:
            planted.decoys.append((first, where[(n, "decoy")]))
    planted.groups.sort()
    planted.pictures = sum(len(s) for s in items)
    payloads = [
        [
            ex.encode_example(
                {
                    "image": ("bytes", [b]),
                    "label": ("int64", [label]),
                    "file_name": ("bytes", [fname.encode()]),
                }
            )
            for b, fname, label, _, _ in listed
        ]
        for listed in items
    ]
    out = Path(root)
    if layout == "files":
        out.mkdir(parents=True, exist_ok=True)
        for name, recs in zip(names, payloads):
            path = out / f"{name}.tfrecord"
            write_records(path, recs)
            planted.splits[name] = str(path)
        return planted
    if layout != "tfds":
        raise ValueError(f"layout is 'tfds' or 'files', not {layout!r}")
    folder = out / "planted" / "1.0.0"
    folder.mkdir(parents=True, exist_ok=True)
    lengths = {
        name: write_shards(folder, "planted", name, recs, max(1, min(shards, len(recs))))
        for name, recs in zip(names, payloads)
    }
    declared = {
        "image": image(height, width, 3, encoding="jpeg"),
        "label": class_label(len(PHOTOS)),
        "file_name": text(),
    }
    write_features(folder, features_dict(declared))
    write_labels(folder, "label.labels.txt", list(PHOTOS))  # see _label
    write_info(
        folder,
        name="planted",
        version="1.0.0",
        description="Photographs with planted duplicates (tfrecord-browser's generator).",
        citation="@misc{planted, title={Planted duplicates}, note={generated}}",
        splits=lengths,
        module="tensorflow_datasets.image_classification.planted",
        supervised=("image", "label"),
    )
    planted.root = folder
    planted.splits = {name: f"{folder}:{name}" for name in names}
    return planted
