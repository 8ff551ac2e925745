"""codec.audio: encoded audio recognised and described from its headers, sample lists made
playable and drawable; the audio generators' layouts. Bad input: headers that declare more
than is there are said, never allocated."""

from __future__ import annotations

import struct
import tracemalloc

import numpy as np
import pytest

from browser_app.generators import audio as gen
from codec import TFRecordFile
from codec import example as ex
from codec.audio import (
    AudioInfo,
    describe_audio,
    is_sample_list,
    sample_rate_of,
    samples_of,
    sniff_audio,
    spectrogram,
    wav_bytes,
    waveform,
)
from codec.errors import DecodeError, EncodeError, UnsupportedError

RATE = 16000


def tone(seconds: float = 0.72, hz: float = 440.0, rate: int = RATE) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def riff(*chunks: bytes, form: bytes = b"RIFF", size: int | None = None) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return form + struct.pack("<I", len(body) if size is None else size) + body


def chunk(cid: bytes, data: bytes, size: int | None = None) -> bytes:
    pad = b"\x00" if len(data) & 1 else b""
    return cid + struct.pack("<I", len(data) if size is None else size) + data + pad


def fmt_chunk(tag: int = 1, channels: int = 1, rate: int = RATE, bits: int = 16) -> bytes:
    block = max(1, channels * bits // 8)
    return chunk(b"fmt ", struct.pack("<HHIIHH", tag, channels, rate, rate * block, block, bits))


# -- sniffing ---------------------------------------------------------------------------------


def mp3_frames(count: int, *, id3: bool = False) -> bytes:
    # MPEG-1 Layer III, 128 kbit/s, 44.1 kHz, no padding, joint stereo: 417-byte frames.
    header = bytes.fromhex("fffb9064")
    frame = header + bytes(413)
    data = frame * count
    if id3:
        data = b"ID3\x04\x00\x00" + bytes([0, 0, 1, 0]) + bytes(128) + data  # a 128-byte tag
    return data


def vorbis_ogg(rate: int = 44100, channels: int = 2, granule: int = 88200, last: bool = True):
    ident = b"\x01vorbis" + struct.pack("<IBI", 0, channels, rate) + struct.pack("<iii", 0, 0, 0)
    ident += b"\xb8\x01"

    def page(htype: int, gran: int, body: bytes) -> bytes:
        return (
            b"OggS\x00"
            + bytes([htype])
            + struct.pack("<qIII", gran, 1, 0, 0)
            + bytes([1, len(body)])
            + body
        )

    return page(2, 0, ident) + page(0, 1000, bytes(40)) + page(4 if last else 0, granule, bytes(9))


def opus_ogg(pre_skip: int = 312, granule: int = 48000 + 312) -> bytes:
    head = b"OpusHead" + struct.pack("<BBHIhB", 1, 1, pre_skip, 16000, 0, 0)
    first = b"OggS\x00\x02" + struct.pack("<qIII", 0, 1, 0, 0) + bytes([1, len(head)]) + head
    last = b"OggS\x00\x04" + struct.pack("<qIII", granule, 1, 2, 0) + bytes([1, 5]) + bytes(5)
    return first + last


def test_sniff_each_format():
    assert sniff_audio(wav_bytes(tone(), RATE)) == "wav"
    assert sniff_audio(gen.flac_bytes(tone(), RATE)) == "flac"
    assert sniff_audio(vorbis_ogg()) == "ogg"
    assert sniff_audio(mp3_frames(3)) == "mp3"
    assert sniff_audio(mp3_frames(3, id3=True)) == "mp3"


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"RIF",
        b"RIFF\x00\x00\x00\x00WEBPVP8 ",  # a WebP picture
        b"\xff\xd8\xff\xe0" + bytes(40),  # a JPEG
        b"\x89PNG\r\n\x1a\n" + bytes(40),
        b"hello world, not audio",
        b"\xff\xfb\x90\x64" + bytes(20),  # one frame header and nothing where the next must be
        b"ID3\x04\x00\x00\x7f\x7f\x7f\x7f",  # a tag running past the bytes present
        b"ID3\x04\x00\x00\x00\x00\x00\x10" + bytes(16) + b"junk",  # a tag, then no frames
    ],
)
def test_not_audio(data):
    assert sniff_audio(data) is None
    assert describe_audio(data) is None


