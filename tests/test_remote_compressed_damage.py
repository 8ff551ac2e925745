"""A remote GZIP/ZLIB object's damage is found on every verify, not only the first: the
inflated copy and the saved index kept in the cache carry what inflating found (trailing
junk, a cut end, a bad checksum), as they do for local files. Each kind of damage is made
here and verified over HTTP three times: first, with everything cached, and with only the
index cached (the inflated copy evicted)."""

from __future__ import annotations

import gzip
import json
import shutil
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import run_cli

from codec.framing import encode_record

REPO = Path(__file__).resolve().parent.parent
RAW = b"".join(encode_record(bytes([i % 251]) * (64 + i)) for i in range(200))


def _gz(raw: bytes) -> bytes:
    return gzip.compress(raw, mtime=0)


def _zl(raw: bytes) -> bytes:
    return zlib.compress(raw)


def _bad_crc(data: bytes) -> bytes:
    b = bytearray(data)
    b[-8] ^= 0xFF  # the GZIP trailer's CRC32
    return bytes(b)


DAMAGE: dict[str, Callable[[], bytes]] = {
    "gzip, junk after the stream": lambda: _gz(RAW) + b"JUNK" * 3,
    "gzip, cut short": lambda: _gz(RAW)[: len(_gz(RAW)) * 2 // 3],
    "gzip, bad checksum": lambda: _bad_crc(_gz(RAW)),
    "gzip, a second member cut short": lambda: _gz(RAW) + _gz(RAW)[:40],
    "zlib, cut short": lambda: _zl(RAW)[: len(_zl(RAW)) // 2],
    "zlib, junk after the stream": lambda: _zl(RAW) + b"\x00junk",
}


def _verify(url: str, cache: Path) -> tuple[int, dict]:
    done = run_cli("verify", url, "--json", cache=cache, timeout=120)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_every_verify_of_a_damaged_remote_object_says_the_same(
    kind: str, http_server, tmp_path: Path
) -> None:
    name = "d/x.tfrecord.gz" if kind.startswith("gzip") else "d/x.tfrecord.zlib"
    http_server.put(name, DAMAGE[kind]())
    url = http_server.url(name)
    cache = tmp_path / "cache"
    first = _verify(url, cache)
    assert first[0] == 1 and first[1]["ok"] is False, first
    assert any(p["problem"] == "compression" for p in first[1]["files"][0]["problems"])
    assert _verify(url, cache) == first  # the inflated copy and the index cached
    shutil.rmtree(cache / "inflated")
    assert _verify(url, cache) == first  # only the index cached
