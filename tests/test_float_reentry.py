"""Typing a float list back as the app shows it is quiet and exact: the "not exactly
representable as float32" note is only for a value typed with more than float32 holds."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
from hypothesis import given
from hypothesis import strategies as hs

from browser_app.edits.values import check_value, parse_values, render_value
from codec.values import format_float

FLOAT32 = hs.floats(width=32, allow_nan=True, allow_infinity=True)


def _bits(x: float) -> bytes:
    return np.float32(x).tobytes()


@given(hs.lists(FLOAT32, max_size=40), hs.sampled_from([", ", " ", "\n", ","]))
def test_an_unchanged_float_list_parses_back_quietly_to_the_same_bits(
    values: list[float], sep: str
) -> None:
    text = sep.join(render_value("float", v) for v in values)
    parsed, notes = parse_values("float", text)
    assert notes == []
    assert len(parsed) == len(values)
    for got, want in zip(parsed, values):
        if math.isnan(want):
            assert math.isnan(float(got))
        else:
            assert _bits(float(got)) == _bits(want)


@given(FLOAT32.filter(lambda x: math.isfinite(x) and x != 0))
def test_more_digits_than_float32_holds_still_get_the_note(x: float) -> None:
    # The shown value moved by one part in 10**15: a number float32 cannot hold and that the
    # app never shows, though it rounds to about the same float32.
    shown = Decimal(format_float(x))
    text = str(shown + shown.copy_abs() * Decimal("1e-15"))
    parsed = check_value("float", text)
    assert parsed.note is not None and "not exactly representable" in parsed.note
