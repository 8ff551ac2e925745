"""The app as of an earlier commit, for the app benchmark's "before" column.

:func:`checkout` makes a ``git worktree`` of a revision in a temporary folder (the shared
repository's branches and index are not touched) and removes it on the way out; the app is
then started from that folder with ``PYTHONPATH`` pointing at it, so it imports its own code.

:func:`default_revision` is the commit before the gallery drawn in the browser landed: the
parent of the first commit that added a script under ``browser_app/`` naming the gallery
element's class (``tfb-gallery``); while no such commit exists, ``HEAD``.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# What marks the gallery element's arrival: its script, naming its root's class.
ELEMENT_MARK = "tfb-gallery"
ELEMENT_FILES = ("browser_app/*.js", "browser_app/*.mjs")


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def resolve(rev: str) -> str:
    """The full commit hash of ``rev``; raises ``ValueError`` when git does not know it."""
    try:
        return _git("rev-parse", "--verify", "--quiet", rev + "^{commit}")
    except subprocess.CalledProcessError as exc:
        raise ValueError(f"no commit {rev!r} in {REPO}") from exc


def describe(rev: str) -> str:
    """``abc1234 subject`` (cut to a line) of the commit ``rev``."""
    return _git("log", "-1", "--format=%h %s", rev)[:72]


def default_revision() -> str:
    """The commit before the gallery element landed, or ``HEAD`` while it has not."""
    found = _git("log", "--reverse", "--format=%H", "-S", ELEMENT_MARK, "--", *ELEMENT_FILES)
    first = found.split()[0] if found else ""
    return f"{first}~1" if first else "HEAD"


@contextlib.contextmanager
def checkout(rev: str) -> Iterator[Path]:
    """A detached worktree of ``rev`` in a temporary folder; removed on the way out."""
    commit = resolve(rev)
    tmp = Path(tempfile.mkdtemp(prefix="tfb-before-"))
    folder = tmp / "app"
    _git("worktree", "add", "--detach", "--quiet", str(folder), commit)
    try:
        yield folder
    finally:
        try:
            _git("worktree", "remove", "--force", str(folder))
        except subprocess.CalledProcessError as exc:
            print(f"could not remove the worktree {folder}: {exc.stderr}", file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
        with contextlib.suppress(subprocess.CalledProcessError):
            _git("worktree", "prune")
