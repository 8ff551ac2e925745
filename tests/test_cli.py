"""The command line as scripts use it: JSON shapes, exit codes and messages."""

from __future__ import annotations

import argparse
import base64
import errno
import io
import json
import subprocess
import sys
from typing import TextIO

import pytest
from conftest import DATA, damaged_expectations, expected_lines

import codec
from browser_app import errors
from browser_app.cli import main
from browser_app.cli import run as run_command
from browser_app.selection import SpecError, parse_record_spec
from codec.errors import MissingExtraError, ObjectChangedError, RemoteError
from codec.writer import write_records


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_info_json(capsys):
    code, out, _ = run(
        capsys, "info", str(DATA / "basic.tfrecord"), str(DATA / "basic.tfrecord.gz"), "--json"
    )
    assert code == 0
    files = json.loads(out)["files"]
    assert [(f["compression"], f["records"], f["bytes"], f["problems"]) for f in files] == [
        ("none", 64, 6411, 0),
        ("gzip", 64, 6411, 0),
    ]


def test_info_human_on_damage(capsys):
    code, out, _ = run(capsys, "info", str(DATA / "garbage_between.tfrecord"))
    assert code == 1
    assert "64 records" in out and "1 problem" in out and "37 bytes skipped" in out


@pytest.mark.parametrize("name", sorted(damaged_expectations()))
def test_verify_json_matches_expected(capsys, name):
    exp = damaged_expectations()[name]
    code, out, _ = run(capsys, "verify", str(DATA / name), "--json")
    doc = json.loads(out)
    [f] = doc["files"]
    assert [(p["offset"], p["problem"]) for p in f["problems"]] == [
        (p["offset"], p["problem"]) for p in exp["problems"]
    ]
    assert f["records"] + f["recovered"] == len(exp["readable_offsets"])
    assert doc["ok"] == (not exp["problems"])
    assert code == (1 if exp["problems"] else 0)
    for p in f["problems"]:
        assert name in p["message"] and str(p["offset"]) in p["message"]


def test_verify_human_lines(capsys):
    code, out, _ = run(
        capsys, "verify", str(DATA / "corrupt_data_crc.tfrecord"), str(DATA / "basic.tfrecord")
    )
    assert code == 1
    lines = out.splitlines()
    assert any("byte 501: data_crc" in line for line in lines)
    assert any(
        line.startswith("OK ") and "basic.tfrecord: 64 intact records" in line for line in lines
    )
    assert lines[-1].startswith("DAMAGED: 2 files")


def test_verify_missing_file_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "verify", str(tmp_path / "typo.tfrecord"))
    assert code == 2 and "no such file" in err and "Traceback" not in err


def test_verify_no_permission_exit_2(capsys, tmp_path, monkeypatch):
    import os

    p = tmp_path / "secret.tfrecord"
    write_records(p, [b"x"])
    real_open = os.open

    def deny(path, flags, *a, **k):
        if os.fspath(path) == str(p):
            raise PermissionError(13, "Permission denied", str(p))
        return real_open(path, flags, *a, **k)

    # Tests may run as root, who can read anything: refuse the open the way the OS would.
    monkeypatch.setattr(os, "open", deny)
    code, _, err = run(capsys, "verify", str(p))
    assert code == 2 and "permission denied" in err and "Traceback" not in err


def test_usage_error_exit_2(capsys):
    assert run(capsys, "verify")[0] == 2
    assert run(capsys, "frobnicate")[0] == 2


def test_dump_raw_json_matches_golden(capsys):
    code, out, _ = run(
        capsys, "dump", str(DATA / "raw_records.tfrecord"), "--kind", "raw", "--json"
    )
    assert code == 0
    got = [json.loads(line) for line in out.splitlines()]
    assert [{k: v for k, v in g.items() if k not in ("path", "local")} for g in got] == (
        expected_lines("raw_records.tfrecord")
    )


def test_dump_raw_record_spec(capsys):
    code, out, _ = run(
        capsys,
        "dump",
        str(DATA / "basic.tfrecord"),
        "--kind",
        "raw",
        "--json",
        "--records",
        "0:2,-1",
    )
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["index"] for line in lines] == [0, 1, 63]
    exp = expected_lines("basic.tfrecord")
    assert [line["offset"] for line in lines] == [exp[i]["offset"] for i in (0, 1, 63)]
    assert all(len(base64.b64decode(line["record"])) == line["length"] for line in lines)


def test_dump_reports_damage_on_stderr(capsys):
    code, out, err = run(
        capsys, "dump", str(DATA / "corrupt_data_crc.tfrecord"), "--kind", "raw", "--json"
    )
    assert code == 1
    assert len(out.splitlines()) == 63
    assert "at byte 501" in err


def test_dump_bad_spec(capsys):
    code, _, err = run(
        capsys, "dump", str(DATA / "basic.tfrecord"), "--kind", "raw", "--records", "1:x"
    )
    assert code == 2 and "--records" in err


def test_parse_record_spec():
    assert parse_record_spec("0:3,15,-1", 20) == [0, 1, 2, 15, 19]
    assert parse_record_spec(":", 3) == [0, 1, 2]
    assert parse_record_spec("::2", 5) == [0, 2, 4]
    assert parse_record_spec("5:100", 7) == [5, 6]
    for bad in ["", "x", "1:2:3:4", "::0", "30"]:
        with pytest.raises(SpecError):
            parse_record_spec(bad, 20)


