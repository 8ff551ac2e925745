"""End to end, editing: the real server on a temporary copy of the sample, in headless
Chromium. Edit a label in the table, replace a picture by uploading one, delete a record,
export, reopen the export in the app and see the changes there.

Uses Debian's chromium (``/usr/bin/chromium``). Without it the test is skipped locally and
FAILS in CI (``CI=true``). Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    browser_fixture,
    go_to_record,
    no_errors,
    open_cell_editor,
    serve,
    settled,
    shot,
)

import codec
from browser_app.sample_data import write_sample
from codec import example as ex

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("edit") / "root"
    write_sample(r)
    return r


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, root: Path) -> Iterator[str]:
    """``python -m browser_app view --root ROOT`` as a person starts it, with its own cache
    folder (where the edit journal lives)."""
    yield from serve(tmp_path_factory, [str(root / "detection.tfrecord"), "--root", str(root)])


browser = browser_fixture()


def _editor_grid(page: Any) -> Any:
    return page.locator(".st-key-tfb-editor-features [data-testid='stDataFrame']").first


def _type_into_cell(page: Any, row: int, col: int, text: str) -> None:
    """Open cell (col, row) of the record's editor table, type ``text`` and press Enter."""
    editor = open_cell_editor(page, lambda: _editor_grid(page), row, col)
    editor.fill(text)
    editor.press("Enter")


def _mode(page: Any, name: str) -> None:
    """Switch the record detail between View and Edit."""
    page.get_by_test_id("stMain").locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile(f"{name}$")
    ).first.click()


def _red_png() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (160, 112), (220, 20, 20)).save(out, format="PNG")
    return out.getvalue()


def test_edit_replace_delete_export_and_reopen(
    server: str, browser: Any, root: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1440, "height": 2000})
    page.goto(server + "/?file=detection.tfrecord&record=0&size=10")
    expect(page.get_by_role("heading", name="Record 0")).to_be_visible(timeout=30_000)

    # Edit view of record 0.
    _mode(page, "Edit")
    expect(page.get_by_text("Editing Record 0")).to_be_visible(timeout=15_000)
    grid = _editor_grid(page)
    expect(grid).to_be_visible()
    # Row 10 is image/object/class/label; column 4 is "values" (index hidden; col 0 = feature).
    label_row = 10
    expect(grid.get_by_test_id(f"glide-cell-0-{label_row}")).to_have_text(
        "image/object/class/label"
    )
    _type_into_cell(page, label_row, 3, "3")
    expect(page.get_by_text("1 pending change").first).to_be_visible(timeout=15_000)
    expect(grid.get_by_test_id(f"glide-cell-3-{label_row}")).to_have_text("3", timeout=15_000)
    # A value that does not fit is refused, with the reason beside it.
    _type_into_cell(page, label_row - 1, 3, "hex:zz")
    expect(page.get_by_text("bad hex").first).to_be_visible(timeout=15_000)
    no_errors(page)
    shot(page, "e2e-edit-table.png")

    # Replace the picture by uploading one.
    picture = tmp_path / "red.png"
    picture.write_bytes(_red_png())
    page.locator(".st-key-tfb-editor-pictures input[type='file']").first.set_input_files(
        str(picture)
    )
    # The picture has boxes: asked what becomes of them first.
    page.get_by_role("button", name="Keep the boxes").click(timeout=15_000)
    expect(page.get_by_text("Replaced picture image/encoded[0]").first).to_be_visible(
        timeout=15_000
    )
    # The uploader is drawn again for the new picture.
    expect(page.get_by_text("Replace image/encoded[0] (PNG").first).to_be_visible(timeout=15_000)
    settled(page)
    # A file that is not a picture: a message, nothing changed.
    junk = tmp_path / "notes.png"
    junk.write_text("not a picture")
    page.locator(".st-key-tfb-editor-pictures input[type='file']").first.set_input_files(str(junk))
    expect(page.get_by_text("not a decodable image").first).to_be_visible(timeout=15_000)
    no_errors(page)
    shot(page, "e2e-edit-picture.png")

    # Delete record 1.
    go_to_record(page, 1)
    expect(page.get_by_text("Editing Record 1")).to_be_visible(timeout=30_000)
    settled(page)  # the runs that follow the jump are over: the button clicked is the one shown
    page.get_by_role("button", name="Delete record").click()
    expect(page.get_by_text("Record 1 is deleted").first).to_be_visible(timeout=15_000)

    # The records table shows both: edited and deleted, and a review mark by keyboard.
    _mode(page, "View")
    table = page.get_by_test_id("stDataFrame").first
    expect(table.get_by_test_id("glide-cell-2-0")).to_contain_text("edited", timeout=15_000)
    expect(table.get_by_test_id("glide-cell-2-1")).to_contain_text("deleted")
    # Keys typed into a text box are text; elsewhere F is the Flagged button's shortcut (a
    # key pressed while the page runs may be lost).
    settled(page)
    page.get_by_role("heading", name="Record 1").click()
    page.keyboard.press("f")
    expect(page.get_by_text("1 review mark").first).to_be_visible(timeout=15_000)
    expect(page.get_by_text("Review · ⚑ Flagged").first).to_be_visible()
    no_errors(page)
    shot(page, "e2e-edit-records.png")

    # The Changes panel lists them, with before and after.
    page.get_by_role("link", name="Changes", exact=True).click()
    expect(page.get_by_text("3 pending changes").first).to_be_visible(timeout=15_000)
    no_errors(page)
    shot(page, "e2e-edit-changes.png")

    # Export.
    page.get_by_role("link", name="Export", exact=True).click()
    dest = page.get_by_label("Destination (inside the root folder)", exact=True)
    expect(dest).to_have_value("exports/detection-edited.tfrecord", timeout=15_000)
    page.get_by_role("button", name="Export", exact=True).click()
    expect(page.get_by_text("Export done").first).to_be_visible(timeout=30_000)
    expect(page.get_by_text("verified").first).to_be_visible()
    no_errors(page)
    shot(page, "e2e-edit-export.png")
    out = root / "exports" / "detection-edited.tfrecord"
    with codec.TFRecordFile(str(out)) as f:
        assert len(f) == 59
        first = ex.decode(f[0])
        assert first.features["image/object/class/label"].values == [3]
        assert first.features["image/encoded"].values == [_red_png()]
    with codec.TFRecordFile(str(root / "detection.tfrecord")) as f:
        assert len(f) == 60  # the source is untouched

    # Reopen the export in the app: the changes are in it.
    page.get_by_role("button", name="Open it here").click()
    expect(page.get_by_text("detection-edited.tfrecord").first).to_be_visible(timeout=30_000)
    table = page.get_by_test_id("stDataFrame").first
    expect(table.get_by_test_id("glide-cell-2-0")).to_have_text("✓ intact", timeout=15_000)
    expect(page.get_by_text("59 records").first).to_be_visible()
    expect(page.get_by_role("heading", name="Record 0")).to_be_visible()
    no_errors(page)
    shot(page, "e2e-edit-reopened.png")
    page.close()
