"""The app against hostile or unlucky input, through AppTest: files that inflate without
bound (the message, the offer of a higher limit, then it opens), uploads (a private folder,
odd names, removal at the end of a session or after a day), globs through escaping
symlinks, and ``name@N`` links with an absurd N."""

from __future__ import annotations

import gc
import os
import stat
import time
from pathlib import Path

import pytest
import streamlit as st
from app_support import no_crash as app_no_crash
from streamlit.testing.v1 import AppTest
from test_app import app, texts

import codec.settings as cache_mod
from browser_app.cli import launch, run
from browser_app.ui import opening
from browser_app.view import md_text
from codec.settings import MAX_INFLATE_ENV
from codec.writer import write_records

MiB = 1 << 20
RECORDS = 3000  # records of 1000 zero bytes: about 3 MiB inflated, a few KiB compressed


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("limits") / "root"
    root.mkdir()
    for kind in ("gzip", "zlib"):
        write_records(
            str(root / f"bomb.tfrecord.{kind}"), [b"\0" * 1000] * RECORDS, compression=kind
        )
    write_records(str(root / "plain.tfrecord"), [b"x"] * 5)
    write_records(str(root / "**strong** [a](b).tfrecord"), [b"y"] * 2)
    data = root / "data"
    data.mkdir()
    for k in range(2):
        write_records(str(data / f"part-{k}.tfrecord"), [b"p"] * 4)
    secret = root.parent / "secret-place"
    secret.mkdir()
    write_records(str(secret / "hidden.tfrecord"), [b"s"] * 7)
    os.symlink(secret / "hidden.tfrecord", data / "part-9.tfrecord")
    return root


@pytest.fixture
def limit(monkeypatch: pytest.MonkeyPatch) -> int:
    """The inflate limit of these tests: 1 MiB (the bombs inflate to about 3 MiB)."""
    monkeypatch.setenv(MAX_INFLATE_ENV, "1M")
    return MiB


def no_crash(at: AppTest) -> None:
    """No exception, no page that could not be shown, and no file picker that failed."""
    app_no_crash(at)
    assert not [e.value for e in at.sidebar.error if "failed" in e.value]


def buttons(at: AppTest) -> dict[str, str]:
    return {str(b.key): str(b.label) for b in at.sidebar.button}


ALLOW = "tfb:w:inflate:allow"
DISMISS = "tfb:w:inflate:dismiss"


# -- the inflate limit -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["gzip", "zlib"])
def test_a_link_to_a_bomb_is_refused_then_opens_with_a_higher_limit(monkeypatch, root, limit, kind):
    name = f"bomb.tfrecord.{kind}"
    at = app(monkeypatch, root, file=name)
    no_crash(at)
    error = texts(at.main.error)
    assert md_text(name) in error and f"more than {limit:,} bytes" in error
    assert "button in the sidebar" in error
    assert "file" not in at.query_params  # not open
    assert md_text(name) in texts(at.sidebar.warning)
    assert buttons(at)[ALLOW] == "Allow 4.0 MiB"
    at.button(key=ALLOW).click().run()
    no_crash(at)
    assert f"{RECORDS:,} records" in texts(at.main.caption)
    assert at.query_params["file"] == name
    assert ALLOW not in buttons(at)  # the offer is gone once accepted
    # The limit stays raised for this source in this session.
    at.run()
    no_crash(at)
    assert not at.main.error and f"{RECORDS:,} records" in texts(at.main.caption)


def test_a_bomb_typed_in_the_picker_leaves_the_open_file_open(monkeypatch, root, limit):
    at = app(monkeypatch, root, file="plain.tfrecord")
    at.text_input(key="tfb:w:path").input("bomb.tfrecord.gzip").run()
    no_crash(at)
    assert "not opened" in texts(at.main.error)
    assert at.query_params["file"] == "plain.tfrecord"
    at.button(key=DISMISS).click().run()
    no_crash(at)
    assert ALLOW not in buttons(at) and at.query_params["file"] == "plain.tfrecord"
    at.text_input(key="tfb:w:path").input("bomb.tfrecord.zlib").run()
    at.button(key=ALLOW).click().run()
    no_crash(at)
    assert at.query_params["file"] == "bomb.tfrecord.zlib"