# -- WAV --------------------------------------------------------------------------------------


def test_wav_description_text():
    info = describe_audio(wav_bytes(tone(), RATE))
    assert info == AudioInfo("wav", "audio/wav", 0.72, RATE, 1, 16, encoding="pcm")
    assert info.text() == "audio/wav 0.72 s 16 kHz mono"


@pytest.mark.parametrize(
    ("kind", "rate", "bits", "channels", "encoding"),
    [
        ("pcm8", 8000, 8, 1, "pcm"),
        ("pcm16", 16000, 16, 1, "pcm"),
        ("pcm24", 22050, 24, 1, "pcm"),
        ("pcm32", 16000, 32, 1, "pcm"),
        ("float32", 16000, 32, 1, "float"),
        ("extensible", 44100, 16, 2, "pcm"),
    ],
)
def test_wav_encodings_read_and_drawn(kind, rate, bits, channels, encoding):
    label = "stereo tone" if kind == "extensible" else "bell"
    data = gen.encoded_audio(kind, label, rate)
    info = describe_audio(data)
    assert info is not None and info.problem is None
    assert (info.sample_rate, info.bits, info.channels, info.encoding) == (
        rate,
        bits,
        channels,
        encoding,
    )
    assert info.seconds == pytest.approx(0.72, abs=1e-3)
    samples = samples_of(data)
    assert samples.shape == (round(0.72 * rate), channels)
    assert samples.dtype == np.float32
    assert 0.2 < float(np.abs(samples).max()) <= 1.0
    expected = gen._tone(0.72, rate, 880.0 if label == "bell" else 440.0, channels=channels)
    tolerance = 2 / 2 ** (bits - 1) + 1e-6
    assert np.abs(samples.reshape(expected.shape) - expected).max() <= max(tolerance, 1e-6)
    assert info.text().startswith(f"audio/wav 0.72 s {rate / 1000:g} kHz")


def test_wav_rate_texts():
    assert (
        AudioInfo("wav", "audio/wav", 1.0, 44100, 2, 16).text()
        == "audio/wav 1.00 s 44.1 kHz stereo"
    )
    assert (
        AudioInfo("wav", "audio/wav", None, 22050, 6, 16).text() == "audio/wav 22.05 kHz 6 channels"
    )
    mp3 = AudioInfo("mp3", "audio/mpeg", 3.14159, 44100, 2, None, estimated=True)
    assert mp3.text() == "audio/mpeg ≈ 3.14 s 44.1 kHz stereo"


def test_a_wav_declaring_2_to_the_32_samples_is_checked_against_the_bytes_present():
    present = bytes(2000)
    # data chunk declaring 0xFFFFFFFF bytes (streaming writers), fact declaring 2**32 - 1
    data = riff(
        fmt_chunk(),
        chunk(b"fact", struct.pack("<I", 0xFFFFFFFF)),
        b"data" + struct.pack("<I", 0xFFFFFFFF) + present,
        size=0xFFFFFFFF,
    )
    tracemalloc.start()
    info = describe_audio(data)
    samples = samples_of(data)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info is not None
    assert info.seconds == pytest.approx(1000 / RATE)
    assert "declares 4,294,967,295 bytes; 2,000 are present" in (info.problem or "")
    assert samples.shape == (1000, 1)
    assert peak < 1 << 20  # nothing sized from the header


def test_rf64_declaring_2_to_the_32_samples():
    ds64 = chunk(b"ds64", struct.pack("<QQQI", 0, 2 * 2**32, 2**32, 0))
    data = riff(
        ds64, fmt_chunk(), b"data" + struct.pack("<I", 0xFFFFFFFF) + bytes(64), form=b"RF64"
    )
    info = describe_audio(data)
    assert info is not None and info.format == "wav"
    assert info.seconds == pytest.approx(32 / RATE)
    assert "declares 8,589,934,592 bytes; 64 are present" in (info.problem or "")
    assert samples_of(data).shape == (32, 1)


