"""Remote datasets in the app (AppTest, in this process) against moto's real S3 server on
loopback: an s3:// object and a shard pattern opened under a URL root, paged, in the gallery;
what lies outside the root refused; an object replaced while open, reopened; the network
failing, then tried again; a jump to 50 % of the bytes numbered as estimates until the index
reaches them; a missing library naming its extra; a signed URL's signature kept out of the
page and the address bar.

The oracle is the same bytes read as a local file. The background indexer's pace
(``header._STEP_SECONDS``) is set to nothing where a test needs the index not to have reached
a place yet, and to plenty where it needs the index complete."""

from __future__ import annotations

import gzip
import random
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from app_support import gallery_tiles, go_to_record, no_crash, start_app
from netservers import FaultProxy, MotoS3, RangeHTTPServer
from streamlit import config
from streamlit.testing.v1 import AppTest

import codec
from browser_app.sample_data import write_sample
from browser_app.ui.widgets import header
from codec import locations, remote, settings
from codec.framing import OVERHEAD, encode_record
from codec.values import format_bytes

ROOT = "s3://bkt/data"
BLOCK = 64 << 10


@pytest.fixture(autouse=True)
def _remote_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Small blocks and quick retries; usage statistics off, as the launcher runs the server
    (AppTest otherwise measures every cached value, taking the length of a dataset: its whole
    index)."""
    monkeypatch.setenv(settings.BLOCK_ENV, str(BLOCK))
    monkeypatch.setattr(remote, "BACKOFF", 0.01)
    locations.forget()
    before = config.get_option("browser.gatherUsageStats")
    config.set_option("browser.gatherUsageStats", False)
    yield
    config.set_option("browser.gatherUsageStats", before)
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture(scope="module")
def detection(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    """The sample's Object Detection records (pictures with boxes), 20 times over."""
    folder = tmp_path_factory.mktemp("sample")
    write_sample(folder)
    with codec.TFRecordFile(folder / "detection.tfrecord", use_cache=False) as f:
        records = list(f)
    return records * 20


def _offsets(payloads: list[bytes]) -> list[int]:
    out, off = [], 0
    for p in payloads:
        out.append(off)
        off += len(p) + OVERHEAD
    return out


def _filename(payload: bytes) -> str:
    rec = codec.example.decode(payload)
    return rec.features["image/filename"].values[0].decode()


def app(
    monkeypatch: pytest.MonkeyPatch, root: str, *paths: str, indexing: float = 0.0, **params: str
) -> AppTest:
    """The app on ``root`` (opening ``paths``), its background indexing ``indexing`` seconds
    a run."""
    monkeypatch.setattr(header, "_STEP_SECONDS", indexing)
    return start_app(monkeypatch, root, *paths, params=params)


def table(at: AppTest):  # type: ignore[no-untyped-def]
    (df,) = [d for d in at.main.dataframe if d.key and d.key.startswith("tfb:w:table:")]
    return df.value


def plain(text: object) -> str:
    """Text of an element as a person reads it: without the Markdown escapes and the word
    joiners that keep a URL from turning into a link."""
    return str(text).replace("\\", "").replace("\u2060", "")


def errors(at: AppTest) -> list[str]:
    return [plain(e.value) for e in at.error]


def warnings(at: AppTest) -> str:
    return " ".join(plain(w.value) for w in at.warning)


def captions(at: AppTest) -> str:
    return " ".join(plain(c.value) for c in at.main.caption)


def type_path(at: AppTest, text: str) -> AppTest:
    at.sidebar.text_input(key="tfb:w:path").input(text).run()
    return at


# -- open, page, gallery ------------------------------------------------------------------------


def test_an_object_opens_and_pages_as_the_local_file(monkeypatch, store, detection):
    scheme, store = store
    store.put("bkt", "data/det.tfrecord", b"".join(encode_record(p) for p in detection))
    root = f"{scheme}://bkt/data"
    at = app(monkeypatch, root, f"{root}/det.tfrecord")
    no_crash(at)
    assert at.query_params["file"] == "det.tfrecord"  # relative to the URL root
    df = table(at)
    assert list(df["#"]) == list(range(25))
    assert list(df["image/filename"]) == [_filename(p) for p in detection[:25]]
    assert df["picture"].notna().all()  # thumbnails, drawn from the remote bytes
    assert f"Remote ({scheme}://)" in captions(at) and "read so far" in captions(at)
    assert "Remote block cache:" in captions(at)
    at.button(key="tfb:w:records:next").click().run()
    no_crash(at)
    assert list(table(at)["image/filename"]) == [_filename(p) for p in detection[25:50]]
    # The picker lists the bucket under the root.
    options = at.sidebar.selectbox(key="tfb:w:pick").options
    assert any("det.tfrecord" in o for o in options)