def test_each_offer_raises_the_limit_again_until_it_fits(monkeypatch, root):
    monkeypatch.setenv(MAX_INFLATE_ENV, str(MiB // 8))
    at = app(monkeypatch, root, file="bomb.tfrecord.gzip")
    assert buttons(at)[ALLOW] == "Allow 512.0 KiB"
    at.button(key=ALLOW).click().run()
    no_crash(at)
    assert "more than 524,288 bytes" in texts(at.main.error)
    assert buttons(at)[ALLOW] == "Allow 2.0 MiB"
    at.button(key=ALLOW).click().run()
    at.button(key=ALLOW).click().run()
    no_crash(at)
    assert at.query_params["file"] == "bomb.tfrecord.gzip"


def test_no_offer_when_the_cache_disk_has_no_room(monkeypatch, root, limit):
    monkeypatch.setattr(opening, "cache_room", lambda _cache: limit // 2)
    at = app(monkeypatch, root, file="bomb.tfrecord.gzip")
    no_crash(at)
    assert "no room to allow more" in texts(at.main.error)
    assert ALLOW not in buttons(at) and DISMISS in buttons(at)


def test_the_header_shows_the_inflated_copies_against_their_cap(monkeypatch, root):
    monkeypatch.setenv(cache_mod.INFLATED_CAP_ENV, "3G")
    at = app(monkeypatch, root, file="bomb.tfrecord.zlib")
    no_crash(at)
    caption = texts(at.main.caption)
    assert "Inflated copies in the cache: 2.9 MiB of 3.0 GiB (1 copy, 1 open)" in caption
    at = app(monkeypatch, root, file="plain.tfrecord")
    assert "Inflated copies" not in texts(at.main.caption)


# -- uploads ------------------------------------------------------------------------------


def upload(at: AppTest, name: str, data: bytes) -> AppTest:
    at.file_uploader(key="tfb:w:upload").set_value((name, data, "application/octet-stream"))
    return at.run()


def stored(cache: Path) -> list[Path]:
    folder = cache / "uploads"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_an_upload_that_would_inflate_past_the_default_limit(monkeypatch, root, _isolated_cache):
    monkeypatch.delenv(MAX_INFLATE_ENV, raising=False)
    monkeypatch.setattr(cache_mod, "INFLATE_RATIO", 2)  # 2 MiB for a file under 1 MiB
    at = app(monkeypatch, root)
    at = upload(at, "small.tfrecord.gz", (root / "bomb.tfrecord.gzip").read_bytes())
    no_crash(at)
    assert "small.tfrecord.gz: not opened" in texts(at.main.error).replace("\\", "")
    assert "more than 2,097,152 bytes" in texts(at.main.error)
    assert not (_isolated_cache / "inflated").exists() or not any(
        (_isolated_cache / "inflated").glob("*.tfrecord")
    )
    at.button(key=ALLOW).click().run()
    no_crash(at)
    assert "small.tfrecord.gz" in texts(at.main.caption)
    assert f"{RECORDS:,} records" in texts(at.main.caption)


def test_uploads_live_in_a_private_folder_and_go_with_the_session(
    monkeypatch, root, _isolated_cache
):
    at = app(monkeypatch, root)
    at = upload(at, "mine.tfrecord", (root / "plain.tfrecord").read_bytes())
    no_crash(at)
    assert "5 records" in texts(at.main.caption)
    folder = _isolated_cache / "uploads"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    [copy] = stored(_isolated_cache)
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert "mine" not in copy.name  # names on disk never come from the person
    # The session ends: Streamlit drops its state, and the upload goes with it (once the
    # script's thread has let go of it: on a loaded machine that may take a moment).
    del at
    deadline = time.monotonic() + 30
    while True:
        gc.collect()
        left = stored(_isolated_cache)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert left == []


ODD_NAMES = [
    "x" * 1000 + ".tfrecord",
    "ü" * 400 + ".tfrecord.gz",
    "../../etc/passwd",
    "a/b\\c.tfrecord",
    "nul\x00in\x00name.tfrecord",
    "**strong** [link](http://x) :red[red] $x$.tfrecord",
    "\u202eevil\u202c.tfrecord\n# heading",
    "/",
    "   ",
]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_odd_upload_names_are_shown_safely(monkeypatch, root, _isolated_cache, name):
    at = app(monkeypatch, root)
    at = upload(at, name, (root / "plain.tfrecord").read_bytes())
    no_crash(at)
    shown = opening.upload_name(name)
    assert len(shown) <= opening.UPLOAD_NAME_MAX
    assert "/" not in shown and "\\" not in shown and "\x00" not in shown
    assert all(ch.isprintable() for ch in shown)
    assert f"**{md_text(shown)}**" in texts(at.main.caption)
    assert "5 records" in texts(at.main.caption)
    assert len(stored(_isolated_cache)) == 1


def test_a_long_name_keeps_its_start_and_its_extension():
    shown = opening.upload_name("start-" + "m" * 500 + "-end.tfrecord.gz")
    assert shown.startswith("start-") and shown.endswith("-end.tfrecord.gz") and "…" in shown
    assert len(shown) == opening.UPLOAD_NAME_MAX


def test_the_same_name_uploaded_again_replaces_the_first(monkeypatch, root, _isolated_cache):
    at = app(monkeypatch, root)
    at = upload(at, "same.tfrecord", (root / "plain.tfrecord").read_bytes())
    [first] = stored(_isolated_cache)
    at = upload(at, "same.tfrecord", (root / "data" / "part-0.tfrecord").read_bytes())
    no_crash(at)
    assert "4 records" in texts(at.main.caption)
    [second] = stored(_isolated_cache)
    assert second != first


def _folder(cache: Path, mode: int) -> Path:
    folder = cache / "uploads"
    folder.mkdir(parents=True)
    folder.chmod(mode)
    return folder


def _someone_elses(cache: Path, mp: pytest.MonkeyPatch) -> None:
    owner = _folder(cache, 0o700).stat().st_uid
    mp.setattr(os, "getuid", lambda: owner + 1)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda cache, mp: _folder(cache, 0o770), "can be written by other users"),
        (lambda cache, mp: _folder(cache, 0o703), "can be written by other users"),
        (_someone_elses, "belongs to another user"),
        (lambda cache, mp: os.symlink(cache.parent, cache / "uploads"), "not a folder"),
        (lambda cache, mp: (cache / "uploads").write_bytes(b""), "not a folder"),
    ],
)
def test_an_unsafe_uploads_folder_is_refused(monkeypatch, root, _isolated_cache, setup, message):
    at = app(monkeypatch, root, file="plain.tfrecord")
    setup(_isolated_cache, monkeypatch)
    before = sorted(p.name for p in _isolated_cache.parent.iterdir())
    at = upload(at, "x.tfrecord", (root / "plain.tfrecord").read_bytes())
    no_crash(at)
    error = texts(at.main.error).replace("\\", "")
    assert message in error and str(_isolated_cache / "uploads") in error
    assert at.query_params["file"] == "plain.tfrecord"  # what was open stays open
    assert sorted(p.name for p in _isolated_cache.parent.iterdir()) == before


