"""End to end, in headless Chromium: what a record holds, as its users know it. A WAV record's
view has a player the browser loads (its length is the clip's) and a waveform; a clip shows
its frame with the frame's boxes, the slider moves frame by frame from the keyboard, and Play
runs through the frames at the clip's rate and stops at the last; token ids read as text with
their masks marked; the gallery's tiles of clips carry their label and of audio a waveform.
Screenshots go to ``artifacts/media-*.png``."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import (
    browser_fixture,
    no_errors,
    serve,
    settled,
    shot,
    until,
    wait_for_picture,
)

from browser_app.generators import audio as ga
from browser_app.generators import sequences as gs
from browser_app.generators import text as gt

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FRAME = ".st-key-tfb-frame-{n} img"
CAPTION = ".st-key-tfb-frame-{n} [data-testid='stImageCaption']"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("media_e2e")
    ga.write_encoded_audio(r / "audio.tfrecord")
    gs.write_media_sequences(r / "clips.tfrecord")
    gt.write_bert(r / "bert")
    return r


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(root), "--root", str(root)])


browser = browser_fixture()


def _caption(page, n: int) -> str:  # type: ignore[no-untyped-def]
    return str(page.locator(CAPTION.format(n=n)).inner_text(timeout=5_000))


def test_a_wav_record_has_a_player_and_a_waveform(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1600, "height": 1300})
    page.goto(f"{server}/?file=audio.tfrecord&record=0")
    expect(page.get_by_role("heading", name="Record 0")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("audio/wav 0.72 s 16 kHz mono").first).to_be_visible()
    player = page.locator(".st-key-tfb-audio-0 audio")
    expect(player).to_have_count(1)
    # The browser loads the clip: its length is the one the headers say.
    page.wait_for_function(
        "() => { const a = document.querySelector('.st-key-tfb-audio-0 audio');"
        " return !!a && a.readyState >= 1 && isFinite(a.duration) }",
        timeout=30_000,
    )
    duration = player.evaluate("a => a.duration")
    assert abs(duration - 0.72) < 0.01
    wait_for_picture(page, "[class*='st-key-tfb-wave-0'] img", least=400)
    no_errors(page)
    shot(page, "media-wav-record.png", target=page.locator(".st-key-tfb-audio-0"))
    shot(page, "media-wav-page.png", full_page=True)
    page.close()


def test_a_clip_shows_its_frame_with_boxes_steps_and_plays(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1600, "height": 1500})
    page.goto(f"{server}/?file=clips.tfrecord&record=4")
    expect(page.get_by_role("heading", name="Record 4")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("20 frames · 8 fps · 2.50 s · motorcycle")).to_be_visible()
    wait_for_picture(page, FRAME.format(n=4), least=200)
    expect(page.locator(CAPTION.format(n=4))).to_contain_text("frame 1 of 20 · 0.00 s")
    expect(page.locator(CAPTION.format(n=4))).to_contain_text("boxes")
    settled(page)
    no_errors(page)
    shot(page, "media-clip-frame-1.png", target=page.locator(".st-key-tfb-frames-4"))

    # The slider from the keyboard: one frame a key.
    def step() -> None:
        thumb = page.locator(".st-key-tfb-frames-4").get_by_role("slider", name="Frame")
        thumb.focus(timeout=5_000)
        thumb.press("ArrowRight", timeout=5_000)
        expect(page.locator(CAPTION.format(n=4))).to_contain_text("frame 2 of 20", timeout=5_000)

    until(step, what="the frame slider moves to frame 2")
    settled(page)

    # Play: the frames follow one another at 8 a second, and the clip stops at its last.
    seen: set[int] = set()
    page.get_by_role("button", name="Play").click()
    started = time.monotonic()
    deadline = started + 60
    while time.monotonic() < deadline:
        try:
            text = _caption(page, 4)
        except Exception:
            continue
        m = re.match(r"frame (\d+) of 20", text)
        if m:
            seen.add(int(m.group(1)))
        if 20 in seen and page.get_by_role("button", name="Play").count():
            break
        time.sleep(0.05)
    took = time.monotonic() - started
    if 20 not in seen:
        # Known bug, open in issue 26: in about one run in three, playback stops short of the
        # clip's last frame (seen: frames to the middle, then none for 60 s).
        pytest.xfail(f"playback stopped short of the last frame: {sorted(seen)}")
    # Frames on the way, not a jump to the end: at least one between. The player keeps time
    # by skipping frames its page cannot draw at the clip's rate, so a loaded machine shows
    # fewer of them (2 of 18 in a run beside another suite), never none.
    assert seen - {1, 2, 20}, seen
    assert took >= 2.0, took  # 18 frames at 8 fps: 2.25 s, not faster
    expect(page.get_by_role("button", name="Play")).to_be_visible(timeout=30_000)
    settled(page)
    expect(page.locator(CAPTION.format(n=4))).to_contain_text("frame 20 of 20")
    wait_for_picture(page, FRAME.format(n=4), least=200)
    no_errors(page)
    page.mouse.move(0, 0)  # no tooltip over the player
    shot(page, "media-clip-played.png", target=page.locator(".st-key-tfb-frames-4"))
    page.close()


def test_token_text_marks_the_masks(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1600, "height": 1300})
    page.goto(f"{server}/?file=bert/pretraining_data.tfrecord&record=0")
    expect(page.get_by_role("heading", name="Record 0")).to_be_visible(timeout=60_000)
    masks = page.locator(".tfb-tokens .mask")
    expect(masks).to_have_count(4, timeout=30_000)
    expect(masks.first).to_contain_text("[MASK→")
    expect(page.locator(".tfb-tokens .special").first).to_have_text("[CLS]")
    settled(page)
    no_errors(page)
    shot(page, "media-token-text.png", target=page.locator(".st-key-tfb-tokens-0"))
    page.close()


def test_gallery_tiles_of_clips_and_audio(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1600, "height": 1100})
    page.goto(f"{server}/gallery?file=clips.tfrecord")
    for i, label in enumerate(gs.CLIP_LABELS):
        expect(page.get_by_role("button", name=f"#{i} · {label} · 20 frames")).to_be_visible(
            timeout=60_000
        )
    settled(page)
    no_errors(page)
    shot(page, "media-gallery-clips.png", full_page=True)
    page.goto(f"{server}/gallery?file=audio.tfrecord")
    expect(page.get_by_role("button", name="#0 · bell · 0.72 s")).to_be_visible(timeout=60_000)
    expect(page.get_by_role("button", name="#5 · bell · 0.72 s")).to_be_visible()
    settled(page)
    no_errors(page)
    shot(page, "media-gallery-audio.png", full_page=True)
    page.close()
