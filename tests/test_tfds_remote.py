"""TFDS dataset folders and TFX ExampleGen outputs kept in an object store open as their local
copies do: on moto's S3 server, the Google Cloud Storage emulator and Azurite on loopback
(tests/netservers.py), against the same folder on disk as the oracle.

A TFDS dataset written by the project's generator (browser_app.generators.tfds, the layout
tensorflow_datasets writes) is uploaded object by object, then opened by URL at every level
(version, name, data dir) and compared field by field with the local copy opened the same way:
splits, shards (as URLs), declared lengths, features, class names, findings and notes (the
newest of several versions, several datasets to choose among, each planted lie of the
metadata, a dataset_info.json or labels file over its size cap). Opening a remote version
folder asks the store one listing and a request per metadata file, never a shard, and a file
over its cap is never asked for. ``FOLDER:SPLIT`` under a URL root is confined to it (a spec
that climbs out is refused before anything is asked), on the command line (``info URL:train
--json``, ``--split``, ``dump``) and in the app (AppTest under an ``s3://`` root: the split
opened, the Overview's splits as for the local copy, another split chosen)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from app_support import no_crash, page_script, start_app
from cli_support import run_cli
from netservers import RangeHTTPServer
from streamlit import config

from browser_app import paths
from browser_app.errors import PathRefused
from browser_app.generators import tfds as G
from codec import TFRecordDataset, locations, remote, settings, tfds
from codec.tfds import SplitFolder, TfdsChoiceError, open_split_folder

BUCKET = "bkt"
PREFIX = "data"
SHAPES = "shapes/3.0.1"


@pytest.fixture(autouse=True)
def _remote_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Small blocks and quick retries; no stat kept from another test; usage statistics
    off, as the launcher runs the server."""
    monkeypatch.setenv(settings.BLOCK_ENV, str(64 << 10))
    monkeypatch.setattr(remote, "BACKOFF", 0.01)
    locations.forget()
    before = config.get_option("browser.gatherUsageStats")
    config.set_option("browser.gatherUsageStats", False)
    yield
    config.set_option("browser.gatherUsageStats", before)
    st.cache_resource.clear()
    st.cache_data.clear()


def upload(server: Any, folder: Path, prefix: str = PREFIX) -> str:
    """Every file under ``folder`` put in the bucket under ``prefix``; the prefix's key."""
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            server.put(BUCKET, f"{prefix}/{p.relative_to(folder).as_posix()}", p.read_bytes())
    return prefix


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data dir holding the shapes dataset (train 40 in 2 shards, test 12)."""
    G.write_image_classification(tmp_path / "data")
    return tmp_path / "data"


# -- the oracle: everything a folder says, its paths written from its root ---------------------


class Rooted:
    """Paths and texts written relative to ``base`` (a local folder or a URL prefix)."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/").rstrip(os.sep)

    def path(self, p: str) -> str:
        assert p.startswith(self.base + "/") or p == self.base, (p, self.base)
        return p[len(self.base) :].lstrip("/").replace(os.sep, "/")

    def text(self, t: str) -> str:
        return t.replace(self.base + "/", "<root>/").replace(self.base, "<root>")


def feature_facts(spec: tfds.FeatureSpec, at: Rooted) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(spec):
        value = getattr(spec, f.name)
        if f.name == "names" and value is not None:
            value = (dict(value.names), value.kind, at.path(value.source))
        out[f.name] = value
    return out


def facts(found: SplitFolder | None, base: str) -> dict[str, Any] | None:
    """What :func:`open_split_folder` says of a folder, every field, paths from ``base``."""
    if found is None:
        return None
    at = Rooted(base)
    out: dict[str, Any] = {
        "kind": found.kind,
        "folder": at.path(found.folder),
        "name": found.name,
        "findings": [at.text(f) for f in found.findings],
        "notes": [at.text(n) for n in found.notes],
        "splits": [
            {
                "name": s.name,
                "shards": [(at.path(x.path), x.declared_records, x.present) for x in s.shards],
                "num_bytes": s.num_bytes,
                "declared_total": s.declared_total,
                "template": s.template,
            }
            for s in found.splits
        ],
    }
    ds = found.tfds
    if ds is not None:
        out["tfds"] = {
            f.name: getattr(ds, f.name)
            for f in dataclasses.fields(ds)
            if f.name not in ("folder", "splits", "features", "findings", "notes")
        }
        out["features"] = {k: feature_facts(v, at) for k, v in ds.features.items()}
        out["class_names"] = {k: dict(v.names) for k, v in ds.class_names().items()}
    return out


