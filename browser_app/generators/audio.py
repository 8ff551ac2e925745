"""Audio datasets in the public layouts, with sound that sounds like something.

- :func:`write_nsynth`: NSynth records (magenta's ``nsynth-{train,valid,test}.tfrecord``
  features exactly: ``note``, ``note_str``, ``instrument``, ``instrument_str``, ``pitch``,
  ``velocity``, ``sample_rate``, ``audio`` (64,000 float32 samples, 4 s at 16 kHz),
  ``qualities`` (10 flags), ``qualities_str``, ``instrument_family``,
  ``instrument_family_str``, ``instrument_source``, ``instrument_source_str``). Each note is
  synthesised for its family (a plucked string, a mallet, an organ …): held for three seconds
  and let go for the last, as NSynth's notes are.
- :func:`write_encoded_audio`: Examples holding encoded audio under ``audio/encoded`` (WAV in
  several encodings, and FLAC written here without a dependency: verbatim subframes) with
  ``audio/format``, ``audio/sample_rate``, ``audio/channels``, ``audio/filename`` and a
  ``label``.
- :func:`write_audioset`: AudioSet's released embeddings: SequenceExamples with context
  ``video_id``, ``start_time_seconds``, ``end_time_seconds``, ``labels`` and the feature list
  ``audio_embedding`` (one 128-byte quantised embedding a second), and a
  ``class_labels_indices.csv`` (``index,mid,display_name``) beside them.

Every generator is deterministic: the same bytes on every run.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from codec import example as ex
from codec.audio import wav_bytes
from codec.writer import write_records

__all__ = [
    "AUDIOSET_CLASSES",
    "NSYNTH_FAMILIES",
    "NSYNTH_QUALITIES",
    "NSYNTH_RATE",
    "NSYNTH_SAMPLES",
    "encoded_audio",
    "flac_bytes",
    "nsynth_note",
    "nsynth_payload",
    "pcm_wav",
    "write_audioset",
    "write_encoded_audio",
    "write_nsynth",
]

NSYNTH_RATE = 16_000
NSYNTH_SAMPLES = 64_000
NSYNTH_FAMILIES = (
    "bass",
    "brass",
    "flute",
    "guitar",
    "keyboard",
    "mallet",
    "organ",
    "reed",
    "string",
    "synth_lead",
    "vocal",
)
NSYNTH_SOURCES = ("acoustic", "electronic", "synthetic")
NSYNTH_QUALITIES = (
    "bright",
    "dark",
    "distortion",
    "fast_decay",
    "long_release",
    "multiphonic",
    "nonlinear_env",
    "percussive",
    "reverb",
    "tempo-synced",
)

# (family, source, pitch, velocity, qualities): a spread of what NSynth holds.
_NOTES = (
    ("guitar", "acoustic", 52, 100, ("bright", "percussive")),
    ("keyboard", "acoustic", 60, 75, ("dark", "reverb")),
    ("mallet", "acoustic", 72, 127, ("fast_decay", "percussive")),
    ("organ", "electronic", 48, 50, ("dark",)),
    ("bass", "synthetic", 36, 100, ("distortion",)),
    ("flute", "acoustic", 79, 75, ("bright",)),
    ("brass", "acoustic", 55, 127, ("bright", "nonlinear_env")),
    ("string", "acoustic", 64, 50, ("long_release", "reverb")),
    ("reed", "acoustic", 58, 100, ()),
    ("synth_lead", "synthetic", 67, 127, ("bright", "distortion")),
    ("vocal", "acoustic", 57, 75, ("dark",)),
    ("guitar", "electronic", 45, 25, ("long_release",)),
)


def _hz(pitch: int) -> float:
    return 440.0 * 2.0 ** ((pitch - 69) / 12)


def nsynth_note(family: str, pitch: int, velocity: int, seed: int = 0) -> np.ndarray:
    """Four seconds at 16 kHz (64,000 float32 values in [-1, 1]) of ``family`` playing MIDI
    ``pitch`` at ``velocity``: held for 3 s, released over the last second."""
    rng = np.random.default_rng(seed)
    t = np.arange(NSYNTH_SAMPLES, dtype=np.float64) / NSYNTH_RATE
    f0 = _hz(pitch)
    plucked = family in ("guitar", "bass", "keyboard", "mallet")
    # harmonic amplitudes and per-harmonic decay (1/s) by family
    if family == "mallet":
        partials = [(1.0, 1.0, 3.0), (0.5, 3.93, 9.0), (0.25, 9.54, 16.0)]  # a bar's modes
    elif family == "organ":
        partials = [(1.0 / k, float(k), 0.0) for k in (1, 2, 3, 4, 6, 8)]
    elif family in ("flute", "vocal"):
        partials = [(1.0, 1.0, 0.0), (0.3, 2.0, 0.0), (0.1, 3.0, 0.0)]
    elif family in ("brass", "reed", "synth_lead"):
        partials = [(1.0 / k, float(k), 0.0) for k in range(1, 12)]
    elif family == "string":
        partials = [(1.0 / k, float(k), 0.1 * k) for k in range(1, 10)]
    else:  # plucked strings and keys: bright attack, upper harmonics die first
        partials = [(1.0 / k**1.2, float(k), 0.8 + 0.9 * k) for k in range(1, 14)]
    signal = np.zeros_like(t)
    vibrato = 1.0 + (0.004 * np.sin(2 * np.pi * 5.5 * t) if family in ("flute", "vocal") else 0)
    for amp, ratio, decay in partials:
        f = f0 * ratio
        if f >= NSYNTH_RATE / 2:
            continue
        phase = rng.uniform(0, 2 * np.pi)
        signal += amp * np.exp(-decay * t) * np.sin(2 * np.pi * f * t * vibrato + phase)
    if family == "synth_lead":
        signal = np.tanh(2.5 * signal)
    # envelope: attack, hold to 3 s, release over the last second
    attack = 0.005 if plucked else 0.06
    env = np.minimum(1.0, t / attack)
    release = t >= 3.0
    env[release] *= np.exp(-(t[release] - 3.0) * 6.0)
    if plucked:
        env *= np.exp(-0.7 * t)
    signal *= env
    noise = rng.normal(0.0, 0.002, t.size) * env
    signal += noise
    peak = float(np.abs(signal).max()) or 1.0
    gain = 0.25 + 0.7 * velocity / 127
    return (signal / peak * gain).astype(np.float32)


def nsynth_payload(index: int, family: str, source: str, pitch: int, velocity: int,
                   qualities: Sequence[str]) -> bytes:  # fmt: skip
    """One NSynth record, with every feature of the released files."""
    instrument_str = f"{family}_{source}_{index % 1000:03d}"
    note_str = f"{instrument_str}-{pitch:03d}-{velocity:03d}"
    flags = [1 if q in qualities else 0 for q in NSYNTH_QUALITIES]
    audio = nsynth_note(family, pitch, velocity, seed=index)
    return ex.encode_example(
        {
            "note": ("int64", [100_000 + index * 7919]),
            "note_str": ("bytes", [note_str]),
            "instrument": ("int64", [index]),
            "instrument_str": ("bytes", [instrument_str]),
            "pitch": ("int64", [pitch]),
            "velocity": ("int64", [velocity]),
            "sample_rate": ("int64", [NSYNTH_RATE]),
            "audio": ("float", audio.tolist()),
            "qualities": ("int64", flags),
            "qualities_str": ("bytes", [q for q in NSYNTH_QUALITIES if q in qualities]),
            "instrument_family": ("int64", [NSYNTH_FAMILIES.index(family)]),
            "instrument_family_str": ("bytes", [family]),
            "instrument_source": ("int64", [NSYNTH_SOURCES.index(source)]),
            "instrument_source_str": ("bytes", [source]),
        }
    )


def write_nsynth(path: str | Path, count: int = len(_NOTES)) -> Path:
    """``count`` NSynth records (at most :data:`_NOTES`' 12 kinds, repeated an octave up
    beyond that) to ``path`` (``nsynth-test.tfrecord`` is the released name)."""
    payloads = []
    for i in range(count):
        family, source, pitch, velocity, qualities = _NOTES[i % len(_NOTES)]
        pitch += 12 * (i // len(_NOTES))
        payloads.append(nsynth_payload(i, family, source, min(pitch, 108), velocity, qualities))
    out = Path(path)
    write_records(out, payloads)
    return out


# --------------------------------------------------------------------------------------------
# Encoded audio: WAV of every encoding the codec reads, and FLAC


def pcm_wav(
    samples: np.ndarray,
    sample_rate: int,
    *,
    bits: int = 16,
    floating: bool = False,
    extensible: bool = False,
) -> bytes:
    """A WAV of ``samples`` (float in [-1, 1], shape ``(frames,)`` or ``(frames, channels)``)
    as PCM of ``bits`` (8, 16, 24 or 32) or IEEE float (32), optionally in the
    ``WAVE_FORMAT_EXTENSIBLE`` header."""
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    channels = arr.shape[1]
    flat = np.clip(arr, -1.0, 1.0).reshape(-1)
    if floating:
        data = flat.astype("<f4").tobytes()
        bits, tag = 32, 3
    elif bits == 8:
        data = np.round(flat * 127 + 128).astype(np.uint8).tobytes()
        tag = 1
    elif bits == 16:
        data = np.round(flat * 32767).astype("<i2").tobytes()
        tag = 1
    elif bits == 24:
        v = np.round(flat * (2**23 - 1)).astype("<i4")
        data = v.view(np.uint8).reshape(-1, 4)[:, :3].tobytes()
        tag = 1
    else:
        data = np.round(flat * (2**31 - 1)).astype("<i4").tobytes()
        tag = 1
    block = channels * bits // 8
    common = struct.pack("<HIIHH", channels, sample_rate, sample_rate * block, block, bits)
    if extensible:
        guid_tail = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
        mask = (1 << channels) - 1
        fmt = struct.pack("<H", 0xFFFE) + common + struct.pack("<HHI", 22, bits, mask)
        fmt += struct.pack("<H", tag) + guid_tail
    else:
        fmt = struct.pack("<H", tag) + common
    chunks = b"fmt " + struct.pack("<I", len(fmt)) + fmt
    if floating or extensible:
        chunks += b"fact" + struct.pack("<II", 4, arr.shape[0])
    chunks += b"data" + struct.pack("<I", len(data)) + data + (b"\x00" if len(data) & 1 else b"")
    return b"RIFF" + struct.pack("<I", 4 + len(chunks)) + b"WAVE" + chunks


def _crc8(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def _crc16_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        table.append(crc)
    return table


_CRC16 = _crc16_table()


def _crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16[(crc >> 8) ^ byte]
    return crc


def _utf8_number(n: int) -> bytes:
    """FLAC's "UTF-8" coding of a frame number (up to 31 bits)."""
    if n < 0x80:
        return bytes([n])
    for length, limit in ((2, 1 << 11), (3, 1 << 16), (4, 1 << 21), (5, 1 << 26), (6, 1 << 31)):
        if n < limit:
            tail = [0x80 | ((n >> (6 * k)) & 0x3F) for k in range(length - 1)][::-1]
            lead = (0xFF << (8 - length)) & 0xFF | (n >> (6 * (length - 1)))
            return bytes([lead, *tail])
    raise ValueError(f"frame number {n} is too large")


