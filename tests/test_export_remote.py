"""Exports to remote destinations: written and verified locally, uploaded under a temporary
name beside the destination, checked, moved into place; nothing partial under the final name
and no temporary object left, whatever fails.

The staging logic runs here against fsspec's in-memory file system (``memory://``, a real
fsspec protocol like any other); the same exports against a real S3 server are in
``test_cli_remote.py``.
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator

import fsspec
import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from browser_app.cli import main
from browser_app.errors import EXIT_CHANGED, EXIT_REMOTE, UploadError
from browser_app.export import remote
from browser_app.export.tempfiles import MARK
from codec.writer import write_records


@pytest.fixture
def bucket() -> Iterator[str]:
    """A fresh ``memory://`` bucket, emptied afterwards."""
    fs = fsspec.filesystem("memory")
    name = f"b{uuid.uuid4().hex[:10]}"
    fs.mkdir(f"/{name}")
    yield f"memory://{name}"
    fs.rm(f"/{name}", recursive=True)


def _objects(url: str) -> list[str]:
    fs = fsspec.filesystem("memory")
    root = url.split("://", 1)[1]
    return sorted(p.rsplit("/", 1)[-1] for p in fs.find(f"/{root}"))


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _payloads(url: str) -> list[bytes]:
    with codec.TFRecordFile(url) as f:
        return list(f)


def test_tfrecord_and_csv_to_a_url_read_back_equal(capsys, tmp_path, bucket):
    src = str(DATA / "detection.tfrecord")
    code, out, err = _cli(capsys, "export", src, f"{bucket}/out/d.tfrecord")
    assert code == 0, err
    assert f"{bucket}/out/d.tfrecord" in out and "verified" in out
    assert _payloads(f"{bucket}/out/d.tfrecord") == _payloads(src)
    code, _, err = _cli(capsys, "export", src, f"{bucket}/out/d.csv")
    assert code == 0, err
    assert _cli(capsys, "export", src, str(tmp_path / "d.csv"))[0] == 0
    fs = fsspec.filesystem("memory")
    remote_csv = fs.cat(f"{bucket.split('://')[1]}/out/d.csv")
    assert remote_csv == (tmp_path / "d.csv").read_bytes()
    assert _objects(bucket) == [
        "d.csv",
        "d.csv.index-map.csv",
        "d.tfrecord",
        "d.tfrecord.index-map.csv",
    ]


def test_shards_and_their_index_map_go_up_together(capsys, bucket):
    src = str(DATA / "basic.tfrecord")
    code, out, err = _cli(capsys, "export", src, f"{bucket}/s.tfrecord", "--shards", "3")
    assert code == 0, err
    names = [f"s-0000{k}-of-00003.tfrecord" for k in range(3)]
    assert _objects(bucket) == [*names, "s.tfrecord.index-map.csv"]
    back = [p for n in names for p in _payloads(f"{bucket}/{n}")]
    assert back == _payloads(src)
    rows = list(
        csv.reader(
            io.StringIO(
                fsspec.filesystem("memory")
                .cat(f"{bucket.split('://')[1]}/s.tfrecord.index-map.csv")
                .decode()
            )
        )
    )
    assert rows[0][0] == "source_file" and len(rows) == 1 + len(back)
    # The same shards, named as TensorFlow does, open back as one dataset.
    code, out, _ = _cli(capsys, "info", f"{bucket}/s.tfrecord@3", "--json")
    assert code == 0 and sum(f["records"] for f in json.loads(out)["files"]) == len(back)


def test_an_existing_object_is_replaced_as_a_local_file_is(capsys, bucket):
    dst = f"{bucket}/x.tfrecord"
    assert _cli(capsys, "export", str(DATA / "basic.tfrecord"), dst)[0] == 0
    assert _cli(capsys, "export", str(DATA / "drift.tfrecord"), dst)[0] == 0
    assert _payloads(dst) == _payloads(str(DATA / "drift.tfrecord"))


class _Broken(OSError):
    pass


