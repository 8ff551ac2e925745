"""Turning what the person asked for into an open source.

A spec is a path, folder, glob or shard pattern relative to the root (confined to it by
:mod:`browser_app.paths`; under a URL root, also a URL inside it, read anonymously when the
session's switch says so: :func:`browser_app.ui.state.anon`), or an upload of this session
(``upload:<name>``, a private file in the cache folder). :func:`open_source` opens it
through the shared reader cache (:func:`browser_app.ui.services.open_dataset`) or raises
:class:`~browser_app.errors.InputError` with a message for the person;
:func:`current_source` opens the session's source and falls back to none, with the message
shown once. A remote source that cannot be reached (the
network, after retries) is not forgotten: the failure is kept (:func:`trouble`) and the
source is tried again when the person asks (:func:`try_again`); one replaced on the server
is opened again as it is now by :func:`reopen`.

A folder that is a dataset describing itself (a TFDS dataset at any level: data dir, name,
config, version; a TFX ExampleGen output) opens one split: the one a ``FOLDER:SPLIT`` spec
names, else ``train`` (or the first), with a note naming the others; the source knows its
dataset folder (:attr:`Source.split_folder`) and the Overview page offers the other splits. A
folder holding several TFDS datasets or configs opens the first, and the source lists the
others (:attr:`Source.choices`). Under a URL root a dataset folder in the store opens the same
way (``?file=mnist/3.0.1:train``, or its URL), its shards' URLs confined to the root; a spec
whose folder is no dataset there is opened as it is (an object whose name holds a colon).
Folders and ``**`` globs found by content (TensorBoard logs, ``Dataset.save`` folders) say
what they left out, once.

A GZIP/ZLIB file that would inflate past its limit (:func:`codec.cache.inflate_limit`) is
not opened; the session is offered a higher limit for that source (:func:`inflate_offer`),
within the room left on the cache disk.

Uploads live in ``<cache>/uploads`` (mode 0700, owned by the person running the app, else
refused). Each is removed when its session's state is dropped (see
:func:`browser_app.ui.state.add_upload`), or when the server stops; any left behind (a server
that was killed) once it is :data:`UPLOAD_MAX_AGE` seconds old: old ones are swept when the
app starts and at every upload. An upload is never touched to mark it in use: that would
change its identity, and every cache keyed by it.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import streamlit as st

import codec
from browser_app.errors import InputError, PathRefused, os_error_message
from browser_app.paths import (
    is_url_root,
    may_be_folder,
    relative_inside,
    relative_to_root,
    resolve_inside,
    split_spec,
)
from browser_app.ui import services, state
from browser_app.ui.services import datasets, readers
from browser_app.ui.source import Source
from browser_app.ui.state import InflateOffer, RemoteTrouble
from codec.cache import cache_room, inflate_limit
from codec.errors import LimitError, MissingExtraError, ObjectChangedError, RemoteError
from codec.folders import folder_access
from codec.locations import is_url, shown
from codec.settings import default_cache_dir
from codec.tfds import SplitFolder
from codec.values import format_bytes, plural

__all__ = [
    "PREFERRED_SPLITS",
    "UPLOAD_LIMIT_MB",
    "UPLOAD_MAX_AGE",
    "UPLOAD_NAME_MAX",
    "InflateOffer",
    "RemoteTrouble",
    "accept_inflate_offer",
    "as_trouble",
    "current_source",
    "default_split",
    "dismiss_inflate_offer",
    "inflate_offer",
    "note_trouble",
    "open_source",
    "reopen",
    "store_upload",
    "sweep_uploads",
    "trouble",
    "try_again",
    "upload_dir",
    "upload_name",
]

UPLOAD_LIMIT_MB = 200
UPLOAD_MAX_AGE = 24 * 3600  # seconds after which an upload is swept
UPLOAD_NAME_MAX = 120  # characters of an upload's name that are kept
_RAISE_FACTOR = 4  # each offer allows this many times the limit that refused the source


def _upload_name(spec: str) -> str:
    return spec[len(state.UPLOAD_PREFIX) :]


def _relative_message(root: str, exc: BaseException) -> str:
    """The message of ``exc`` with the path it starts with written relative to the root."""
    msg = str(exc).strip("'\"")
    head = msg.split(":")[0]
    try:
        shown = relative_to_root(root, head)
        if os.path.isabs(head) and not shown.startswith("/"):
            msg = shown + msg[len(head) :]
    except (OSError, ValueError):
        pass
    return msg


def _note_once(spec: str, note: str, kind: state.FlashKind = "warning") -> None:
    """Show ``note`` about opening ``spec`` once, not at every run that reopens it (one note
    per spec: several are joined first)."""
    if state.open_note() != (spec, note):
        state.set_open_note(spec, note)
        state.flash(note, kind)


def _resolve_remote(spec: str, root: str, anon: bool) -> tuple[list[str], str]:
    """``(objects, label)`` of ``spec`` under a URL root (or a URL under a local one, which
    is refused with the way to open it)."""
    label = state.link_spec(spec)
    try:
        files = services.remote_files(root, spec, anon)
    except PathRefused as exc:
        raise InputError(f"Refused: {exc}.") from exc
    except MissingExtraError as exc:
        raise InputError(f"{exc}.") from exc
    except RemoteError:
        raise  # the network: kept, and tried again when asked (see current_source)
    except FileNotFoundError as exc:
        what = exc.strerror or "not found"
        raise InputError(f"Not found: {label}: {what}.") from exc
    except PermissionError as exc:
        raise InputError(_denied(label)) from exc
    except OSError as exc:
        raise InputError(f"{label}: cannot be listed: {exc.strerror or exc}.") from exc
    except codec.CodecError as exc:  # name@N with too many shards
        raise InputError(f"Refused: {exc}.") from exc
    return files, label


def _denied(label: str) -> str:
    return (
        f"{label}: access denied. Check the credentials the server finds (environment,"
        " config files), or turn on “Anonymous access (public bucket)” in the sidebar for a"
        " public bucket."
    )


PREFERRED_SPLITS = ("train",)  # the split a dataset folder opens with, when it has it


def default_split(folder: SplitFolder) -> str | None:
    """The split a dataset folder opens with when none is named: ``train`` when it has one
    with files, else the first that has files (else the first)."""
    with_files = [s.name for s in folder.splits if s.files]
    for name in PREFERRED_SPLITS:
        if name in with_files:
            return name
    if with_files:
        return with_files[0]
    return folder.splits[0].name if folder.splits else None


@dataclass(frozen=True)
class _Resolved:
    """What a spec names: its files and label, and for a dataset folder the folder, the
    split, the folder's spec and the other datasets of a folder holding several."""

    files: list[str]
    label: str
    folder: SplitFolder | None = None
    split: str | None = None
    folder_spec: str | None = None
    choices: tuple[str, ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()


def _resolve(spec: str, root: str, anon: bool = False) -> tuple[list[str], str]:
    """``(files, label)`` of ``spec``."""
    got = _resolve_full(spec, root, anon)
    return got.files, got.label


def _resolve_full(spec: str, root: str, anon: bool = False) -> _Resolved:
    if state.is_upload(spec):
        path = state.upload_path(spec)
        if not path or not os.path.isfile(path):
            raise InputError(f"{_upload_name(spec)}: the uploaded copy is gone; upload it again.")
        return _Resolved([path], _upload_name(spec))
    notes: list[str] = []
    found = _dataset_folder(spec, root, notes, anon)
    if found is not None:
        if notes:
            _note_once(spec, " ".join(notes), "info")
        return found
    if is_url_root(root) or is_url(spec):
        files, label = _resolve_remote(spec, root, anon)
        return _Resolved(files, label)
    try:
        files, said, skipped = readers.local_files(root, spec)
    except PathRefused as exc:
        raise InputError(f"Refused: {exc}.") from exc
    except FileNotFoundError as exc:
        raise InputError(f"Not found: {_relative_message(root, exc)}.") from exc
    except OSError as exc:
        raise InputError(f"{spec}: cannot be read: {exc.strerror or exc}.") from exc
    except codec.CodecError as exc:  # name@N with too many shards
        raise InputError(f"Refused: {_relative_message(root, exc)}.") from exc
    if said:
        _note_once(spec, " ".join(said))
    return _Resolved(files, spec, skipped=skipped)


def _holds_records(folder: str, anon: bool = False) -> bool:
    """Whether ``folder`` (a path, or a URL) holds TFRecord-named files of its own."""
    try:
        names = folder_access(folder, anon=anon).files(folder, 100_000)
    except OSError:
        return False
    return any(codec.looks_like_tfrecord(n) for n in names)


def _describe_remote(url: str, anon: bool) -> datasets.Described:
    """What the folder at ``url`` is; a refusal or a missing library as an
    :class:`InputError`, the network as :class:`RemoteError` (kept, and tried again)."""
    label = state.link_spec(url)
    try:
        return datasets.describe(url, anon)
    except MissingExtraError as exc:
        raise InputError(f"{exc}.") from exc
    except RemoteError:
        raise
    except PermissionError as exc:
        raise InputError(_denied(shown(label))) from exc
    except OSError as exc:
        raise InputError(f"{shown(label)}: cannot be listed: {exc.strerror or exc}.") from exc


def _dataset_folder(spec: str, root: str, notes: list[str], anon: bool = False) -> _Resolved | None:
    """The split ``spec`` opens when it names a dataset folder (``FOLDER`` or
    ``FOLDER:SPLIT``; in an object store under a URL root too), with notes for the person;
    None for any other spec."""
    folder_text, split = split_spec(root, spec)
    try:
        real = resolve_inside(root, folder_text)
    except PathRefused:
        return None  # expanding it says why
    remote = is_url(real)
    if remote:
        if split is None and not may_be_folder(real):
            return None  # an object or a pattern: no store is asked about a folder
        described = _describe_remote(real, anon)
    elif not os.path.isdir(real):
        return None
    else:
        described = datasets.describe(real)
    folder_spec = folder_text
    choices: tuple[str, ...] = ()
    if described.folder is None and described.choices:
        if split is None and _holds_records(real, anon):
            return None  # a folder of records that also holds datasets further down
        placed = [(c, relative_inside(root, c)) for c in described.choices]
        kept = [(c, rel) for c, rel in placed if rel is not None]
        if not kept:
            return None  # expanding it says why
        choices = tuple(rel for _c, rel in kept if rel is not None)
        folder_spec = choices[0]
        described = datasets.describe(kept[0][0], anon) if remote else datasets.describe(kept[0][0])
        listed = ", ".join(choices[1:6]) + (
            f" and {len(choices) - 6:,} more" if len(choices) > 6 else ""
        )
        held = plural(len(choices), "TFDS dataset or config", "TFDS datasets or configs")
        notes.append(
            f"{folder_text} holds {held}: {folder_spec} is open; choose another ({listed}) on"
            " the Overview page."
        )
    found = described.folder
    if found is None or not found.splits:
        if split is not None:
            if remote:
                return _colon_object(spec, root, anon, folder_text, split)
            raise InputError(
                f"{folder_text} is not a TFDS dataset folder or a TFX ExampleGen output: it has"
                f" no split {split!r}."
            )
        return None
    what = "TFDS dataset" if found.tfds is not None else "TFX ExampleGen output"
    if split is None:
        split = default_split(found)
        others = [s.name for s in found.splits if s.name != split]
        if others:
            notes.append(
                f"{folder_spec} is a {what} with {plural(len(found.splits), 'split')}: {split}"
                f" is open; choose {' or '.join(others[:3])}"
                f"{' or another' if len(others) > 3 else ''} on the Overview page."
            )
    assert split is not None
    try:
        chosen = found.split(split)
    except KeyError as exc:
        raise InputError(f"{folder_spec}: {exc.args[0]}.") from exc
    files = [f if is_url(f) else os.path.realpath(f) for f in chosen.files]
    inside = [f for f in files if relative_inside(root, f) is not None]
    if not files:
        declared = len(chosen.shards)
        raise InputError(
            f"{folder_spec}: split {split!r} of {found.name} has no shard file"
            + (f" ({plural(declared, 'declared shard')}, all missing)." if declared else ".")
        )
    if not inside:
        raise InputError(f"Refused: {folder_spec}:{split}: every shard lies outside the root.")
    if len(inside) < len(files):
        notes.append(
            f"{folder_spec}:{split}: {plural(len(files) - len(inside), 'shard')} outside the"
            " root left out."
        )
    real_root = shown(root).rstrip("/") + "/" if remote else os.path.realpath(root) + os.sep
    notes.extend(f"{folder_spec}: {note.replace(real_root, '')}." for note in found.notes)
    return _Resolved(inside, spec, found, split, folder_spec, choices)


def _colon_object(spec: str, root: str, anon: bool, folder_text: str, split: str) -> _Resolved:
    """``FOLDER:SPLIT`` under a URL root whose folder is no dataset: the object of that
    name, if there is one (a name may hold a colon); else the same message as a local
    folder's."""
    try:
        files, label = _resolve_remote(spec, root, anon)
    except InputError as exc:
        raise InputError(
            f"{folder_text} is not a TFDS dataset folder or a TFX ExampleGen output: it has"
            f" no split {split!r}."
        ) from exc
    return _Resolved(files, label)


# -- the inflate limit --------------------------------------------------------------------


def inflate_offer() -> InflateOffer | None:
    """The higher inflate limit offered for the last source refused by it, if any."""
    return state.inflate_offer()


def accept_inflate_offer() -> None:
    """Allow the offered limit for its source in this session, and open it again."""
    offer = inflate_offer()
    state.set_inflate_offer(None)
    if offer is None or offer.raise_to is None:
        return
    state.set_inflate_cap(offer.spec, offer.raise_to)
    try:
        open_source(offer.spec)
    except InputError as exc:
        state.flash(str(exc), "error")
        return
    state.set_source(offer.spec)


def dismiss_inflate_offer() -> None:
    state.set_inflate_offer(None)


def _refused(spec: str, label: str, root: str, files: list[str], exc: LimitError) -> InputError:
    """The message for a source refused by the inflate limit; the offer is kept for the
    sidebar."""
    text = str(exc)
    failing = next((f for f in files if text.startswith(f + ":")), files[0])
    name = label if state.is_upload(spec) else relative_to_root(root, failing)
    text = text[len(failing) + 1 :].strip() if text.startswith(failing + ":") else text
    cache = default_cache_dir()
    sizes = {}
    for f in files:
        with contextlib.suppress(OSError):
            sizes[f] = os.stat(f).st_size
    limit = state.inflate_caps().get(spec) or inflate_limit(sizes.get(failing, 0), cache)[0]
    floor = max((inflate_limit(n, cache)[0] for n in sizes.values()), default=limit)
    room = cache_room(cache)
    wanted = max(limit * _RAISE_FACTOR, floor)
    raise_to = None if room is not None and room <= limit else min(wanted, room or wanted)
    state.set_inflate_offer(InflateOffer(spec, label, name, limit, raise_to))
    then = (
        f" Allow up to {format_bytes(raise_to)} with the button in the sidebar if you trust"
        " this file."
        if raise_to is not None
        else " The cache disk has no room to allow more."
    )
    where = label if name == label else f"{label}: {name}"
    return InputError(f"{where}: not opened: {text}.{then}")


def open_source(spec: str, root: str | None = None) -> Source:
    """Open ``spec`` (path, folder, glob or shard pattern relative to the root, or an upload
    of this session). Raises :class:`~browser_app.errors.InputError` with a message for the
    person, or :class:`codec.RemoteError` when a remote source cannot be reached (after
    retries) or changed while it was being opened."""
    root = root or state.app_args().root
    anon = state.anon()
    got = _resolve_full(spec, root, anon)
    files, label = got.files, got.label
    for p in files:
        if not is_url(p) and os.path.isdir(p):
            raise InputError(f"{relative_to_root(root, p)} is a folder, not a file.")
    try:
        ds = services.open_dataset(tuple(files), state.inflate_caps().get(spec), anon)
    except MissingExtraError as exc:
        raise InputError(f"{exc}.") from exc
    except RemoteError:
        raise
    except PermissionError as exc:
        if any(is_url(p) for p in files):
            raise InputError(_denied(label)) from exc
        raise InputError(f"{label}: permission denied.") from exc
    except FileNotFoundError as exc:
        if any(is_url(p) for p in files):
            raise InputError(f"Not found: {label}: {exc.strerror or 'no such object'}.") from exc
        raise InputError(f"{label}: cannot be opened: {exc.strerror or exc}.") from exc
    except IsADirectoryError as exc:
        raise InputError(f"{label} is a folder, not a file.") from exc
    except OSError as exc:
        raise InputError(f"{label}: cannot be opened: {exc.strerror or exc}.") from exc
    except LimitError as exc:
        raise _refused(spec, label, root, files, exc) from exc
    except codec.CodecError as exc:
        raise InputError(f"{label}: {exc}") from exc
    offer = inflate_offer()
    if offer is not None and offer.spec == spec:
        dismiss_inflate_offer()
    return Source(
        spec=spec,
        label=label,
        root=root,
        paths=tuple(files),
        dataset=ds,
        anon=anon,
        split_folder=got.folder,
        split=got.split,
        folder_spec=got.folder_spec,
        choices=got.choices,
        skipped=got.skipped,
    )


def trouble() -> RemoteTrouble | None:
    """The trouble met by the session's source, while it is still the one open."""
    value = state.remote_trouble()
    if value is not None and value.spec == state.source_spec():
        return value
    return None


def as_trouble(spec: str, exc: RemoteError) -> RemoteTrouble:
    """``exc``, met opening or reading ``spec``, as trouble to show."""
    return RemoteTrouble(spec, str(exc), isinstance(exc, ObjectChangedError))


def note_trouble(spec: str, exc: RemoteError) -> RemoteTrouble:
    """Keep ``exc``, met opening ``spec``: the source is not tried again, and the trouble is
    shown (with what to do), until the person tries again or reopens."""
    found = as_trouble(spec, exc)
    state.set_remote_trouble(found)
    return found


def try_again() -> None:
    """Forget the trouble: the next run opens and reads the source again."""
    state.set_remote_trouble(None)


def reopen(src: Source | None = None) -> None:
    """Open the session's source again as it is now on the server: the shared reader and
    everything cached about the old version dropped (:func:`services.forget_source`)."""
    spec = state.source_spec()
    state.set_remote_trouble(None)
    if spec is None:
        return
    root, anon = state.app_args().root, state.anon()
    if src is not None and src.spec == spec:
        files, label = list(src.paths), src.label
    else:
        try:
            files, label = _resolve(spec, root, anon)
        except (InputError, RemoteError):
            services.remote_files.clear()  # opening again lists again, and says what is wrong
            return
    services.forget_source(root, spec, tuple(files), anon, state.inflate_caps().get(spec))
    state.set_source(spec, state.record())
    state.flash(f"{label}: opened again as it is now on the server.", "info")


def current_source() -> Source | None:
    """The source of this session (see :func:`state.source_spec`), or None.

    An error opening it is shown once, and the session falls back to no source. A remote
    one that cannot be reached stays the session's source, with the trouble kept
    (:func:`trouble`) and not tried again until the person asks."""
    _sweep_once()
    spec = state.source_spec()
    if not spec:
        return None
    if trouble() is not None:
        return None
    before = inflate_offer()
    try:
        return open_source(spec)
    except RemoteError as exc:
        note_trouble(spec, exc)
        return None
    except InputError as exc:
        state.flash(str(exc), "error")
        state.forget_recent(spec)
        state.clear_source()
        if inflate_offer() not in (None, before):
            st.rerun()  # the sidebar, drawn before this, shows the offer
        return None


# -- uploads ------------------------------------------------------------------------------


def upload_dir() -> Path:
    """The private folder uploads are kept in: ``<cache>/uploads``, made with mode 0700.
    Raises :class:`InputError` when it is not a folder of the person running the app, or
    other users can write to it (they could put files there, or replace ours)."""
    folder = default_cache_dir() / "uploads"
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
        st_ = os.lstat(folder)
    except OSError as exc:
        raise InputError(f"The uploads folder {os_error_message(exc, folder)}.") from exc
    fix = "remove it, or set TFRECORD_BROWSER_CACHE to a folder of your own"
    if not stat.S_ISDIR(st_.st_mode):
        raise InputError(f"The uploads folder {folder} is not a folder (a link or a file): {fix}.")
    if hasattr(os, "getuid") and st_.st_uid != os.getuid():
        raise InputError(
            f"The uploads folder {folder} belongs to another user (id {st_.st_uid}); uploads"
            f" are not stored there: {fix}."
        )
    if st_.st_mode & 0o022:
        raise InputError(
            f"The uploads folder {folder} can be written by other users (mode"
            f" {stat.S_IMODE(st_.st_mode):o}); uploads are not stored there: {fix}, or run"
            f" chmod 700 on it."
        )
    if st_.st_mode & 0o077:
        with contextlib.suppress(OSError):
            os.chmod(folder, 0o700)
    return folder


def sweep_uploads(folder: Path | None = None, max_age: float = UPLOAD_MAX_AGE) -> int:
    """Remove uploads older than ``max_age`` seconds; return how many were removed."""
    folder = folder if folder is not None else upload_dir()
    cutoff = time.time() - max_age
    removed = 0
    with contextlib.suppress(OSError), os.scandir(folder) as it:
        for e in it:
            with contextlib.suppress(OSError):
                if e.name.startswith("up-") and e.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(e.path)
                    removed += 1
    return removed


_swept = False


def _sweep_once() -> None:
    """Sweep old uploads once per server process (the app's start)."""
    global _swept
    if not _swept:
        _swept = True
        with contextlib.suppress(InputError):
            sweep_uploads()


def _remove(paths: list[str]) -> None:
    """Remove a session's uploads (called when its state is dropped; may run on any thread)."""
    for p in paths:
        with contextlib.suppress(OSError):
            os.unlink(p)


def upload_name(name: str) -> str:
    """An uploaded file's name as the app shows it: its last part only, without control
    characters, and at most :data:`UPLOAD_NAME_MAX` characters (the middle cut, the end with
    the extension kept)."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip() or "upload"
    if len(base) > UPLOAD_NAME_MAX:
        tail = base[-24:]
        base = base[: UPLOAD_NAME_MAX - len(tail) - 1] + "…" + tail
    return base


def store_upload(name: str, chunks: BinaryIO) -> str:
    """Copy an uploaded file into the private uploads folder (then memory-mapped like any
    other file, never kept in session memory) and register it; return its spec. Raises
    :class:`InputError` when it cannot be stored."""
    shown = upload_name(name)
    folder = upload_dir()
    sweep_uploads(folder)
    try:
        fd, path = tempfile.mkstemp(dir=folder, prefix="up-", suffix=".tfrecord")
    except OSError as exc:
        raise InputError(f"{shown}: cannot be stored: {os_error_message(exc, '')}.") from exc
    try:
        with os.fdopen(fd, "wb") as out:
            while True:
                chunk = chunks.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise InputError(f"{shown}: cannot be stored: {os_error_message(exc, '')}.") from exc
    spec, replaced = state.add_upload(shown, path, _remove)
    if replaced:
        _remove([replaced])
    return spec
