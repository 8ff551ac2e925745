"""Audio in records: encoded audio recognised by magic number (as pictures are), its length
and format read from its headers, and sample lists (NSynth's 64,000 float32 values, TFDS
``Audio`` int16 lists) made playable and drawable.

Pure functions over bytes and numpy arrays; nothing here reads a file.

Formats (:func:`sniff_audio`, :func:`describe_audio`):

- ``wav``: RIFF/WAVE (and RF64/WAVE). The chunks are walked, at most :data:`MAX_CHUNKS` of
  them and never past the bytes present; ``fmt `` gives the encoding (PCM 8/16/24/32 bit,
  IEEE float 32/64 bit, ``WAVE_FORMAT_EXTENSIBLE`` read through its sub-format GUID), ``data``
  the samples. A ``data`` size (or RF64 ``ds64`` / ``fact`` sample count) larger than what is
  present is said as a problem and the length comes from the bytes that are there.
- ``flac``: the ``fLaC`` marker and the STREAMINFO block (sample rate, channels, bits, total
  samples). A total that the bytes present could not hold, at FLAC's smallest frame for the
  stream's largest block, is a problem and gives no length.
- ``ogg``: the first page's identification header, Vorbis (``\\x01vorbis``) or Opus
  (``OpusHead``), Ogg FLAC and Speex by name; the length from the granule position of the
  last page present (Opus: 48 kHz less the pre-skip); estimated when that page does not end
  the stream.
- ``mp3``: an ID3v2 tag skipped, then the first MPEG audio frame header (version, layer,
  bitrate, sample rate, channels). A bare frame (no tag) counts only when the next frame
  header follows where the first ends. The length is always an *estimate* (``estimated``):
  from the Xing/Info frame count when there is one, else from the bitrate and byte count.

Samples (:func:`samples_of`, :func:`wav_bytes`, :func:`waveform`, :func:`spectrogram`):
every array allocated here is proportional to the bytes or values present, never to a size
a header declares.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from codec.errors import DecodeError, EncodeError, UnsupportedError

__all__ = [
    "AUDIO_FORMATS",
    "MAX_CHUNKS",
    "MIN_SAMPLES",
    "AudioInfo",
    "channels_text",
    "describe_audio",
    "is_sample_list",
    "rate_text",
    "sample_rate_of",
    "samples_of",
    "sniff_audio",
    "spectrogram",
    "wav_bytes",
    "waveform",
]

# format -> MIME type (what a browser's audio element is told).
AUDIO_FORMATS: dict[str, str] = {
    "wav": "audio/wav",
    "flac": "audio/flac",
    "ogg": "audio/ogg",
    "mp3": "audio/mpeg",
}

MAX_CHUNKS = 256  # RIFF chunks walked before giving up on finding fmt / data
_ID3_SEARCH = 4096  # bytes after an ID3 tag searched for the first frame sync
_MAX_RATE = 768_000


@dataclass(frozen=True)
class AudioInfo:
    """What the headers of encoded audio say. ``seconds``, ``sample_rate``, ``channels`` and
    ``bits`` are ``None`` when not known; ``estimated`` when ``seconds`` is an estimate (MP3,
    a cut-off Ogg stream); ``encoding`` the codec inside the container (``"pcm"``,
    ``"float"``, ``"vorbis"``, ``"opus"``, ``"mpeg-1 layer 3"`` …); ``problem`` a header that
    does not agree with the bytes present, in words."""

    format: str
    mime: str
    seconds: float | None
    sample_rate: int | None
    channels: int | None
    bits: int | None
    estimated: bool = False
    encoding: str = ""
    problem: str | None = None

    def text(self) -> str:
        """``"audio/wav 0.72 s 16 kHz mono"``; ``"audio/mpeg ≈ 3.14 s 44.1 kHz stereo"`` for
        an estimate; the parts not known are left out."""
        parts = [self.mime]
        if self.seconds is not None:
            parts.append(("≈ " if self.estimated else "") + f"{self.seconds:.2f} s")
        if self.sample_rate:
            parts.append(rate_text(self.sample_rate))
        if self.channels:
            parts.append(channels_text(self.channels))
        return " ".join(parts)


def rate_text(rate: float) -> str:
    """``16000`` → ``"16 kHz"``, ``44100`` → ``"44.1 kHz"``, ``22050`` → ``"22.05 kHz"``,
    ``500`` → ``"500 Hz"``."""
    if rate < 1000:
        return f"{rate:g} Hz"
    return f"{rate / 1000:.3f}".rstrip("0").rstrip(".") + " kHz"


def channels_text(channels: int) -> str:
    return {1: "mono", 2: "stereo"}.get(channels, f"{channels} channels")


# --------------------------------------------------------------------------------------------
# Sniffing


def sniff_audio(b: bytes | memoryview) -> str | None:
    """The audio format of ``b`` by magic number (``"wav"``, ``"flac"``, ``"ogg"``,
    ``"mp3"``), or ``None``. Looks at the first bytes only (an MP3 without an ID3 tag: its
    first two frame headers)."""
    if len(b) < 4:
        return None
    head = bytes(b[:4])
    if head in (b"RIFF", b"RF64") and bytes(b[8:12]) == b"WAVE":
        return "wav"
    if head == b"fLaC":
        return "flac"
    if head == b"OggS":
        return "ogg"
    if head[:3] == b"ID3":
        start = _id3_end(b)
        if start is None:
            return None
        if bytes(b[start : start + 4]) == b"fLaC":
            return "flac"
        return "mp3" if _first_frame(b, start, _ID3_SEARCH) is not None else None
    if b[0] == 0xFF and _frame_at(b, 0) is not None and _next_frame_checks(b, 0):
        return "mp3"
    return None


def describe_audio(b: bytes | memoryview) -> AudioInfo | None:
    """What ``b``'s headers say (see the module docstring), or ``None`` when it is not audio
    of a known format. Never raises on bad input: a header that cannot be read gives an
    :class:`AudioInfo` with a ``problem``."""
    fmt = sniff_audio(b)
    if fmt is None:
        return None
    try:
        if fmt == "wav":
            return _describe_wav(b)
        if fmt == "flac":
            return _describe_flac(b)
        if fmt == "ogg":
            return _describe_ogg(b)
        return _describe_mp3(b)
    except (struct.error, IndexError, ValueError) as exc:  # a header cut short
        return AudioInfo(fmt, AUDIO_FORMATS[fmt], None, None, None, None, problem=str(exc))


# --------------------------------------------------------------------------------------------
# WAV

_PCM = 1
_FLOAT = 3
_EXTENSIBLE = 0xFFFE
_WAV_ENCODINGS = {
    1: "pcm",
    2: "ms adpcm",
    3: "float",
    6: "a-law",
    7: "µ-law",
    0x11: "ima adpcm",
    0x55: "mp3",
}


@dataclass(frozen=True)
class _Wav:
    tag: int
    channels: int
    rate: int
    block: int
    bits: int
    data_start: int
    data_present: int  # bytes of the data chunk actually there
    fact: int | None  # the samples per channel a fact chunk declares
    problem: str | None


def _chunks(b: bytes | memoryview, start: int) -> list[tuple[bytes, int, int]]:
    """``(id, data start, declared size)`` of the RIFF chunks from ``start``: at most
    :data:`MAX_CHUNKS`, stopping at the first header that is not all there."""
    out: list[tuple[bytes, int, int]] = []
    pos = start
    n = len(b)
    while pos + 8 <= n and len(out) < MAX_CHUNKS:
        cid = bytes(b[pos : pos + 4])
        (size,) = struct.unpack_from("<I", b, pos + 4)
        out.append((cid, pos + 8, size))
        pos += 8 + size + (size & 1)  # past the end for a data chunk that says 0xFFFFFFFF
    return out


def _parse_wav(b: bytes | memoryview) -> _Wav:
    n = len(b)
    rf64 = bytes(b[:4]) == b"RF64"
    fmt: tuple[int, int, int, int, int] | None = None
    data: tuple[int, int] | None = None
    big_data: int | None = None
    fact: int | None = None
    for cid, start, size in _chunks(b, 12):
        if cid == b"fmt ":
            if size < 16 or start + 16 > n:
                raise ValueError("the fmt chunk is cut short")
            tag, channels, rate, _byte_rate, block, bits = struct.unpack_from("<HHIIHH", b, start)
            if tag == _EXTENSIBLE and size >= 40 and start + 40 <= n:
                (sub,) = struct.unpack_from("<H", b, start + 24)
                tag = sub
            fmt = (tag, channels, rate, block, bits)
        elif cid == b"ds64" and start + 24 <= n:
            (big_data,) = struct.unpack_from("<Q", b, start + 8)
        elif cid == b"fact" and start + 4 <= n:
            (fact,) = struct.unpack_from("<I", b, start)
        elif cid == b"data" and data is None:
            data = (start, size)
    if fmt is None:
        raise ValueError("no fmt chunk")
    tag, channels, rate, block, bits = fmt
    if data is None:
        return _Wav(tag, channels, rate, block, bits, n, 0, fact, "no data chunk")
    start, declared = data
    if rf64 and declared == 0xFFFFFFFF and big_data is not None:
        declared = big_data
    present = max(0, min(declared, n - start))
    problem = None
    if declared > present:
        problem = f"the data chunk declares {declared:,} bytes; {present:,} are present"
    return _Wav(tag, channels, rate, block, bits, start, present, fact, problem)


def _describe_wav(b: bytes | memoryview) -> AudioInfo:
    w = _parse_wav(b)
    encoding = _WAV_ENCODINGS.get(w.tag, f"format 0x{w.tag:04x}")
    problem = w.problem
    seconds = None
    if not 0 < w.rate <= _MAX_RATE:
        problem = problem or f"a sample rate of {w.rate:,} Hz"
    elif w.block > 0 and w.tag in (_PCM, _FLOAT, 6, 7):
        seconds = (w.data_present // w.block) / w.rate
    elif w.fact is not None and w.bits > 0 and w.channels > 0:
        # Compressed (ADPCM …): the fact chunk counts the samples; no codec stores fewer
        # than ``bits`` bits a sample, so a count beyond that is not what is present.
        most = w.data_present * 8 // (w.bits * w.channels)
        if w.fact > most:
            problem = problem or (
                f"the fact chunk declares {w.fact:,} samples; {w.data_present:,} bytes of"
                f" {w.bits}-bit data hold at most {most:,}"
            )
        else:
            seconds = w.fact / w.rate
    return AudioInfo(
        "wav",
        AUDIO_FORMATS["wav"],
        seconds,
        w.rate or None,
        w.channels or None,
        w.bits or None,
        encoding=encoding,
        problem=problem,
    )


def samples_of(b: bytes | memoryview, *, max_frames: int | None = None) -> np.ndarray:
    """The samples of a PCM or float WAV as float32 in [-1, 1], shape ``(frames,
    channels)``: at most ``max_frames`` frames, and never more than the bytes present hold.

    Raises :class:`DecodeError` when ``b`` is not a WAV (or its header is unreadable) and
    :class:`UnsupportedError` for an encoding other than PCM 8/16/24/32 bit or float 32/64
    bit (ADPCM, µ-law …)."""
    if sniff_audio(b) != "wav":
        raise DecodeError("not a WAV file (no RIFF/WAVE header)")
    try:
        w = _parse_wav(b)
    except (struct.error, ValueError) as exc:
        raise DecodeError(f"WAV header: {exc}") from exc
    if w.channels < 1:
        raise DecodeError("WAV header: no channels")
    width = w.bits // 8 if w.bits % 8 == 0 else 0
    drawable = {_PCM: (1, 2, 3, 4), _FLOAT: (4, 8)}
    if width not in drawable.get(w.tag, ()):
        raise UnsupportedError(
            f"WAV {_WAV_ENCODINGS.get(w.tag, f'format 0x{w.tag:04x}')} {w.bits}-bit samples"
            " cannot be drawn"
        )
    frame = width * w.channels
    frames = w.data_present // frame
    if max_frames is not None:
        frames = min(frames, max(0, max_frames))
    raw = np.frombuffer(b, dtype=np.uint8, count=frames * frame, offset=w.data_start)
    if w.tag == _FLOAT:
        out = raw.view("<f4" if width == 4 else "<f8").astype(np.float32)
    elif width == 1:
        out = (raw.astype(np.float32) - 128.0) / 128.0
    elif width == 2:
        out = raw.view("<i2").astype(np.float32) / 32768.0
    elif width == 3:
        trip = raw.reshape(-1, 3).astype(np.int32)
        value = trip[:, 0] | (trip[:, 1] << 8) | (trip[:, 2] << 16)
        value = np.where(value & 0x800000, value - (1 << 24), value)
        out = value.astype(np.float32) / float(1 << 23)
    else:
        out = raw.view("<i4").astype(np.float32) / float(1 << 31)
    return out.reshape(frames, w.channels)


def wav_bytes(samples: Any, sample_rate: int) -> bytes:
    """A playable 16-bit PCM WAV of ``samples``: a 1-D list or array (mono) or a 2-D one of
    shape ``(frames, channels)``.

    Float values are taken in [-1, 1] (NSynth); a float list whose peak is beyond 1 is scaled
    down by its peak rather than clipped. Integer values are taken as 16-bit samples (TFDS
    ``Audio``'s int16 lists) and clipped to that range. Raises :class:`EncodeError` for a
    sample rate outside 1 Hz to 768 kHz or values that are not numbers."""
    if not isinstance(sample_rate, (int, np.integer)) or not 0 < int(sample_rate) <= _MAX_RATE:
        raise EncodeError(f"a sample rate of {sample_rate!r} Hz is outside 1 Hz to 768 kHz")
    try:
        arr = np.asarray(samples)
    except (TypeError, ValueError) as exc:
        raise EncodeError(f"samples are not numbers: {exc}") from exc
    if arr.dtype.kind not in "iufb":
        raise EncodeError(f"samples of dtype {arr.dtype} are not numbers")
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2 or not 1 <= arr.shape[1] <= 64:
        raise EncodeError(f"samples of shape {arr.shape} are not (frames,) or (frames, channels)")
    if arr.dtype.kind == "f":
        f = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=1.0, neginf=-1.0)
        peak = float(np.abs(f).max()) if f.size else 0.0
        if peak > 1.0:
            f = f / peak
        pcm = np.clip(np.round(f * 32767.0), -32768, 32767).astype("<i2")
    else:
        pcm = np.clip(arr.astype(np.int64), -32768, 32767).astype("<i2")
    channels = pcm.shape[1]
    data = pcm.tobytes()
    rate = int(sample_rate)
    fmt = struct.pack("<HHIIHH", _PCM, channels, rate, rate * channels * 2, channels * 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt
    body += b"data" + struct.pack("<I", len(data)) + data
    if len(data) & 1:
        body += b"\x00"
    return b"RIFF" + struct.pack("<I", len(body)) + body


# --------------------------------------------------------------------------------------------
# FLAC

_FLAC_MIN_FRAME = 10  # frame header (≥ 6 bytes), a CONSTANT subframe (≥ 2), CRC-16 (2)


def _describe_flac(b: bytes | memoryview) -> AudioInfo:
    start = 0
    if bytes(b[:3]) == b"ID3":
        start = _id3_end(b) or 0
    pos = start + 4
    n = len(b)
    info: tuple[int, int, int, int, int] | None = None
    blocks = 0
    last = False
    while pos + 4 <= n and not last and blocks < MAX_CHUNKS:
        head = b[pos]
        last = bool(head & 0x80)
        kind = head & 0x7F
        length = int.from_bytes(bytes(b[pos + 1 : pos + 4]), "big")
        if kind == 0 and length >= 34 and pos + 4 + 34 <= n:
            s = bytes(b[pos + 4 : pos + 4 + 34])
            max_block = int.from_bytes(s[2:4], "big")
            bits = int.from_bytes(s[10:18], "big")
            rate = bits >> 44
            channels = ((bits >> 41) & 0x7) + 1
            bps = ((bits >> 36) & 0x1F) + 1
            total = bits & ((1 << 36) - 1)
            info = (rate, channels, bps, total, max_block)
        pos += 4 + length
        blocks += 1
    mime = AUDIO_FORMATS["flac"]
    if info is None:
        return AudioInfo("flac", mime, None, None, None, None, problem="no STREAMINFO block")
    rate, channels, bps, total, max_block = info
    problem = None
    seconds = None
    audio_bytes = max(0, n - pos)
    # Every frame holds at most max_block samples (65,535 when the header says 0) and takes at
    # least _FLAC_MIN_FRAME bytes per channel-less frame: more than that cannot be present.
    most = (audio_bytes // _FLAC_MIN_FRAME) * (max_block or 65535)
    if rate == 0 or rate > _MAX_RATE:
        problem = f"a sample rate of {rate:,} Hz"
    elif total > most:
        problem = (
            f"STREAMINFO declares {total:,} samples; {audio_bytes:,} bytes of frames cannot"
            f" hold more than {most:,}"
        )
    elif total:
        seconds = total / rate
    return AudioInfo(
        "flac", mime, seconds, rate or None, channels, bps, encoding="flac", problem=problem
    )


# --------------------------------------------------------------------------------------------
# Ogg


def _ogg_page(b: bytes | memoryview, pos: int) -> tuple[int, int, int, int] | None:
    """``(header type, granule, body start, body length)`` of the page at ``pos``."""
    if bytes(b[pos : pos + 4]) != b"OggS" or pos + 27 > len(b):
        return None
    htype = b[pos + 5]
    (granule,) = struct.unpack_from("<q", b, pos + 6)
    nseg = b[pos + 26]
    if pos + 27 + nseg > len(b):
        return None
    body = sum(bytes(b[pos + 27 : pos + 27 + nseg]))
    return htype, granule, pos + 27 + nseg, body


def _describe_ogg(b: bytes | memoryview) -> AudioInfo:
    mime = AUDIO_FORMATS["ogg"]
    first = _ogg_page(b, 0)
    if first is None:
        return AudioInfo("ogg", mime, None, None, None, None, problem="the first page is cut short")
    _, _, body, _ = first
    packet = bytes(b[body : body + 64])
    rate: int | None = None
    channels: int | None = None
    clock = 0  # the granule clock, Hz
    pre_skip = 0
    if packet.startswith(b"\x01vorbis") and len(packet) >= 16:
        encoding = "vorbis"
        channels = packet[11]
        (rate,) = struct.unpack_from("<I", packet, 12)
        clock = rate
    elif packet.startswith(b"OpusHead") and len(packet) >= 16:
        encoding = "opus"
        channels = packet[9]
        (pre_skip,) = struct.unpack_from("<H", packet, 10)
        (rate,) = struct.unpack_from("<I", packet, 12)  # the input's rate, for information
        clock = 48000
    elif packet.startswith(b"\x7fFLAC") and len(packet) >= 9 + 4 + 34:
        encoding = "flac"
        s = packet[17 : 17 + 34]
        bits = int.from_bytes(s[10:18], "big")
        rate = bits >> 44
        channels = ((bits >> 41) & 0x7) + 1
        clock = rate
    elif packet.startswith(b"Speex   ") and len(packet) >= 52:
        encoding = "speex"
        (rate,) = struct.unpack_from("<I", packet, 36)
        (channels,) = struct.unpack_from("<I", packet, 48)
        clock = rate
    else:
        encoding = "unknown"
    seconds = None
    estimated = False
    tail_start = max(0, len(b) - 65536)
    last = bytes(b[tail_start:]).rfind(b"OggS")
    page = _ogg_page(b, tail_start + last) if last >= 0 else None
    if page is not None and clock and 0 < (rate or 0) <= _MAX_RATE:
        htype, granule, _, _ = page
        if granule > 0:
            seconds = max(0, granule - pre_skip) / clock
            estimated = not htype & 0x04  # not the end-of-stream page: the stream is cut
    return AudioInfo(
        "ogg", mime, seconds, rate or None, channels or None, None, estimated, encoding
    )


# --------------------------------------------------------------------------------------------
# MP3

_BITRATES = {
    (1, 1): (32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    (1, 2): (32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    (1, 3): (32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    (2, 1): (32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    (2, 2): (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
    (2, 3): (8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
_RATES = {1: (44100, 48000, 32000), 2: (22050, 24000, 16000), 25: (11025, 12000, 8000)}


@dataclass(frozen=True)
class _Frame:
    version: int  # 1, 2 or 25 (MPEG 2.5)
    layer: int
    bitrate: int  # kbit/s
    rate: int
    channels: int
    length: int  # bytes of the frame
    samples: int  # samples per frame


def _frame_at(b: bytes | memoryview, pos: int) -> _Frame | None:
    if pos + 4 > len(b):
        return None
    (h,) = struct.unpack_from(">I", b, pos)
    if h >> 21 != 0x7FF:
        return None
    version = {0: 25, 2: 2, 3: 1}.get((h >> 19) & 3)
    layer = {1: 3, 2: 2, 3: 1}.get((h >> 17) & 3)
    bi = (h >> 12) & 0xF
    ri = (h >> 10) & 3
    if version is None or layer is None or bi in (0, 15) or ri == 3:
        return None
    bitrate = _BITRATES[(1 if version == 1 else 2, layer)][bi - 1]
    rate = _RATES[version][ri]
    padding = (h >> 9) & 1
    channels = 1 if (h >> 6) & 3 == 3 else 2
    if layer == 1:
        length = (12 * bitrate * 1000 // rate + padding) * 4
        samples = 384
    elif layer == 2 or version == 1:
        length = 144 * bitrate * 1000 // rate + padding
        samples = 1152
    else:
        length = 72 * bitrate * 1000 // rate + padding
        samples = 576
    return _Frame(version, layer, bitrate, rate, channels, length, samples)


def _next_frame_checks(b: bytes | memoryview, pos: int) -> bool:
    frame = _frame_at(b, pos)
    if frame is None:
        return False
    nxt = pos + frame.length
    if nxt == len(b):
        return True
    return _frame_at(b, nxt) is not None


def _id3_end(b: bytes | memoryview) -> int | None:
    """Where an ID3v2 tag at the start of ``b`` ends, or ``None`` when its header is not
    one (a size byte with its top bit set) or the tag runs past the bytes present."""
    if len(b) < 10 or bytes(b[:3]) != b"ID3":
        return None
    size_bytes = bytes(b[6:10])
    if any(x & 0x80 for x in size_bytes):
        return None
    size = 0
    for x in size_bytes:
        size = (size << 7) | x
    end = 10 + size + (10 if b[5] & 0x10 else 0)
    return end if end <= len(b) else None


def _first_frame(b: bytes | memoryview, start: int, search: int) -> int | None:
    stop = min(len(b) - 4, start + search)
    pos = start
    while pos <= stop:
        if b[pos] == 0xFF and _frame_at(b, pos) is not None and _next_frame_checks(b, pos):
            return pos
        pos += 1
    return None


def _describe_mp3(b: bytes | memoryview) -> AudioInfo:
    mime = AUDIO_FORMATS["mp3"]
    start = _id3_end(b) if bytes(b[:3]) == b"ID3" else 0
    pos = _first_frame(b, start or 0, _ID3_SEARCH) if start is not None else None
    if pos is None:
        return AudioInfo("mp3", mime, None, None, None, None, True, problem="no frame header")
    f = _frame_at(b, pos)
    assert f is not None
    encoding = f"mpeg-{'2.5' if f.version == 25 else f.version} layer {f.layer}"
    # A Xing/Info (VBR) header in the first frame counts the frames.
    side = (32 if f.channels == 2 else 17) if f.version == 1 else (17 if f.channels == 2 else 9)
    xing = pos + 4 + side
    seconds: float | None = None
    if bytes(b[xing : xing + 4]) in (b"Xing", b"Info") and xing + 12 <= len(b):
        (flags,) = struct.unpack_from(">I", b, xing + 4)
        if flags & 1:
            (frames,) = struct.unpack_from(">I", b, xing + 8)
            seconds = frames * f.samples / f.rate
    if seconds is None:
        seconds = (len(b) - pos) * 8 / (f.bitrate * 1000)
    return AudioInfo("mp3", mime, seconds, f.rate, f.channels, None, True, encoding)


# --------------------------------------------------------------------------------------------
# Sample lists: drawing and rate


def _mono(samples: Any) -> np.ndarray:
    arr = np.asarray(samples)
    if arr.ndim == 2:
        arr = arr.mean(axis=1) if arr.shape[1] > 1 else arr[:, 0]
    return arr.reshape(-1).astype(np.float32, copy=False)


def waveform(samples: Any, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The envelope of ``samples`` (1-D, or ``(frames, channels)`` mixed down) in ``width``
    columns: the smallest and largest value of each, as two float32 arrays. Fewer samples
    than columns give one column per sample; none give two empty arrays."""
    arr = _mono(samples)
    n = arr.size
    columns = max(0, min(int(width), n))
    if columns == 0:
        empty = np.zeros(0, dtype=np.float32)
        return empty, empty.copy()
    edges = (np.arange(columns, dtype=np.int64) * n) // columns
    return np.minimum.reduceat(arr, edges), np.maximum.reduceat(arr, edges)


def spectrogram(
    samples: Any,
    sample_rate: int,
    *,
    window: int | None = None,
    max_frames: int = 1024,
    floor_db: float = -100.0,
) -> np.ndarray:
    """The power spectrogram of ``samples`` in dB, shape ``(window // 2 + 1, frames)``: row
    ``k`` is the frequency ``k * sample_rate / window`` (low frequencies first), column ``t``
    the Hann-windowed slice starting at ``t * hop``; 0 dB is the loudest cell, nothing below
    ``floor_db``.

    ``window`` defaults to the power of two nearest 32 ms at ``sample_rate`` (512 at 16 kHz);
    the hop is a quarter window, widened so that there are at most ``max_frames`` columns.
    Samples shorter than a window are padded with zeros."""
    arr = _mono(samples).astype(np.float64)
    rate = int(sample_rate)
    if rate <= 0:
        raise ValueError(f"a sample rate of {sample_rate!r} Hz")
    if window is None:
        window = 1 << max(5, min(14, round(math.log2(max(rate * 0.032, 32)))))
    window = max(8, int(window))
    if arr.size < window:
        arr = np.concatenate([arr, np.zeros(window - arr.size)])
    count = arr.size - window + 1
    hop = max(window // 4, -(-count // max(1, max_frames)))
    starts = np.arange(0, count, hop)
    frames = np.lib.stride_tricks.sliding_window_view(arr, window)[starts]
    power = np.abs(np.fft.rfft(frames * np.hanning(window), axis=1)) ** 2
    db = 10.0 * np.log10(np.maximum(power, 1e-20))
    db -= db.max()
    return np.maximum(db, floor_db).T.astype(np.float32)


_RATE_NAMES = {"sample_rate", "sample_rate_hz", "samplerate", "sampling_rate", "sr"}


def sample_rate_of(features: Mapping[str, Any], name: str | None = None) -> int | None:
    """The sample rate a record states: a one-value int64 or float feature named
    ``sample_rate`` (NSynth), ``sample_rate_hz``, ``samplerate``, ``sampling_rate`` or ``sr``,
    alone or as the last part of a path (``audio/sample_rate``). With ``name`` (the samples'
    feature), one beside it (``audio/sample_rate`` for ``audio``) is preferred. ``None`` when
    none holds a rate between 1 Hz and 768 kHz.

    ``features`` maps names to :class:`codec.example.Feature`\\ s (anything with ``values``)
    or to plain value lists."""
    found: list[tuple[int, int]] = []
    prefix = f"{name}/" if name else None
    for key, feature in features.items():
        last = key.rsplit("/", 1)[-1].lower()
        if last not in _RATE_NAMES:
            continue
        values = getattr(feature, "values", feature)
        if not isinstance(values, (list, tuple)) or len(values) != 1:
            continue
        v = values[0]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        if not math.isfinite(v) or not 0 < v <= _MAX_RATE or v != int(v):
            continue
        rank = 0 if prefix and key.startswith(prefix) else 1
        found.append((rank, int(v)))
    if not found:
        return None
    return min(found)[1]


_SAMPLE_NAMES = {"audio", "waveform", "samples", "wav", "signal", "speech"}
MIN_SAMPLES = 256


def is_sample_list(name: str, feature: Any) -> bool:
    """Whether a feature looks like a list of audio samples: a float or int64 list of at least
    :data:`MIN_SAMPLES` values named ``audio``, ``waveform``, ``samples``, ``wav``, ``signal``
    or ``speech`` (alone or as the last part of a path: ``audio``, ``speech/waveform``)."""
    last = name.rsplit("/", 1)[-1].lower()
    if last not in _SAMPLE_NAMES:
        return False
    kind = getattr(feature, "type", None)
    values = getattr(feature, "values", None)
    return kind in ("float", "int64") and values is not None and len(values) >= MIN_SAMPLES
