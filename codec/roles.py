"""What each picture of a record is: the photo, a class map, a mask, a depth map or other.

A record often holds several pictures: the photo (``image/encoded``), and beside it a
semantic class map (``image/segmentation/class/encoded``), instance masks
(``image/object/mask``), a depth or disparity map. Protobuf writes a map's entries in no
fixed order, so "the first picture" is whatever the writer happened to put first. Roles are
therefore decided from a picture's **key** and **content** alone, and pictures are put in a
documented order that does not depend on byte order:

Rules, in this order (the first that applies decides; ``name`` is the feature's key,
lowercased):

1. **By key** (:func:`key_role`):
   - ``class_map``: the key names a segmentation or class map — ``segmentation/class``
     (DeepLab's ``image/segmentation/class/encoded``), any ``segment…``, ``semantic``,
     ``class_map`` / ``classmap``, ``label_map`` / ``labelmap``, ``label_image``, a ``seg``
     component (``…/seg``, ``seg_…``) or ``annotation`` (TFDS ``scene_parse150``);
   - ``mask``: the key names a mask — ``image/object/mask``, ``mask``, ``instance_masks``…;
   - ``depth``: ``depth`` or ``disparity`` (``disp`` as a component) in the key;
   - ``other``: heat maps and the like — ``heatmap`` / ``heat_map``, ``saliency``,
     ``attention``, ``density``.
2. **Photo keys**: the well-known photo keys (:data:`PHOTO_KEYS`: ``image/encoded``,
   ``image``, ``image_raw``, ``encoded``, ``img``…), the ``<root>encoded`` picture of an
   Object Detection layout (``camera/image/encoded`` beside ``camera/image/object/…``), and a
   key whose last component is ``image``, ``encoded``, ``image_raw`` or ``jpeg`` / ``png``
   (TFDS ``steps/observation/image``) are ``photo``.
3. **By content**, for any other key, from the header only:
   - a 16-bit single-channel picture (a PNG of bit depth 16 and colour type 0, a ``uint16``
     H×W or H×W×1 tensor) is ``depth``;
   - an 8-bit single-channel PNG (grey or palette) whose size matches, or scales to, the
     photo's (rule 4 picks the photo first) is ``class_map`` when it holds at most
     :data:`FEW_VALUES` distinct values. This is the one rule that decodes pixels: the PNG is
     decoded (under :data:`codec.images.MAX_DECODE_PIXELS`) to count its values.
   - anything else is ``photo``.
4. **The photo** a layer is compared with (rule 3) is the first picture, in the order below,
   that rules 1–2 call ``photo`` or whose content is colour (3 or 4 channels, or a JPEG).

**Order** (:func:`picture_roles`): photos first — a record's own features before the steps
of a SequenceExample's feature lists, then the well-known keys by their rank in
:data:`PHOTO_KEYS` (``<root>encoded`` of a detection layout and ``…/image`` keys after them),
then any other photo, colour ones (3 or 4 channels, or JPEG) before the others, by key —
then every other picture by key; ties by step, then by index in the feature's list.

:func:`main_picture` is the first of that order: the best photo, or, in a record without a
photo, its first picture of any role (a dataset of depth maps still has a picture to show).

**Layers** (:mod:`codec.layers`): a class map or a mask is laid over the photo only when its
size matches, or scales to, the photo's (:func:`fits`: the same aspect ratio within 1 %);
otherwise, and for depth maps and other pictures, it is only listed.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from codec.detection import layouts
from codec.errors import CodecError
from codec.example import Record
from codec.tensor import describe_tensor
from codec.values import image_size

if TYPE_CHECKING:
    from codec.images import ImageRef

# codec.images is imported where it is used, so that it may itself ask for roles.

__all__ = [
    "CLASS_MAP",
    "DEPTH",
    "FEW_VALUES",
    "MASK",
    "OTHER",
    "PHOTO",
    "PHOTO_KEYS",
    "ROLES",
    "PictureFacts",
    "fits",
    "key_role",
    "main_picture",
    "picture_facts",
    "picture_roles",
]

PHOTO = "photo"
CLASS_MAP = "class_map"
MASK = "mask"
DEPTH = "depth"
OTHER = "other"
ROLES = (PHOTO, CLASS_MAP, MASK, DEPTH, OTHER)

# Well-known photo keys, best first. "" is the picture of a record that is itself a tensor.
PHOTO_KEYS = (
    "image/encoded",
    "image",
    "image_raw",
    "encoded",
    "img",
    "",
    "image/raw",
    "image_bytes",
    "image/image",
    "rgb",
    "photo",
)
_PHOTO_TAILS = ("image", "encoded", "image_raw", "jpeg", "png", "rgb", "img")

FEW_VALUES = 64  # an 8-bit single-channel picture with at most this many values is a class map
ASPECT_TOLERANCE = 0.01  # a layer scales to the photo when the aspect ratios differ this little

_CLASS_MAP_KEY = re.compile(
    r"segment|semantic|class_?map|label_?map|label_?image|annotation|(?:^|[/_])seg(?:[/_]|$)"
)
_MASK_KEY = re.compile(r"mask")
_DEPTH_KEY = re.compile(r"depth|disparity|(?:^|[/_])disp(?:[/_]|$)")
_OTHER_KEY = re.compile(r"heat_?map|saliency|attention|density")


def key_role(name: str) -> str | None:
    """The role a feature's key gives its pictures (rule 1 of the module's docstring), or
    None when the key says nothing."""
    low = name.lower()
    if _CLASS_MAP_KEY.search(low):
        return CLASS_MAP
    if _MASK_KEY.search(low):
        return MASK
    if _DEPTH_KEY.search(low):
        return DEPTH
    if _OTHER_KEY.search(low):
        return OTHER
    return None


@dataclass(frozen=True)
class PictureFacts:
    """What a picture's header says: ``width`` × ``height`` (0 when unknown), ``channels``
    (None when unknown), ``bits`` per channel (None when unknown) and whether it is
    ``indexed`` (a palette PNG: one channel of indices)."""

    width: int = 0
    height: int = 0
    channels: int | None = None
    bits: int | None = None
    indexed: bool = False

    @property
    def size(self) -> tuple[int, int] | None:
        return (self.width, self.height) if self.width > 0 and self.height > 0 else None


_PNG_CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
_TENSOR_BITS = {"uint8": 8, "int8": 8, "uint16": 16, "int16": 16, "bool": 1}


def picture_facts(ref: ImageRef) -> PictureFacts:
    """The header facts of an :class:`~codec.images.ImageRef` (never decodes pixels)."""
    source, data = ref.source, ref.data
    if source == "raw":
        return PictureFacts(ref.width, ref.height, ref.depth or None, 8)
    if source == "tensor":
        try:
            dtype, shape = describe_tensor(data)
        except CodecError:
            return PictureFacts(ref.width, ref.height, ref.depth or None)
        channels = shape[2] if len(shape) == 3 else 1
        h, w = (shape[0], shape[1]) if len(shape) >= 2 else (0, 0)
        bits = _TENSOR_BITS.get(dtype, 32 if dtype.startswith("float") else None)
        return PictureFacts(int(w), int(h), int(channels), bits)
    header = image_size(data)
    w, h = (header[1], header[2]) if header is not None else (0, 0)
    fmt = header[0] if header is not None else ref.format
    if fmt == "png" and len(data) >= 26 and data[12:16] == b"IHDR":
        bits, colour = struct.unpack_from(">BB", data, 24)
        return PictureFacts(w, h, _PNG_CHANNELS.get(colour), bits, colour == 3)
    if fmt == "jpeg":
        return PictureFacts(w, h, None, 8)
    return PictureFacts(w, h)


def fits(size: tuple[int, int] | None, photo: tuple[int, int] | None) -> bool:
    """Whether a picture of ``size`` (width, height) can be laid over a photo of ``photo``:
    the same size, or the same aspect ratio within :data:`ASPECT_TOLERANCE` (it is then
    scaled to the photo)."""
    if size is None or photo is None:
        return False
    if size == photo:
        return True
    (w, h), (pw, ph) = size, photo
    return abs(w * ph - h * pw) <= ASPECT_TOLERANCE * (w * ph)


def _photo_rank(name: str, roots: set[str]) -> int | None:
    """The rank of a photo key (lower is better), None for a key that is not a known one."""
    if name in PHOTO_KEYS:
        return PHOTO_KEYS.index(name)
    if name in roots:
        return len(PHOTO_KEYS)
    if name.lower().rsplit("/", 1)[-1] in _PHOTO_TAILS:
        return len(PHOTO_KEYS) + 1
    return None


def _colour(facts: PictureFacts, ref: ImageRef) -> bool:
    if facts.channels is not None:
        return facts.channels >= 3
    return ref.format == "jpeg"


def _few_values(ref: ImageRef) -> bool:
    """Whether a single-channel 8-bit PNG holds at most :data:`FEW_VALUES` values (decoded)."""
    from codec.images import decode_image

    try:
        img = decode_image(ref.data)
    except CodecError:
        return False
    if img.mode not in ("L", "P", "1"):
        return False
    counts = np.bincount(np.asarray(img, dtype=np.uint8).reshape(-1), minlength=256)
    return int(np.count_nonzero(counts)) <= FEW_VALUES


def _single_8bit_png(facts: PictureFacts, ref: ImageRef) -> bool:
    return (
        ref.format == "png" and facts.channels == 1 and facts.bits is not None and facts.bits <= 8
    )


def _order_key(
    ref: ImageRef, role: str, rank: int | None, colour: bool = True
) -> tuple[bool, bool, int, bool, str, int, int]:
    step = ref.step
    return (
        role != PHOTO,
        step is not None,
        rank if role == PHOTO and rank is not None else len(PHOTO_KEYS) + 2,
        not colour,
        ref.feature,
        -1 if step is None else step,
        ref.index,
    )


def picture_roles(
    record: Record, refs: Iterable[ImageRef] | None = None
) -> list[tuple[ImageRef, str]]:
    """Every picture of ``record`` (``refs``, else :func:`codec.images.find_images`) with its
    role (one of :data:`ROLES`), in the order of the module's docstring: the main picture
    first, then the others; the same whatever order the record's features were written in."""
    if refs is None:
        from codec.images import find_images

        refs = find_images(record)
    found = list(refs)
    roots = {layout.image for layout in layouts(record.features)}
    facts = [picture_facts(r) for r in found]
    ranks = [_photo_rank(r.feature, roots) for r in found]
    roles: list[str | None] = []
    for ref, fact, rank in zip(found, facts, ranks):
        role = key_role(ref.feature)
        if role is None and rank is not None:
            role = PHOTO
        if role is None and fact.channels == 1 and fact.bits == 16:
            role = DEPTH
        roles.append(role)
    # The photo layers are compared with: a photo by key, else a colour picture.
    candidates = [
        (_order_key(r, PHOTO, rank), i)
        for i, (r, fact, rank, role) in enumerate(zip(found, facts, ranks, roles))
        if role == PHOTO or (role is None and _colour(fact, r))
    ]
    photo_size = facts[min(candidates)[1]].size if candidates else None
    final: list[str] = []
    for ref, fact, role in zip(found, facts, roles):
        if role is None:
            role = PHOTO
            if _single_8bit_png(fact, ref) and fits(fact.size, photo_size) and _few_values(ref):
                role = CLASS_MAP
        final.append(role)
    colour = [_colour(fact, r) for r, fact in zip(found, facts)]
    order = sorted(
        range(len(found)), key=lambda i: _order_key(found[i], final[i], ranks[i], colour[i])
    )
    return [(found[i], final[i]) for i in order]


def main_picture(record: Record, refs: Sequence[ImageRef] | None = None) -> ImageRef | None:
    """The picture a record is shown by: the first of :func:`picture_roles` (the best photo,
    else the first picture of any role); None for a record without pictures."""
    roles = picture_roles(record, refs)
    return roles[0][0] if roles else None