def test_an_uploads_folder_readable_by_others_is_made_private(monkeypatch, root, _isolated_cache):
    folder = _folder(_isolated_cache, 0o755)
    at = upload(app(monkeypatch, root), "x.tfrecord", (root / "plain.tfrecord").read_bytes())
    no_crash(at)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert len(stored(_isolated_cache)) == 1


def _old(folder: Path, name: str, age: float) -> Path:
    path = folder / name
    path.write_bytes(b"")
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def test_uploads_unused_for_a_day_are_swept(monkeypatch, root, _isolated_cache):
    folder = _folder(_isolated_cache, 0o700)
    stale = _old(folder, "up-stale.tfrecord", opening.UPLOAD_MAX_AGE + 60)
    recent = _old(folder, "up-recent.tfrecord", opening.UPLOAD_MAX_AGE - 600)
    monkeypatch.setattr(opening, "_swept", False)  # a server that starts
    at = app(monkeypatch, root)
    no_crash(at)
    assert not stale.exists() and recent.exists()
    stale = _old(folder, "up-stale2.tfrecord", opening.UPLOAD_MAX_AGE + 60)
    at.run()
    assert stale.exists()  # swept when the server starts, and at each upload
    upload(at, "x.tfrecord", (root / "plain.tfrecord").read_bytes())
    assert not stale.exists() and recent.exists()