def test_compressed_wav_fact_count_beyond_the_bytes():
    adpcm = riff(
        fmt_chunk(tag=0x11, bits=4),
        chunk(b"fact", struct.pack("<I", 2**32 - 1)),
        chunk(b"data", bytes(100)),
    )
    info = describe_audio(adpcm)
    assert info is not None and info.encoding == "ima adpcm" and info.seconds is None
    assert "fact chunk declares 4,294,967,295 samples" in (info.problem or "")
    with pytest.raises(UnsupportedError, match="ima adpcm"):
        samples_of(adpcm)
    honest = riff(
        fmt_chunk(tag=0x11, bits=4),
        chunk(b"fact", struct.pack("<I", 200)),
        chunk(b"data", bytes(100)),
    )
    assert describe_audio(honest).seconds == pytest.approx(200 / RATE)


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (riff(), "no fmt chunk"),
        (riff(b"fmt " + struct.pack("<I", 16) + bytes(6)), "cut short"),
        (riff(fmt_chunk()), "no data chunk"),
        (riff(fmt_chunk(rate=0), chunk(b"data", bytes(10))), "sample rate of 0"),
        # a chunk whose size jumps past the end: the walk stops, nothing is read there
        (riff(chunk(b"LIST", b"", size=0x7FFFFFFF), fmt_chunk()), "no fmt chunk"),
        # more junk chunks than are ever walked
        (riff(*(chunk(b"junk", b"") for _ in range(5000)), fmt_chunk()), "no fmt chunk"),
    ],
)
def test_truncated_or_odd_wav_headers(data, problem):
    info = describe_audio(data)
    assert info is not None and info.format == "wav"
    assert problem in (info.problem or "")
    assert info.seconds is None or info.seconds == 0


def test_samples_of_refuses_what_it_cannot_draw():
    with pytest.raises(DecodeError, match="not a WAV"):
        samples_of(b"fLaC" + bytes(40))
    with pytest.raises(DecodeError, match="WAV header"):
        samples_of(riff())
    assert samples_of(wav_bytes(tone(), RATE), max_frames=10).shape == (10, 1)


# -- sample lists -----------------------------------------------------------------------------


def test_wav_bytes_round_trips_floats_and_int16_lists():
    x = tone()
    back = samples_of(wav_bytes(x, RATE))[:, 0]
    assert np.abs(back - x).max() < 1e-4
    ints = [0, 1000, -1000, 32767, -32768, 40000]  # TFDS Audio int16 lists; 40000 clipped
    pcm = samples_of(wav_bytes(ints, 8000))[:, 0] * 32768
    assert pcm.round().astype(int).tolist() == [0, 1000, -1000, 32767, -32768, 32767]
    loud = samples_of(wav_bytes(np.array([0.0, 2.0, -4.0]), 8000))[:, 0]
    assert loud.tolist() == pytest.approx([0.0, 0.5, -1.0], abs=1e-4)  # scaled, not clipped
    stereo = wav_bytes(np.zeros((10, 2)), 8000)
    assert describe_audio(stereo).channels == 2


@pytest.mark.parametrize("rate", [0, -1, 10**7, 16000.5, "16000"])
def test_wav_bytes_refuses_bad_rates(rate):
    with pytest.raises(EncodeError, match="sample rate"):
        wav_bytes([0.0], rate)


def test_wav_bytes_refuses_non_numbers():
    with pytest.raises(EncodeError):
        wav_bytes([b"x", b"y"], 8000)
    with pytest.raises(EncodeError):
        wav_bytes(np.zeros((2, 2, 2)), 8000)


