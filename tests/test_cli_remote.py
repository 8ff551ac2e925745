"""Every command on URLs: the same answers as on local copies, globs and shard patterns of
URLs, ``--anon``, a missing cloud library, remote errors as one line with their exit code,
credentials never printed, and the text index beside the data."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA
from hypothesis import given, settings
from hypothesis import strategies as st

import codec
from browser_app.cli import main
from browser_app.cli import run as run_command
from browser_app.errors import EXIT_CHANGED, EXIT_REMOTE, EXIT_USAGE, PathRefused
from browser_app.paths import url_root_for
from codec.errors import ObjectChangedError, RemoteError
from codec.text_index import parse_text_index
from codec.writer import write_records

ROOT = Path(__file__).resolve().parent.parent


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, name: str) -> None:
    """A new, empty cache: no saved index, so opening looks for a text index."""
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(tmp_path / name))


# -- the text index beside the data -----------------------------------------------------------


@pytest.mark.parametrize("index_name", ["{name}.idx", "{stem}.idx", "{name}.index"])
def test_info_uses_and_names_the_text_index_beside_a_file(
    capsys, monkeypatch, tmp_path, index_name
):
    data = tmp_path / "train.tfrecord"
    write_records(data, [bytes([i]) * i for i in range(50)])
    code, _, err = _cli(capsys, "index", str(data), "--out", str(tmp_path / "made.idx"))
    assert code == 0, err
    idx = tmp_path / index_name.format(name=data.name, stem=data.stem)
    (tmp_path / "made.idx").rename(idx)
    _fresh_cache(monkeypatch, tmp_path, "c1")
    code, out, _ = _cli(capsys, "info", str(data), "--json")
    [row] = json.loads(out)["files"]
    assert code == 0 and row["records"] == 50 and row["text_index"] == str(idx)
    _fresh_cache(monkeypatch, tmp_path, "c2")
    code, out, _ = _cli(capsys, "info", str(data))
    assert f"records counted from the text index beside it, {idx}" in out
    # Once the file's own index is saved, no text index is read: nothing to say.
    code, out, _ = _cli(capsys, "info", str(data), "--json")
    assert json.loads(out)["files"][0]["text_index"] is None


def test_a_text_index_that_does_not_match_is_not_trusted(capsys, monkeypatch, tmp_path):
    data = tmp_path / "d.tfrecord"
    write_records(data, [b"x" * 10] * 20 + [b"y" * 3] * 5)
    # Right for the first 10 records, then the lengths of another file.
    lines = [f"{26 * k} 26" for k in range(10)] + [f"{260 + 30 * k} 30" for k in range(15)]
    (tmp_path / "d.tfrecord.idx").write_text("\n".join(lines) + "\n")
    _fresh_cache(monkeypatch, tmp_path, "c")
    code, out, _ = _cli(capsys, "info", str(data), "--json")
    [row] = json.loads(out)["files"]
    assert code == 0 and row["records"] == 25 and row["problems"] == 0
    code, out, _ = _cli(capsys, "dump", str(data), "--json", "--kind", "raw")
    assert code == 0 and len(out.splitlines()) == 25
    (tmp_path / "d.tfrecord.idx").write_text("not an index\n")
    _fresh_cache(monkeypatch, tmp_path, "c2")
    code, out, _ = _cli(capsys, "info", str(data), "--json")
    assert code == 0 and json.loads(out)["files"][0] == row | {"text_index": None}


def test_verify_never_takes_a_text_index_for_the_headers(capsys, monkeypatch, tmp_path):
    """An index written before a length CRC was damaged still matches every length; verify
    checks the headers themselves and finds it."""
    data = tmp_path / "d.tfrecord"
    write_records(data, [b"z" * 8] * 10)
    assert _cli(capsys, "index", str(data))[0] == 0
    raw = bytearray(data.read_bytes())
    raw[24 * 4 + 8] ^= 0xFF  # the length CRC of record 4
    data.write_bytes(bytes(raw))
    _fresh_cache(monkeypatch, tmp_path, "c")
    code, out, _ = _cli(capsys, "verify", str(data), "--json")
    assert code == 1 and json.loads(out)["ok"] is False


@settings(max_examples=25, deadline=None)
@given(st.lists(st.binary(max_size=300), min_size=1, max_size=40), st.integers(1, 5))
def test_an_adopted_index_is_the_scanned_one(tmp_path_factory, payloads, sample):
    folder = tmp_path_factory.mktemp("ti")
    path = folder / "x.tfrecord"
    write_records(path, payloads)
    with codec.TFRecordFile(path, use_cache=False) as f:
        f.write_text_index(folder / "x.idx")
        scanned = f.spans()
    text = (folder / "x.idx").read_bytes()
    for mode in (None, sample):
        with codec.TFRecordFile(path, use_cache=False) as f:
            assert f.load_text_index(text, sample=mode) == len(payloads)
            assert [a.tolist() for a in f.spans()] == [a.tolist() for a in scanned]
            assert list(f) == payloads
    offsets, sizes = parse_text_index(text)
    assert offsets.tolist() == scanned[0].tolist() and (sizes - 16).tolist() == scanned[1].tolist()


# -- errors, credentials, options ---------------------------------------------------------------


def test_a_missing_cloud_library_is_one_message_naming_the_extra(tmp_path):
    code = (
        "import sys; sys.modules['s3fs'] = None\n"
        "from browser_app.cli import main\n"
        "sys.exit(main(['info', 's3://bucket/train-*.tfrecord']))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT), TFRECORD_BROWSER_CACHE=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == EXIT_USAGE
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "pip install 'tfrecord-browser[s3]'" in done.stderr and "s3fs" in done.stderr


SIGNED = "https://h.example/b/x.tfrecord?X-Amz-Credential=AKIDSECRETKEY&X-Amz-Signature=secret42"


def _raising(exc: BaseException):
    def handler(args: argparse.Namespace, out: object) -> int:
        raise exc

    return handler


class _LibraryError(Exception):
    """What a cloud library raises when it is not wrapped."""


_LibraryError.__module__ = "botocore.exceptions"


@pytest.mark.parametrize(
    ("exc", "code"),
    [
        (RemoteError(f"{SIGNED}: reading failed 5 times"), EXIT_REMOTE),
        (ObjectChangedError(SIGNED), EXIT_CHANGED),
        (_LibraryError(f"An error occurred (SignatureDoesNotMatch) for {SIGNED}"), EXIT_REMOTE),
        (FileNotFoundError(2, "no such object", SIGNED), EXIT_USAGE),
    ],
    ids=["remote", "changed", "library", "missing"],
)
def test_remote_errors_are_one_line_without_credentials(capsys, exc, code):
    args = argparse.Namespace(paths=[SIGNED])
    assert run_command(_raising(exc), args, io.StringIO()) == code
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("tfrecord-browser: ") and err.count("\n") == 1
    assert "Traceback" not in err
    for secret in ("secret42", "AKIDSECRETKEY", "X-Amz-Signature=s"):
        assert secret not in err


def test_anon_goes_before_or_after_the_command(capsys, monkeypatch):
    seen = []

    def expand(paths, *, anon=False):
        seen.append(anon)
        raise FileNotFoundError(2, "no such object", "s3://b/x.tfrecord")

    monkeypatch.setattr(codec, "expand_paths", expand)
    named = "s3://b/x.tfrecord"  # a file's name: not asked about as a dataset folder first
    for argv in (["--anon", "info", named], ["info", named, "--anon"], ["info", "y"]):
        assert main(argv) == EXIT_USAGE
    assert seen == [True, True, False]
    capsys.readouterr()


def test_view_takes_a_url_prefix_as_its_root(capsys):
    assert url_root_for(["s3://b/data/a/x.tfrecord", "s3://b/data/b/y@4"]) == "s3://b/data"
    for apart in (["s3://b/x.tfrecord", "s3://c/y.tfrecord"], ["s3://b/x", "/local/y"]):
        with pytest.raises(PathRefused, match="--root"):
            url_root_for(apart)
    code, _, err = _cli(capsys, "view", "s3://b/other/x.tfrecord", "--root", "s3://b/data")
    assert code == EXIT_USAGE and "outside the root s3://b/data" in err
    code, _, err = _cli(capsys, "view", "s3://b/x.tfrecord", "--root", str(DATA))
    assert code == EXIT_USAGE and "start the app with --root s3://bucket/prefix" in err
    code, _, err = _cli(capsys, "view", "s3://b/x.tfrecord", "gs://c/y.tfrecord")
    assert code == EXIT_USAGE and "give --root" in err


def test_the_app_is_told_about_anon():
    from browser_app.cli.launch import server_command

    cmd = server_command("127.0.0.1", 8600, "s3://b/data", ["s3://b/data/x"], anon=True)
    assert cmd[cmd.index("--") :] == ["--", "--root", "s3://b/data", "--anon", "s3://b/data/x"]


# -- against a real S3 server (moto) and a range-serving HTTP server ------------------------------

SET = ["basic.tfrecord", "detection.tfrecord", "garbage_between.tfrecord", "basic.tfrecord.gz"]


def _upload(s3, bucket: str, folder: Path, prefix: str) -> None:
    for p in sorted(folder.iterdir()):
        s3.put(bucket, f"{prefix}/{p.name}", p.read_bytes())


def _same(local_out: str, remote_out: str, local_dir: Path, url: str) -> None:
    """The two outputs say the same, the local folder read as the URL."""
    assert local_out.replace(str(local_dir), url) == remote_out


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "set"
    folder.mkdir()
    for name in SET:
        (folder / name).write_bytes((DATA / name).read_bytes())
    return folder


def test_commands_on_objects_answer_as_on_the_local_copies(capsys, monkeypatch, store, dataset):
    scheme, server = store
    _upload(server, "data", dataset, "set")
    url = f"{scheme}://data/set"
    from codec.schema import infer

    monkeypatch.setattr(infer, "_PARALLEL_MIN", 0)  # schema --workers 2 spreads over processes
    runs = [
        ("info", "{}/*", "--json"),  # a glob
        ("verify", "{}/*", "--json"),  # several files: checked in worker processes
        ("dump", "{}/detection.tfrecord", "--json"),
        ("dump", "{}/garbage_between.tfrecord", "--records", "0:5,-1"),
        ("schema", "{}/", "--json", "--workers", "2"),  # a folder prefix
        ("filter", "{}/basic.tfrecord*", "feature1 == 2", "--json"),
        ("info", "{}/basic.tfrecord.gz"),
    ]
    for cmd, spec, *rest in runs:
        local = _cli(capsys, cmd, spec.format(dataset), *rest)
        remote = _cli(capsys, cmd, spec.format(url), *rest)
        assert remote[0] == local[0], (cmd, remote[2])
        assert remote[1].strip(), (cmd, "no output")
        _same(local[1], remote[1], dataset, url)
        _same(local[2], remote[2], dataset, url)


def test_shard_patterns_of_urls(capsys, s3, tmp_path):
    shards = tmp_path / "sh"
    shards.mkdir()
    for k in range(3):
        write_records(
            shards / f"train-{k:05d}-of-00003", [b"%d" % (k * 10 + i) for i in range(k + 2)]
        )
    _upload(s3, "data", shards, "sh")
    for spec in ("train@3", "train-*-of-00003", ""):
        local = _cli(capsys, "info", f"{shards}/{spec}", "--json")
        remote = _cli(capsys, "info", f"s3://data/sh/{spec}", "--json")
        assert remote[0] == local[0] == 0
        _same(local[1], remote[1], shards, "s3://data/sh")
    code, _, err = _cli(capsys, "info", "s3://data/sh/train@4")
    assert code == EXIT_USAGE and "4 of 4 shards are missing" in err
    code, _, err = _cli(capsys, "info", "s3://data/nothing-*")
    assert code == EXIT_USAGE and "no object matches this pattern" in err


def test_anon_reads_a_public_bucket_without_credentials(capsys, monkeypatch, s3):
    c = s3.client()
    s3.make_bucket("pub")
    for name in ("a.tfrecord", "b.tfrecord"):
        c.put_object(
            Bucket="pub", Key=name, Body=(DATA / "basic.tfrecord").read_bytes(), ACL="public-read"
        )
    c.put_object(Bucket="pub", Key="private.tfrecord", Body=(DATA / "basic.tfrecord").read_bytes())
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(DATA / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(DATA / "none"))
    code, _, err = _cli(capsys, "info", "s3://pub/a.tfrecord")
    assert code == EXIT_USAGE and "no credentials found" in err and "--anon" in err
    # Worker processes (verify of two objects, schema over processes) read anonymously too.
    code, out, err = _cli(capsys, "--anon", "verify", "s3://pub/?.tfrecord", "--json")
    assert code == 0, err
    assert [f["records"] for f in json.loads(out)["files"]] == [64, 64]
    code, _, err = _cli(capsys, "dump", "s3://pub/private.tfrecord", "--anon")
    assert code == EXIT_USAGE and "s3://pub/private.tfrecord: access denied" in err


def test_a_text_index_beside_an_object_spares_reading_it(
    capsys, monkeypatch, s3_proxy, s3, tmp_path
):
    monkeypatch.setenv("TFRECORD_BROWSER_REMOTE_BLOCK", "32K")
    data = tmp_path / "big.tfrecord"
    write_records(data, [bytes([i % 251]) * 1000 for i in range(1000)])  # ~1 MB
    s3.put("data", "big.tfrecord", data.read_bytes())
    url = "s3://data/big.tfrecord"
    code, _, err = _cli(capsys, "index", url)
    assert code == EXIT_USAGE and "add --beside" in err
    code, out, err = _cli(capsys, "index", url, "--beside")
    assert code == 0 and out == f"{url}.idx: 1,000 records\n", err
    assert sorted(s3.keys("data")) == ["big.tfrecord", "big.tfrecord.idx"]
    with codec.TFRecordFile(data) as f:
        f.write_text_index(tmp_path / "local.idx")
    assert s3.get("data", "big.tfrecord.idx") == (tmp_path / "local.idx").read_bytes()
    _fresh_cache(monkeypatch, tmp_path, "c1")
    s3_proxy.reset_stats()
    code, out, _ = _cli(capsys, "info", url, "--json")
    [row] = json.loads(out)["files"]
    assert code == 0 and row["records"] == 1000 and row["text_index"] == f"{url}.idx"
    assert s3_proxy.bytes_forwarded < data.stat().st_size // 2  # the head, 3 headers, the index
    _fresh_cache(monkeypatch, tmp_path, "c2")
    s3.put("data", "big.tfrecord.idx", b"0 1016\n1016 1016\n")  # does not cover the object
    code, out, _ = _cli(capsys, "info", url, "--json")
    assert json.loads(out)["files"][0] | {"text_index": None} == row | {"text_index": None}
    assert json.loads(out)["files"][0]["text_index"] is None


SECRET = "X-Amz-Credential=AKIDEXAMPLE-20260101&X-Amz-Signature=secretsig0123"


def test_signed_urls_never_show_their_query(capsys, http_server, tmp_path):
    for name in ("a.tfrecord", "b.tfrecord"):
        http_server.put(f"d/{name}", (DATA / "detection.tfrecord").read_bytes())
    a, b = (f"{http_server.url(f'd/{n}')}?{SECRET}" for n in ("a.tfrecord", "b.tfrecord"))
    outputs = []
    for argv in (
        ["info", a, "--json"],
        ["info", a],
        ["verify", a, b, "--json"],  # worker processes open the URLs as given
        ["verify", a, b],
        ["dump", a, "--records", "0"],
        ["schema", a, "--json"],
        ["filter", a, b, "true", "--json"],
        ["export", a, str(tmp_path / "x.jsonl")],
        ["info", f"{http_server.url('d/missing.tfrecord')}?{SECRET}"],
        ["export", a, f"{http_server.url('d/out.tfrecord')}?{SECRET}"],
    ):
        code, out, err = _cli(capsys, *argv)
        outputs.append((argv[0], code, out + err))
    assert [code for _, code, _ in outputs] == [0, 0, 0, 0, 0, 0, 0, 0, EXIT_USAGE, EXIT_USAGE]
    for cmd, _, text in outputs:
        assert "secretsig" not in text and "AKIDEXAMPLE" not in text, (cmd, text)
        if cmd in ("info", "verify", "filter"):
            assert http_server.url("d/") in text
    gets = [path for method, path, _ in http_server.log if method == "GET" and ".tfrecord" in path]
    assert gets and all(path.endswith(SECRET) for path in gets)
