"""A record's media in the app, as a user meets them (AppTest, generated files): a WAV record
plays as stored with its waveform and a spectrogram on demand; a sample list without a rate
asks for one, then plays, and the rate holds for the source's other records; a clip is one
player whose frame slider, previous/next buttons and play button change the frame and its
boxes (no more 16 stacked pictures); token ids show as text with ``[MASK→…]``; a TensorBoard
event shows its step, values and picture; a record that is one tensor shows as a tensor;
floats keep their shortest text in the values grid and features are listed by name."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from app_support import gallery_tiles, go_to_record, no_crash, start_app
from PIL import Image
from streamlit.testing.v1 import AppTest
from test_app_edit import media

from browser_app import generators as G
from browser_app.generators import audio as ga
from browser_app.generators import events as ge
from browser_app.generators import sequences as gs
from browser_app.generators import text as gt
from browser_app.ui.components import player, waveform
from browser_app.view import media as vm
from codec import TFRecordDataset, audio
from codec import example as ex
from codec.events import decode_event
from codec.writer import write_records

__all__ = ["media"]  # a fixture used here

TINY = 7.974931e-05  # a float32 whose shortest text a number column rounds to 0.00008


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("media_app")
    ga.write_encoded_audio(r / "audio.tfrecord")
    ga.write_nsynth(r / "nsynth-test.tfrecord", 2)
    notes = [ex.decode(p or b"", "example") for p in _payloads(r / "nsynth-test.tfrecord")]
    write_records(
        r / "bare.tfrecord",
        [ex.encode_example({"audio": ("float", n.features["audio"].values)}) for n in notes],
    )
    gs.write_media_sequences(r / "clips.tfrecord")
    gt.write_bert(r / "bert")
    ge.write_tensorboard(r / "logs", steps=6)
    G.write(r / "tensors.tfrecord", G.tensor_records(0, max_side=64))
    ge.write_saved_dataset(r / "saved", 6, shards=2)
    _tfds_clips(r / "tfds")
    write_records(
        r / "floats.tfrecord",
        [
            ex.encode_example(
                {
                    "zeta": ("int64", [3]),
                    "alpha": ("float", [TINY, 0.1, 1.5, -2.25, 3e-12, 1.0, 2.0, 3.0, 4.0, 5.0]),
                    "mid": ("bytes", [b"cat"]),
                }
            )
        ],
    )
    return r


F = "tensorflow_datasets.core.features"


def _tfds_clips(root: Path) -> None:
    """A TFDS dataset ``clipset`` whose ``features.json`` declares a ``Video`` (``observation``)
    and an ``Audio`` at 8 kHz (``speech``, int samples): names the app does not know them
    by, and records that do not say the rate."""
    folder = root / "clipset" / "1.0.0"
    folder.mkdir(parents=True)
    payloads = []
    for i in range(3):
        frames = []
        for k in range(6):
            out = io.BytesIO()
            Image.new("RGB", (64, 48), (40 * k, 80 + 20 * i, 200 - 30 * k)).save(out, "PNG")
            frames.append(out.getvalue())
        t = np.arange(4000) / 8000
        speech = (np.sin(2 * np.pi * (300 + 100 * i) * t) * 12000).astype(np.int64)
        payloads.append(
            ex.encode_example(
                {
                    "observation": ("bytes", frames),
                    "speech": ("int64", speech.tolist()),
                    "label": ("int64", [i % 2]),
                }
            )
        )
    shard = folder / "clipset-train.tfrecord-00000-of-00001"
    write_records(shard, payloads)
    video = {
        "dtype": "uint8",
        "encodingFormat": "png",
        "shape": {"dimensions": ["-1", "48", "64", "3"]},
    }
    sound = {
        "dtype": "int64",
        "encoding": "none",
        "sampleRate": "8000",
        "shape": {"dimensions": ["-1"]},
    }
    declared = {
        "observation": {"pythonClassName": f"{F}.video_feature.Video", "video": video},
        "speech": {"pythonClassName": f"{F}.audio_feature.Audio", "audio": sound},
        "label": {
            "pythonClassName": f"{F}.class_label_feature.ClassLabel",
            "classLabel": {"numClasses": "2"},
        },
    }
    features = {
        "pythonClassName": f"{F}.features_dict.FeaturesDict",
        "featuresDict": {"features": declared},
    }
    (folder / "features.json").write_text(json.dumps(features, indent=4, sort_keys=True))
    (folder / "label.labels.txt").write_text("waves\nnoise\n")
    split = {
        "name": "train",
        "numBytes": str(shard.stat().st_size),
        "shardLengths": ["3"],
        "filepathTemplate": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
    }
    info = {"name": "clipset", "version": "1.0.0", "fileFormat": "tfrecord", "splits": [split]}
    (folder / "dataset_info.json").write_text(json.dumps(info, indent=2, sort_keys=True))


def _payloads(path: Path) -> list[bytes | None]:
    with TFRecordDataset(str(path)) as ds:
        return [s.payload for s in ds.page(0, len(ds))]


def _record(path: Path, n: int) -> ex.Record:
    return ex.decode(_payloads(path)[n] or b"", "auto")


def _plain(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


def _captions(at: AppTest) -> list[str]:
    return [_plain(c.value) for c in at.main.caption]


def _players(at: AppTest, media: dict) -> list[tuple[bytes, str]]:  # type: ignore[type-arg]
    """The bytes and type of each audio player on the page."""
    return [media[a.proto.url][:2] for a in at.main.get("audio")]


def _table(at: AppTest, column: str) -> Any:
    """The one table of the record view whose first column is ``column``."""
    (found,) = [d.value for d in at.main.dataframe if list(d.value.columns)[:1] == [column]]
    return found


def _image_with(at: AppTest, media: dict, caption: str) -> bytes:  # type: ignore[type-arg]
    """The bytes of the one picture whose caption starts with ``caption``."""
    found = [
        media[im.value[0]][0]
        for im in at.main.image
        if any(_plain(c).startswith(caption) for c in im.captions)
    ]
    assert len(found) == 1, [_plain(c) for im in at.main.image for c in im.captions]
    return found[0]


# -- audio --------------------------------------------------------------------------------------


def test_a_wav_record_plays_as_stored_with_its_waveform_and_a_spectrogram(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "audio.tfrecord", "record": "0"})
    no_crash(at)
    stored = _record(root / "audio.tfrecord", 0).features["audio/encoded"].values[0]
    assert _players(at, media) == [(stored, "audio/wav")]
    captions = _captions(at)
    assert "`audio/encoded` · audio/wav 0.72 s 16 kHz mono · 22.5 KiB" in captions
    assert any(c.startswith("`audio/encoded` · <audio/wav 0.72 s 16 kHz mono") for c in captions)
    assert "Download audio" in [b.label for b in at.main.get("download_button")]
    waves = [c for im in at.main.image for c in im.captions if c.startswith("waveform")]
    assert waves == ["waveform · 0 – 0.72 s"]
    assert not [c for im in at.main.image for c in im.captions if c.startswith("spectrogram")]
    (button,) = [b for b in at.main.button if b.label == "Spectrogram"]
    button.click().run()
    no_crash(at)
    spectrogram = _image_with(at, media, "spectrogram · 0 – 8 kHz")
    expected = vm.spectrogram_png(audio.samples_of(stored), 16000, 720, 160)
    assert spectrogram == expected
    # The spectrogram stays asked for on the next run, and a button hides it.
    at.run()
    assert [b.label for b in at.main.button if "pectrogram" in b.label] == ["Hide the spectrogram"]


def test_flac_plays_as_stored_and_the_browser_draws_its_waveform(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root, params={"file": "audio.tfrecord", "record": "5"})
    no_crash(at)
    stored = _record(root / "audio.tfrecord", 5).features["audio/encoded"].values[0]
    assert _players(at, media) == [(stored, "audio/flac")]
    # Not decoded here: the browser draws the waveform of the bytes it plays.
    (wave,) = [e for e in at.get("bidi_component") if e.proto.component_name == waveform.NAME]
    sent = json.loads(wave.proto.json)
    assert media[sent["src"]][:2] == (stored, "audio/flac")
    assert (sent["width"], sent["height"]) == (720, 96)
    assert not [c for c in _captions(at) if c.startswith("No waveform")]


def test_nsynth_plays_at_the_records_rate(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root, params={"file": "nsynth-test.tfrecord", "record": "1"})
    no_crash(at)
    ((data, mime),) = _players(at, media)
    info = audio.describe_audio(data)
    assert mime == "audio/wav" and info is not None
    assert info.text() == "audio/wav 4.00 s 16 kHz mono"
    assert not [n for n in at.main.number_input if n.label.startswith("Sample rate")]
    assert "`audio` · 64,000 float samples · 4.00 s at 16 kHz · mono (from the record)" in (
        _captions(at)
    )


def test_a_sample_list_without_a_rate_asks_for_one_and_keeps_it_for_the_source(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "bare.tfrecord", "record": "0"})
    no_crash(at)
    assert _players(at, media) == []
    assert "`audio` · 64,000 float samples · sample rate not known" in _captions(at)
    (rate,) = [n for n in at.main.number_input if n.label == "Sample rate of audio (Hz)"]
    assert rate.value is None
    # Drawn in samples meanwhile.
    assert "waveform · 64,000 samples" in [c for im in at.main.image for c in im.captions]
    rate.set_value(16000).run()
    no_crash(at)
    ((data, _mime),) = _players(at, media)
    info = audio.describe_audio(data)
    assert info is not None and info.text() == "audio/wav 4.00 s 16 kHz mono"
    assert "waveform · 0 – 4.00 s" in [c for im in at.main.image for c in im.captions]
    # The next record of the source plays at the same rate without asking again.
    go_to_record(at).set_value(1).run()
    no_crash(at)
    assert any(c.startswith("#### Record 1") for c in (m.value for m in at.main.markdown))
    ((data, _mime),) = _players(at, media)
    played = audio.samples_of(data)[:, 0]
    expected = _record(root / "bare.tfrecord", 1).features["audio"].values
    assert np.allclose(played, np.asarray(expected) / max(1.0, np.abs(expected).max()), atol=1e-4)


# -- frames --------------------------------------------------------------------------------------


def _player(at: AppTest) -> dict[str, Any]:
    """The data the record view sent its clip player."""
    found = [e for e in at.get("bidi_component") if e.proto.component_name == player.NAME]
    assert len(found) == 1, [e.proto.component_name for e in at.get("bidi_component")]
    return dict(json.loads(found[0].proto.json))


def test_a_clip_is_one_player_sent_every_frame_as_stored_with_its_boxes(
    monkeypatch, root, media
) -> None:
    at = start_app(monkeypatch, root, params={"file": "clips.tfrecord", "record": "4"})
    no_crash(at)
    rec = _record(root / "clips.tfrecord", 4)
    frames = vm.find_frames(rec)
    assert frames is not None and frames.label == "motorcycle"
    heads = [_plain(m.value) for m in at.main.markdown]
    assert "**Frames** · `image/encoded` · 20 frames · 8 fps · 2.50 s · motorcycle" in heads
    # One player, not 20 pictures 16 at a time, and no Streamlit picture for the frames.
    assert not [m for m in heads if m.startswith("**Pictures**")]
    parts = [b for b in at.main.get("button_group") if "pictures:part" in (b.key or "")]
    assert not parts
    assert not [im for im in at.main.image if any(c.startswith("frame ") for c in im.captions)]
    data = _player(at)
    assert (data["count"], data["fps"], data["first"]) == (20, 8.0, 0)
    sent = data["frames"]
    assert len(sent) == 20
    for i, f in enumerate(sent):
        # each frame by URL, the bytes as the record stores them; its boxes as numbers
        assert media[f["src"]][:2] == (frames.refs[i].data, "image/jpeg")
        assert (f["w"], f["h"]) == (240, 180)
        boxes = vm.frame_marks(rec, frames, i, 240, 180)
        assert f["boxes"] == boxes
        words = "1 box" if len(boxes) == 1 else f"{len(boxes)} boxes"
        assert f["caption"] == f"frame {i + 1} of 20 · {i / 8:.2f} s · JPEG 240×180 · {words}"
    assert len({len(f["boxes"]) for f in sent}) > 1  # objects come into view and leave it


def test_without_boxes_the_player_is_sent_none(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root, params={"file": "clips.tfrecord", "record": "4"})
    assert any(f["boxes"] for f in _player(at)["frames"])
    at.session_state["tfb:boxes"] = False  # the boxes switch, off on every page
    at.run()
    no_crash(at)
    assert all(f["boxes"] == [] for f in _player(at)["frames"])


def test_a_long_clip_is_sent_a_window_at_a_time() -> None:
    assert player.window_start(20, 15) == 0  # a short clip: every frame
    assert player.window_start(1000, 0) == 0
    assert player.window_start(1000, 500) == 500 - player.WINDOW // 4
    assert player.window_start(1000, 999) == 1000 - player.WINDOW  # the last window is full
    assert player.want_of({"frame": 500, "seq": 3}) == (500, 3)
    bad = ({"frame": -1, "seq": 1}, {"frame": "9", "seq": 1}, {"frame": True, "seq": 1})
    for value in (None, [], *bad):
        assert player.want_of(value) is None


def test_a_window_of_frames_is_kept_inside_the_clip(root) -> None:
    rec = _record(root / "clips.tfrecord", 4)
    frames = vm.find_frames(rec)
    assert frames is not None

    def urls(pictures: Any) -> list[str | None]:
        return [f"/x/{i}" for i in range(len(pictures))]

    data = player.clip_data("k", rec, frames, urls, first=5, window=8)
    assert (data["first"], len(data["frames"])) == (5, 8)
    assert [f["caption"].split(" · ")[0] for f in data["frames"]] == [
        f"frame {i} of 20" for i in range(6, 14)
    ]
    late = player.clip_data("k", rec, frames, urls, first=99, window=8)
    assert late["first"] == 12 and len(late["frames"]) == 8


def test_the_gallery_shows_a_clips_first_frame_and_label(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root, params={"file": "clips.tfrecord"})
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    tiles = gallery_tiles(at)
    labels = [t["caption"] for t in tiles]
    assert labels == [f"#{i} · {n} · 20 frames" for i, n in enumerate(gs.CLIP_LABELS)]
    assert all(t["src"] for t in tiles)


# -- token ids, events, tensors --------------------------------------------------------------------


def test_token_ids_show_as_text_with_their_masks(monkeypatch, root) -> None:
    at = start_app(
        monkeypatch, root, params={"file": "bert/pretraining_data.tfrecord", "record": "0"}
    )
    no_crash(at)
    heads = [_plain(m.value) for m in at.main.markdown]
    assert "**Text** · token ids read with `vocab.txt` (271 tokens)" in heads
    captions = _captions(at)
    assert "`input_ids` · 25 tokens · 4 masked · 103 padding" in captions
    bodies = [h.proto.body for h in at.main.get("html") if "tfb-tokens" in h.proto.body]
    assert len(bodies) == 2
    assert '<span class="mask">[MASK→' in bodies[0]
    assert '<span class="special">[CLS]</span>' in bodies[0]


def test_an_event_record_shows_its_step_values_and_picture(monkeypatch, root, media) -> None:
    (tf1,) = (root / "logs").glob("events.out.tfevents.*")
    payloads = _payloads(tf1)
    n = next(i for i, p in enumerate(payloads) if any(v.images for v in decode_event(p).values))  # type: ignore[union-attr]
    event = decode_event(payloads[n] or b"")
    assert event is not None
    at = start_app(monkeypatch, root, params={"file": f"logs/{tf1.name}", "record": str(n)})
    no_crash(at)
    heads = [_plain(m.value) for m in at.main.markdown]
    assert f"**TensorBoard event** · step {event.step:,} · {event.when} · summary" in heads
    table = _table(at, "tag")
    assert list(table["tag"]) == [v.tag for v in event.values]
    (picture,) = [im for im in at.main.image if "input/image/0" in _plain(im.captions[0])]
    assert media[picture.value[0]][0] == event.values[0].images[0]
    # A scalar event: its values as numbers in their shortest text.
    scalars = next(i for i, p in enumerate(payloads) if decode_event(p or b"").scalars)  # type: ignore[union-attr]
    at = start_app(monkeypatch, root, params={"file": f"logs/{tf1.name}", "record": str(scalars)})
    table = _table(at, "tag")
    assert set(table["tag"]) == {"loss", "learning_rate"}
    assert "0.01" in list(table["value"])


def test_a_histogram_event_is_drawn_as_bars(monkeypatch, root) -> None:
    train = next((root / "logs" / "train").glob("events.out.tfevents.*"))
    payloads = _payloads(train)
    n = next(
        i
        for i, p in enumerate(payloads)
        if any(v.histogram is not None for v in decode_event(p or b"").values)  # type: ignore[union-attr]
    )
    at = start_app(monkeypatch, root, params={"file": f"logs/train/{train.name}", "record": str(n)})
    no_crash(at)
    table = _table(at, "tag")
    assert list(table["tag"]) == ["dense/kernel_0"]
    assert str(table["value"][0]).startswith("histogram of 2,000 values in 30 buckets, ")
    assert len(at.main.get("vega_lite_chart")) == 1


def test_a_record_that_is_a_tensor_shows_as_one(monkeypatch, root) -> None:
    at = start_app(monkeypatch, root, params={"file": "tensors.tfrecord", "record": "0"})
    no_crash(at)
    heads = [_plain(m.value) for m in at.main.markdown]
    assert "**Tensor** (the record is one serialized TensorProto)" in heads
    assert any(c.startswith("record · serialized tensor · uint8 · shape ") for c in _captions(at))


# -- values ---------------------------------------------------------------------------------------


def test_floats_keep_their_shortest_text_and_features_are_listed_by_name(monkeypatch, root) -> None:
    at = start_app(monkeypatch, root, params={"file": "floats.tfrecord", "record": "0"})
    no_crash(at)
    table = _table(at, "feature")
    assert list(table["feature"]) == ["alpha", "mid", "zeta"]
    assert str(table["values"][0]).startswith("7.974931e-05, 0.1, 1.5, -2.25, 3e-12")
    (grid,) = [d.value for d in at.main.dataframe if list(d.value.columns) == ["value"]]
    assert list(grid["value"])[:5] == ["7.974931e-05", "0.1", "1.5", "-2.25", "3e-12"]


def test_a_saved_datasets_record_names_its_element_and_component(monkeypatch, root) -> None:
    first = sorted((root / "saved").glob("*/*.shard/*.snapshot"))[0]
    name = str(first.relative_to(root))
    for record, component, dtype in ((0, "image", "uint8"), (1, "label", "int64")):
        at = start_app(monkeypatch, root, params={"file": name, "record": str(record)})
        no_crash(at)
        heads = [_plain(m.value) for m in at.main.markdown]
        assert (
            f"**Tensor** · element 0 of {first.name} · component {component} of the saved dataset"
        ) in heads
        assert any(c.startswith(f"record · serialized tensor · {dtype}") for c in _captions(at))
    at = start_app(monkeypatch, root, params={"file": name, "record": "3"})
    assert any("element 1 of" in _plain(m.value) for m in at.main.markdown)


def test_a_tfds_video_and_audio_are_known_by_their_metadata(monkeypatch, root, media) -> None:
    at = start_app(monkeypatch, root / "tfds", params={"file": "clipset", "record": "1"})
    no_crash(at)
    heads = [_plain(m.value) for m in at.main.markdown]
    # The label by its name (label.labels.txt beside features.json), not its number.
    assert "**Frames** · `observation` · 6 frames · 25 fps (assumed) · 0.24 s · noise" in heads
    assert (
        "`speech` · 4,000 int samples · 0.50 s at 8 kHz · mono (from the dataset's metadata)"
        in (_captions(at))
    )
    ((data, _mime),) = _players(at, media)
    info = audio.describe_audio(data)
    assert info is not None and info.text() == "audio/wav 0.50 s 8 kHz mono"


def test_a_tfds_video_is_a_clip_in_the_gallery_too(monkeypatch, root, media) -> None:
    """The gallery knows a TFDS Video by the metadata as the record view does (its feature is
    named ``observation``, which no name rule finds): each tile is the clip's first frame,
    captioned with its label and length."""
    at = start_app(monkeypatch, root / "tfds", params={"file": "clipset"})
    at.switch_page("ui/pages/gallery.py").run()
    no_crash(at)
    tiles = gallery_tiles(at)
    assert len(tiles) == 3
    for i, t in enumerate(tiles):
        assert t["caption"].endswith(" · 6 frames"), t["caption"]
        shown = Image.open(io.BytesIO(media[t["src"]][0])).convert("RGB")
        assert shown.size[0] <= 160
        # the first frame's colour (each frame of a clip is one colour of its own)
        centre = np.array(shown.getpixel((shown.width // 2, shown.height // 2)), np.int64)
        assert np.abs(centre - np.array((0, 80 + 20 * i, 200))).max() <= 12, (i, centre)
