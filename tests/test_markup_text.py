"""The escapes that keep text from files out of Markdown, for any text (hypothesis)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as hs

from browser_app.view import label_text, md_code, md_text

SPECIAL = set("\\`*_[]<>$:~|&")
BIDI = set("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
texts = hs.text(
    alphabet=hs.sampled_from(sorted(SPECIAL | BIDI) + list("ab #+-=.)\n\r19wh:/@ttps")),
    max_size=60,
) | hs.text(max_size=60)


def _escaped_everywhere(out: str) -> None:
    i = 0
    while i < len(out):
        if out[i] == "\\":
            assert i + 1 < len(out) and (out[i + 1] in SPECIAL or out[i + 1] in "#+-=.)")
            i += 2
            continue
        assert out[i] not in SPECIAL, (out, i)
        i += 1


@given(texts)
def test_md_text_leaves_no_markup(s: str) -> None:
    out = md_text(s)
    _escaped_everywhere(out)
    assert not BIDI & set(out) and "\n" not in out and "\r" not in out
    assert not re.search(r"(?i)https?:|www\.", out.replace("\\", ""))  # no autolink
    assert not re.match(r"\s*(#|[+\-=>]|\d+[.)])", out)  # no heading or list at the start
    # No icon or emoji shortcode: a colon is never directly followed by a name.
    assert not re.search(r":[\w/]", out.replace("\\", ""))


@given(texts)
def test_label_text_keeps_every_other_character(s: str) -> None:
    out = label_text(s)
    assert not BIDI & set(out)
    plain = re.sub(r"‹U\+[0-9A-F]{4}›", "", out).replace("⏎", "")
    assert plain == "".join(c for c in s if c not in BIDI and c not in "\r\n")


@given(texts)
def test_md_code_cannot_be_closed_from_inside(s: str) -> None:
    out = md_code(s)
    fence = re.match(r"`+", out).group(0)  # type: ignore[union-attr]
    inner = out[len(fence) : -len(fence)]
    assert out.endswith(fence) and fence not in inner
    assert not BIDI & set(out)