def same_as_local(local_root: Path, url_root: str, spec: str, anon: bool = False) -> dict:
    """The facts of ``spec`` (a path from the root) opened locally and by URL, asserted
    equal field by field; the local ones."""
    here = facts(open_split_folder(str(local_root / spec)), str(local_root))
    there = facts(open_split_folder(f"{url_root}/{spec}".rstrip("/"), anon=anon), url_root)
    assert here is not None, spec
    assert there is not None, spec
    for key in here:
        assert there.get(key) == here[key], key
    assert there == here
    return here


# -- the same dataset, local and remote ---------------------------------------------------------


def test_a_remote_dataset_opens_as_its_local_copy(store, data):
    scheme, server = store
    upload(server, data)
    url_root = f"{scheme}://{BUCKET}/{PREFIX}"
    for spec in (SHAPES, "shapes", ""):  # version, name, data dir
        got = same_as_local(data, url_root, spec)
        # The oracle says something: both splits, their shards, the class names.
        assert [s["name"] for s in got["splits"]] == ["train", "test"]
        assert got["splits"][0]["shards"] == [
            (f"{SHAPES}/shapes-train.tfrecord-00000-of-00002", 20, True),
            (f"{SHAPES}/shapes-train.tfrecord-00001-of-00002", 20, True),
        ]
        assert got["class_names"] == {"label": dict(enumerate(G.SHAPES))}
        assert got["features"]["label"]["names"][2] == f"{SHAPES}/label.labels.txt"
        assert got["findings"] == [] and got["notes"] == []
    # The shards open as any remote objects do, and hold what the local ones hold.
    remote_split = open_split_folder(f"{url_root}/{SHAPES}").split("test")
    local_split = open_split_folder(str(data / SHAPES)).split("test")
    with TFRecordDataset(remote_split.files) as a, TFRecordDataset(local_split.files) as b:
        assert len(a) == len(b) == 12
        assert [a[i] for i in range(12)] == [b[i] for i in range(12)]


def test_a_dataset_served_over_http_opens_as_its_local_copy(data):
    """An HTTP server that lists its folders as pages of links (as fsspec's HTTP file system
    reads a folder): the same, the metadata files' sizes asked for one by one."""
    with RangeHTTPServer(root=data) as server:
        url_root = server.base_url.rstrip("/")
        got = same_as_local(data, url_root, SHAPES)
        assert got["class_names"] == {"label": dict(enumerate(G.SHAPES))}
        asked = [(method, path) for method, path, _range in server.log]
        assert not any("shapes-" in path for _method, path in asked), asked  # no shard


def test_the_newest_version_is_opened_with_the_same_note(s3, data):
    shutil.copytree(data / SHAPES, data / "shapes/2.0.0")
    shutil.copytree(data / SHAPES, data / "shapes/10.0.0")
    (data / "shapes/3.0.1.incompleteABC").mkdir()  # an unfinished build: never opened
    upload(s3, data)
    got = same_as_local(data, f"s3://{BUCKET}/{PREFIX}", "shapes")
    assert got["folder"] == "shapes/10.0.0"
    assert got["notes"] == [
        "versions 2.0.0, 3.0.1, 10.0.0 found; opened 10.0.0, the newest"
        " (open <root>/shapes/2.0.0 for another)"
    ]
    assert "dataset_info.json says version 3.0.1, its folder is called 10.0.0" in got["findings"]


def test_several_datasets_are_listed_to_choose_from(s3, data):
    G.write_detection(data, photos=False)  # voc/2007/5.0.0 beside shapes
    upload(s3, data)
    url_root = f"s3://{BUCKET}/{PREFIX}"
    with pytest.raises(TfdsChoiceError) as here:
        open_split_folder(str(data))
    with pytest.raises(TfdsChoiceError) as there:
        open_split_folder(url_root)
    assert "holds 2 TFDS datasets or configs (shapes, voc/2007): open one of them" in str(
        here.value
    )
    assert Rooted(url_root).text(str(there.value)) == Rooted(str(data)).text(str(here.value))
    assert [Rooted(url_root).path(c) for c in there.value.choices] == ["shapes", "voc/2007"]
    assert [Rooted(str(data)).path(c) for c in here.value.choices] == ["shapes", "voc/2007"]
    got = same_as_local(data, url_root, "voc/2007")  # the config level, boxes and all
    assert got["features"]["objects/bbox"]["kind"] == tfds.BOUNDING_BOX


