"""Root confinement: the app opens files under one root (``--root``) and nowhere else.

Every path a person types, picks, or puts in a URL goes through :func:`resolve_inside` (or
:func:`expand_inside` for globs and shard patterns). A path is refused when it contains a
``..`` component, when it is outside the root, or when a symlink leads out of it; all of
these are checked on the *real* path (``os.path.realpath``), so a link inside the root that
points elsewhere is caught as well.

The root is a local folder or a URL prefix (``s3://bucket/data``, ``gs://b``,
``https://host/datasets``):

- Under a **URL root**, specs are URLs inside it (same protocol and bucket, the path under
  the root's by whole components: :func:`codec.locations.url_inside`) or paths relative to
  it (``train-*-of-00016``, ``val/part@4``); patterns and folder prefixes are expanded by
  listing the bucket, and every object they name must lie inside the root. Local paths are
  refused. The picker lists the root with the same listing (:func:`list_tfrecords`).
- Under a **local root** (also the default one: the current folder, or the folder of the
  paths given), URLs are refused, with a message saying to start the app with
  ``--root s3://bucket/prefix``: a URL would let anyone who reaches the app read whatever
  the server's credentials can (every bucket, the cloud metadata server over ``http://``),
  which a root folder is there to prevent. ``file://`` URLs are local paths.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import codec
from browser_app.errors import PathRefused
from codec.locations import (
    filesystem,
    is_url,
    join_url,
    local_path,
    parent_url,
    protocol,
    remote_errors,
    shown,
    url_inside,
)
from codec.settings import default_cache_dir

__all__ = [
    "PathRefused",
    "RootEntry",
    "expand_inside",
    "is_pattern",
    "is_url_root",
    "list_tfrecords",
    "relative_inside",
    "relative_to_root",
    "resolve_inside",
    "url_root_for",
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
    text = local_path(path.strip())
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
    ``root``. Raises :class:`PathRefused` otherwise. The path need not exist.

    Under a URL root, the URL of ``path`` (a URL, or a path relative to the root)."""
    text = _check_text(os.fspath(path))
    if is_url_root(root) or is_url(text):
        return _url_inside_root(os.fspath(root), text)
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
    ``root`` (``"."`` for the root itself), else ``None``. A URL under a URL root is
    written relative to it the same way (never one with a query string: a signed URL stays
    whole, and is never shortened into a form that drops its signature)."""
    if is_url_root(root) or is_url(os.fspath(path)):
        return _url_relative(os.fspath(root), os.fspath(path))
    real_root = _real_root(root)
    real = os.path.realpath(os.fspath(path))
    if not _inside(real, real_root):
        return None
    return os.path.relpath(real, real_root).replace(os.sep, "/")


def relative_to_root(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """``path`` written relative to ``root`` with ``/`` separators (for URLs and labels).

    ``"."`` for the root itself; the real path when it is not inside the root (a URL as it
    may be shown: :func:`codec.locations.shown`)."""
    rel = relative_inside(root, path)
    if rel is not None:
        return rel
    text = os.fspath(path)
    return shown(text) if is_url(text) else os.path.realpath(text)


def is_pattern(spec: str) -> bool:
    """Whether ``spec`` is a glob (``*``, ``?``, ``[``) or ``name@N`` shard shorthand (an
    ``http(s)://`` URL's query string is not a pattern)."""
    return bool(_PATTERN.search(_without_query(spec)))


def is_url_root(root: str | os.PathLike[str]) -> bool:
    """Whether ``root`` is a URL prefix rather than a local folder."""
    return is_url(os.fspath(root))


def _without_query(spec: str) -> str:
    if protocol(spec) in ("http", "https"):
        return spec.split("?", 1)[0].split("#", 1)[0]
    return spec


# -- URL roots ------------------------------------------------------------------------------


def _url_of(root: str, text: str) -> str:
    """The URL ``text`` names under the URL root ``root``: itself when a URL, else the root
    joined with it (``./`` parts dropped). A local path is refused."""
    if is_url(text):
        return text
    if os.path.isabs(os.path.expanduser(text)) or re.match(r"^[A-Za-z]:[\\/]", text):
        raise PathRefused(
            f"{text}: a local path; the root is {shown(root)}, so only objects under it open"
        )
    parts = [p for p in re.split(r"[\\/]+", text) if p not in ("", ".")]
    return join_url(root, *parts) if parts else root.rstrip("/")


def _refuse_url(root: str, url: str) -> PathRefused:
    """The refusal of ``url`` under ``root``: outside a URL root, or under a local one."""
    if is_url(root):
        return PathRefused(f"{shown(url)}: outside the root {shown(root)}")
    scheme = protocol(url) or "s3"
    return PathRefused(
        f"{shown(url)}: URLs are not opened under the local root folder {root}; to browse"
        f" remote data, start the app with --root {scheme}://bucket/prefix (the part of the"
        " bucket it may open)"
    )


def _url_inside_root(root: str, text: str) -> str:
    if not is_url(root):
        raise _refuse_url(root, text)
    url = _url_of(root, text)
    if not url_inside(_without_query(url), root):
        raise _refuse_url(root, url)
    return url


def _url_relative(root: str, url: str) -> str | None:
    if not (is_url(root) and is_url(url)) or not url_inside(url, root):
        return None
    if _without_query(url) != url or "?" in url or "#" in url:
        return None
    base = re.sub("(?<!:)/+", "/", root.rstrip("/"))
    full = re.sub("(?<!:)/+", "/", url.rstrip("/"))
    if full == base:
        return "."
    if full.startswith(base + "/"):
        return full[len(base) + 1 :]
    return None


def _pattern_head(url: str) -> str:
    """The fixed folder of a URL pattern (before its first wildcard; a ``name@N``'s
    folder), which must itself lie inside the root."""
    bare = _without_query(url)
    if not is_pattern(bare):
        return bare
    fixed = re.split(r"[*?\[]", bare, maxsplit=1)[0]
    if fixed != bare:
        return parent_url(fixed) if not fixed.endswith("/") else fixed.rstrip("/")
    return parent_url(bare)


def url_root_for(specs: list[str]) -> str:
    """The root for URL ``specs`` given without ``--root``: the deepest folder prefix that
    holds them all (like the local default, the folder of the paths given). Raises
    :class:`PathRefused` when they do not share a protocol and bucket, or mix URLs with
    local paths."""
    if not specs or not all(is_url(s) for s in specs):
        raise PathRefused(
            "local paths and URLs cannot be opened together without --root; give --root (a"
            " folder, or a URL prefix such as s3://bucket/data)"
        )
    heads = [_pattern_head(s) if is_pattern(s) else parent_url(_without_query(s)) for s in specs]
    parts = [h.split("/") for h in heads]
    common: list[str] = []
    for column in zip(*parts):
        if len(set(column)) != 1:
            break
        common.append(column[0])
    root = "/".join(common)
    if len(common) < 3 or not is_url(root + "/x"):  # "s3:", "", "bucket"
        raise PathRefused(
            f"{', '.join(shown(s) for s in specs[:3])}: not in one bucket; give --root (a URL"
            " prefix they all lie under)"
        )
    return root


def _expand_url(root: str, text: str, anon: bool) -> list[str]:
    url = _url_inside_root(root, text)
    if not url_inside(_pattern_head(url), root):
        raise _refuse_url(root, url)
    found = codec.expand_paths([url], anon=anon)
    inside = [u for u in found if url_inside(_without_query(u), root)]
    if not inside:
        raise PathRefused(f"{shown(url)}: every object it names lies outside the root")
    return inside


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
    anon: bool = False,
) -> list[str]:
    """Files named by ``spec`` (a path, folder, glob, ``train-*-of-00010`` or ``name@N``),
    every one of them confined to ``root``. Under a URL root: the objects' URLs, listed
    without credentials when ``anon``.

    A file that a folder, glob or shard pattern matches but whose symlink leads outside the
    root is left out, and ``on_skip`` gets one note naming those left out (the links, never
    where they lead). Raises :class:`PathRefused` for a spec outside the root, or when every
    file it matches leads outside; ``FileNotFoundError`` (with a message for the person)
    when nothing matches."""
    text = _check_text(spec)
    if is_url_root(root) or is_url(text):
        return _expand_url(os.fspath(root), text, anon)
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


def _wanted(rel: str, name: str, q: str) -> bool:
    """Whether the file ``rel`` (named ``name``) matches the picker's query ``q`` (lower
    case: a substring of the path, or a glob of the path or the name)."""
    if not q:
        return True
    low = rel.lower()
    if any(c in q for c in "*?["):
        return fnmatch.fnmatch(low, q) or fnmatch.fnmatch(name.lower(), q)
    return q in low


def list_tfrecords(
    root: str | os.PathLike[str],
    query: str = "",
    *,
    limit: int = 500,
    max_depth: int = 6,
    max_visits: int = 50_000,
    anon: bool = False,
) -> tuple[list[RootEntry], bool]:
    """TFRecord-looking files under ``root`` (by name, see :func:`codec.looks_like_tfrecord`),
    sorted by path, filtered by ``query`` (a substring, or a glob when it has wildcards).

    Returns ``(entries, truncated)``: at most ``limit`` entries, and at most ``max_visits``
    directory entries looked at (a huge tree is cut short, not walked for minutes). Symlinks
    leading outside the root are left out; hidden folders, tool folders and the app's own
    cache folder are not walked. A URL root is listed folder by folder with its file
    system's listing (``anon``: without credentials); a listing that fails raises
    :class:`codec.RemoteError` (or ``PermissionError``)."""
    if is_url_root(root):
        return _list_url(os.fspath(root), query.strip().lower(), limit, max_depth, max_visits, anon)
    real_root = _real_root(root)
    q = query.strip().lower()
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
        if not _wanted(rel, e.name, q):
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


def _mtime(info: dict[str, object]) -> float:
    value = info.get("LastModified") or info.get("mtime") or info.get("updated")
    stamp = getattr(value, "timestamp", None)
    if callable(stamp):
        return float(stamp())
    return float(value) if isinstance(value, (int, float)) else 0.0


def _list_url(
    root: str, q: str, limit: int, max_depth: int, max_visits: int, anon: bool
) -> tuple[list[RootEntry], bool]:
    """:func:`list_tfrecords` of a URL root: one listing per folder, breadth first."""
    fs, base = filesystem(root, anon=anon)
    base = base.rstrip("/")
    out: list[RootEntry] = []
    visited = 0
    queue: list[tuple[str, int]] = [(base, 0)]
    while queue:
        folder, depth = queue.pop(0)
        with remote_errors(root, "listing the root"):
            with contextlib.suppress(AttributeError):
                fs.invalidate_cache(folder)  # a listing kept by the file system is stale
            listing = fs.ls(folder, detail=True)
        for info in sorted(listing, key=lambda i: str(i.get("name", ""))):
            name_path = str(info.get("name", "")).rstrip("/")
            name = name_path.rsplit("/", 1)[-1]
            visited += 1
            if visited > max_visits:
                out.sort(key=lambda r: r.rel)
                return out, True
            if not name or name.startswith(".") or not name_path.startswith(base + "/"):
                continue
            rel = name_path[len(base) + 1 :]
            if info.get("type") == "directory":
                if depth < max_depth and name not in _SKIP_DIRS:
                    queue.append((name_path, depth + 1))
                continue
            if not codec.looks_like_tfrecord(name) or not _wanted(rel, name, q):
                continue
            out.append(RootEntry(rel, int(info.get("size") or 0), _mtime(info)))
            if len(out) >= limit:
                out.sort(key=lambda r: r.rel)
                return out, True
    out.sort(key=lambda r: r.rel)
    return out, False
