"""End to end, in headless Chromium: what a record holds, as its users know it. A WAV record's
view has a player the browser loads (its length is the clip's) and a waveform; a clip shows
its frame with the frame's boxes, the slider moves frame by frame from the keyboard, and Play
runs through the frames at the clip's rate and stops at the last; token ids read as text with
their masks marked; the gallery's tiles of clips carry their label and of audio a waveform.
Screenshots go to ``artifacts/media-*.png``."""

from __future__ import annotations

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
)

from browser_app.generators import audio as ga
from browser_app.generators import sequences as gs
from browser_app.generators import text as gt

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PLAYER = ".st-key-tfb-frames-{n} .tfb-player"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("media_e2e")
    ga.write_encoded_audio(r / "audio.tfrecord")
    gs.write_media_sequences(r / "clips.tfrecord")
    gs.write_media_sequences(r / "long.tfrecord", frames=300)  # past one window of frames
    gt.write_bert(r / "bert")
    return r


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve(tmp_path_factory, [str(root), "--root", str(root)])


browser = browser_fixture()


def _shown(page, n: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """What the player of record ``n`` shows: its frame, whether it plays, its caption, its
    boxes drawn, and whether its picture is decoded."""
    return dict(
        page.locator(PLAYER.format(n=n)).evaluate(
            """p => ({frame: Number(p.dataset.frame), playing: p.dataset.playing === "1",
                rev: Number(p.dataset.rev), caption: p.querySelector(".tfb-caption").textContent,
                boxes: p.querySelectorAll(".tfb-stage svg rect").length,
                decoded: (() => { const i = p.querySelector(".tfb-stage img");
                                  return !!i && i.complete && i.naturalWidth > 0; })()})"""
        )
    )


def _frames_while_playing(page, n: int, last: int, within: float) -> tuple[list[int], float]:  # type: ignore[no-untyped-def]
    """The frames the player of record ``n`` showed, sampled in the page on every animation
    frame from now until it stops at frame ``last``, and the seconds that took."""
    got = page.evaluate(
        """([sel, last, within]) => new Promise(done => {
            const seen = []; const t0 = performance.now();
            const look = () => {
              // looked up at every frame: a run of the page may draw the player anew
              const p = document.querySelector(sel);
              if (!p) { requestAnimationFrame(look); return; }
              const f = Number(p.dataset.frame);
              if (!seen.length || seen[seen.length - 1] !== f) seen.push(f);
              const t = performance.now() - t0;
              if ((f === last && p.dataset.playing !== "1") || t > within * 1000) done([seen, t]);
              else requestAnimationFrame(look);
            };
            look();
        })""",
        [PLAYER.format(n=n), last, within],
    )
    return [int(f) for f in got[0]], float(got[1]) / 1000


def test_a_clip_shows_its_frame_with_boxes_steps_and_plays(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1600, "height": 1500})
    page.goto(f"{server}/?file=clips.tfrecord&record=4")
    expect(page.get_by_role("heading", name="Record 4")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("20 frames · 8 fps · 2.50 s · motorcycle")).to_be_visible()
    player = page.locator(PLAYER.format(n=4))
    expect(player).to_have_attribute("data-frame", "1", timeout=60_000)
    until(lambda: _shown(page, 4)["decoded"], what="the first frame is decoded")
    first = _shown(page, 4)
    assert first["caption"].startswith("frame 1 of 20 · 0.00 s · JPEG 240×180 ·"), first
    assert "boxes" in first["caption"] or "1 box" in first["caption"]
    assert first["boxes"] >= 2  # each box drawn: its dark edge and its colour
    settled(page)
    no_errors(page)
    shot(page, "media-clip-frame-1.png", target=page.locator(".st-key-tfb-frames-4"))

    # The slider from the keyboard: one frame a key, with no run of the script.
    rev = first["rev"]
    slider = player.get_by_role("slider", name="Frame")
    slider.focus()
    slider.press("ArrowRight")
    expect(player).to_have_attribute("data-frame", "2")
    assert _shown(page, 4)["caption"].startswith("frame 2 of 20 · 0.12 s")
    player.get_by_role("button", name="Previous frame").click()
    expect(player).to_have_attribute("data-frame", "1")
    player.get_by_role("button", name="Next frame").click()
    expect(player).to_have_attribute("data-frame", "2")
    assert _shown(page, 4)["rev"] == rev  # nothing came from the server for these

    # Play: the frames follow one another at 8 a second, and the clip stops at its last.
    player.get_by_role("button", name="Play").click()
    seen, took = _frames_while_playing(page, 4, 20, within=30)
    assert seen[-1] == 20, seen
    assert seen == sorted(seen) and len(seen) >= 15, seen  # frames on the way, in order
    assert took >= 2.0, took  # 18 frames at 8 fps: 2.25 s, not faster
    expect(player).to_have_attribute("data-playing", "")
    expect(player.get_by_role("button", name="Play")).to_be_visible()
    until(lambda: _shown(page, 4)["decoded"], what="the last frame is decoded")
    assert _shown(page, 4)["caption"].startswith("frame 20 of 20")
    # Play again at the end: from the start.
    player.get_by_role("button", name="Play").click()
    expect(player).to_have_attribute("data-playing", "1")
    player.get_by_role("button", name="Pause").click()
    expect(player).to_have_attribute("data-playing", "")
    assert int(player.get_attribute("data-frame") or 0) < 20
    no_errors(page)
    page.mouse.move(0, 0)  # no tooltip over the player
    shot(page, "media-clip-played.png", target=page.locator(".st-key-tfb-frames-4"))
    page.close()


