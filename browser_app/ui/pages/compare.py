"""Compare: what changed between the open dataset (A) and another (B) — another split of the
same dataset folder, or any file, folder or split under the app's root. Per feature its
presence, type and TFDV's distances; the classes on one side only; and, joined by a key
feature, the records added, removed, changed (which features) and unchanged. Every figure
links to the records behind it (:mod:`browser_app.ui.widgets.compare`)."""

from __future__ import annotations

from browser_app.ui import frame
from browser_app.ui.widgets import compare


def render() -> None:
    src = frame.start("Compare")
    if src is None:
        return
    compare.compare_page(src)


if __name__ == "__main__":
    render()