def test_waveform_envelope():
    x = np.concatenate([np.zeros(50), np.linspace(-1, 1, 50)]).astype(np.float32)
    mins, maxs = waveform(x, 2)
    assert mins.tolist() == [0.0, -1.0] and maxs.tolist() == [0.0, 1.0]
    mins, maxs = waveform([0.5, -0.5], 100)  # fewer samples than columns
    assert mins.tolist() == [0.5, -0.5] and maxs.tolist() == [0.5, -0.5]
    assert waveform([], 10)[0].size == 0
    stereo = np.stack([np.ones(8), -np.ones(8)], axis=1)
    assert waveform(stereo, 4)[1].tolist() == [0.0] * 4  # mixed down


def test_spectrogram_of_a_tone_peaks_at_its_frequency():
    spec = spectrogram(tone(1.0, 1000.0), RATE)
    assert spec.shape[0] == 512 // 2 + 1
    peak = int(np.argmax(spec.mean(axis=1)))
    assert peak == round(1000 * 512 / RATE)
    assert spec.max() == 0.0 and spec.min() >= -100.0
    long = spectrogram(np.random.default_rng(0).normal(size=200_000), RATE, max_frames=100)
    assert long.shape[1] <= 100
    short = spectrogram([0.1, 0.2], 8000)
    assert short.shape[1] == 1


def test_sample_rate_of():
    nsynth = {"sample_rate": ex.Feature("int64", [16000]), "pitch": ex.Feature("int64", [60])}
    assert sample_rate_of(nsynth) == 16000
    assert sample_rate_of({"audio/sample_rate": [22050.0]}) == 22050
    both = {"x/sample_rate": [8000], "audio/sample_rate": [44100]}
    assert sample_rate_of(both, "audio") == 44100
    for bad in ([0], [-5], [10**9], [1.5], [16000, 16000], [], [True], [b"16000"], [float("nan")]):
        assert sample_rate_of({"sample_rate": bad}) is None
    assert sample_rate_of({"frame_rate": [30]}) is None


def test_is_sample_list():
    assert is_sample_list("audio", ex.Feature("float", [0.0] * 64000))
    assert is_sample_list("speech/waveform", ex.Feature("int64", [0] * 300))
    assert not is_sample_list("audio", ex.Feature("float", [0.0] * 10))
    assert not is_sample_list("audio", ex.Feature("bytes", [b""] * 300))
    assert not is_sample_list("image/encoded", ex.Feature("float", [0.0] * 300))


# -- FLAC, Ogg, MP3 ---------------------------------------------------------------------------


def test_flac_written_without_a_dependency_is_described():
    data = gen.flac_bytes(tone(), RATE)
    info = describe_audio(data)
    assert info is not None and info.problem is None
    assert info.text() == "audio/flac 0.72 s 16 kHz mono"
    assert (info.bits, info.encoding) == (16, "flac")


def streaminfo(total: int, rate: int = 44100, channels: int = 2, bps: int = 16) -> bytes:
    packed = (rate << 44) | ((channels - 1) << 41) | ((bps - 1) << 36) | total
    info = struct.pack(">HH", 4096, 4096) + bytes(6) + packed.to_bytes(8, "big") + bytes(16)
    return b"fLaC" + b"\x80" + len(info).to_bytes(3, "big") + info


def test_flac_streaminfo_by_hand():
    data = streaminfo(44100 * 3) + bytes(5000)
    info = describe_audio(data)
    assert info.text() == "audio/flac 3.00 s 44.1 kHz stereo"
    assert info.bits == 16


def test_flac_declaring_more_samples_than_its_bytes_hold():
    info = describe_audio(streaminfo(2**36 - 1) + bytes(40))
    assert info is not None and info.seconds is None
    assert "declares 68,719,476,735 samples" in (info.problem or "")


def test_flac_without_streaminfo():
    info = describe_audio(b"fLaC" + b"\x84\x00\x00\x04abcd")
    assert info.problem == "no STREAMINFO block"
    assert describe_audio(b"fLaC").problem == "no STREAMINFO block"


