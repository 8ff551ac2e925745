"""URLs in one place: which specs are URLs, the only form of a URL ever shown, confinement to a
URL root, the extra each protocol needs, and library errors turned into messages without
credentials — for gs://, az:// and https:// as for s3://, without any server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec import locations
from codec.errors import MissingExtraError, ObjectChangedError, RemoteError

SIGNED = [
    "https://storage.googleapis.com/b/x.tfrecord?X-Goog-Signature=SECRET1&X-Goog-Credential=ID",
    "https://acct.blob.core.windows.net/c/x.tfrecord?sv=2024&se=2030&sp=r&sig=SECRET1",
    "https://bkt.s3.amazonaws.com/x.tfrecord?X-Amz-Signature=SECRET1&X-Amz-Credential=AKID",
    "https://user:SECRET1@example.org/data/x.tfrecord",
    "gs://bucket/x.tfrecord?access_token=SECRET1",
]


@pytest.mark.parametrize("url", SIGNED)
def test_a_shown_url_carries_no_credential(url):
    shown = locations.shown(url)
    assert "SECRET1" not in shown
    assert shown.startswith(url.split("://")[0] + "://")
    assert shown.split("?")[0].endswith("/x.tfrecord")


@pytest.mark.parametrize("url", SIGNED)
def test_library_messages_are_redacted(url):
    with pytest.raises(RemoteError) as info, locations.remote_errors(url, "reading"):
        raise RuntimeError(f"GET {url} failed: 503 (see {url.split('?')[-1]})")
    assert "SECRET1" not in str(info.value)
    assert locations.shown(url) in str(info.value)


@pytest.mark.parametrize("url", SIGNED)
def test_missing_and_refused_objects_keep_their_kind(url):
    with pytest.raises(FileNotFoundError) as missing, locations.remote_errors(url):
        raise FileNotFoundError(url)
    with pytest.raises(PermissionError) as refused, locations.remote_errors(url):
        raise PermissionError(f"403 Forbidden for {url}")
    for err in (missing.value, refused.value):
        assert "SECRET1" not in str(err) and err.filename == locations.shown(url)
    assert "--anon" in str(refused.value)


def test_a_precondition_failure_is_an_object_that_changed():
    class Expired(OSError):
        pass

    Expired.__name__ = "FileExpired"
    for exc in (Expired("etag moved"), RuntimeError("412 Precondition Failed")):
        with pytest.raises(ObjectChangedError), locations.remote_errors("s3://b/x"):
            raise exc


@given(st.text(min_size=1, max_size=40))
def test_paths_are_not_urls(text):
    if "://" not in text:
        assert not locations.is_url(text)


@pytest.mark.parametrize(
    ("url", "proto"),
    [("s3://b/k", "s3"), ("GS://b/k", "gs"), ("az://c/k", "az"), ("https://h/p", "https")],
)
def test_protocols(url, proto):
    assert locations.protocol(url) == proto and locations.is_url(url)


def test_file_urls_are_local_paths():
    assert not locations.is_url("file:///data/x.tfrecord")
    assert locations.local_path("file:///data/x.tfrecord") == "/data/x.tfrecord"


@pytest.mark.parametrize(
    ("url", "root", "inside"),
    [
        ("s3://bkt/data/x.tfrecord", "s3://bkt/data", True),
        ("s3://bkt/data/sub/x.tfrecord", "s3://bkt/data/", True),
        ("s3://bkt/data", "s3://bkt/data", True),
        ("s3://bkt/database/x.tfrecord", "s3://bkt/data", False),  # a prefix, not a folder
        ("s3://bkt/data/../secret/x", "s3://bkt/data", False),
        ("s3://other/data/x", "s3://bkt/data", False),
        ("gs://bkt/data/x", "s3://bkt/data", False),  # another protocol
        ("s3://bkt//data/x", "s3://bkt/data", True),
        ("/local/data/x", "s3://bkt/data", False),
    ],
)
def test_url_roots(url, root, inside):
    assert locations.url_inside(url, root) is inside


@pytest.mark.parametrize(
    ("proto", "extra", "library"),
    [("gs", "gcs", "gcsfs"), ("s3", "s3", "s3fs"), ("az", "azure", "adlfs")],
)
def test_a_missing_library_names_its_extra(without_library, proto, extra, library):
    without_library(proto, library)
    with pytest.raises(MissingExtraError) as info:
        locations.filesystem(f"{proto}://bucket/x.tfrecord?sig=SECRET1")
    message = str(info.value)
    assert f"pip install 'tfrecord-browser[{extra}]'" in message and library in message
    assert "SECRET1" not in message
    assert isinstance(info.value, OSError)  # callers that show OS errors show it too


def test_an_unknown_protocol_is_one_message():
    with pytest.raises(RemoteError, match="not a protocol this tool can read"):
        locations.filesystem("nosuchproto://x/y")


def test_anonymous_access_reaches_each_library():
    assert locations.storage_options("s3", anon=True)["anon"] is True
    assert locations.storage_options("gs", anon=True)["token"] == "anon"
    assert locations.storage_options("az", anon=True)["anon"] is True
    assert "anon" not in locations.storage_options("s3")


def test_anonymous_access_is_each_callers_own(monkeypatch):
    """A bucket one caller reads anonymously is read with credentials by the next caller that
    does not ask for anonymous access: nothing the first caller chose stays in the process."""
    pytest.importorskip("s3fs")
    first, _ = locations.filesystem("s3://public/a.tfrecord", anon=True)
    second, _ = locations.filesystem("s3://public/b.tfrecord")
    assert first.anon is True and second.anon is False

    asked = []

    class Store:
        def info(self, path):
            return {"size": 10, "ETag": "v1"}

    def filesystem(url, *, anon=False):
        asked.append(anon)
        return Store(), url

    monkeypatch.setattr(locations, "filesystem", filesystem)
    locations.remote_stat("s3://public/a.tfrecord", anon=True)
    locations.remote_stat("s3://public/a.tfrecord")  # not the anonymous answer, kept
    locations.remote_stat("s3://public/b.tfrecord")
    assert asked == [True, False, False]