@pytest.mark.parametrize("where", ["upload", "short", "move"])
def test_a_failed_upload_leaves_nothing_under_any_name(capsys, monkeypatch, bucket, where):
    """A failure while uploading (after part of the temporary object is written), an upload
    the server holds short, or a failed move: the command fails with the remote exit code,
    and neither the final name nor a temporary object is left."""
    fs_cls = type(fsspec.filesystem("memory"))
    real_put = fs_cls.put_file

    def put_file(self, lpath, rpath, **kwargs):
        with open(lpath, "rb") as f:
            data = f.read()
        self.pipe_file(rpath, data[: len(data) // 2])  # part of it reached the server
        if where == "upload":
            raise _Broken("connection reset by peer")

    def move(fs, src, dst):
        raise _Broken("the server refused the copy")

    if where in ("upload", "short"):
        monkeypatch.setattr(fs_cls, "put_file", put_file)
    else:
        monkeypatch.setattr(remote, "MOVE", move)
    code, out, err = _cli(capsys, "export", str(DATA / "basic.tfrecord"), f"{bucket}/x.tfrecord")
    monkeypatch.setattr(fs_cls, "put_file", real_put)
    assert code == EXIT_REMOTE and out == ""
    assert err.startswith(f"tfrecord-browser: {bucket}/x.tfrecord: the upload failed")
    assert "Traceback" not in err and err.count("\n") == 1
    assert _objects(bucket) == []


def test_a_folder_of_pictures_appears_whole_or_not_at_all(capsys, monkeypatch, tmp_path, bucket):
    src = str(DATA / "images_png.tfrecord")
    calls = []

    def move(fs, a, b):
        calls.append(b)
        if len(calls) == 3:
            raise _Broken("throttled")
        fs.copy(a, b)
        fs.rm(a)

    monkeypatch.setattr(remote, "MOVE", move)
    code, _, err = _cli(capsys, "export", src, f"{bucket}/pics", "--format", "images")
    assert code == EXIT_REMOTE and "the upload failed" in err
    assert len(calls) == 3 and _objects(bucket) == []
    monkeypatch.undo()
    code, _out, err = _cli(capsys, "export", src, f"{bucket}/pics", "--format", "images")
    assert code == 0, err
    assert _cli(capsys, "export", src, str(tmp_path / "pics"), "--format", "images")[0] == 0
    fs = fsspec.filesystem("memory")
    for name in sorted(p.name for p in (tmp_path / "pics").iterdir()):
        assert (
            fs.cat(f"{bucket.split('://')[1]}/pics/{name}")
            == (tmp_path / "pics" / name).read_bytes()
        )
    assert _objects(f"{bucket}/pics") == sorted(p.name for p in (tmp_path / "pics").iterdir())


def test_read_only_and_same_object_destinations_are_refused(capsys, bucket):
    src = f"{bucket}/x.tfrecord"
    assert _cli(capsys, "export", str(DATA / "basic.tfrecord"), src)[0] == 0
    code, _, err = _cli(capsys, "export", src, "https://example.com/y.tfrecord")
    assert code == 2 and "read-only" in err
    code, _, err = _cli(capsys, "export", src, f"{bucket}//x.tfrecord")
    assert code == 2 and "is a source file of this export" in err
    assert _objects(bucket) == ["x.tfrecord", "x.tfrecord.index-map.csv"]


def test_import_reads_a_remote_input_and_writes_a_remote_output(capsys, tmp_path, bucket):
    src = str(DATA / "basic.tfrecord")
    assert _cli(capsys, "export", src, f"{bucket}/b.jsonl")[0] == 0
    code, _out, err = _cli(capsys, "import", f"{bucket}/b.jsonl", f"{bucket}/b2.tfrecord")
    assert code == 0, err
    assert _payloads(f"{bucket}/b2.tfrecord") == _payloads(src)
    fsspec.filesystem("memory").pipe_file(f"{bucket.split('://')[1]}/bad.jsonl", b'{"x": 1}\n')
    code, _, err = _cli(capsys, "import", f"{bucket}/bad.jsonl", f"{bucket}/b3.tfrecord")
    assert code == 2 and "line 1" in err and "b3" not in "".join(_objects(bucket))


def test_temporary_names_are_beside_the_destination_and_recognised():
    tmp = remote.temp_url("s3://b/a/x.tfrecord?versionId=3", "0123456789abcdef")
    assert tmp == f"s3://b/a/.x.tfrecord.{MARK}-0123456789abcdef.part"
    from browser_app.export.tempfiles import is_ours

    assert is_ours(tmp.rsplit("/", 1)[1])


def test_upload_error_is_one_sentence_naming_the_destination():
    exc = UploadError("s3://b/x: the upload failed, nothing was written under this name")
    assert exc.exit_code == EXIT_REMOTE


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=40), max_size=30))
def test_text_index_written_beside_an_object_reads_back(tmp_path_factory, payloads):
    name = f"b{uuid.uuid4().hex[:10]}"
    fs = fsspec.filesystem("memory")
    folder = tmp_path_factory.mktemp("idx")
    local = folder / "x.tfrecord"
    write_records(local, payloads)
    fs.put_file(str(local), f"/{name}/x.tfrecord")
    try:
        assert main(["index", f"memory://{name}/x.tfrecord", "--beside"]) == 0
        text = fs.cat(f"/{name}/x.tfrecord.idx")
        with codec.TFRecordFile(local, use_cache=False) as f:
            f.write_text_index(folder / "x.idx")
        assert text == (folder / "x.idx").read_bytes()
        assert sorted(fs.ls(f"/{name}", detail=False)) == [
            f"/{name}/x.tfrecord",
            f"/{name}/x.tfrecord.idx",
        ]
    finally:
        fs.rm(f"/{name}", recursive=True)


