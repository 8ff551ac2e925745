"""GZIP/ZLIB files that would inflate without bound, and the cache of inflated copies: the
inflate limit (its message, --max-inflate, the environment), and the total size the copies
are kept under (least recently used removed first, open ones never)."""

from __future__ import annotations

import argparse
import fcntl
import gzip
import os
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hs

import codec.cache as cache_mod
import codec.settings as settings_mod
from browser_app.cli import main
from browser_app.cli import run as run_command
from browser_app.cli.inputs import max_inflate
from codec import TFRecordFile
from codec.cache import (
    evict_inflated,
    inflate_limit,
    inflated_copies,
    inflated_usage,
)
from codec.errors import LimitError
from codec.settings import (
    INFLATED_CAP,
    INFLATED_CAP_ENV,
    MAX_INFLATE_ENV,
    inflated_cap,
    parse_size,
)
from codec.writer import write_records

MiB = 1 << 20


def zeros(path: Path, size: int, kind: str) -> Path:
    """A compressed file of ``size`` zero bytes: a small file that inflates a lot."""
    data = b"\0" * size
    path.write_bytes(gzip.compress(data, 9) if kind == "gzip" else zlib.compress(data, 9))
    return path


def zero_records(path: Path, payload: int, count: int, kind: str = "gzip") -> Path:
    """Valid TFRecord framing around zero payloads, compressed: a bomb that is also data."""
    write_records(str(path), [b"\0" * payload] * count, compression=kind)
    return path


def leftovers(cache: Path) -> list[str]:
    folder = cache / "inflated"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# -- sizes ------------------------------------------------------------------------------


@given(hs.integers(0, 10**6), hs.sampled_from(["", "K", "M", "G", "T", "k", "m", "g"]))
def test_parse_size_units(n, unit):
    scale = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit.lower()]
    assert parse_size(f"{n}{unit}") == n * scale
    if unit:
        assert parse_size(f"{n} {unit}iB") == n * scale == parse_size(f"{n}{unit}B")


@pytest.mark.parametrize("text", ["", "G", "10X", "-5", "1e9", "ten", "10 G G", "0x10"])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError, match="not a size"):
        parse_size(text)


def test_parse_size_fractions():
    assert parse_size("1.5G") == 3 << 29
    assert parse_size("500M") == 500 * MiB


# -- the inflate limit -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["gzip", "zlib"])
def test_a_bomb_is_refused_naming_the_file_the_limit_and_the_way_out(
    tmp_path, _isolated_cache, kind
):
    bomb = zeros(tmp_path / f"bomb.{kind}", 8 * MiB, kind)
    with pytest.raises(LimitError) as caught:
        TFRecordFile(bomb, max_inflate=MiB)
    message = str(caught.value)
    assert message.startswith(f"{bomb}: the {kind.upper()} file ({bomb.stat().st_size:,} bytes)")
    assert f"more than {MiB:,} bytes" in message
    assert "--max-inflate" in message and MAX_INFLATE_ENV in message
    assert leftovers(_isolated_cache) == []  # nothing half-inflated is kept
    with TFRecordFile(bomb, max_inflate=8 * MiB) as f:  # exactly enough
        assert f.size == 8 * MiB


def test_the_default_limit_follows_the_compressed_size(tmp_path, _isolated_cache, monkeypatch):
    monkeypatch.setattr(settings_mod, "INFLATE_RATIO", 2)
    bomb = zeros(tmp_path / "bomb.gz", 3 * MiB, "gzip")  # a few KiB: the 1 MiB floor applies
    assert inflate_limit(bomb.stat().st_size, _isolated_cache)[0] == 2 * MiB
    with pytest.raises(LimitError, match="2 times its compressed size"):
        TFRecordFile(bomb)
    ok = zeros(tmp_path / "ok.gz", 2 * MiB, "gzip")
    with TFRecordFile(ok) as f:
        assert f.size == 2 * MiB


def test_the_limit_from_the_environment(tmp_path, _isolated_cache, monkeypatch):
    bomb = zeros(tmp_path / "bomb.zlib", 3 * MiB, "zlib")
    monkeypatch.setenv(MAX_INFLATE_ENV, "2M")
    with pytest.raises(LimitError, match=r"the limit set \(raise it with --max-inflate larger"):
        TFRecordFile(bomb)
    monkeypatch.setenv(MAX_INFLATE_ENV, "3M")
    with TFRecordFile(bomb) as f:
        assert f.size == 3 * MiB


