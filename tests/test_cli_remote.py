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
from browser_app.cli.launch import default_remote_root
from browser_app.errors import EXIT_CHANGED, EXIT_REMOTE, EXIT_USAGE
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
        raise FileNotFoundError(2, "no such object", "s3://b/x")

    monkeypatch.setattr(codec, "expand_paths", expand)
    for argv in (["--anon", "info", "s3://b/x"], ["info", "s3://b/x", "--anon"], ["info", "y"]):
        assert main(argv) == EXIT_USAGE
    assert seen == [True, True, False]
    capsys.readouterr()


def test_view_takes_a_url_prefix_as_its_root(capsys):
    assert default_remote_root(["s3://b/data/a/x.tfrecord", "s3://b/data/b/y@4"]) == "s3://b/data"
    assert default_remote_root(["s3://b/x.tfrecord", "s3://c/y.tfrecord"]) is None
    assert default_remote_root(["s3://b/x.tfrecord", "/local/y.tfrecord"]) is None
    code, _, err = _cli(capsys, "view", "s3://b/other/x.tfrecord", "--root", "s3://b/data")
    assert code == EXIT_USAGE and "outside the root s3://b/data" in err
    code, _, err = _cli(capsys, "view", "s3://b/x.tfrecord", "--root", str(DATA))
    assert code == EXIT_USAGE and "give a URL prefix as --root" in err
    code, _, err = _cli(capsys, "view", "s3://b/x.tfrecord", "gs://c/y.tfrecord")
    assert code == EXIT_USAGE and "give --root" in err


def test_the_app_is_told_about_anon():
    from browser_app.cli.launch import server_command

    cmd = server_command("127.0.0.1", 8600, "s3://b/data", ["s3://b/data/x"], anon=True)
    assert cmd[cmd.index("--") :] == ["--", "--root", "s3://b/data", "--anon", "s3://b/data/x"]
