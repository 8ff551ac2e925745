"""``tfrecord-browser export`` / ``import``: formats from names, exit codes, messages."""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
from pathlib import Path

import pytest
from conftest import DATA

import codec
from browser_app import export as E
from browser_app.cli import export as cli_export
from browser_app.cli import run as run_command
from browser_app.edits import Journal


def run(*argv: str) -> tuple[int, str]:
    """Run the command through its own parser and the command line's error path."""
    parser = argparse.ArgumentParser(prog="tfrecord-browser")
    sub = parser.add_subparsers(dest="command")
    cli_export.register(sub)
    args = parser.parse_args(list(argv))
    out = io.StringIO()
    code = run_command(args.handler, args, out)
    return code, out.getvalue()


def _payloads(path: Path) -> list[bytes]:
    with codec.TFRecordFile(str(path)) as f:
        return list(f)


def test_export_infers_the_format(tmp_path: Path) -> None:
    code, out = run("export", str(DATA / "basic.tfrecord"), str(tmp_path / "b.tfrecord.gz"))
    assert code == 0 and "64 records" in out and "verified" in out
    raw = (tmp_path / "b.tfrecord.gz").read_bytes()
    assert gzip.decompress(raw) == (DATA / "basic.tfrecord").read_bytes()
    code, _ = run("export", str(DATA / "basic.tfrecord"), str(tmp_path / "b.csv"))
    assert code == 0 and (tmp_path / "b.csv").read_text().startswith("_index,")
    code, _ = run(
        "export", str(DATA / "basic.tfrecord"), str(tmp_path / "pics"), "--format", "images"
    )
    assert code == 0 and (tmp_path / "pics").is_dir()


def test_export_many_sources_with_records_and_shards(tmp_path: Path) -> None:
    shards = str(DATA / "shards" / "part-*-of-00003.tfrecord")
    code, out = run(
        "export", shards, str(tmp_path / "o.tfrecord"), "--records", "0:10,-1", "--shards", "2"
    )
    assert code == 0 and "11 records" in out
    parts = [tmp_path / f"o-0000{k}-of-00002.tfrecord" for k in range(2)]
    ds = codec.TFRecordDataset(shards)
    want = [ds[i] for i in [*range(10), len(ds) - 1]]
    assert _payloads(parts[0]) + _payloads(parts[1]) == want
    ds.close()


def test_import_round_trip(tmp_path: Path) -> None:
    lines = tmp_path / "s.jsonl"
    assert run("export", str(DATA / "sequence.tfrecord"), str(lines))[0] == 0
    back = tmp_path / "s.tfrecord"
    code, out = run("import", str(lines), str(back))
    assert code == 0 and "10 records" in out
    assert back.read_bytes() == (DATA / "sequence.tfrecord").read_bytes()


def test_damage_exits_1_and_names_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    code, out = run("export", str(DATA / "corrupt_data_crc.tfrecord"), str(tmp_path / "c.jsonl"))
    err = capsys.readouterr().err
    assert code == 1
    assert "63 records" in out
    assert "skipped:" in err and "at byte 501" in err
    assert len((tmp_path / "c.jsonl").read_text().splitlines()) == 63


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["export", "{data}/basic.tfrecord"], "one source and a destination"),
        (["export", "{data}/basic.tfrecord", "{tmp}/noext"], "cannot tell the format"),
        (["export", "{data}/nope.tfrecord", "{tmp}/x.csv"], "no such file"),
        (["export", "{data}/basic.tfrecord", "{tmp}/missing/x.csv"], "cannot write here"),
        (["export", "{data}/basic.tfrecord", "{tmp}/x.csv", "--records", "99"], "--records"),
        (["export", "{data}/basic.tfrecord", "{tmp}/x.csv", "--shards", "2"], "TFRecord output"),
        (["export", "{data}/basic.tfrecord", "{data}/basic.tfrecord"], "source file"),
        (["export", "{data}/basic.tfrecord", "{tmp}/x.csv", "--journal", "{tmp}/j"], "journal"),
        (["import", "{data}/basic.tfrecord", "{tmp}/x.tfrecord"], "line 1"),
        (["import", "{tmp}/none.jsonl", "{tmp}/x.tfrecord"], "no such file"),
    ],
)
def test_usage_and_io_errors_exit_2_with_a_message(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    args = [a.format(data=DATA, tmp=tmp_path) for a in argv]
    code, _ = run(*args)
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_export_applies_a_journal(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "basic.tfrecord"
    shutil.copyfile(DATA / "basic.tfrecord", src)
    with Journal(str(src)) as j:
        j.set_value(0, "feature1", 0, "3")
        j.delete_record(1)
        journal_file = str(j.path)
    out = tmp_path / "edited.jsonl"
    code, text = run("export", str(src), str(out), "--journal", journal_file)
    assert code == 0 and "63 records" in text and "1 edited" in text
    first = json.loads(out.read_text().splitlines()[0])
    assert first["record"]["features"]["feature"]["feature1"]["int64List"]["value"] == ["3"]
    code, _ = run("export", str(src), str(tmp_path / "auto.jsonl"), "--journal", "auto")
    assert code == 0 and (tmp_path / "auto.jsonl").read_text() == out.read_text()
    # The source changes underneath the journal: refused, with what changed.
    with open(src, "ab") as f:
        f.write(codec.encode_record(b"more"))
    code, _ = run("export", str(src), str(tmp_path / "late.jsonl"), "--journal", journal_file)
    err = capsys.readouterr().err
    assert code == 2 and "another version of the source" in err and "size was" in err
    assert not (tmp_path / "late.jsonl").exists()


def test_pictures_that_cannot_be_converted_are_named_and_exit_1(
    capsys: pytest.CaptureFixture,
) -> None:
    from browser_app.export import ExportReport, UnconvertedPicture

    report = ExportReport("images", outputs=["pics"], records=2, images=1)
    report.unconverted.append(UnconvertedPicture(1, "image/encoded", 0, "not a picture"))
    out = io.StringIO()
    assert cli_export._report(report, out) == 1
    assert capsys.readouterr().err == "skipped: record 1: image/encoded[0]: not a picture\n"
    assert out.getvalue().startswith("wrote 1 image from 2 records to pics (images)")


def test_existing_shards_are_replaced_like_a_single_file(tmp_path: Path) -> None:
    """The command line has no question to ask: like a single destination file, existing
    shards of the same names are replaced, each only once every shard is written and
    verified; shards of another count are other names and stay."""
    dst = tmp_path / "o.tfrecord"
    names = E.shard_names(dst, 3)
    for name in names[1:]:
        Path(name).write_bytes(b"old")
    other = Path(E.shard_names(dst, 2)[0])
    other.write_bytes(b"two shards")
    code, out = run("export", str(DATA / "basic.tfrecord"), str(dst), "--shards", "3")
    assert code == 0 and "3 files" in out and "verified" in out
    got = [p for name in names for p in _payloads(Path(name))]
    assert got == _payloads(DATA / "basic.tfrecord")
    assert other.read_bytes() == b"two shards"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [other.name, *(Path(n).name for n in names), Path(E.index_map_path(dst)).name]
    )