def test_the_limit_keeps_the_cache_disk_from_filling(tmp_path, _isolated_cache, monkeypatch):
    monkeypatch.setattr(cache_mod, "cache_room", lambda _cache: MiB)
    limit, why = inflate_limit(10 * MiB, _isolated_cache)
    assert limit == MiB and "free space on the cache disk" in why
    with pytest.raises(LimitError, match="free space"):
        TFRecordFile(zeros(tmp_path / "b.gz", 2 * MiB, "gzip"))


# -- the command line -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["gzip", "zlib"])
def test_cli_refuses_a_bomb_with_exit_2(tmp_path, capsys, kind):
    bomb = zeros(tmp_path / f"bomb.{kind}", 4 * MiB, kind)
    for argv in (
        ["--max-inflate", "1M", "info", str(bomb)],
        ["info", str(bomb), "--max-inflate", "1M"],
        ["dump", str(bomb), "--max-inflate", "1048576"],
        ["schema", str(bomb), "--max-inflate", "1M"],
        ["export", str(bomb), str(tmp_path / "out.jsonl"), "--max-inflate", "1M"],
        ["filter", str(bomb), "index < 3", "--max-inflate", "1M"],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"tfrecord-browser: {bomb}: the {kind.upper()} file")
        assert f"more than {MiB:,} bytes" in err and "--max-inflate" in err
    assert MAX_INFLATE_ENV not in os.environ  # the command's limit ends with the command


def test_cli_max_inflate_lets_a_big_file_open(tmp_path, capsys):
    files = [zero_records(tmp_path / f"r{k}.tfrecord.gz", MiB, 3) for k in range(2)]
    assert main(["--max-inflate", "2M", "verify", *map(str, files)]) == 2
    capsys.readouterr()
    assert main(["verify", *map(str, files), "--max-inflate", "4M"]) == 0
    assert "6 intact records" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["10X", "0", "-1M"])
def test_cli_refuses_a_bad_size(tmp_path, capsys, bad):
    assert main(["info", str(tmp_path / "x.tfrecord"), f"--max-inflate={bad}"]) == 2
    assert "--max-inflate" in capsys.readouterr().err


def test_max_inflate_is_scoped_to_the_command(monkeypatch):
    monkeypatch.setenv(MAX_INFLATE_ENV, "7M")
    with max_inflate(argparse.Namespace(max_inflate=5 * MiB)):
        assert os.environ[MAX_INFLATE_ENV] == str(5 * MiB)
    assert os.environ[MAX_INFLATE_ENV] == "7M"
    with max_inflate(argparse.Namespace()):
        assert os.environ[MAX_INFLATE_ENV] == "7M"


def test_view_passes_the_limit_to_the_app(tmp_path, monkeypatch, capsys):
    """The server process gets the limit in its environment, where the app reads it."""
    from browser_app.cli import launch

    data = zero_records(tmp_path / "a.tfrecord.gz", 1024, 2)
    seen: dict[str, dict[str, str]] = {}

    class Started(Exception):
        pass

    def fake_popen(cmd, env=None, **_kw):  # type: ignore[no-untyped-def]
        seen["env"] = dict(env or {})
        raise Started

    monkeypatch.setattr(launch.subprocess, "Popen", fake_popen)
    args = main.__globals__["build_parser"]().parse_args(
        ["view", str(data), "--no-browser", "--max-inflate", "3G"]
    )
    with pytest.raises(Started):
        run_command(args.handler, args)
    assert seen["env"][MAX_INFLATE_ENV] == str(3 << 30)


# -- the cache of inflated copies -------------------------------------------------------


def _copy_of(path: Path, cache: Path) -> Path:
    """Open and close ``path``; the inflated copy that this made in ``cache``."""
    before = set(_names(cache))
    TFRecordFile(path).close()
    [copy] = set(_names(cache)) - before
    return copy


def _sources(tmp_path: Path, n: int) -> list[Path]:
    """``n`` compressed files that inflate to the same size (about 1 MiB)."""
    return [zero_records(tmp_path / f"s{k}.tfrecord.gz", 1000 + k, 1040) for k in range(n)]


