"""In Chromium: the app follows the browser's light or dark preference (no fixed theme
anywhere; its own colours, row tints and the logo's name, read on both), and the filter help
shows its backquoted example as code."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser_support import REPO, chromium, serve, settled, shot, until

from browser_app.cli.launch import server_command
from browser_app.ui.app import LOGO

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_no_fixed_theme_is_set() -> None:
    cmd = server_command("127.0.0.1", 8501, "/data", [])
    themed = [a for a in cmd if a.startswith("--theme.")]
    # A plain theme.* option makes one custom theme and the browser's preference is ignored.
    assert themed and all(re.match(r"--theme\.(light|dark)\.", a) for a in themed), themed
    for config in [REPO / ".streamlit" / "config.toml", REPO / "browser_app" / ".streamlit"]:
        if config.is_file():
            text = config.read_text()
            assert not re.search(r"^\s*\[theme\]|^\s*base\s*=", text, re.M), config
    assert "prefers-color-scheme:dark" in LOGO  # the name turns light on a dark page


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [])


def _luminance(css: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_follows_the_browser(server: str, scheme: str) -> None:
    from playwright.sync_api import expect

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900}, color_scheme=scheme)
        page.goto(server + "/?file=damaged.tfrecord")
        grid = page.get_by_test_id("stDataFrame").first
        expect(grid.get_by_test_id("glide-cell-2-5")).to_contain_text("damaged", timeout=30_000)

        def colours() -> tuple[float, float]:
            """The app's background and a title's text, read once the page has settled."""
            settled(page)
            app = page.get_by_test_id("stApp")
            title = page.get_by_text("Records", exact=True).first
            css = "e => getComputedStyle(e).{}"
            return (
                _luminance(app.evaluate(css.format("backgroundColor"), timeout=5_000)),
                _luminance(title.evaluate(css.format("color"), timeout=5_000)),
            )

        background, text = until(colours, what="the page's colours")
        shot(page, f"theme-{scheme}.png")
        page.close()
    if scheme == "dark":
        assert background < 60 and text > 150, (background, text)
    else:
        assert background > 200 and text < 100, (background, text)


def test_the_filter_help_keeps_the_backquoted_name_in_its_code_span(server: str) -> None:
    """The help's example of a name in backquotes is shown as code, backquotes and all, in
    the tooltip and in the examples under the box."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(server + "/filter")
        page.get_by_text("Examples:").wait_for(timeout=30_000)
        examples = page.get_by_test_id("stCaptionContainer").filter(has_text="Examples:")
        codes = examples.locator("code").all_inner_texts()
        assert "image/height > 50 or `my feature` != 'x'" in codes, codes
        tip = page.get_by_test_id("stTooltipContent")

        def hover_for_tip() -> None:
            """A rerun that redraws the button under the pointer drops the tip: the pointer
            leaves, comes back to the button found again, and the tip is read."""
            page.mouse.move(0, 0)
            page.get_by_role("button", name="Help for Filter expression").hover(timeout=5_000)
            tip.wait_for(timeout=6_000)
            assert "`my feature`" in tip.locator("code").all_inner_texts()

        until(hover_for_tip, timeout=60, what="the filter help's tip")
        page.close()