PLANTED = [p for p in G.PLANTS if p not in ("huge_info", "huge_labels")]  # 100 MB each


@pytest.mark.parametrize("what", PLANTED)
def test_a_planted_lie_is_the_same_finding_remotely(s3, data, what):
    G.plant(data / SHAPES, what)
    upload(s3, data)
    got = same_as_local(data, f"s3://{BUCKET}/{PREFIX}", SHAPES)
    if what == "missing_shard":
        assert got["findings"] == [
            "split 'train': 1 of 2 declared shards missing, first"
            " shapes-train.tfrecord-00001-of-00002"
        ]
        assert got["splits"][0]["shards"][1][2] is False
    elif what in ("bad_info", "bad_features", "outside_template", "short_labels"):
        assert got["findings"], what  # each of these says something of the metadata
    # shard_lengths and wrong_shape are found against the records (counted, or read): the
    # declared lengths and shapes are the same fields either way.


@pytest.fixture
def s3_counted(s3, s3_proxy, data) -> tuple[Any, str]:
    """The shapes dataset in the bucket, read through a proxy that counts requests (the
    upload goes to the server itself: not counted); its URL root."""
    upload(s3, data)
    s3_proxy.reset_stats()
    return s3_proxy, f"s3://{BUCKET}/{PREFIX}"


def asked(proxy: Any) -> list[str]:
    """The paths the store was asked for (listings as ``LIST <prefix>``)."""
    from urllib.parse import parse_qs, urlsplit

    out = []
    for method, path, _range in proxy.log:
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        if "list-type" in query:
            out.append(f"LIST {query.get('prefix', [''])[0]}")
        else:
            out.append(f"{method} {parts.path}")
    return out


def test_opening_a_remote_split_asks_one_listing_and_its_metadata(s3_counted, data):
    proxy, url_root = s3_counted
    proxy.reset_stats()
    started = time.perf_counter()
    found = open_split_folder(f"{url_root}/{SHAPES}")
    took = time.perf_counter() - started
    assert found is not None and len(found.split("train").files) == 2
    assert asked(proxy) == [
        f"LIST {PREFIX}/{SHAPES}/",
        f"GET /{BUCKET}/{PREFIX}/{SHAPES}/dataset_info.json",
        f"GET /{BUCKET}/{PREFIX}/{SHAPES}/features.json",
        f"GET /{BUCKET}/{PREFIX}/{SHAPES}/label.labels.txt",
    ]
    # The shards just listed open without a request each (their size and version known).
    proxy.reset_stats()
    with TFRecordDataset(found.split("train").files) as ds:
        assert (
            ds.files[0].identity.size
            == (data / SHAPES / Path(ds.files[0].path).name).stat().st_size
        )
    assert not any("HEAD" in a for a in asked(proxy)), asked(proxy)
    print(f"\nremote version folder opened in {took * 1000:.0f} ms, 4 requests")


@pytest.mark.parametrize(
    ("what", "cap"),
    [("dataset_info.json", "MAX_INFO_BYTES"), ("label.labels.txt", "MAX_NAMES_BYTES")],
)
def test_a_file_over_its_cap_is_refused_before_it_is_read(s3_counted, data, monkeypatch, what, cap):
    proxy, url_root = s3_counted
    monkeypatch.setattr(tfds, cap, 40)  # smaller than the file: refused by its listed size
    proxy.reset_stats()
    got = same_as_local(data, url_root, SHAPES)
    size = (data / SHAPES / what).stat().st_size
    kind = what if what.endswith(".json") else "names file"
    said = f"{kind}: {size:,} bytes is too large for a {kind} (at most 40)"
    assert any(said in f for f in got["findings"]), got["findings"]
    assert not any(a.endswith(what) for a in asked(proxy)), asked(proxy)  # never asked for


# -- TFX ---------------------------------------------------------------------------------------


def test_a_tfx_output_in_a_bucket(s3, tmp_path):
    G.write_tfx_splits(tmp_path / "taxi")
    upload(s3, tmp_path, "pipes")
    got = same_as_local(tmp_path, f"s3://{BUCKET}/pipes", "taxi")
    assert got["kind"] == tfds.TFX
    assert {s["name"]: len(s["shards"]) for s in got["splits"]} == {"eval": 1, "train": 2}


# -- FOLDER:SPLIT under a URL root ------------------------------------------------------------