def _names(cache: Path) -> list[Path]:
    return [c.path for c in inflated_copies(cache)]


def test_least_recently_used_copies_go_first(tmp_path, _isolated_cache, monkeypatch):
    a, b, c, d = _sources(tmp_path, 4)
    ca, cb = _copy_of(a, _isolated_cache), _copy_of(b, _isolated_cache)
    size = max(ca.stat().st_size, cb.stat().st_size) + 1040 * 3
    monkeypatch.setenv(INFLATED_CAP_ENV, str(2 * size))  # room for two copies
    assert _names(_isolated_cache) == [ca, cb]  # least recently used first
    TFRecordFile(a).close()  # a used again: b is now the least recently used
    assert _names(_isolated_cache) == [cb, ca]
    cc = _copy_of(c, _isolated_cache)
    assert _names(_isolated_cache) == [ca, cc]
    assert not cb.exists() and not cb.with_suffix(".problems").exists()
    cd = _copy_of(d, _isolated_cache)
    assert _names(_isolated_cache) == [cc, cd]
    use = inflated_usage(_isolated_cache)
    assert (use.copies, use.open, use.cap) == (2, 0, 2 * size) and use.bytes <= use.cap


def test_open_copies_are_never_removed(tmp_path, _isolated_cache, monkeypatch):
    a, b, c = _sources(tmp_path, 3)
    monkeypatch.setenv(INFLATED_CAP_ENV, "1")  # nothing fits: only open copies stay
    with TFRecordFile(a) as fa:
        with TFRecordFile(b) as fb:
            assert len(_names(_isolated_cache)) == 2  # both kept while open
            assert inflated_usage(_isolated_cache).open == 2
            cc = _copy_of(c, _isolated_cache)  # added (and kept while open), then closed
            assert len(_names(_isolated_cache)) == 3
            assert evict_inflated(_isolated_cache) == [cc]  # a and b are open
            assert fb[0] == b"\0" * 1001
        assert len(evict_inflated(_isolated_cache)) == 1  # b, now closed
        assert len(_names(_isolated_cache)) == 1 and fa[-1] == b"\0" * 1000
    assert len(evict_inflated(_isolated_cache)) == 1
    assert _names(_isolated_cache) == []


def test_a_copy_open_in_another_process_is_kept(tmp_path, _isolated_cache):
    [a] = _sources(tmp_path, 1)
    copy = _copy_of(a, _isolated_cache)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from codec import TFRecordFile;"
            f" f = TFRecordFile({str(a)!r}); print('open', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"open"
        assert evict_inflated(_isolated_cache, cap=0) == []
        assert copy.exists() and inflated_usage(_isolated_cache).open == 1
    finally:
        holder.communicate(b"")
    assert evict_inflated(_isolated_cache, cap=0) == [copy]


def test_a_removed_copy_is_inflated_again(tmp_path, _isolated_cache):
    [a] = _sources(tmp_path, 1)
    copy = _copy_of(a, _isolated_cache)
    assert evict_inflated(_isolated_cache, cap=0) == [copy]
    with TFRecordFile(a) as f:
        assert len(f) == 1040 and copy.exists()


def test_partial_copies_left_by_a_crash_are_removed(tmp_path, _isolated_cache):
    folder = _isolated_cache / "inflated"
    folder.mkdir(parents=True)
    old = folder / ".inflate-crashed"
    old.write_bytes(b"x" * 100)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    writing = folder / ".inflate-writing"
    writing.write_bytes(b"y")
    os.utime(writing, (time.time() - 3600, time.time() - 3600))
    fresh = folder / ".inflate-fresh"
    fresh.write_bytes(b"z")
    with open(writing, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # still being written by someone
        evict_inflated(_isolated_cache)
    assert not old.exists() and writing.exists() and fresh.exists()


def test_the_cap_from_the_environment(monkeypatch):
    monkeypatch.delenv(INFLATED_CAP_ENV, raising=False)
    assert inflated_cap() == INFLATED_CAP
    monkeypatch.setenv(INFLATED_CAP_ENV, "3G")
    assert inflated_cap() == 3 << 30
    monkeypatch.setenv(INFLATED_CAP_ENV, "lots")
    assert inflated_cap() == INFLATED_CAP
