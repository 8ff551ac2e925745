"""SQL: ask the records anything SQL can say, over the dataset's columnar index
(:mod:`codec.columns_index`, queried read-only by :mod:`codec.sql`). The table is
``records``: one row per record, its facts and its scalar and short-list features. A result
with a ``record`` column links each row to its record and can become the selection."""

from __future__ import annotations

from browser_app.ui import frame
from browser_app.ui.widgets import sql_box


def render() -> None:
    src = frame.start("SQL")
    if src is None:
        return
    sql_box.render(src)


if __name__ == "__main__":
    render()