def test_split_specs_under_a_url_root_stay_inside_it(s3, s3_counted, data):
    proxy, url_root = s3_counted
    upload(s3, data, "secret")
    for spec in (f"{SHAPES}:train", "shapes:test", f"{url_root}/{SHAPES}:train", SHAPES):
        here = paths.expand_inside(str(data), spec.replace(url_root + "/", ""))
        there = paths.expand_inside(url_root, spec)
        assert [Rooted(url_root).path(u) for u in there] == [
            Rooted(str(data)).path(p) for p in here
        ], spec
        assert all(u.startswith(f"{url_root}/") for u in there)
    assert paths.split_spec(url_root, f"{SHAPES}:train") == (SHAPES, "train")
    assert paths.split_spec(url_root, f"{url_root}/{SHAPES}:test") == (
        f"{url_root}/{SHAPES}",
        "test",
    )
    proxy.reset_stats()
    for outside in (
        f"s3://{BUCKET}/secret/{SHAPES}:train",
        f"s3://{BUCKET}/{PREFIX}/%2e%2e/secret/{SHAPES}:train",
        f"../secret/{SHAPES}:train",
        f"s3://{BUCKET}/{PREFIX}/../secret/{SHAPES}:train",
        f"gs://{BUCKET}/{PREFIX}/{SHAPES}:train",
    ):
        with pytest.raises(PathRefused):
            paths.expand_inside(url_root, outside)
    assert proxy.log == []  # refused before anything was asked
    with pytest.raises(FileNotFoundError, match=r"has no split 'dev' \(its splits: train, test\)"):
        paths.expand_inside(url_root, f"{SHAPES}:dev")
    with pytest.raises(FileNotFoundError, match="not a TFDS dataset folder"):
        paths.expand_inside(url_root, "nothing/here:train")


def test_the_root_listing_offers_remote_datasets_and_their_splits(s3, data, tmp_path):
    G.write_detection(data, photos=False)
    G.write_tfx_splits(data / "taxi")
    upload(s3, data)
    kinds = (paths.TFDS_FOLDER, paths.TFDS_SPLIT, paths.TFX_FOLDER)

    def datasets(root: str) -> list[tuple[str, str, tuple[str, ...], int]]:
        entries, truncated = paths.list_tfrecords(root)
        assert not truncated
        return [(e.rel, e.kind, e.parts, e.size) for e in entries if e.kind in kinds]

    here = datasets(str(data))
    found = {rel: (kind, parts) for rel, kind, parts, _size in here}
    assert found[SHAPES] == (paths.TFDS_FOLDER, ("test", "train"))
    assert found[f"{SHAPES}:test"] == (paths.TFDS_SPLIT, ("test",))
    assert found["taxi"] == (paths.TFX_FOLDER, ("eval", "train"))
    assert found["voc/2007/5.0.0"][0] == paths.TFDS_FOLDER
    assert datasets(f"s3://{BUCKET}/{PREFIX}") == here


# -- the command line --------------------------------------------------------------------------


def _rooted_json(doc: Any, at: Rooted) -> Any:
    if isinstance(doc, dict):
        return {k: _rooted_json(v, at) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_rooted_json(v, at) for v in doc]
    if isinstance(doc, str):
        return at.text(doc)
    return doc


def test_cli_info_of_a_remote_split_is_the_local_ones(s3, data, tmp_path):
    upload(s3, data)
    url_root = f"s3://{BUCKET}/{PREFIX}"
    docs = []
    for base in (str(data), url_root):
        r = run_cli("info", "--json", f"{base}/{SHAPES}:train", cache=tmp_path / "cache")
        assert r.returncode == 0, r.stderr
        docs.append(_rooted_json(json.loads(r.stdout), Rooted(base)))
    here, there = docs
    for row in (*here["files"], *there["files"]):
        row.pop("text_index", None)
    assert there == here
    [ds] = there["datasets"]
    assert (ds["kind"], ds["dataset"], ds["version"], ds["findings"]) == (
        "tfds",
        "shapes",
        "3.0.1",
        [],
    )
    assert [
        (s["name"], s["records"], s["declared_records"], s["shards"]) for s in ds["splits"]
    ] == [("train", 40, 40, 2)]
    assert ds["features"]["label"]["names"] == 8
    r = run_cli("info", "--json", f"{url_root}/shapes", "--split", "test", cache=tmp_path / "c2")
    assert r.returncode == 0, r.stderr
    assert [s["name"] for s in json.loads(r.stdout)["datasets"][0]["splits"]] == ["test"]
    r = run_cli("dump", f"{url_root}/{SHAPES}:test", "--json", cache=tmp_path / "c3")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 12 and all(
        f"{url_root}/{SHAPES}/shapes-test" in json.loads(x)["path"] for x in lines
    )
    r = run_cli("info", f"{url_root}/{SHAPES}:dev", cache=tmp_path / "c4")
    assert r.returncode == 2 and "has no split 'dev' (its splits: train, test)" in r.stderr


