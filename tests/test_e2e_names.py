"""Class names end to end, in headless Chromium at 1440×900 (issue 26): a TFDS dataset's
``label.labels.txt`` beside its shards names the gallery's captions and the class facets; a
names file bound in the sidebar's "Class names" section does the same for a shard with no
names beside it, and a facet click by name narrows the gallery. Screenshots go to
``artifacts/names-*.png``."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import browser_fixture, no_errors, serve, settled, shot, until

import codec
from browser_app.generators.tfds import SHAPES, write_image_classification
from codec import example as ex

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHARD = "shapes/3.0.1/shapes-train.tfrecord-00000-of-00002"
BARE = "bare/shard.tfrecord"
TILE = re.compile(r"#(\d+) · ([^\n·]+)")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("names_e2e")
    write_image_classification(base)
    (base / "bare").mkdir()
    shutil.copy(base / SHARD, base / BARE)
    return base


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, ["--root", str(root)])


browser = browser_fixture()


def _labels(root: Path, rel: str) -> list[int]:
    with codec.TFRecordDataset(str(root / rel)) as ds:
        return [int(ex.decode(ds.read(i)).features["label"].values[0]) for i in range(len(ds))]


def _captions(page, want: dict[int, str]) -> dict[int, str]:  # type: ignore[no-untyped-def]
    """The gallery's captions by record (the label after the number), read until they are
    ``want`` or 60 s pass; the last look is returned for the caller to compare."""
    got: dict[int, str] = {}

    def look() -> None:
        texts = page.locator(".st-key-tfb-gallery button").all_inner_texts()
        got.clear()
        for t in texts:
            m = TILE.search(t)
            if m:
                got.setdefault(int(m.group(1)), m.group(2).strip())
        assert got == want

    try:
        until(look, timeout=60, what="the gallery's captions")
    except AssertionError:
        pass
    return got


def _pill(page, text: str):  # type: ignore[no-untyped-def]
    sidebar = page.get_by_test_id("stSidebar")
    return sidebar.locator("[data-testid=stButtonGroup] button", has_text=text)


def test_names_beside_a_tfds_dataset_name_captions_and_facets(server, browser, root) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    labels = _labels(root, SHARD)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(server + f"/gallery?file={SHARD}&size=25")
    expect(page.get_by_text("Selection", exact=True)).to_be_visible(timeout=60_000)
    settled(page)
    no_errors(page)
    want = {i: SHAPES[v] for i, v in enumerate(labels)}
    assert _captions(page, want) == want
    v = labels[0]
    pill = _pill(page, f"{SHAPES[v]} ({v}) · {labels.count(v)}")
    expect(pill).to_be_visible(timeout=60_000)
    shot(page, "names-beside-gallery.png")
    pill.click()
    sidebar = page.get_by_test_id("stSidebar")
    expect(
        sidebar.get_by_text(f"{labels.count(v)} of {len(labels)} records selected")
    ).to_be_visible(timeout=60_000)
    settled(page)
    narrowed = {i: SHAPES[v] for i, x in enumerate(labels) if x == v}
    assert _captions(page, narrowed) == narrowed
    assert "facet=class" in page.url
    shot(page, "names-facet-gallery.png")
    context.close()


def test_a_names_file_bound_in_the_sidebar(server, browser, root, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    labels = _labels(root, BARE)
    names = tmp_path / "classes.txt"
    names.write_text("\n".join(SHAPES) + "\n")
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(server + f"/gallery?file={BARE}&size=25")
    expect(page.get_by_text("Selection", exact=True)).to_be_visible(timeout=60_000)
    settled(page)
    numbers = {i: str(v) for i, v in enumerate(labels)}
    assert _captions(page, numbers) == numbers  # nothing beside it: numbers
    sidebar = page.get_by_test_id("stSidebar")
    section = sidebar.get_by_test_id("stExpander").filter(has_text="Class names")
    section.get_by_text("Class names").click()
    upload = section.locator("input[type='file']")
    until(lambda: upload.first.set_input_files(str(names), timeout=5_000), what="the upload")
    settled(page)
    no_errors(page)
    want = {i: SHAPES[v] for i, v in enumerate(labels)}
    assert _captions(page, want) == want
    expect(sidebar.get_by_text("classes.txt", exact=False).first).to_be_visible(timeout=30_000)
    v = labels[0]
    expect(_pill(page, f"{SHAPES[v]} ({v}) · {labels.count(v)}")).to_be_visible(timeout=60_000)
    shot(page, "names-bound-gallery.png")
    shot(page, "names-bound-sidebar.png", target=sidebar)
    context.close()
