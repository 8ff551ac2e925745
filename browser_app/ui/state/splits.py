"""What a session remembers about the splits of a dataset folder (a TFDS dataset, a TFX
ExampleGen output), by the folder's spec: whether the person asked to count the records of
every split (a large folder is not counted on its own), and which split the Statistics page
compares the open one with.

The split that is open is the source's own spec (``FOLDER:SPLIT``, as the command line takes
it), so the URL carries it as ``?file=FOLDER:SPLIT`` and nothing here goes into the URL.
Import this module directly (``from browser_app.ui.state import splits``).
"""

from __future__ import annotations

from browser_app.ui.state.store import read, write

__all__ = ["ask_counts", "compare_split", "counts_asked", "set_compare_split"]

_COUNTS = "splits:counts"
_COMPARE = "splits:compare"


def counts_asked(folder_spec: str) -> bool:
    """Whether the person asked to count the records of every split of ``folder_spec``."""
    return folder_spec in (read(_COUNTS, set) or set())


def ask_counts(folder_spec: str) -> None:
    """Count the records of every split of ``folder_spec`` from now on in this session."""
    asked = set(read(_COUNTS, set) or set())
    asked.add(folder_spec)
    write(_COUNTS, asked)


def compare_split(folder_spec: str) -> str | None:
    """The split of ``folder_spec`` the Statistics page compares the open one with, if the
    person chose one."""
    value = (read(_COMPARE, dict) or {}).get(folder_spec)
    return value if isinstance(value, str) else None


def set_compare_split(folder_spec: str, split: str | None) -> None:
    """Compare the open split of ``folder_spec`` with ``split`` (None: the default)."""
    chosen = dict(read(_COMPARE, dict) or {})
    if split is None:
        chosen.pop(folder_spec, None)
    else:
        chosen[folder_spec] = split
    write(_COMPARE, chosen)