def flac_bytes(samples: np.ndarray, sample_rate: int, block: int = 4096) -> bytes:
    """A valid 16-bit FLAC stream of ``samples`` (float in [-1, 1], ``(frames,)`` or
    ``(frames, channels)``), written with VERBATIM subframes (no compression, no
    dependency): the ``fLaC`` marker, a STREAMINFO block with the MD5 of the samples, then
    one frame per ``block`` samples with its CRC-8 header check and CRC-16."""
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    pcm = np.round(np.clip(arr, -1.0, 1.0) * 32767).astype(np.int16)
    frames_total, channels = pcm.shape
    frames = []
    for number, start in enumerate(range(0, frames_total, block)):
        chunk = pcm[start : start + block]
        n = chunk.shape[0]
        header = bytearray(b"\xff\xf8")  # sync, fixed block size
        header.append((0b0111 << 4) | 0b0000)  # 16-bit (size-1) at the end; rate: STREAMINFO
        header.append(((channels - 1) << 4) | (0b100 << 1))  # independent channels, 16 bits
        header += _utf8_number(number)
        header += struct.pack(">H", n - 1)
        header.append(_crc8(bytes(header)))
        body = bytearray(header)
        for c in range(channels):
            body.append(0b00000010)  # subframe: VERBATIM, no wasted bits
            body += chunk[:, c].astype(">i2").tobytes()
        body += struct.pack(">H", _crc16(bytes(body)))
        frames.append(bytes(body))
    sizes = [len(f) for f in frames] or [0]
    md5 = hashlib.md5(pcm.astype("<i2").tobytes()).digest()
    info = struct.pack(">HH", block, block)
    info += min(sizes).to_bytes(3, "big") + max(sizes).to_bytes(3, "big")
    packed = (sample_rate << 44) | ((channels - 1) << 41) | (15 << 36) | frames_total
    info += packed.to_bytes(8, "big") + md5
    streaminfo = bytes([0x80]) + len(info).to_bytes(3, "big") + info  # last metadata block
    return b"fLaC" + streaminfo + b"".join(frames)


