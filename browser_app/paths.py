"""Root confinement: the app opens files under one folder (``--root``) and nowhere else.

Every path a person types, picks, or puts in a URL goes through :func:`resolve_inside` (or
:func:`expand_inside` for globs and shard patterns). A path is refused when it contains a
``..`` component, when it is outside the root, or when a symlink leads out of it; all of
these are checked on the *real* path (``os.path.realpath``), so a link inside the root that
points elsewhere is caught as well.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import codec
from browser_app.errors import PathRefused
from codec.cache import default_cache_dir

__all__ = [
    "PathRefused",
    "RootEntry",
    "expand_inside",
    "is_pattern",
    "list_tfrecords",
    "relative_inside",
    "relative_to_root",
    "resolve_inside",
]

_PATTERN = re.compile(r"[*?\[]|@\d+$")
_SKIP_DIRS = {".git", "__pycache__", "node_modules", ".venv", "venv", ".mypy_cache", ".cache"}


def _cache_real() -> str:
    """The real path of the app's cache folder (indexes, inflated copies, journals,
    uploads): never listed or expanded as data, even when it lies under the root."""
    return os.path.realpath(default_cache_dir())


def _in_cache(real: str, cache: str) -> bool:
    return real == cache or real.startswith(cache.rstrip(os.sep) + os.sep)


def _real_root(root: str | os.PathLike[str]) -> str:
    return os.path.realpath(os.fspath(root))


def _inside(real: str, real_root: str) -> bool:
    try:
        return os.path.commonpath([real, real_root]) == real_root
    except ValueError:  # different drives, or a mix of absolute and relative
        return False


def _check_text(path: str) -> str:
    text = path.strip()
    if not text:
        raise PathRefused("no path given")
    if "\x00" in text:
        raise PathRefused("a path cannot contain a NUL character")
    parts = re.split(r"[\\/]+", text)
    if ".." in parts:
        raise PathRefused(f"{text}: paths with '..' are not opened; give a path inside the root")
    return text


def resolve_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """The real absolute path of ``path`` (absolute, or relative to ``root``), if it lies in
    ``root``. Raises :class:`PathRefused` otherwise. The path need not exist."""
    text = _check_text(os.fspath(path))
    real_root = _real_root(root)
    expanded = os.path.expanduser(text)
    candidate = expanded if os.path.isabs(expanded) else os.path.join(real_root, expanded)
    real = os.path.realpath(candidate)
    if not _inside(real, real_root):
        if os.path.islink(candidate) or real != os.path.normpath(os.path.abspath(candidate)):
            raise PathRefused(f"{text}: a symlink leads outside the root folder {real_root}")
        raise PathRefused(f"{text}: outside the root folder {real_root}")
    return real


def relative_inside(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str | None:
    """``path`` written relative to ``root`` with ``/`` separators when its real path lies in
    ``root`` (``"."`` for the root itself), else ``None``."""
    real_root = _real_root(root)
    real = os.path.realpath(os.fspath(path))
    if not _inside(real, real_root):
        return None
    return os.path.relpath(real, real_root).replace(os.sep, "/")


def relative_to_root(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """``path`` written relative to ``root`` with ``/`` separators (for URLs and labels).

    ``"."`` for the root itself; the real path when it is not inside the root."""
    rel = relative_inside(root, path)
    return rel if rel is not None else os.path.realpath(os.fspath(path))


def is_pattern(spec: str) -> bool:
    """Whether ``spec`` is a glob (``*``, ``?``, ``[``) or ``name@N`` shard shorthand."""
    return bool(_PATTERN.search(spec))


def _shown(path: str, real_root: str) -> str:
    """``path`` as the person sees it: relative to the root, never through a symlink's
    target."""
    rel = os.path.relpath(os.path.abspath(path), real_root).replace(os.sep, "/")
    return os.path.basename(path) if rel.startswith("..") else rel


def expand_inside(
    root: str | os.PathLike[str],
    spec: str,
    *,
    on_skip: Callable[[str], object] | None = None,
) -> list[str]:
    """Files named by ``spec`` (a path, folder, glob, ``train-*-of-00010`` or ``name@N``),
    every one of them confined to ``root``.

    A file that a folder, glob or shard pattern matches but whose symlink leads outside the
    root is left out, and ``on_skip`` gets one note naming those left out (the links, never
    where they lead). Raises :class:`PathRefused` for a spec outside the root, or when every
    file it matches leads outside; ``FileNotFoundError`` (with a message for the person)
    when nothing matches."""
    text = _check_text(spec)
    real_root = _real_root(root)
    expanded = os.path.expanduser(text)
    absolute = expanded if os.path.isabs(expanded) else os.path.join(real_root, expanded)
    # The fixed part of a pattern (before the first wildcard) must itself be inside the root.
    head = absolute
    if is_pattern(text):
        head = os.path.dirname(re.split(r"[*?\[]", absolute, maxsplit=1)[0]) or real_root
    resolve_inside(real_root, head)
    out = []
    skipped = []
    cache = _cache_real()
    # A folder or pattern never takes in the app's own cache files; a path into the cache,
    # given on purpose, still opens.
    own = _in_cache(os.path.realpath(head), cache)
    for f in codec.expand_paths([absolute]):
        real = os.path.realpath(f)
        if not own and _in_cache(real, cache):
            continue
        if _inside(real, real_root):
            out.append(real)
        else:
            skipped.append(_shown(f, real_root))
    if not out and not skipped:
        raise FileNotFoundError(f"{text}: it names only the app's own cache files")
    if skipped and not out:
        raise PathRefused(
            f"{text}: every file it names leads outside the root folder through a symlink"
        )
    if skipped and on_skip is not None:
        few = ", ".join(skipped[:3]) + (
            f" and {len(skipped) - 3:,} more" if len(skipped) > 3 else ""
        )
        what = "1 file" if len(skipped) == 1 else f"{len(skipped):,} files"
        on_skip(f"{text}: left out {what} whose symlink leads outside the root folder: {few}")
    return out


@dataclass(frozen=True)
class RootEntry:
    """A TFRecord-looking file under the root: its path relative to the root and its size."""

    rel: str
    size: int
    mtime: float


def _walk(real_root: str, max_depth: int) -> Iterator[tuple[str, os.DirEntry[str]]]:
    cache = _cache_real()
    stack: list[tuple[str, int]] = [(real_root, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for e in entries:
            if e.name.startswith("."):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if (
                        depth < max_depth
                        and e.name not in _SKIP_DIRS
                        and not _in_cache(os.path.realpath(e.path), cache)
                    ):
                        subdirs.append((e.path, depth + 1))
                    continue
            except OSError:
                continue
            yield folder, e
        stack.extend(reversed(subdirs))


def list_tfrecords(
    root: str | os.PathLike[str],
    query: str = "",
    *,
    limit: int = 500,
    max_depth: int = 6,
    max_visits: int = 50_000,
) -> tuple[list[RootEntry], bool]:
    """TFRecord-looking files under ``root`` (by name, see :func:`codec.looks_like_tfrecord`),
    sorted by path, filtered by ``query`` (a substring, or a glob when it has wildcards).

    Returns ``(entries, truncated)``: at most ``limit`` entries, and at most ``max_visits``
    directory entries looked at (a huge tree is cut short, not walked for minutes). Symlinks
    leading outside the root are left out; hidden folders, tool folders and the app's own
    cache folder are not walked."""
    real_root = _real_root(root)
    q = query.strip().lower()
    glob_q = any(c in q for c in "*?[")
    out: list[RootEntry] = []
    visited = 0
    for _folder, e in _walk(real_root, max_depth):
        visited += 1
        if visited > max_visits:
            out.sort(key=lambda r: r.rel)
            return out, True
        if not codec.looks_like_tfrecord(e.name):
            continue
        rel = os.path.relpath(e.path, real_root).replace(os.sep, "/")
        if q:
            low = rel.lower()
            if glob_q:
                if not (fnmatch.fnmatch(low, q) or fnmatch.fnmatch(e.name.lower(), q)):
                    continue
            elif q not in low:
                continue
        try:
            if e.is_symlink() and not _inside(os.path.realpath(e.path), real_root):
                continue
            st = e.stat()
        except OSError:
            continue
        if not os.path.isfile(e.path):
            continue
        out.append(RootEntry(rel, st.st_size, st.st_mtime))
        if len(out) >= limit:
            return out, True
    out.sort(key=lambda r: r.rel)
    return out, False