# -- the app under a URL root -----------------------------------------------------------------


def texts(elements) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(str(e.value) for e in elements)


def header(at) -> str:  # type: ignore[no-untyped-def]
    return texts(at.main.caption)


def overview(monkeypatch, root: str, spec: str):  # type: ignore[no-untyped-def]
    at = start_app(monkeypatch, root, params={"file": spec}, script=page_script("overview"))
    no_crash(at)
    return at


def test_a_split_under_a_url_root_opens_in_the_app(monkeypatch, s3, data):
    upload(s3, data)
    at = overview(monkeypatch, f"s3://{BUCKET}/{PREFIX}", f"{SHAPES}:test")
    assert not at.error, texts(at.error)
    assert at.query_params["file"] == f"{SHAPES}:test"
    assert "12 records" in header(at)
    assert "**shapes** · version 3.0.1 · TFDS dataset" in texts(at.main.markdown).replace("\\", "")
    splits = at.main.dataframe[0].value
    assert list(splits["split"]) == ["train", "test · open"]
    assert list(splits["declared"]) == [40, 12]
    declared = next(d.value for d in at.main.dataframe if "kind" in d.value.columns)
    assert "8, names from label.labels.txt" in set(declared["classes"])
    at.radio[0].set_value("train").run()
    no_crash(at)
    assert at.query_params["file"] == f"{SHAPES}:train"
    assert "40 records" in header(at)
    assert at.radio[0].value == "train"


def test_the_overview_of_a_remote_split_is_the_local_ones(monkeypatch, s3, data):
    upload(s3, data)
    there = overview(monkeypatch, f"s3://{BUCKET}/{PREFIX}", f"{SHAPES}:test")
    here = overview(monkeypatch, str(data), f"{SHAPES}:test")
    splits_here, splits_there = here.main.dataframe[0].value, there.main.dataframe[0].value
    assert list(splits_here["counted"]) == [40, 12]
    assert splits_there.equals(splits_here)
    md = [texts(a.main.markdown).replace("\\", "") for a in (there, here)]
    assert md[0] == md[1]
    agree = "The metadata and the files agree"  # (a local file is also verified: not said)
    assert agree in texts(there.main.success) and agree in texts(here.main.success)
    assert not there.main.warning and not here.main.warning


def test_a_dataset_folder_under_a_url_root_opens_its_train_split(monkeypatch, s3, data):
    upload(s3, data)
    at = start_app(monkeypatch, f"s3://{BUCKET}/{PREFIX}", params={"file": "shapes"})
    no_crash(at)
    said = texts([*at.info, *at.warning, *at.error])
    assert "TFDS dataset with 2 splits" in said and "test" in said
    assert "40 records" in header(at)


def test_a_split_spec_outside_the_url_root_is_refused_in_the_app(monkeypatch, s3, data):
    upload(s3, data, "secret")
    at = start_app(
        monkeypatch,
        f"s3://{BUCKET}/{PREFIX}",
        params={"file": f"s3://{BUCKET}/secret/{SHAPES}:train"},
    )
    no_crash(at)
    assert "Refused" in texts(at.error) and "outside the root" in texts(at.error)
    assert "file" not in at.query_params


def test_a_bucket_folder_of_several_datasets_opens_the_first_and_offers_the_others(
    monkeypatch, s3, data
):
    G.write_detection(data, photos=False)
    upload(s3, data)
    at = start_app(
        monkeypatch, f"s3://{BUCKET}", params={"file": PREFIX}, script=page_script("overview")
    )
    no_crash(at)
    buttons = {b.label: b for b in at.main.button}
    assert set(buttons) >= {"data/shapes", "data/voc/2007"}
    assert buttons["data/shapes"].disabled  # the one open
    assert "40 records" in header(at)
    buttons["data/voc/2007"].click().run()
    no_crash(at)
    assert at.query_params["file"] == "data/voc/2007"
    assert "**voc**" in texts(at.main.markdown)