def _tone(seconds: float, rate: int, hz: float, *, channels: int = 1) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    env = np.minimum(1.0, t / 0.01) * np.exp(-2.5 * t)
    mono = 0.6 * env * (np.sin(2 * np.pi * hz * t) + 0.3 * np.sin(2 * np.pi * 2 * hz * t)) / 1.3
    if channels == 1:
        return mono
    pan = np.linspace(0.2, 1.0, channels)
    return np.stack([mono * p for p in pan], axis=1)


def _chirp(seconds: float, rate: int) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    f = 300 + 2500 * t / seconds
    phase = 2 * np.pi * np.cumsum(f) / rate
    return 0.5 * np.sin(phase) * np.minimum(1.0, t / 0.02) * np.minimum(1.0, (seconds - t) / 0.05)


# (file name, label, sample rate, how it is encoded)
_ENCODED = (
    ("bell_16k.wav", "bell", 16000, "pcm16"),
    ("chirp_8bit.wav", "chirp", 8000, "pcm8"),
    ("pluck_24bit.wav", "pluck", 22050, "pcm24"),
    ("pad_float.wav", "pad", 16000, "float32"),
    ("stereo_ext.wav", "stereo tone", 44100, "extensible"),
    ("bell.flac", "bell", 16000, "flac"),
    ("chirp.flac", "chirp", 22050, "flac"),
    ("pluck_32bit.wav", "pluck", 16000, "pcm32"),
)