def test_a_swept_upload_is_said_to_be_gone(monkeypatch, root, _isolated_cache):
    at = upload(app(monkeypatch, root), "x.tfrecord", (root / "plain.tfrecord").read_bytes())
    [copy] = stored(_isolated_cache)
    os.utime(copy, (time.time() - 2 * opening.UPLOAD_MAX_AGE,) * 2)
    assert opening.sweep_uploads() == 1 and not copy.exists()
    st.cache_resource.clear()
    at.run()
    no_crash(at)
    assert "x.tfrecord: the uploaded copy is gone; upload it again" in texts(at.main.error).replace(
        "\\", ""
    )


def test_opening_an_upload_leaves_it_as_it_is(monkeypatch, root, _isolated_cache):
    """Its identity keys every cache: touching it at each run would make the app reopen it
    (and index it again) at every run."""
    at = upload(app(monkeypatch, root), "x.tfrecord", (root / "plain.tfrecord").read_bytes())
    [copy] = stored(_isolated_cache)
    before = copy.stat()
    at.run()
    at.run()
    after = copy.stat()
    assert (after.st_mtime_ns, after.st_ctime_ns) == (before.st_mtime_ns, before.st_ctime_ns)


# -- globs, links and shard counts ------------------------------------------------------


def test_a_glob_through_an_escaping_link_opens_the_rest_with_a_note(monkeypatch, root):
    at = app(monkeypatch, root, file="data/part-*.tfrecord")
    no_crash(at)
    warning = texts(at.main.warning).replace("\\", "")
    assert "left out 1 file" in warning and "data/part-9.tfrecord" in warning
    assert "secret" not in warning and "hidden" not in warning
    assert "8 records" in texts(at.main.caption) and "2 files" in texts(at.main.caption)
    at.run()
    assert "left out" not in texts(at.main.warning)  # said once


def test_view_notes_a_skipped_link_on_stderr(monkeypatch, root, capsys):
    class Started(Exception):
        pass

    def fake_popen(*_a, **_kw):  # type: ignore[no-untyped-def]
        raise Started

    monkeypatch.setattr(launch.subprocess, "Popen", fake_popen)
    monkeypatch.setattr(launch, "pick_port", lambda host, port: port)
    args = launch.argparse.Namespace(
        paths=[str(root / "data" / "part-*.tfrecord")],
        root=str(root),
        host="127.0.0.1",
        port=8501,
        no_browser=True,
    )
    with pytest.raises(Started):
        run(launch.launch, args)
    err = capsys.readouterr().err
    assert "left out 1 file whose symlink leads outside the root folder" in err
    assert "data/part-9.tfrecord" in err and "secret" not in err


@pytest.mark.parametrize("spec", ["a@10000000", "data/part@99999999999999999999"])
def test_a_link_to_an_absurd_shard_count_is_refused(monkeypatch, root, spec):
    at = app(monkeypatch, root, file=spec)
    no_crash(at)
    error = texts(at.main.error).replace("\\", "")
    assert error.startswith(f"Refused: {spec}:") and "shards is outside 1 to 100,000" in error
    assert "file" not in at.query_params


def test_recent_names_are_shown_as_text(monkeypatch, root):
    name = "**strong** [a](b).tfrecord"
    at = app(monkeypatch, root, file=name)
    no_crash(at)
    assert f"**{md_text(name)}**" in texts(at.main.caption)
    at.text_input(key="tfb:w:path").input("plain.tfrecord").run()
    assert at.button(key=f"tfb:w:recent:{name}").label == md_text(name)