@pytest.mark.parametrize("compress", [gzip.compress, zlib.compress], ids=["gzip", "zlib"])
def test_a_compressed_object_opens_and_pages_with_its_reads_counted(
    monkeypatch, store, detection, compress
):
    """A GZIP or ZLIB object on every store: the pages show its records, and the header counts
    the requests and bytes read of the compressed object (it was a failed page: the inflated
    stream had no counts to show)."""
    scheme, store = store
    raw = b"".join(encode_record(p) for p in detection)
    packed = compress(raw)
    store.put("bkt", "data/det.tfrecord.z", packed)
    root = f"{scheme}://bkt/data"
    at = app(monkeypatch, root, f"{root}/det.tfrecord.z")
    no_crash(at)
    assert list(table(at)["image/filename"]) == [_filename(p) for p in detection[:25]]
    at.button(key="tfb:w:records:next").click().run()
    no_crash(at)
    assert list(table(at)["image/filename"]) == [_filename(p) for p in detection[25:50]]
    said = captions(at)
    assert f"Remote ({scheme}://)" in said
    requests, read = re.search(r"([\d,]+) requests?, (.+?) read so far", said).groups()
    assert int(requests.replace(",", "")) >= 1
    assert read == format_bytes(len(packed))  # the whole object: it is small


def test_a_shard_pattern_opens_as_one_dataset_with_its_gallery(monkeypatch, s3, detection):
    shards = [detection[k * 60 : (k + 1) * 60] for k in range(3)]
    for k, part in enumerate(shards):
        s3.put("bkt", f"data/sets/train-{k:05d}-of-00003.tfrecord", _raw(part))
    at = app(monkeypatch, ROOT)
    type_path(at, "sets/train-*-of-00003.tfrecord")
    no_crash(at)
    assert not errors(at)
    assert at.query_params["file"] == "sets/train-*-of-00003.tfrecord"
    assert "3 files" in captions(at)
    go_to_record(at).set_value(70).run()  # in the second shard
    df = table(at)
    assert 70 in list(df["#"])
    row = list(df["#"]).index(70)
    assert df["image/filename"][row] == _filename(shards[1][10])
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    tiles = gallery_tiles(at)  # the page of record 70: 50–74, across the first two shards
    assert [t["record"] for t in tiles] == list(range(50, 75))
    assert all(t["src"] for t in tiles)
    assert tiles[0]["caption"].startswith("#50")


def _raw(payloads: list[bytes]) -> bytes:
    return b"".join(encode_record(p) for p in payloads)


# -- confinement --------------------------------------------------------------------------------


def test_nothing_outside_a_url_root_opens(monkeypatch, s3: MotoS3, detection):
    s3.put("bkt", "data/in.tfrecord", _raw(detection[:5]))
    s3.put("bkt", "secret/out.tfrecord", _raw(detection[:5]))
    s3.put("bkt", "data2/out.tfrecord", _raw(detection[:5]))
    at = app(monkeypatch, ROOT)
    for spec in (
        "s3://bkt/secret/out.tfrecord",
        "s3://bkt/data2/out.tfrecord",
        "s3://bkt/dat*/out.tfrecord",
        "../secret/out.tfrecord",
        "/etc/passwd",
    ):
        type_path(at, spec)
        no_crash(at)
        assert any(e.startswith("Refused:") for e in errors(at)), (spec, errors(at))
        assert "file" not in at.query_params
    # A link to an object outside the root is refused the same way.
    at = app(monkeypatch, ROOT, file="s3://bkt/secret/out.tfrecord")
    assert any("outside the root s3://bkt/data" in e for e in errors(at))
    # Under a local root, a URL is refused with the way to open it.
    at = app(monkeypatch, str(Path.cwd()))
    type_path(at, "s3://bkt/data/in.tfrecord")
    [message] = [e for e in errors(at) if e.startswith("Refused:")]
    assert "URLs are not opened under the local root folder" in message
    assert "--root s3://bucket/prefix" in message