def encoded_audio(kind: str, label: str, rate: int) -> bytes:
    """The encoded audio of one :data:`_ENCODED` row."""
    hz = {"bell": 880.0, "pluck": 330.0, "pad": 220.0, "stereo tone": 440.0}.get(label, 0.0)
    samples = _chirp(0.72, rate) if label == "chirp" else _tone(0.72, rate, hz)
    if kind == "pcm16":
        return wav_bytes(samples.astype(np.float32), rate)
    if kind == "pcm8":
        return pcm_wav(samples, rate, bits=8)
    if kind == "pcm24":
        return pcm_wav(samples, rate, bits=24)
    if kind == "pcm32":
        return pcm_wav(samples, rate, bits=32)
    if kind == "float32":
        return pcm_wav(samples, rate, floating=True)
    if kind == "extensible":
        return pcm_wav(_tone(0.72, rate, hz, channels=2), rate, extensible=True)
    return flac_bytes(samples, rate)


def write_encoded_audio(path: str | Path) -> Path:
    """Examples of encoded audio (``audio/encoded``): WAV of 8/16/24/32-bit PCM, float32 and
    WAVE_FORMAT_EXTENSIBLE stereo, and FLAC; each 0.72 s."""
    payloads = []
    for name, label, rate, kind in _ENCODED:
        audio = encoded_audio(kind, label, rate)
        payloads.append(
            ex.encode_example(
                {
                    "audio/encoded": ("bytes", [audio]),
                    "audio/format": ("bytes", ["flac" if kind == "flac" else "wav"]),
                    "audio/sample_rate": ("int64", [rate]),
                    "audio/channels": ("int64", [2 if kind == "extensible" else 1]),
                    "audio/filename": ("bytes", [name]),
                    "label": ("bytes", [label]),
                }
            )
        )
    out = Path(path)
    write_records(out, payloads)
    return out


# --------------------------------------------------------------------------------------------
# AudioSet

# A few rows of AudioSet's class_labels_indices.csv (index, mid, display name).
AUDIOSET_CLASSES = (
    (0, "/m/09x0r", "Speech"),
    (72, "/m/0jbk", "Animal"),
    (74, "/m/0bt9lr", "Dog"),
    (75, "/m/05tny_", "Bark"),
    (81, "/m/01yrx", "Cat"),
    (111, "/m/015p6", "Bird"),
    (137, "/m/04rlf", "Music"),
    (300, "/m/07yv9", "Vehicle"),
)
_IDS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"


def _video_id(rng: np.random.Generator) -> str:
    return "".join(_IDS[int(i)] for i in rng.integers(0, len(_IDS), 11))


def write_audioset(folder: str | Path, count: int = 12, *, name: str = "bal_train00.tfrecord"
                   ) -> Path:  # fmt: skip
    """AudioSet-style SequenceExamples into ``folder/name``, and ``class_labels_indices.csv``
    beside them. Each is a 10 s segment: 10 embeddings of 128 quantised bytes (smooth in
    time, as VGGish embeddings of one sound are)."""
    rng = np.random.default_rng(26)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    indices = [row[0] for row in AUDIOSET_CLASSES]
    payloads = []
    for i in range(count):
        start = float(rng.integers(0, 60) * 10)
        labels = sorted({indices[i % len(indices)], indices[(i * 3 + 1) % len(indices)]})
        base = rng.normal(128, 40, 128)
        steps = []
        for s in range(10):
            drift = 12 * np.sin(s / 3 + np.arange(128) / 9)
            emb = np.clip(base + drift + rng.normal(0, 6, 128), 0, 255).astype(np.uint8)
            steps.append(("bytes", [emb.tobytes()]))
        payloads.append(
            ex.encode_sequence_example(
                {
                    "video_id": ("bytes", [_video_id(rng)]),
                    "start_time_seconds": ("float", [start]),
                    "end_time_seconds": ("float", [start + 10.0]),
                    "labels": ("int64", labels),
                },
                {"audio_embedding": steps},
            )
        )
    path = out / name
    write_records(path, payloads)
    rows = ["index,mid,display_name"] + [f'{i},{mid},"{n}"' for i, mid, n in AUDIOSET_CLASSES]
    (out / "class_labels_indices.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path
