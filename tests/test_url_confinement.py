"""A URL root confines every spec after every decoding the URL will undergo: percent-
decoding (once, twice, more), dot segments and separators hidden in a component, and what
an HTTP client or server makes of them. A generated battery of encodings of "the folder
above" is refused under ``s3://``, ``gs://`` and ``http://`` roots and never reaches a name
outside a local root; against a real HTTP server, no request leaves the root's folder."""

from __future__ import annotations

import itertools
import posixpath
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from browser_app.errors import PathRefused
from browser_app.paths import expand_inside, resolve_inside
from codec.locations import url_inside

DOTS = [
    "..",
    ".%2e",
    "%2e.",
    "%2e%2e",
    "%2E%2E",
    "%2e%2E",
    "%252e%252e",
    "%25252e%25252e",
    "%252E.",
    ".%252e",
]
SEPARATORS = ["/", "%2f", "%2F", "%5c", "%5C", "%252f", "%255c", "\\"]


def battery() -> list[str]:
    """Specs meaning ``../secret.tfrecord`` (and ``../*``) in every encoding above, with
    a ``./`` or an inner folder in front for some."""
    out = []
    for dots, sep in itertools.product(DOTS, SEPARATORS):
        for lead in ("", "./", "sub/", "%2e/", "sub/%2e%2e/"):
            out.append(f"{lead}{dots}{sep}secret.tfrecord")
            out.append(f"{lead}{dots}{sep}*")
    return out


BATTERY = battery()


def _decoded_fully(url: str) -> str:
    path = urllib.parse.urlsplit(url).path
    for _ in range(8):
        path = urllib.parse.unquote(path)
    return posixpath.normpath(path.replace("\\", "/"))


@pytest.mark.parametrize("root", ["s3://bkt/data", "gs://bkt/data", "http://127.0.0.1:9/data"])
def test_every_encoding_of_the_folder_above_is_refused_under_a_url_root(root: str) -> None:
    for spec in BATTERY:
        for text in (spec, f"{root}/{spec}"):
            with pytest.raises((PathRefused, FileNotFoundError)):
                expand_inside(root, text)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(["a", "b.tfrecord", ".", "..", "%2e", "%2e%2e", "%252e", "%2f", "%5c"]),
        min_size=1,
        max_size=6,
    )
)
def test_a_url_inside_stays_inside_whatever_decodes_it(parts: list[str]) -> None:
    """What url_inside lets in stays under the root however many times it is decoded."""
    root = "http://h/data"
    url = root + "/" + "/".join(parts)
    if url_inside(url, root):
        assert _decoded_fully(url).startswith("/data")
        assert ".." not in _decoded_fully(url).split("/")


def test_names_with_percent_signs_that_hide_nothing_still_open() -> None:
    root = "s3://bkt/data"
    for name in ("100%25.tfrecord", "a%20b.tfrecord", "x%41y.tfrecord", "..a.tfrecord"):
        assert url_inside(f"{root}/{name}", root), name


def test_the_battery_against_a_real_http_server_reaches_nothing_outside(http_server) -> None:
    http_server.put("secret.tfrecord", b"secret")
    http_server.put("data/ok.tfrecord", b"")
    root = http_server.url("data")
    for spec in BATTERY:
        with pytest.raises((PathRefused, FileNotFoundError)):
            expand_inside(root, spec)
    outside = [p for _, p, _ in http_server.log if not _decoded_fully(p).startswith("/data")]
    assert outside == []


def test_the_battery_under_a_local_root_never_leaves_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret.tfrecord").write_bytes(b"secret")
    for spec in BATTERY:
        try:
            got = expand_inside(root, spec)
        except (PathRefused, FileNotFoundError, OSError):
            continue
        assert all(Path(p).resolve().is_relative_to(root.resolve()) for p in got), spec
        try:
            path = resolve_inside(root, spec)
        except (PathRefused, FileNotFoundError, OSError):
            continue
        assert Path(path).resolve().is_relative_to(root.resolve()), spec