# -- an object replaced, a network that fails ---------------------------------------------------


def test_an_object_replaced_while_open_is_said_and_reopened(monkeypatch, s3: MotoS3, detection):
    s3.put("bkt", "data/v.tfrecord", _raw(detection))
    at = app(monkeypatch, ROOT, f"{ROOT}/v.tfrecord")
    assert table(at)["image/filename"][0] == _filename(detection[0])
    newer = detection[7:] + detection[:7]
    s3.put("bkt", "data/v.tfrecord", _raw(newer))
    locations.forget()  # the server is asked again now, not a few seconds later
    go_to_record(at).set_value(len(detection) - 5).run()  # unread blocks
    no_crash(at)
    warned = warnings(at)
    assert "replaced on the server since it was opened" in warned
    assert "changed since it was opened" in warned  # the read refused the new bytes
    reopen = [b for b in at.main.button if b.label == "Open the new version"]
    assert reopen
    reopen[0].click().run()
    no_crash(at)
    assert not [b for b in at.main.button if b.label == "Open the new version"]
    df = table(at)
    assert list(df["image/filename"]) == [
        _filename(newer[n]) for n in range(len(detection) - 25, len(detection))
    ]


def test_the_network_failing_is_said_and_tried_again(
    monkeypatch, s3: MotoS3, s3_proxy: FaultProxy, detection
):
    s3.put("bkt", "data/n.tfrecord", _raw(detection[:40]))
    s3_proxy.fail(500, times=None, method="GET", ranged=True)
    at = app(monkeypatch, ROOT, f"{ROOT}/n.tfrecord")
    no_crash(at)
    [message] = errors(at)
    assert "s3://bkt/data/n.tfrecord" in message and "Check the connection" in message
    assert at.query_params["file"] == "n.tfrecord"  # still the source: not forgotten
    again = at.button(key="tfb:w:remote:retry:open")
    at.run()  # nothing is tried again until asked
    assert errors(at) == [message]
    s3_proxy.clear_faults()
    again.click().run()
    no_crash(at)
    assert not errors(at)
    assert list(table(at)["image/filename"]) == [_filename(p) for p in detection[:25]]


# -- jump to a percentage of the bytes ----------------------------------------------------------


