"""Fingerprints of a decoded picture: a digest of its pixels, and the 64-bit perceptual hashes
pHash and dHash exactly as the ``imagehash`` package computes them (numpy only: the DCT is a
matrix product, no scipy).

- **Pixel digest** (:func:`pixel_digest`): BLAKE2b (16 bytes) of the picture's size and its
  pixels in one canonical mode — RGBA when the picture has transparency, else RGB — so the
  same picture stored as JPEG at one quality and as PNG, or as a palette PNG and an RGB one,
  digests alike when, and only when, every decoded pixel is equal.
- **pHash** (``imagehash.phash``, hash_size 8, highfreq_factor 4): the picture in grey
  (Pillow's ``convert("L")``) resized to 32×32 with Lanczos, the type-II DCT of its rows then
  its columns (``scipy.fftpack.dct``'s unnormalised one), the 8×8 lowest frequencies compared
  with their median: a bit is set when its coefficient is above it.
- **dHash** (``imagehash.dhash``, hash_size 8): the grey picture resized to 9×8 with
  Lanczos; a bit is set where a pixel is brighter than the one to its left.

Bits are packed as ``imagehash`` prints them (row by row, the first bit the most significant),
so ``int(str(imagehash.phash(img)), 16) == phash(img)``. The DCT's rounding differs from
FFTPACK's in the last bits of a double: a coefficient within ~1e-12 of the median can fall on
the other side (only in pictures whose low frequencies tie, such as a flat one).

**Mirrored hashes**: the pHash and dHash of the small grey arrays flipped left to right, so a
mirrored copy is found by comparing one picture's hashes with the other's mirrored ones
(close to, not always equal to, the hashes of the mirrored picture: Lanczos resizing of a
flipped picture may round a pixel the other way).

Hashes of many pictures are computed together (:func:`phash_many`, :func:`dhash_many`): the
DCTs of a batch are one matrix product.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

__all__ = [
    "HASH_BITS",
    "PictureHashes",
    "dhash",
    "dhash_many",
    "distance",
    "distances",
    "grey_small",
    "hashes_of",
    "phash",
    "phash_many",
    "pixel_digest",
]

HASH_BITS = 64
_HASH = 8  # imagehash's hash_size
_PHASH_SIDE = _HASH * 4  # imagehash's hash_size * highfreq_factor
_LANCZOS = Image.Resampling.LANCZOS  # imagehash's ANTIALIAS

# The unnormalised type-II DCT (scipy.fftpack.dct's default), its lowest 8 frequencies:
# y[k] = 2 * sum_n x[n] cos(pi k (2n + 1) / 2N).
_N = np.arange(_PHASH_SIDE)
_DCT8 = 2.0 * np.cos(np.pi * np.arange(_HASH)[:, None] * (2 * _N[None, :] + 1) / (2 * _PHASH_SIDE))
_ZERO = 1e-6  # coefficients this close to 0 are 0 (pixel sums are whole numbers)
_WEIGHTS = (1 << np.arange(HASH_BITS - 1, -1, -1, dtype=np.uint64)).astype(np.uint64)


def grey_small(img: Image.Image) -> tuple[np.ndarray, np.ndarray]:
    """The two small grey pictures the hashes are made of: 32×32 (pHash) and 8 rows of 9
    (dHash), as ``uint8`` arrays, made as ``imagehash`` makes them."""
    grey = img.convert("L")
    p = np.asarray(grey.resize((_PHASH_SIDE, _PHASH_SIDE), _LANCZOS), dtype=np.uint8)
    d = np.asarray(grey.resize((_HASH + 1, _HASH), _LANCZOS), dtype=np.uint8)
    return p, d


def _pack(bits: np.ndarray) -> np.ndarray:
    """Rows of 64 booleans as ``uint64`` numbers, the first bit the most significant."""
    return (bits.reshape(len(bits), HASH_BITS).astype(np.uint64) * _WEIGHTS).sum(
        axis=1, dtype=np.uint64
    )


def phash_many(small: np.ndarray) -> np.ndarray:
    """The pHash of each 32×32 grey array of ``small`` (shape ``(n, 32, 32)``) as ``uint64``."""
    x = np.asarray(small, dtype=np.float64).reshape(-1, _PHASH_SIDE, _PHASH_SIDE)
    if not len(x):
        return np.zeros(0, np.uint64)
    # the DCT of the columns (axis 0), then of the rows (axis 1): only 8 of each are kept
    low = np.einsum("kn,bnm,lm->bkl", _DCT8, x, _DCT8, optimize=True)
    flat = low.reshape(len(x), HASH_BITS)
    # FFTPACK gives exact zeros where a picture's frequencies cancel (a flat or symmetric
    # picture); the product leaves ~1e-12 of either sign there, which would decide ties.
    flat[np.abs(flat) < _ZERO] = 0.0
    med = np.median(flat, axis=1, keepdims=True)
    return _pack(flat > med)


def dhash_many(small: np.ndarray) -> np.ndarray:
    """The dHash of each 8×9 grey array of ``small`` (shape ``(n, 8, 9)``) as ``uint64``."""
    x = np.asarray(small, dtype=np.int16).reshape(-1, _HASH, _HASH + 1)
    if not len(x):
        return np.zeros(0, np.uint64)
    return _pack(x[:, :, 1:] > x[:, :, :-1])


def phash(img: Image.Image) -> int:
    """The 64-bit pHash of ``img`` (``imagehash.phash``'s bits as a number)."""
    return int(phash_many(grey_small(img)[0][None])[0])


def dhash(img: Image.Image) -> int:
    """The 64-bit dHash of ``img`` (``imagehash.dhash``'s bits as a number)."""
    return int(dhash_many(grey_small(img)[1][None])[0])


def pixel_digest(img: Image.Image) -> bytes:
    """16 bytes that are equal for two pictures exactly when their decoded pixels are (in
    RGBA when the picture has transparency, else RGB) and their sizes are."""
    alpha = img.mode in ("RGBA", "LA", "PA", "La", "RGBa") or (
        img.mode == "P" and "transparency" in img.info
    )
    mode = "RGBA" if alpha else "RGB"
    canon = img if img.mode == mode else img.convert(mode)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{mode} {canon.width} {canon.height};".encode())
    h.update(canon.tobytes())
    return h.digest()


@dataclass(frozen=True)
class PictureHashes:
    """A picture's fingerprints: its pixel digest, pHash and dHash, and the pHash and dHash
    of the picture mirrored (from the small grey arrays flipped left to right)."""

    pixels: bytes
    phash: int
    dhash: int
    phash_mirrored: int
    dhash_mirrored: int


def hashes_of(img: Image.Image) -> PictureHashes:
    """Every fingerprint of one decoded picture."""
    p, d = grey_small(img)
    ph = phash_many(np.stack([p, p[:, ::-1]]))
    dh = dhash_many(np.stack([d, d[:, ::-1]]))
    return PictureHashes(pixel_digest(img), int(ph[0]), int(dh[0]), int(ph[1]), int(dh[1]))


def distance(a: int, b: int) -> int:
    """Hamming distance of two 64-bit hashes: the bits in which they differ."""
    return (a ^ b).bit_count()


def distances(a: np.ndarray | Sequence[int], b: np.ndarray | Sequence[int]) -> np.ndarray:
    """Hamming distances of ``uint64`` hashes, element by element (vectorised)."""
    x = np.bitwise_xor(np.asarray(a, np.uint64), np.asarray(b, np.uint64))
    return np.bitwise_count(x).astype(np.int64)
