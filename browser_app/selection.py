"""Record selections as people type them: ``0:10,15,-1``."""

from __future__ import annotations

from browser_app.errors import SpecError

__all__ = ["SpecError", "parse_record_spec"]


def parse_record_spec(spec: str, total: int) -> list[int]:
    """Turn ``"0:10,15,-1"`` into sorted unique record numbers below ``total``.

    Parts are separated by commas: ``N`` (negative counts from the end), ``A:B`` (Python slice
    semantics, either end may be left out, ``A:B:S`` with a step). Out-of-range single numbers
    are an error; slices are clipped as Python clips them."""
    picked: set[int] = set()
    if not spec.strip():
        raise SpecError("empty record selection")
    for raw in spec.split(","):
        part = raw.strip()
        if not part:
            continue
        try:
            if ":" in part:
                bits = part.split(":")
                if len(bits) > 3:
                    raise SpecError(f"{part!r}: too many ':'")
                nums = [int(b) if b.strip() else None for b in bits]
                if len(nums) == 3 and nums[2] == 0:
                    raise SpecError(f"{part!r}: the step cannot be 0")
                picked.update(range(*slice(*nums).indices(total)))
            else:
                n = int(part)
                if not -total <= n < total:
                    raise SpecError(f"record {n} is out of range (0..{total - 1})")
                picked.add(n % total)
        except ValueError as exc:
            if isinstance(exc, SpecError):
                raise
            raise SpecError(f"{part!r} is not a record number or a range like 0:10") from exc
    return sorted(picked)
