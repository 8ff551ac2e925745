"""Temporary outputs of exports killed with SIGKILL: recognisable, cleaned by the next export to
the folder, and never while their export is alive or when they are not ours.

The killed and the live exports are real processes, held at a point of the export by their
progress callback (the temporary outputs are on disk then) until the test kills or releases
them.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import codec
from browser_app import export as E
from browser_app.cli.main import build_parser
from browser_app.cli.main import run as run_command
from browser_app.export import tempfiles
from browser_app.export.tempfiles import MARK, RunLock, clean_stale, is_ours
from codec import example as ex
from codec.values import format_bytes

ROOT = Path(__file__).resolve().parent.parent

# The exporting child: waits at its first progress report of STAGE, after touching MARKER,
# until GO exists (never, for one that is to be killed).
CHILD = r"""
import os, sys, time
from browser_app import export as E

src, dst, fmt, stage, marker, go, shards = sys.argv[1:8]
held = False

def progress(s, done, total):
    global held
    if s == stage and not held:
        held = True
        open(marker, "w").close()
        while not os.path.exists(go):
            time.sleep(0.02)

options = {"shards": int(shards)} if fmt == "tfrecord" else {}
report = E.export(src, dst, format=fmt, progress=progress, **options)
print(report.summary())
"""

WAIT = 120.0  # seconds a child may take to reach its hold (a slow, busy machine)


def _source(tmp_path: Path, records: int = 3000) -> Path:
    """A dataset with pictures, big enough for several progress reports while writing."""
    payloads = [
        ex.encode_example(
            {
                "label": ("int64", [k]),
                "text": ("bytes", [f"record {k} ".encode() * 20]),
                "image/encoded": ("bytes", [_PNG]),
            }
        )
        for k in range(records)
    ]
    src = tmp_path / "src" / "data.tfrecord"
    src.parent.mkdir()
    codec.write_records(src, payloads)
    return src


def _png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 200, 30)).save(out, format="PNG")
    return out.getvalue()


_PNG = _png()


_CHILDREN: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _no_child_left() -> object:
    """A failing test leaves no held export running."""
    yield None
    while _CHILDREN:
        proc = _CHILDREN.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class Child:
    """An export in another process, held at ``stage``."""

    def __init__(
        self, tmp_path: Path, name: str, src: Path, dst: Path, fmt: str, stage: str, shards: int = 1
    ) -> None:
        self.marker = tmp_path / f"{name}.held"
        self.go = tmp_path / f"{name}.go"
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                CHILD,
                str(src),
                str(dst),
                fmt,
                stage,
                str(self.marker),
                str(self.go),
                str(shards),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _CHILDREN.append(self.proc)
        deadline = time.monotonic() + WAIT
        while not self.marker.exists():
            if self.proc.poll() is not None:
                raise AssertionError(f"the export ended before its hold: {self.proc.stderr.read()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError("the export did not reach its hold")
            time.sleep(0.02)

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        assert self.proc.returncode == -signal.SIGKILL

    def release(self) -> str:
        self.go.touch()
        out, err = self.proc.communicate(timeout=WAIT)
        assert self.proc.returncode == 0, err
        return out


def _ours(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if is_ours(p.name)}


def _runs(names: set[str]) -> set[str]:
    return {n.split(f"{MARK}-")[1][:16] for n in names}


def _bytes_of(folder: Path, run: str) -> int:
    """What the entries of ``run`` hold, counted here independently of the module."""
    total = 0
    for p in folder.iterdir():
        if run in p.name:
            if p.is_dir():
                total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
            else:
                total += p.stat().st_size
    return total


@pytest.mark.parametrize(
    ("fmt", "dst_name", "stage", "shards"),
    [
        ("tfrecord", "out.tfrecord", "write", 1),  # the writer's own temporary file inside
        ("tfrecord", "out.tfrecord.gz", "verify", 3),  # every shard complete
        ("csv", "out.csv", "verify", 1),
        ("images", "pictures", "verify", 1),  # a temporary folder
    ],
)
def test_a_killed_exports_leftovers_are_cleaned_and_a_live_ones_are_not(
    tmp_path: Path, fmt: str, dst_name: str, stage: str, shards: int
) -> None:
    src = _source(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("not ours")
    (out / ".out.tfrecord.abc123.export").write_text("an old name: not provably ours")
    dst = out / dst_name

    live = Child(tmp_path, "live", src, dst, fmt, stage, shards)
    live_names = _ours(out)
    (live_run,) = _runs(live_names)
    live_bytes = {n: _bytes_of(out, n) for n in live_names}

    dead = Child(tmp_path, "dead", src, dst, fmt, stage, shards)
    dead.kill()
    left = _ours(out) - live_names
    (dead_run,) = _runs(left)
    assert any(n.endswith(".lock") for n in left) and any(".part" in n for n in left)
    assert not dst.exists()
    if stage == "verify":  # the killed export had written its outputs in full
        assert _bytes_of(out, dead_run) > 10_000
    expected = _bytes_of(out, dead_run)

    # A third export to the same folder (another destination) cleans the dead run only.
    other = out / f"other.{'zip' if fmt == 'images' else 'jsonl'}"
    report = E.export(str(src), other, format="images" if fmt == "images" else "jsonl")
    assert report.cleaned == len(left) and report.cleaned_bytes == expected
    assert f"removed {len(left)} leftover temporary files" in report.summary()
    assert _ours(out) == live_names
    assert {n: _bytes_of(out, n) for n in live_names} == live_bytes
    assert (out / "keep.txt").read_text() == "not ours"
    assert (out / ".out.tfrecord.abc123.export").exists()

    # The live export finishes as if nothing happened, and leaves nothing of its own behind.
    summary = live.release()
    assert "verified" in summary and "leftover temporary" not in summary
    assert _ours(out) == set()
    assert live_run not in {p.name for p in out.iterdir()}
    if fmt == "tfrecord":
        names = E.shard_names(dst, shards) if shards > 1 else [str(dst)]
        got = [p for name in names for p in codec.TFRecordFile(name)]
        assert got == list(codec.TFRecordFile(str(src)))
    elif fmt == "images":
        assert len(os.listdir(dst)) == 3000
    else:
        assert len(dst.read_text().splitlines()) == 3001

    # Nothing left to clean.
    again = E.export(str(src), other, format="images" if fmt == "images" else "jsonl")
    assert again.cleaned == again.cleaned_bytes == 0 and "leftover temporary" not in again.summary()


def test_the_command_line_says_what_it_cleaned(tmp_path: Path) -> None:
    src = _source(tmp_path, 50)
    dead = Child(tmp_path, "dead", src, tmp_path / "out.jsonl", "jsonl", "verify")
    dead.kill()
    left = [p for p in tmp_path.iterdir() if is_ours(p.name)]
    size = sum(p.stat().st_size for p in left)
    stdout = io.StringIO()
    args = build_parser().parse_args(["export", str(src), str(tmp_path / "out.jsonl")])
    assert run_command(args.handler, args, stdout) == 0
    said = (
        f"removed {len(left)} leftover temporary files of an interrupted export"
        f" ({format_bytes(size)})"
    )
    assert said in stdout.getvalue()
    assert _ours(tmp_path) == set()


# -- the rules, one by one --------------------------------------------------------------------


def _dead_run(folder: Path, names: list[str]) -> RunLock:
    """A run whose process is gone: its lock file is there and nobody holds it."""
    lock = RunLock(str(folder))
    for name in names:
        lock.new_temp(str(folder / name))
    os.close(lock._fd)  # what the kernel does when the process dies
    lock._fd = -1
    return lock


def test_only_a_run_whose_lock_is_free_is_cleaned(tmp_path: Path) -> None:
    live = RunLock(str(tmp_path))
    live_tmp = live.new_temp(str(tmp_path / "a.csv"))
    Path(live_tmp).write_bytes(b"x" * 10)
    dead = _dead_run(tmp_path, ["a.csv", "b.csv"])
    cleaned = clean_stale(str(tmp_path))
    assert cleaned.entries == 3  # two temporary files and the lock file
    assert os.path.exists(live_tmp) and os.path.exists(live.path)
    assert not os.path.exists(dead.path)
    # Released with a temporary output still there: the lock file stays, for a later run.
    live.release()
    assert os.path.exists(live.path)
    assert clean_stale(str(tmp_path)).entries == 2
    assert os.listdir(tmp_path) == []


def test_a_temporary_output_without_its_lock_file_is_left(tmp_path: Path) -> None:
    dead = _dead_run(tmp_path, ["a.csv"])
    os.unlink(dead.path)
    assert clean_stale(str(tmp_path)).entries == 0
    assert len(os.listdir(tmp_path)) == 1


def test_a_lock_file_that_is_a_link_or_not_a_file_is_left(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("x")
    run = "0123456789abcdef"
    (tmp_path / f".{MARK}-{run}.lock").symlink_to(target)
    (tmp_path / f".a.csv.{MARK}-{run}.part").write_text("looks like ours")
    os.mkfifo(tmp_path / f".{MARK}-{'f' * 16}.lock")
    (tmp_path / f".b.csv.{MARK}-{'f' * 16}.part").write_text("looks like ours")
    before = sorted(os.listdir(tmp_path))
    assert clean_stale(str(tmp_path)).entries == 0
    assert sorted(os.listdir(tmp_path)) == before


def test_a_lock_taken_for_stale_between_creating_and_locking_it_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_flock = tempfiles._fcntl.flock
    calls = []

    def flock(fd: int, op: int) -> None:
        if not calls:  # a cleaner gets there first and removes the new lock file
            calls.append(fd)
            for name in os.listdir(tmp_path):
                os.unlink(tmp_path / name)
        real_flock(fd, op)

    monkeypatch.setattr(tempfiles._fcntl, "flock", flock)
    lock = RunLock(str(tmp_path))
    assert os.path.exists(lock.path) and calls
    monkeypatch.setattr(tempfiles._fcntl, "flock", real_flock)
    assert clean_stale(str(tmp_path)).entries == 0  # held
    lock.release()


_NAME = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1
).filter(lambda s: s not in (".", ".."))


@settings(max_examples=300, deadline=None)
@given(name=_NAME)
def test_a_name_without_the_mark_is_never_ours(name: str) -> None:
    """A name a person or another tool gives a file is not taken for ours, however it
    looks otherwise (``.x.part``, ``.lock``...)."""
    for candidate in (name, f".{name}.part", f".{name}.lock", f".{name}.0123456789abcdef.part"):
        if MARK not in candidate:
            assert not is_ours(candidate)


@settings(max_examples=100, deadline=None)
@given(names=st.lists(_NAME, min_size=1, max_size=4, unique=True))
def test_every_temporary_name_is_recognised_and_fits(tmp_path_factory, names: list[str]) -> None:
    folder = tmp_path_factory.mktemp("names")
    lock = RunLock(str(folder))
    try:
        made = []
        for name in names:
            if len(os.fsencode(name)) > 255:
                continue
            tmp = lock.new_temp(str(folder / name))
            made.append(tmp)
            assert is_ours(os.path.basename(tmp))
            nested = f".{os.path.basename(tmp)}.abc_12xy.tmp"  # the TFRecord writer's own
            assert is_ours(nested)
            assert len(os.fsencode(nested)) <= 255
        assert len(set(made)) == len(made)
    finally:
        for tmp in os.listdir(folder):
            if tmp.endswith(".part"):
                os.unlink(folder / tmp)
        lock.release()
    assert os.listdir(folder) == []