def test_ogg_vorbis_and_opus():
    info = describe_audio(vorbis_ogg())
    assert info.text() == "audio/ogg 2.00 s 44.1 kHz stereo" and info.encoding == "vorbis"
    cut = describe_audio(vorbis_ogg(last=False))
    assert cut.estimated and cut.text().startswith("audio/ogg ≈ 2.00 s")
    opus = describe_audio(opus_ogg())
    assert opus.encoding == "opus" and opus.seconds == pytest.approx(1.0)
    assert describe_audio(b"OggS" + bytes(10)).problem == "the first page is cut short"


def test_mp3_duration_is_an_estimate():
    info = describe_audio(mp3_frames(100, id3=True))
    assert info.format == "mp3" and info.mime == "audio/mpeg" and info.estimated
    assert (info.sample_rate, info.channels, info.encoding) == (44100, 2, "mpeg-1 layer 3")
    assert info.seconds == pytest.approx(100 * 417 * 8 / 128000)
    assert info.text().startswith("audio/mpeg ≈ 2.61 s 44.1 kHz stereo")
    # A Xing header counts frames: 1152 samples each.
    first = bytearray(mp3_frames(1))
    first[4 + 32 : 4 + 32 + 12] = b"Xing" + struct.pack(">II", 1, 1000)
    xing = describe_audio(bytes(first) + mp3_frames(5))
    assert xing.seconds == pytest.approx(1000 * 1152 / 44100) and xing.estimated


# -- generators -------------------------------------------------------------------------------

NSYNTH_KEYS = {
    "note",
    "note_str",
    "instrument",
    "instrument_str",
    "pitch",
    "velocity",
    "sample_rate",
    "audio",
    "qualities",
    "qualities_str",
    "instrument_family",
    "instrument_family_str",
    "instrument_source",
    "instrument_source_str",
}


def test_nsynth_records(tmp_path):
    path = gen.write_nsynth(tmp_path / "nsynth-test.tfrecord", count=3)
    with TFRecordFile(path) as f:
        records = [ex.decode(p) for p in f]
    assert len(records) == 3
    for r in records:
        assert set(r.features) == NSYNTH_KEYS
        audio = np.array(r.features["audio"].values, dtype=np.float32)
        assert r.features["audio"].type == "float" and audio.size == 64000
        assert r.features["sample_rate"].values == [16000]
        assert len(r.features["qualities"].values) == 10
        assert float(np.sqrt(np.mean(audio[:48000] ** 2))) > 0.02  # a sound, not silence
        assert float(np.abs(audio[-200:]).max()) < float(np.abs(audio[:16000]).max()) / 5
        assert sample_rate_of(r.features) == 16000 and is_sample_list("audio", r.features["audio"])
        family = r.features["instrument_family_str"].values[0].decode()
        assert gen.NSYNTH_FAMILIES.index(family) == r.features["instrument_family"].values[0]
        note = r.features["note_str"].values[0].decode()
        pitch, velocity = r.features["pitch"].values[0], r.features["velocity"].values[0]
        assert note.endswith(f"-{pitch:03d}-{velocity:03d}")


def test_encoded_audio_records(tmp_path):
    path = gen.write_encoded_audio(tmp_path / "encoded_audio.tfrecord")
    with TFRecordFile(path) as f:
        records = [ex.decode(p) for p in f]
    formats = set()
    for r in records:
        data = r.features["audio/encoded"].values[0]
        info = describe_audio(data)
        assert info is not None and info.problem is None
        assert info.format == r.features["audio/format"].values[0].decode()
        assert info.sample_rate == r.features["audio/sample_rate"].values[0]
        formats.add(info.format)
    assert formats == {"wav", "flac"}