def test_a_jump_to_50_percent_is_numbered_by_estimate_until_indexed(
    monkeypatch, s3: MotoS3, detection
):
    s3.put("bkt", "data/j.tfrecord", _raw(detection))
    offsets = _offsets(detection)
    at = app(monkeypatch, ROOT, f"{ROOT}/j.tfrecord", at="50")
    no_crash(at)
    assert at.query_params["at"] == "50"
    [df] = [d.value for d in at.main.dataframe]
    numbers = list(df["#"])
    assert all(n.startswith("≈ ") for n in numbers)
    estimate = int(numbers[0][2:].replace(",", ""))
    size = offsets[-1] + len(detection[-1]) + OVERHEAD
    first = next(i for i, o in enumerate(offsets) if o >= size // 2)
    assert abs(estimate - first) <= 0.05 * len(detection)
    assert list(df["image/filename"]) == [_filename(p) for p in detection[first : first + 25]]
    assert list(df["offset"]) == offsets[first : first + 25]
    assert "searching for a record boundary" in captions(at) and "estimates" in captions(at)
    # The index reaches them: the same records, numbered exactly.
    monkeypatch.setattr(header, "_STEP_SECONDS", 60.0)
    at.run()
    no_crash(at)
    [df] = [d.value for d in at.main.dataframe]
    assert list(df["#"]) == [f"{n:,}" for n in range(first, first + 25)]
    at.button(key="tfb:w:records:landing:open").click().run()
    assert "at" not in at.query_params and at.query_params["record"] == str(first)
    assert list(table(at)["#"])[first % 25] == first
    # With the index complete, a jump goes to the numbered page at once.
    next(w for w in at.number_input if w.label == "Go to %").set_value(25.0).run()
    quarter = next(i for i, o in enumerate(offsets) if o >= size // 4)
    assert at.query_params["record"] == str(quarter) and "at" not in at.query_params


def test_a_jump_past_the_last_record_says_so(monkeypatch, s3: MotoS3, detection):
    """At 100 % no record starts after the byte: the page says where the last records are
    and draws no table."""
    s3.put("bkt", "data/end.tfrecord", _raw(detection))
    at = app(monkeypatch, ROOT, f"{ROOT}/end.tfrecord", at="100")
    no_crash(at)
    assert any("No record starts after 100 %" in i.value for i in at.main.info)
    assert not at.main.dataframe


def test_a_boundary_inside_a_record_is_told_once_indexed(monkeypatch, s3: MotoS3, detection):
    """A record in the middle that holds TFRecord framing of its own: the search lands inside
    it, and the index, once there, says no record of the object starts at that byte."""
    rng = random.Random(5)
    inner = _raw([rng.randbytes(rng.randint(100, 200)) for _ in range(40)])
    payloads = [*detection[:1000], inner, *detection[1000:]]  # past the first records read
    s3.put("bkt", "data/nested.tfrecord", _raw(payloads))
    offsets = _offsets(payloads)
    size = offsets[-1] + len(payloads[-1]) + OVERHEAD
    percent = 100.0 * (offsets[1000] + 40) / size
    at = app(monkeypatch, ROOT, f"{ROOT}/nested.tfrecord", at=f"{percent}")
    [df] = [d.value for d in at.main.dataframe]
    assert offsets[1000] < df["offset"].iloc[0] < offsets[1001]
    assert all(n.startswith("≈") for n in df["#"]), list(df["#"])
    monkeypatch.setattr(header, "_STEP_SECONDS", 60.0)
    at.run()
    [df] = [d.value for d in at.main.dataframe]
    assert set(df["#"]) == {"inside a record"}
    assert "not records of the file" in captions(at)


# -- libraries, signatures, anonymous access ------------------------------------------------------


def test_a_missing_library_names_the_extra(monkeypatch, without_library):
    without_library("gs", "gcsfs")
    at = app(monkeypatch, "gs://bucket/data", "gs://bucket/data/x.tfrecord")
    no_crash(at)
    text = " ".join([*errors(at), *(plain(c.value) for c in at.sidebar.caption)])
    assert "pip install 'tfrecord-browser[gcs]'" in text


def test_a_signed_url_never_reaches_the_page_or_the_link(
    monkeypatch, http_server: RangeHTTPServer, detection
):
    http_server.put("d/x.tfrecord", _raw(detection[:30]))
    root = http_server.url("d")
    signed = http_server.url("d/x.tfrecord") + "?X-Amz-Signature=topsecret&X-Amz-Credential=AKID"
    at = app(monkeypatch, root)
    type_path(at, signed)
    no_crash(at)
    assert list(table(at)["image/filename"]) == [_filename(p) for p in detection[:25]]
    link = at.query_params["file"]
    assert link == http_server.url("d/x.tfrecord") + "?…"
    page = repr(at._tree)
    assert "topsecret" not in page and "AKID" not in page
    # The link, opened later, says why it does not open.
    again = app(monkeypatch, root, file=link)
    no_crash(again)
    assert "signed part of a URL (its query string) is never kept in links" in warnings(again)


def test_anonymous_access_is_carried_to_every_reader_and_the_link(monkeypatch, s3, detection):
    """A public object read without any credentials (none in the environment): with the
    switch on it opens, and the link carries the switch."""
    s3.make_bucket("bkt")
    s3.client().put_object(
        Bucket="bkt", Key="data/a.tfrecord", Body=_raw(detection[:30]), ACL="public-read"
    )
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    at = app(monkeypatch, ROOT, f"{ROOT}/a.tfrecord")
    assert errors(at) and "credentials" in errors(at)[0]
    at.sidebar.toggle(key="tfb:w:anon").set_value(True).run()
    at.sidebar.text_input(key="tfb:w:path").input("a.tfrecord").run()
    no_crash(at)
    assert at.query_params["anon"] == "1" and at.query_params["file"] == "a.tfrecord"
    assert "anonymous access" in captions(at)
    assert list(table(at)["image/filename"]) == [_filename(p) for p in detection[:25]]
    # A link with anon=1 opens the same way in a new session.
    again = app(monkeypatch, ROOT, file="a.tfrecord", anon="1")
    no_crash(again)
    assert list(table(again)["image/filename"]) == [_filename(p) for p in detection[:25]]