# -- against a real S3 server (moto), through a fault-injecting proxy ---------------------------


def test_exports_to_a_bucket_read_back_equal(capsys, tmp_path, store):
    """To S3 (moto), Google Cloud Storage (its emulator) and Azure (Azurite): shards and a
    Parquet file read back as written, and nothing but them and their index maps is left in
    the bucket."""
    import pyarrow.parquet as pq

    scheme, store = store
    store.make_bucket("out")
    src = str(DATA / "detection.tfrecord")
    code, _, err = _cli(capsys, "export", src, f"{scheme}://out/x/d.tfrecord", "--shards", "2")
    assert code == 0, err
    shards = [f"{scheme}://out/x/d-0000{k}-of-00002.tfrecord" for k in range(2)]
    assert [p for s in shards for p in _payloads(s)] == _payloads(src)
    code, _out, err = _cli(capsys, "export", src, f"{scheme}://out/x/d.parquet")
    assert code == 0, err
    assert _cli(capsys, "export", src, str(tmp_path / "d.parquet"))[0] == 0
    remote_table = pq.read_table(io.BytesIO(store.get("out", "x/d.parquet")))
    assert remote_table.equals(pq.read_table(tmp_path / "d.parquet"))
    assert sorted(store.keys("out")) == sorted(
        [
            "x/d-00000-of-00002.tfrecord",
            "x/d-00001-of-00002.tfrecord",
            "x/d.tfrecord.index-map.csv",
            "x/d.parquet",
            "x/d.parquet.index-map.csv",
        ]
    )


@pytest.mark.parametrize("step", ["marker", "upload", "move"])
def test_a_server_failing_the_upload_leaves_nothing(capsys, s3_proxy, s3, step):
    """500 on every PUT of the export's run marker, of the temporary object (the upload), or
    to the final name (S3's server-side copy): the command fails with the remote exit code
    and the bucket holds neither the final object nor a temporary or marker one."""
    s3.make_bucket("out")
    path = {"marker": ".lock", "upload": ".part", "move": "/out/x.tfrecord"}[step]
    s3_proxy.fail(500, times=None, method="PUT", path=path)
    code, out, err = _cli(capsys, "export", str(DATA / "basic.tfrecord"), "s3://out/x.tfrecord")
    assert code == EXIT_REMOTE and out == ""
    assert err.startswith("tfrecord-browser: s3://out/x.tfrecord: the upload failed")
    assert err.count("\n") == 1 and "Traceback" not in err
    s3_proxy.clear_faults()
    assert s3.keys("out") == []


def test_an_export_to_a_bucket_that_does_not_exist_says_so(capsys, s3):
    """The bucket is missing: one line saying so, the remote exit code, and nothing made."""
    s3.make_bucket("out")
    code, out, err = _cli(
        capsys, "export", str(DATA / "basic.tfrecord"), "s3://nowhere/x.tfrecord", "--shards", "2"
    )
    assert code == EXIT_REMOTE and out == ""
    assert err == (
        "tfrecord-browser: s3://nowhere/x-00000-of-00002.tfrecord: the upload failed, nothing"
        " was written under this name (no such bucket; create it first)\n"
    )
    assert s3.keys("out") == []
    assert "nowhere" not in [b["Name"] for b in s3.client().list_buckets()["Buckets"]]


def test_a_source_replaced_during_the_export_stops_it(capsys, monkeypatch, s3, tmp_path):
    """The source object changes after the export opened it (and, its text index beside it,
    read only some of its blocks): its other blocks would be another version's, so the
    export stops with the changed-object exit code and writes nothing."""
    from browser_app.export import plan as plan_module

    monkeypatch.setenv("TFRECORD_BROWSER_REMOTE_BLOCK", "4K")
    data = tmp_path / "src.tfrecord"
    write_records(data, [bytes([i]) * 700 for i in range(200)])
    s3.put("data", "src.tfrecord", data.read_bytes())
    with codec.TFRecordFile(data) as f:  # with its index beside it, opening reads little
        f.write_text_index(tmp_path / "src.idx")
    s3.put("data", "src.tfrecord.idx", (tmp_path / "src.idx").read_bytes())
    (tmp_path / "src.idx").unlink()
    real_init = plan_module.Plan.__init__

    def plan_then_replace(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        s3.put("data", "src.tfrecord", data.read_bytes()[::-1])  # a new version

    monkeypatch.setattr(plan_module.Plan, "__init__", plan_then_replace)
    code, out, err = _cli(
        capsys, "export", "s3://data/src.tfrecord", str(tmp_path / "o.jsonl"), "--no-index-map"
    )
    assert code == EXIT_CHANGED and out == "", err
    assert err.startswith("tfrecord-browser: s3://data/src.tfrecord: the object changed")
    assert not (tmp_path / "o.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["src.tfrecord"]
