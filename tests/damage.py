"""Random damage for generated TFRecord streams, one generator for every property test of
readers, range walks and jobs: bit flips, cut-out and inserted runs, and a truncated end."""

from __future__ import annotations

import random


def damage(rng: random.Random, raw: bytes, hits: int = 4) -> bytes:
    """``raw`` with up to ``hits`` random injuries (possibly none)."""
    out = bytearray(raw)
    for _ in range(rng.randint(0, hits)):
        if not out:
            break
        at = rng.randrange(len(out))
        kind = rng.random()
        if kind < 0.4:
            out[at] ^= 1 << rng.randrange(8)
        elif kind < 0.7:
            del out[at : at + rng.randint(1, 50)]
        elif kind < 0.85:
            out[at:at] = rng.randbytes(rng.randint(1, 50))
        else:
            del out[at:]  # truncated
    return bytes(out)