def test_python_m_entry_point():
    res = subprocess.run(
        [sys.executable, "-m", "browser_app", "info", str(DATA / "basic.tfrecord"), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["files"][0]["records"] == 64


def test_index_command_writes_dali_format(capsys, tmp_path):
    src = tmp_path / "d.tfrecord"
    write_records(src, [b"a" * i for i in range(3)])
    code, out, _ = run(capsys, "index", str(src))
    assert code == 0 and "3 records" in out
    assert (tmp_path / "d.tfrecord.idx").read_text() == "0 16\n16 17\n33 18\n"
    other = tmp_path / "e.tfrecord"
    write_records(other, [b"b"])
    code, _, err = run(capsys, "index", str(src), str(other), "--out", str(tmp_path / "x.idx"))
    assert code == 2 and "--out must be a folder" in err


def test_format_bytes():
    from codec.values import format_bytes

    assert [format_bytes(n) for n in (0, 1023, 1024, 6411, 2**31, 2**45)] == [
        "0 bytes",
        "1,023 bytes",
        "1.0 KiB",
        "6.3 KiB",
        "2.0 GiB",
        "32.0 TiB",
    ]


# -- the one error path: exception -> message on stderr and exit code --------------------

ERROR_CASES: list[tuple[BaseException, int, str]] = [
    (errors.AppError("the server stopped"), 2, "the server stopped"),
    (errors.UsageError("--shards must be at least 1"), 2, "--shards must be at least 1"),
    (errors.InputError("a.tfrecord: no such file", path="a.tfrecord"), 2, "a.tfrecord: no such"),
    (errors.PathRefused("x: outside the root folder /r"), 2, "x: outside the root folder /r"),
    (errors.SpecError("'x' is not a record number"), 2, "'x' is not a record number"),
    (errors.EditError("record 3 does not exist"), 2, "record 3 does not exist"),
    (errors.ValueParseError("int64", "x", "not a whole number"), 2, "'x' is not a valid int64"),
    (errors.ConversionError("float", "int64", [(0, 1.5, "has a fraction")]), 2, "cannot convert"),
    (errors.JournalError("j.jsonl: line 3 is not JSON"), 2, "j.jsonl: line 3 is not JSON"),
    (errors.JournalMismatchError("j.jsonl", ["size was 1"]), 2, "another version of the source"),
    (errors.ExportError("x.csv: the destination is a source file"), 2, "is a source file"),
    (errors.ImportFormatError("a.jsonl: line 1: not JSON"), 2, "a.jsonl: line 1: not JSON"),
    (FileNotFoundError("b.tfrecord: no such file"), 2, "b.tfrecord: no such file"),
    (PermissionError(errno.EACCES, "Permission denied", "/s"), 2, "/s: permission denied"),
    (OSError(errno.ENOSPC, "No space left on device", "/o"), 2, "/o: no space left on the"),
    (codec.WriteError("x.tfrecord: cannot write here"), 2, "x.tfrecord: cannot write here"),
    (codec.CorruptRecordError("a: record 5 at byte 501: data CRC"), 1, "record 5 at byte 501"),
    (codec.CodecError("not a TFRecord file"), 1, "not a TFRecord file"),
    (errors.UploadError("s3://b/x.csv: the upload failed"), 3, "s3://b/x.csv: the upload failed"),
    (RemoteError("s3://b/x: reading failed 5 times"), 3, "s3://b/x: reading failed 5 times"),
    (ObjectChangedError("s3://b/x"), 4, "s3://b/x: the object changed since it was opened"),
    (MissingExtraError("gs://b/x", "gcs", "gcsfs"), 2, "pip install 'tfrecord-browser[gcs]'"),
    (errors.Cancelled("verify was cancelled (Ctrl+C)"), 130, "verify was cancelled (Ctrl+C)"),
]


def _raising(exc: BaseException):
    def handler(args: argparse.Namespace, out: TextIO) -> int:
        raise exc

    return handler


@pytest.mark.parametrize(("exc", "code", "words"), ERROR_CASES, ids=lambda x: type(x).__name__)
def test_errors_become_a_message_and_their_exit_code(capsys, exc, code, words):
    assert run_command(_raising(exc), argparse.Namespace(), io.StringIO()) == code
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("tfrecord-browser: ") and err.endswith("\n") and err.count("\n") == 1
    assert words in err and "Traceback" not in err
    assert code == errors.exit_code(exc) and err == f"tfrecord-browser: {errors.message(exc)}\n"


def test_every_app_error_has_a_case():
    classes = {c for c in vars(errors).values() if isinstance(c, type)}
    app_errors = {c for c in classes if issubclass(c, errors.AppError)}
    assert app_errors <= {type(exc) for exc, _, _ in ERROR_CASES}


def test_interrupt_and_closed_pipe(capsys, monkeypatch):
    assert run_command(_raising(KeyboardInterrupt()), argparse.Namespace()) == 130
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert (
        run_command(_raising(BrokenPipeError(errno.EPIPE, "Broken pipe")), argparse.Namespace())
        == 0
    )
    sys.stdout.close()  # the dev-null stand-in run() put in place of the closed pipe
    assert capsys.readouterr().err == ""


def test_other_exceptions_are_not_hidden():
    with pytest.raises(ZeroDivisionError):
        run_command(_raising(ZeroDivisionError()), argparse.Namespace())


def test_an_index_that_cannot_be_written_is_a_message(capsys, tmp_path):
    src = tmp_path / "d.tfrecord"
    write_records(src, [b"a"])
    code, _, err = run(capsys, "index", str(src), "--out", str(tmp_path / "no" / "x.idx"))
    assert code == 2 and err.startswith("tfrecord-browser: ") and "Traceback" not in err
    assert "x.idx: cannot write here" in err


def test_a_folder_without_records_is_an_input_error(capsys, tmp_path):
    code, _, err = run(capsys, "dump", str(tmp_path))
    assert code == 2 and "Traceback" not in err
    assert err == f"tfrecord-browser: {tmp_path}: the folder holds no TFRecord files\n"