def test_a_long_clip_plays_past_the_frames_it_was_first_sent(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1600, "height": 1500})
    page.goto(f"{server}/?file=long.tfrecord&record=1")
    expect(page.get_by_role("heading", name="Record 1")).to_be_visible(timeout=60_000)
    player = page.locator(PLAYER.format(n=1))
    expect(player).to_have_attribute("data-count", "300", timeout=60_000)
    # The slider to a frame past the first window: the player asks for it, and shows it.
    slider = player.get_by_role("slider", name="Frame")
    expect(player).to_have_attribute("data-first", "0")  # the first 240 frames were sent
    slider.fill("280")
    expect(player).to_have_attribute("data-frame", "280")
    expect(player).to_have_attribute("data-first", "60", timeout=30_000)  # the last 240
    until(
        lambda: _shown(page, 1)["caption"].startswith("frame 280 of 300 · 34.88 s"),
        what="frame 280 arrives",
    )
    until(lambda: _shown(page, 1)["decoded"], what="frame 280 is decoded")

    # Played from there to the end (a click that lands while the page redraws the record
    # view is pressed again, as a person would).
    def play() -> None:
        if not _shown(page, 1)["playing"] and _shown(page, 1)["frame"] < 300:
            player.get_by_role("button", name="Play").click(timeout=5_000)
        assert _shown(page, 1)["playing"] or _shown(page, 1)["frame"] > 280

    until(play, what="the long clip plays")
    seen, _took = _frames_while_playing(page, 1, 300, within=60)
    assert seen[-1] == 300 and seen == sorted(seen), seen
    no_errors(page)
    page.close()


def test_a_flac_clips_waveform_is_drawn_by_the_browser(server, browser) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1600, "height": 1300})
    page.goto(f"{server}/?file=audio.tfrecord&record=5")
    expect(page.get_by_role("heading", name="Record 5")).to_be_visible(timeout=60_000)
    wave = page.locator(".tfb-wave")
    expect(wave).to_have_attribute("data-state", "drawn", timeout=30_000)
    assert abs(float(wave.get_attribute("data-seconds") or 0) - 0.72) < 0.01
    expect(wave.locator(".tfb-wave-caption")).to_have_text(
        "waveform · 0 – 0.72 s · decoded by the browser"
    )
    # The wave is drawn: the canvas has the wave's colour across most of its columns.
    drawn = wave.locator("canvas").evaluate(
        """c => { const g = c.getContext("2d"), d = g.getImageData(0, 0, c.width, c.height).data;
                  const cols = new Set();
                  for (let i = 0; i < d.length; i += 4) {
                    const blue = d[i + 3] === 255 && d[i + 2] > 150 && d[i] < 80;
                    if (blue) cols.add((i / 4) % c.width);
                  }
                  return cols.size / c.width; }"""
    )
    assert drawn > 0.9, drawn
    no_errors(page)
    shot(page, "media-flac-waveform.png", target=wave)
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
