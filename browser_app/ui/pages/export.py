"""Export: write the open source, with its pending edits applied, to TFRecord, JSON Lines,
CSV, Parquet, JSON or image files inside the root folder.

Every export is atomic (temporary files beside the destination, renamed into place only
after they were verified). The source file is never touched, except by "Write the edits into
the source file", which asks for an explicit confirmation and keeps the old file as a backup.
"""

from __future__ import annotations

import streamlit as st

from browser_app.ui import frame
from browser_app.ui.widgets import export_form, export_run
from browser_app.ui.widgets import journal as shared_journal
from browser_app.view import plural


def render() -> None:
    src = frame.start("Export", needs_records=False)
    if src is None:
        return
    j = shared_journal.journal(src)
    if j is None:
        st.caption("The source is exported as it is (its pending edits cannot be applied).")
        pending = 0
    else:
        pending = j.pending
        st.caption(
            f"{plural(pending, 'pending change')} will be applied."
            if pending
            else "No pending changes: the records are exported as they are."
        )
    export_run.cancelled(src)
    export_form.form(src, j, pending)
    export_run.report(src)
    export_run.replace_section(src, j)


if __name__ == "__main__":
    render()
