"""What a record holds, as :mod:`browser_app.view.media` draws it (no app): encoded audio and
sample lists found, described and made playable, their waveforms and spectrograms; a clip's
frames, frame rate, label and per-frame boxes, the frame drawn with them, the film strip;
token ids as text; the gallery's tiles of clips and audio; audio named in values, ``dump``
and the schema report; features in name order; ``show --json``'s media."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from browser_app import view
from browser_app.generators import audio as ga
from browser_app.generators import sequences as gs
from browser_app.generators import text as gt
from browser_app.view import media as vm
from browser_app.view.text import format_record_text, format_schema
from codec import TFRecordDataset, audio
from codec import example as ex
from codec import images as im
from codec import tokens as tk
from codec.schema.infer import infer_schema
from codec.writer import write_records

# -- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("media")
    ga.write_encoded_audio(root / "audio.tfrecord")
    ga.write_nsynth(root / "nsynth-test.tfrecord", 2)
    gs.write_media_sequences(root / "clips.tfrecord")
    gt.write_bert(root / "bert")
    return root


def _records(path: Path) -> list[ex.Record]:
    with TFRecordDataset(str(path)) as ds:
        return [ex.decode(s.payload or b"", "auto") for s in ds.page(0, len(ds))]


def _png(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


def _tone(hz: float, seconds: float, rate: int) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


# -- audio ---------------------------------------------------------------------------------------


def test_every_encoded_clip_is_found_described_and_played_as_stored(folder: Path) -> None:
    for rec in _records(folder / "audio.tfrecord"):
        stored = rec.features["audio/encoded"].values[0]
        (clip,) = vm.find_audio(rec)
        info = audio.describe_audio(stored)
        assert info is not None
        assert clip.feature == "audio/encoded" and clip.index == 0 and clip.step is None
        assert clip.data == stored  # played as stored, never re-encoded
        assert clip.mime == info.mime and clip.format == info.format
        assert clip.words.startswith(info.text())  # "audio/wav 0.72 s 16 kHz mono · 22.5 KiB"
        assert clip.sample_rate == rec.features["audio/sample_rate"].values[0]
        assert clip.channels == rec.features["audio/channels"].values[0]
        assert clip.seconds == pytest.approx(0.72, abs=0.01)
        # WAV (PCM and float) is drawn; FLAC is played, not drawn.
        assert clip.drawable == (clip.format == "wav")
        if clip.drawable:
            samples = clip.samples()
            assert samples.shape == (round(0.72 * clip.sample_rate), clip.channels)
            assert np.abs(samples).max() <= 1.0


def test_a_sample_list_plays_at_the_records_rate_or_the_metadatas_or_the_persons(
    folder: Path,
) -> None:
    rec = _records(folder / "nsynth-test.tfrecord")[0]
    (clip,) = vm.find_audio(rec)
    assert (clip.format, clip.count, clip.sample_rate, clip.rate_from) == (
        "samples",
        ga.NSYNTH_SAMPLES,
        ga.NSYNTH_RATE,
        "record",
    )
    assert clip.words == "64,000 float samples · 4.00 s at 16 kHz · mono"
    played = audio.describe_audio(clip.data or b"")
    assert played is not None and played.text() == "audio/wav 4.00 s 16 kHz mono"
    assert np.allclose(clip.samples()[:, 0], rec.features["audio"].values, atol=1e-6)

    # Without a sample_rate feature: not playable until a rate is known.
    bare = ex.decode(
        ex.encode_example({"audio": ("float", rec.features["audio"].values)}), "example"
    )
    (clip,) = vm.find_audio(bare)
    assert clip.data is None and clip.sample_rate is None and clip.rate_from == ""
    assert clip.words == "64,000 float samples · sample rate not known"
    assert clip.drawable  # drawn in samples meanwhile
    (clip,) = vm.find_audio(bare, vm.MediaHints(rates={"audio": 8000}))
    assert (clip.sample_rate, clip.rate_from, clip.seconds) == (8000, "metadata", 8.0)
    (clip,) = vm.find_audio(bare, rates={"audio": 32000})
    assert (clip.sample_rate, clip.rate_from) == (32000, "you")
    played = audio.describe_audio(clip.data or b"")
    assert played is not None and played.text() == "audio/wav 2.00 s 32 kHz mono"


def test_tfds_audio_is_found_by_the_metadata_whatever_its_name() -> None:
    ints = (_tone(440, 0.5, 16000) * 20000).astype(np.int64).tolist()
    rec = ex.decode(ex.encode_example({"speech_clip": ("int64", ints)}), "example")
    assert vm.find_audio(rec) == []  # not a name samples go by
    hints = vm.MediaHints(audio=frozenset({"speech_clip"}), rates={"speech_clip": 16000})
    (clip,) = vm.find_audio(rec, hints)
    assert (clip.dtype, clip.sample_rate, clip.words) == (
        "int64",
        16000,
        "8,000 int samples · 0.50 s at 16 kHz · mono",
    )
    # int16 values scaled to [-1, 1] for drawing, played as they are.
    assert clip.samples().max() == pytest.approx(10000 / 32768, abs=1e-3)
    assert audio.samples_of(clip.data or b"")[:, 0].max() == pytest.approx(10000 / 32768, abs=1e-3)


def test_hints_are_read_from_tfds_feature_specs() -> None:
    from codec.tfds import FeatureSpec

    specs = {
        "video": FeatureSpec("video", "video", "Video", record_keys=("video",)),
        "speech": FeatureSpec(
            "speech", "audio", "Audio", sample_rate=22050, record_keys=("speech",)
        ),
        "label": FeatureSpec("label", "class_label", "ClassLabel", record_keys=("label",)),
    }
    hints = vm.hints_of(specs)
    assert hints.video == {"video"} and hints.audio == {"speech"}
    assert dict(hints.rates) == {"speech": 22050}
    assert vm.hints_of(None) == vm.MediaHints()


def test_the_waveform_follows_the_sound() -> None:
    rate = 8000
    loud_then_silent = np.concatenate([_tone(200, 0.5, rate) * 1.8, np.zeros(rate // 2)])
    img = _png(vm.waveform_png(loud_then_silent, 200, 60))
    assert img.size == (200, 60) and img.mode == "RGBA"
    alpha = np.asarray(img)[:, :, 3]
    drawn = (alpha == 255).sum(axis=0)  # opaque pixels per column
    assert drawn[:95].min() > 40  # the tone fills most of the height
    assert drawn[105:].max() <= 1  # silence: the zero line alone
    assert alpha[0, 150] == 0  # the ground is transparent
    # Fewer samples than columns: each sample spreads over its columns, joined to the one
    # before it (a line, not dots).
    few = _png(vm.waveform_png(np.array([0.9, -0.9, 0.9, -0.9], np.float32), 64, 32))
    assert ((np.asarray(few)[:, 16:, 3] == 255).sum(axis=0) > 20).all()


def test_the_spectrogram_puts_a_tone_at_its_frequency() -> None:
    rate = 16000
    img = _png(vm.spectrogram_png(_tone(2000, 1.0, rate), rate, 320, 161))
    assert img.size == (320, 161)
    brightness = np.asarray(img.convert("L"), np.float64).mean(axis=1)
    peak = int(brightness.argmax())  # row 0 is the top: 8 kHz; row 160 the bottom: 0 Hz
    assert abs((160 - peak) / 160 * 8000 - 2000) < 150


def test_tiles_of_audio(folder: Path) -> None:
    recs = _records(folder / "audio.tfrecord")
    wav = next(c for r in recs for c in vm.find_audio(r) if c.format == "wav")
    tile = _png(vm.waveform_tile(wav, 160) or b"")
    assert tile.size == (160, 106)
    flac = next(c for r in recs for c in vm.find_audio(r) if c.format == "flac")
    assert vm.waveform_tile(flac) is None  # played, not drawn: the tile says FLAC instead
    assert _png(vm.sound_badge(flac.mime, 160)).size == (160, 106)


# -- frames ----------------------------------------------------------------------------------------


def test_a_mediapipe_clip_is_one_clip_of_every_frame(folder: Path) -> None:
    rec = _records(folder / "clips.tfrecord")[0]
    frames = vm.find_frames(rec)
    assert frames is not None
    assert (frames.feature, frames.count, frames.fps, frames.fps_from) == (
        "image/encoded",
        20,
        8.0,
        "record",
    )
    assert frames.label == "astronaut" and frames.words == "20 frames · 8 fps · 2.50 s"
    assert [r.data for r in frames.refs] == [
        f.values[0] for f in rec.feature_lists["image/encoded"]
    ]
    assert frames.time_of(4) == pytest.approx(0.5)
    assert frames.boxes is not None and frames.boxes.normalized
    assert (frames.boxes.text, frames.boxes.label) == ("region/label/string", "region/label/index")


def test_the_frame_rate_comes_from_the_timestamps_else_25(folder: Path) -> None:
    rec = _records(folder / "clips.tfrecord")[1]
    context = {k: (f.type, f.values) for k, f in rec.features.items() if k != "image/frame_rate"}
    lists = {k: [(f.type, f.values) for f in v] for k, v in rec.feature_lists.items()}
    timed = ex.decode(ex.encode_sequence_example(context, lists), "auto")  # type: ignore[arg-type]
    frames = vm.find_frames(timed)
    assert frames is not None and (frames.fps, frames.fps_from) == (8.0, "timestamps")
    del lists["image/timestamp"]
    bare = ex.decode(ex.encode_sequence_example(context, lists), "auto")  # type: ignore[arg-type]
    frames = vm.find_frames(bare)
    assert frames is not None and (frames.fps, frames.fps_from) == (25.0, "default")
    assert frames.words == "20 frames · 25 fps (assumed) · 0.80 s"


def test_each_frame_has_its_own_boxes(folder: Path) -> None:
    rec = _records(folder / "clips.tfrecord")[4]  # the motorcycle: several objects
    frames = vm.find_frames(rec)
    assert frames is not None
    lists = rec.feature_lists
    for i in (0, 9, 19):
        boxes = vm.frame_boxes(rec, frames, i, 240, 180)
        texts = [v.decode() for v in lists["region/label/string"][i].values]
        assert [b.text for b in boxes] == texts
        assert [b.label for b in boxes] == list(lists["region/label/index"][i].values)
        for b, xmin, ymax in zip(
            boxes, lists["region/bbox/xmin"][i].values, lists["region/bbox/ymax"][i].values
        ):
            assert b.xmin == pytest.approx(xmin * 240) and b.ymax == pytest.approx(ymax * 180)
            assert not b.problems and b.drawable
    counts = [len(vm.frame_boxes(rec, frames, i, 240, 180)) for i in range(frames.count)]
    assert len(set(counts)) > 1  # objects come into view and leave it


def test_a_frame_is_sent_as_stored_with_its_boxes_as_numbers(folder: Path) -> None:
    rec = _records(folder / "clips.tfrecord")[0]
    frames = vm.find_frames(rec)
    assert frames is not None
    pic = vm.frame_picture(frames, 10)
    assert pic.data == frames.refs[10].data and pic.mime == "image/jpeg"  # as stored
    assert (pic.width, pic.height) == (240, 180) and pic.error is None
    assert pic.caption == "frame 11 of 20 · 1.25 s · JPEG 240×180"
    (box,) = vm.frame_boxes(rec, frames, 10, 240, 180)
    (mark,) = vm.frame_marks(rec, frames, 10, 240, 180)
    assert (mark["x0"], mark["y0"], mark["x1"], mark["y1"]) == pytest.approx(
        (box.xmin, box.ymin, box.xmax, box.ymax), abs=0.01
    )
    assert mark["color"] == im.box_color(box) and mark["ink"] == im.ink(mark["color"])
    assert mark["text"] == box.caption and not mark["bad"] and mark["problems"] == ""
    assert vm.frame_marks(rec, frames, 10, 240, 180, hidden=[box.key]) == []
    # Out of the clip: the nearest frame.
    assert vm.frame_picture(frames, 99).index == 19


def test_a_frame_too_large_or_not_for_a_browser_is_reduced_and_encoded_again() -> None:
    big = io.BytesIO()
    Image.new("RGB", (1600, 1200), (200, 40, 90)).save(big, format="JPEG")
    gif = io.BytesIO()
    Image.new("RGB", (64, 48), (20, 140, 90)).save(gif, format="GIF")
    video = ex.decode(
        ex.encode_example({"video": ("bytes", [big.getvalue(), gif.getvalue()])}), "example"
    )
    frames = vm.find_frames(video)
    assert frames is not None and frames.count == 2
    large = vm.frame_picture(frames, 0)
    assert large.mime == "image/jpeg" and max(large.width, large.height) == vm.FRAME_SIDE
    assert _png(large.data or b"").size == (large.width, large.height)
    other = vm.frame_picture(frames, 1)
    assert other.mime == "image/png" and _png(other.data or b"").size == (64, 48)


def test_a_video_feature_is_a_clip_and_many_pictures_are_not() -> None:
    def jpeg(shade: int) -> bytes:
        out = io.BytesIO()
        Image.new("RGB", (32, 24), (shade, 40, 90)).save(out, format="JPEG")
        return out.getvalue()

    pictures = [jpeg(10 * i) for i in range(6)]
    video = ex.decode(ex.encode_example({"video": ("bytes", pictures)}), "example")
    frames = vm.find_frames(video)
    assert frames is not None and frames.count == 6 and frames.fps_from == "default"
    assert [r.index for r in frames.refs] == list(range(6))
    assert vm.frame_picture(frames, 3).data == pictures[3]
    # A TFDS Video named otherwise is known by its metadata.
    named = ex.decode(ex.encode_example({"observation": ("bytes", pictures)}), "example")
    assert vm.find_frames(named) is None
    assert vm.find_frames(named, vm.MediaHints(video=frozenset({"observation"}))) is not None
    # Several pictures in an image feature are pictures, not a clip.
    many = ex.decode(ex.encode_example({"image/encoded": ("bytes", pictures)}), "example")
    assert vm.find_frames(many) is None
    rest = vm.without_frames(video, frames)
    assert "video" not in rest.features


def test_a_clips_tile_is_its_first_frame_with_its_label(folder: Path) -> None:
    with TFRecordDataset(str(folder / "clips.tfrecord")) as ds:
        tiles = view.gallery_items(ds.page(0, len(ds)), 160)
    labels = enumerate(gs.CLIP_LABELS)
    assert [t.caption for t in tiles] == [f"#{i} · {n} · 20 frames" for i, n in labels]
    first = _png(tiles[0].data or b"")
    assert tiles[0].mime == "image/jpeg" and max(first.size) == 160
    with TFRecordDataset(str(folder / "audio.tfrecord")) as ds:
        tiles = view.gallery_items(ds.page(0, len(ds)), 160)
    assert tiles[0].caption == "#0 · bell · 0.72 s" and tiles[0].mime == "image/png"
    assert all(t.data for t in tiles) and not any(t.error for t in tiles)


# -- token ids ------------------------------------------------------------------------------------


def test_token_ids_read_as_text_with_their_masks(folder: Path) -> None:
    data = folder / "bert" / "pretraining_data.tfrecord"
    vocab = tk.read_vocab(tk.vocab_beside(str(data)) or "")
    rec = _records(data)[0]
    texts = vm.decode_tokens(rec, vocab)
    assert list(texts) == ["input_ids", "masked_lm_ids"]  # segment_ids are not tokens
    t = texts["input_ids"]
    assert t.marked.startswith("[CLS] ") and "[MASK→" in t.marked
    positions = [p for p, w in zip(rec.features["masked_lm_positions"].values,
                                   rec.features["masked_lm_weights"].values) if w]  # fmt: skip
    assert list(t.masked) == sorted(positions)
    summary = vm.media_summary(rec, vocab)
    assert summary == {"text": {k: v.marked for k, v in texts.items()}}
    assert vm.media_summary(rec) == {}  # no vocab, no text


def test_media_summary_names_audio_and_frames(folder: Path) -> None:
    wav = _records(folder / "audio.tfrecord")[0]
    assert vm.media_summary(wav) == {
        "audio": [
            {
                "feature": "audio/encoded",
                "index": 0,
                "format": "wav",
                "seconds": 0.72,
                "sample_rate": 16000,
                "channels": 1,
            }
        ]
    }
    nsynth = _records(folder / "nsynth-test.tfrecord")[0]
    (a,) = vm.media_summary(nsynth)["audio"]
    assert a == {
        "feature": "audio",
        "index": 0,
        "format": "samples",
        "seconds": 4.0,
        "sample_rate": 16000,
        "channels": 1,
    }
    clip = _records(folder / "clips.tfrecord")[0]
    assert vm.media_summary(clip) == {"frames": {"feature": "image/encoded", "count": 20}}
    # Each frame's picture says which step of the feature list it is (the index within a
    # step is 0 for every frame, so the step is what tells them apart).
    listed = view.view_summary(clip)["pictures"]
    assert [(p["feature"], p["index"], p.get("step")) for p in listed] == [
        ("image/encoded", 0, n) for n in range(20)
    ]
    json.dumps(vm.media_summary(wav))  # plain data


# -- audio in values, dump and the schema ----------------------------------------------------------


def test_audio_values_are_named_by_their_headers(folder: Path) -> None:
    rec = _records(folder / "audio.tfrecord")[0]
    v = rec.features["audio/encoded"].values[0]
    assert ex.classify_bytes(v) == "audio/wav"
    shown = view.value_view(v)
    assert shown.kind == "audio/wav"
    assert shown.summary == "<audio/wav 0.72 s 16 kHz mono, 22.5 KiB>"
    flac = _records(folder / "audio.tfrecord")[5].features["audio/encoded"].values[0]
    assert ex.classify_bytes(flac) == "audio/flac"
    text = format_record_text(rec)
    assert f"audio/encoded (bytes, 1): [<audio/wav 0.72 s 16 kHz mono: {len(v)} bytes>]" in text


def test_dump_lists_features_by_name(folder: Path) -> None:
    shuffled = ex.encode_example(
        {"zeta": ("int64", [1]), "alpha": ("float", [7.974931e-05]), "mid": ("bytes", [b"x"])}
    )
    text = format_record_text(ex.decode(shuffled, "example"))
    lines = [line.strip().split(" ")[0] for line in text.splitlines()[2:]]
    assert lines == ["alpha", "mid", "zeta"]
    assert "alpha (float, 1): [7.974931e-05]" in text  # the shortest float32 text
    clip = format_record_text(_records(folder / "clips.tfrecord")[0])
    lists = [line.split(" (")[0].strip() for line in clip.splitlines() if line.endswith("steps):")]
    assert lists == sorted(lists) and len(lists) == 10


def test_the_schema_says_audio_instead_of_an_empty_top(folder: Path, tmp_path: Path) -> None:
    report = format_schema(infer_schema([str(folder / "audio.tfrecord")]).to_json())
    block = report.split("audio/encoded: ")[1].split("audio/filename")[0]
    assert "top:" not in block and "distinct" not in block
    assert "  bytes: 0 text, 8 binary\n" in block
    assert "  audio: 8 (audio/wav 6, audio/flac 2)\n" in block
    # Counted the same when the records are split across several files.
    recs = _records(folder / "audio.tfrecord")
    payloads = [
        ex.encode_example({k: (f.type, f.values) for k, f in r.features.items()}) for r in recs
    ]
    write_records(tmp_path / "a.tfrecord", payloads[:3])
    write_records(tmp_path / "b.tfrecord", payloads[3:])
    doc = infer_schema([str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]).to_json()
    assert doc["features"]["audio/encoded"]["audio"] == {
        "count": 8,
        "formats": {"wav": 6, "flac": 2},
    }


def test_show_json_carries_audio_frames_and_text(folder: Path, tmp_path: Path) -> None:
    from cli_support import run_cli

    def lines(path: Path, records: str) -> list[dict]:  # type: ignore[type-arg]
        done = run_cli("show", str(path), "--records", records, "--json", cache=tmp_path)
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines()]

    (wav,) = lines(folder / "audio.tfrecord", "0")
    assert wav["audio"] == [
        {
            "feature": "audio/encoded",
            "index": 0,
            "format": "wav",
            "seconds": 0.72,
            "sample_rate": 16000,
            "channels": 1,
        }
    ]
    assert "frames" not in wav and "text" not in wav
    (clip,) = lines(folder / "clips.tfrecord", "2")
    assert clip["frames"] == {"feature": "image/encoded", "count": 20} and "audio" not in clip
    (bert,) = lines(folder / "bert" / "pretraining_data.tfrecord", "0")
    assert set(bert["text"]) == {"input_ids", "masked_lm_ids"}
    assert bert["text"]["input_ids"].startswith("[CLS] ") and "[MASK→" in bert["text"]["input_ids"]
    words = run_cli("show", str(folder / "nsynth-test.tfrecord"), "--records", "0", cache=tmp_path)
    assert words.stdout == "record 0: audio samples 4.00 s 16 kHz\n"


def test_the_schema_page_names_audio_and_keeps_floats_whole(folder: Path, tmp_path: Path) -> None:
    from browser_app.view.schema import schema_rows

    rows = {
        r["feature"]: r
        for r in schema_rows(infer_schema([str(folder / "audio.tfrecord")]).to_json())
    }
    assert rows["audio/encoded"]["top values"] == "audio/wav 6, audio/flac 2"
    write_records(
        tmp_path / "f.tfrecord",
        [ex.encode_example({"x": ("float", [7.974931e-05, 0.93323886])})],
    )
    doc = infer_schema([str(tmp_path / "f.tfrecord")]).to_json()
    (row,) = schema_rows(doc)
    assert (row["min"], row["max"]) == ("7.974931e-05", "0.93323886")
    assert "numbers: min 7.974931e-05, mean 0.466659, max 0.93323886" in format_schema(doc)


def test_lying_headers_and_broken_frames_are_said_not_fatal(folder: Path) -> None:
    # A WAV whose data chunk declares 2^32 - 1 bytes: described with the problem, played
    # as stored, drawn from the samples present; nothing allocated from the declared size.
    wav = bytearray(audio.wav_bytes(_tone(440, 0.25, 8000), 8000))
    at = wav.index(b"data")
    wav[at + 4 : at + 8] = (0xFFFFFFFF).to_bytes(4, "little")
    rec = ex.decode(ex.encode_example({"audio/encoded": ("bytes", [bytes(wav)])}), "example")
    (clip,) = vm.find_audio(rec)
    assert clip.problem == f"the data chunk declares 4,294,967,295 bytes; {2000 * 2:,} are present"
    assert clip.data == bytes(wav) and clip.samples().shape == (2000, 1)
    # A clip with a frame cut short: that frame says why (it is decoded, not sent as
    # stored), its neighbours go as stored.
    good = _records(folder / "clips.tfrecord")[0]
    lists = {k: [(f.type, f.values) for f in v] for k, v in good.feature_lists.items()}
    cut = lists["image/encoded"][3][1][0][:200]
    lists["image/encoded"][3] = ("bytes", [cut])
    context = {k: (f.type, f.values) for k, f in good.features.items()}
    broken = ex.decode(ex.encode_sequence_example(context, lists), "auto")  # type: ignore[arg-type]
    frames = vm.find_frames(broken)
    assert frames is not None and frames.count == 20
    bad = vm.frame_picture(frames, 3)
    assert bad.data is None and bad.error and bad.caption.startswith("frame 4 of 20")
    assert vm.frame_picture(frames, 4).data == frames.refs[4].data