def test_audioset_records(tmp_path):
    path = gen.write_audioset(tmp_path, count=4)
    with TFRecordFile(path) as f:
        records = [ex.decode(p) for p in f]
    assert len(records) == 4
    known = {row[0] for row in gen.AUDIOSET_CLASSES}
    for r in records:
        assert r.kind == "sequence_example"
        assert set(r.features) == {"video_id", "start_time_seconds", "end_time_seconds", "labels"}
        assert len(r.features["video_id"].values[0]) == 11
        start, end = (
            r.features["start_time_seconds"].values[0],
            r.features["end_time_seconds"].values[0],
        )
        assert end - start == 10.0
        assert set(r.features["labels"].values) <= known
        steps = r.feature_lists["audio_embedding"]
        assert len(steps) == 10
        assert all(s.type == "bytes" and len(s.values[0]) == 128 for s in steps)
    csv = (tmp_path / "class_labels_indices.csv").read_text().splitlines()
    assert csv[0] == "index,mid,display_name" and csv[1] == '0,/m/09x0r,"Speech"'


# -- frame sequences: MediaPipe media_sequence (the other SequenceExample media layout) -------


def test_media_sequence_clips(tmp_path):
    import io

    from PIL import Image

    from browser_app.generators import sequences

    path = sequences.write_media_sequences(tmp_path / "clips.tfrecord", frames=6)
    with TFRecordFile(path) as f:
        records = [ex.decode(p) for p in f]
    assert [r.features["clip/label/string"].values[0].decode() for r in records] == list(
        sequences.CLIP_LABELS
    )
    region_keys = {f"region/bbox/{k}" for k in ("ymin", "xmin", "ymax", "xmax")} | {
        "region/label/index",
        "region/label/string",
        "region/timestamp",
        "region/is_annotated",
    }
    for r in records:
        c = r.features
        assert c["image/format"].values == [b"JPEG"] and c["image/frame_rate"].values == [8.0]
        assert (c["image/width"].values[0], c["image/height"].values[0]) == sequences.FRAME_SIZE
        assert c["clip/end/timestamp"].values == [750_000]
        index = c["clip/label/index"].values[0]
        assert sequences.CLIP_LABELS[index] == c["clip/label/string"].values[0].decode()
        lists = r.feature_lists
        assert set(lists) == {"image/encoded", "image/timestamp"} | region_keys
        assert all(len(steps) == 6 for steps in lists.values())
        assert [s.values[0] for s in lists["image/timestamp"]] == [k * 125_000 for k in range(6)]
        boxes = 0
        for i, step in enumerate(lists["image/encoded"]):
            with Image.open(io.BytesIO(step.values[0])) as im:
                assert im.format == "JPEG" and im.size == sequences.FRAME_SIZE
                assert np.asarray(im).std() > 10  # a photograph, not a flat colour
            n = len(lists["region/bbox/xmin"][i].values)
            assert all(
                len(lists[k][i].values) == n
                for k in region_keys - {"region/timestamp", "region/is_annotated"}
            )
            for k in ("ymin", "xmin", "ymax", "xmax"):
                assert all(0.0 <= v <= 1.0 for v in lists[f"region/bbox/{k}"][i].values)
            boxes += n
        assert boxes > 0


def test_mutated_audio_headers_never_raise():
    import random

    rng = random.Random(26)
    samples = [
        wav_bytes(tone(0.05), RATE),
        gen.encoded_audio("extensible", "stereo tone", 8000)[:600],
        gen.flac_bytes(tone(0.05), RATE),
        vorbis_ogg(),
        opus_ogg(),
        mp3_frames(4, id3=True),
    ]
    for base in samples:
        for _ in range(400):
            b = bytearray(base)
            for _ in range(rng.randint(1, 6)):
                b[rng.randrange(min(len(b), 96))] = rng.randrange(256)
            data = bytes(b[: rng.randint(0, len(b))]) if rng.random() < 0.3 else bytes(b)
            info = describe_audio(data)
            if info is not None:
                info.text()
            try:
                samples_of(data)
            except (DecodeError, UnsupportedError):
                pass


def test_a_data_chunk_before_fmt():
    pcm = np.arange(8, dtype="<i2").tobytes()
    info = describe_audio(riff(chunk(b"data", pcm), fmt_chunk(rate=8000)))
    assert info.problem is None and info.seconds == pytest.approx(8 / 8000)
