"""What a record holds besides pictures, ready to show as its users know it: audio (encoded
clips and sample lists) with a waveform and a spectrogram, a clip's frames with each frame's
boxes and a film strip, token ids as text, and a TensorBoard event.

Pure functions: records and hints in, plain data and picture bytes (PNG, JPEG) out. The app
(:mod:`browser_app.ui.widgets.media`), the gallery's tiles (:mod:`.gallery`) and ``show``
(:func:`media_summary`) draw from the same functions.

Audio (:func:`find_audio`): every bytes value whose magic number is WAV, FLAC, Ogg or MP3
(:func:`codec.audio.sniff_audio`), described from its headers; every float or int64 list
that holds samples (:func:`codec.audio.is_sample_list`, or a TFDS ``Audio`` feature), playable
as 16-bit WAV once its sample rate is known: the record's (``sample_rate``-like features,
:func:`codec.audio.sample_rate_of`), the dataset's metadata (``MediaHints.rates``) or one the
person sets. Waveforms are drawn for WAV (PCM, float) and sample lists; FLAC, Ogg and MP3 are
played as stored.

Frames (:func:`find_frames`): a SequenceExample feature list whose steps each hold one
encoded picture (MediaPipe's ``image/encoded``), or a bytes feature of encoded pictures that
is a video (named ``video``/``frames``, or a TFDS ``Video``). The frame rate is the record's
(``image/frame_rate``), else the timestamps' (``image/timestamp``), else 25 fps. Each frame's
boxes are read from the feature lists ``<prefix>bbox/ymin|xmin|ymax|xmax`` (MediaPipe's
``region/bbox/*``), one step per frame, captioned from ``<prefix>label/string`` and
``<prefix>label/index``.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import codec
from codec import audio as au
from codec import example as ex
from codec import images as im
from codec import tokens as tk
from codec.events import Event, decode_event
from codec.kinds import BYTES, FLOAT, INT64
from codec.values import format_bytes, image_complete, image_magic, plural

__all__ = [
    "DEFAULT_FPS",
    "AudioClip",
    "FramePicture",
    "Frames",
    "MediaHints",
    "clip_label",
    "clip_thumbnail",
    "decode_tokens",
    "event_of",
    "find_audio",
    "find_frames",
    "frame_boxes",
    "frame_marks",
    "frame_picture",
    "hints_of",
    "media_summary",
    "sound_badge",
    "spectrogram_png",
    "waveform_png",
    "waveform_tile",
    "without_frames",
]

DEFAULT_FPS = 25.0  # a clip that states no frame rate and no timestamps plays at this
MAX_CLIPS = 32  # audio values looked at per record (the rest are counted, not drawn)
WAVE_COLOR = (31, 119, 180)  # the waveform's colour: readable on the light and dark themes
MID_COLOR = (128, 128, 128, 96)  # the zero line
FRAME_SIDE = 720  # frames are shown at most this large (a reduced decode above)

_VIDEO_NAMES = {"video", "videos", "frames", "clip", "image_sequence", "video/encoded"}
_FPS_NAMES = {"frame_rate", "fps", "framerate", "frames_per_second"}
_CLIP_LABELS = ("clip/label/string", "clip/label/text", "clip/label/index", "label")


@dataclass(frozen=True)
class MediaHints:
    """What a dataset's metadata says about its features (a TFDS ``features.json``):
    ``video``, the keys of ``Video`` features (frames, whatever their name); ``audio``,
    those of ``Audio`` sample lists; ``rates``, the sample rate of each audio key."""

    video: frozenset[str] = frozenset()
    audio: frozenset[str] = frozenset()
    rates: Mapping[str, int] = field(default_factory=dict)


def hints_of(specs: Mapping[str, Any] | None) -> MediaHints:
    """:class:`MediaHints` from TFDS feature specs (:class:`codec.tfds.FeatureSpec` by key:
    anything with ``kind``, ``sample_rate`` and ``record_keys``); empty for None."""
    if not specs:
        return MediaHints()
    video: set[str] = set()
    audio: set[str] = set()
    rates: dict[str, int] = {}
    for key, spec in specs.items():
        kind = getattr(spec, "kind", None)
        keys = tuple(getattr(spec, "record_keys", ()) or (key,))
        if kind == "video":
            video.update(keys)
        elif kind == "audio":
            audio.update(keys)
            rate = getattr(spec, "sample_rate", None)
            if isinstance(rate, int) and 0 < rate <= 768_000:
                rates.update(dict.fromkeys(keys, rate))
    return MediaHints(frozenset(video), frozenset(audio), rates)


# -- audio ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AudioClip:
    """One piece of audio in a record: encoded (``format`` ``wav``/``flac``/``ogg``/``mp3``,
    ``info`` from its headers) or a sample list (``format`` ``"samples"``, ``dtype`` float
    or int64). ``data`` is what a player plays (the stored bytes, or a 16-bit WAV of the
    samples; None while a sample list's rate is not known); ``mime`` its type. ``rate_from``
    says where the sample rate came from (``"header"``, ``"record"``, ``"metadata"``,
    ``"you"``) or is ``""`` when it is not known."""

    feature: str
    index: int
    step: int | None
    format: str
    mime: str
    words: str
    data: bytes | None
    sample_rate: int | None
    channels: int | None
    seconds: float | None
    count: int = 0  # samples of a sample list
    dtype: str = ""
    rate_from: str = ""
    info: au.AudioInfo | None = None
    problem: str | None = None
    values: Any = field(default=None, repr=False, compare=False)

    @property
    def name(self) -> str:
        """``audio/encoded``, ``audio/encoded[2]``, ``audio[3]`` (step 3 of a list)."""
        name = self.feature if self.step is None else f"{self.feature}[{self.step}]"
        return name if self.index == 0 else f"{name}[{self.index}]"

    @property
    def key(self) -> str:
        """A key for this clip's widgets, unique in its record."""
        return f"{self.feature}:{self.step}:{self.index}"

    @property
    def drawable(self) -> bool:
        """Whether a waveform can be drawn: a PCM or float WAV, or a sample list (drawn in
        samples when its rate is not known)."""
        if self.format == "samples":
            return True
        return (
            self.format == "wav"
            and self.info is not None
            and self.info.encoding
            in (
                "pcm",
                "float",
            )
        )

    def samples(self, max_frames: int | None = None) -> np.ndarray:
        """The samples as float32 in [-1, 1], shape ``(frames, channels)``. Raises
        :class:`codec.CodecError` for audio that cannot be read here."""
        if self.format == "samples":
            arr = np.asarray(self.values[:max_frames] if max_frames else self.values)
            if self.dtype == INT64:
                out = np.clip(arr.astype(np.float64), -32768, 32767) / 32768.0
            else:
                out = np.nan_to_num(arr.astype(np.float64), nan=0.0, posinf=1.0, neginf=-1.0)
                peak = float(np.abs(out).max()) if out.size else 0.0
                if peak > 1.0:
                    out = out / peak
            return out.astype(np.float32).reshape(-1, 1)
        if self.format != "wav":
            raise codec.UnsupportedError(f"{self.mime} is played as stored, not drawn here")
        return au.samples_of(self.values, max_frames=max_frames)


def _encoded_clip(name: str, i: int, step: int | None, v: bytes) -> AudioClip | None:
    info = au.describe_audio(v)
    if info is None:
        return None
    words = info.text() + f" · {format_bytes(len(v))}"
    if info.encoding and info.encoding not in ("pcm", info.format):
        words += f" · {info.encoding}"
    return AudioClip(
        feature=name,
        index=i,
        step=step,
        format=info.format,
        mime=info.mime,
        words=words,
        data=v,
        sample_rate=info.sample_rate,
        channels=info.channels,
        seconds=info.seconds,
        rate_from="header" if info.sample_rate else "",
        info=info,
        problem=info.problem,
        values=v,
    )


def _sample_clip(name: str, f: ex.Feature, rate: int | None, rate_from: str) -> AudioClip:
    n = len(f.values)
    kind = "float" if f.type == FLOAT else "int"
    data: bytes | None = None
    problem = None
    seconds = n / rate if rate else None
    if rate:
        try:
            data = au.wav_bytes(
                np.asarray(f.values, np.float32 if f.type == FLOAT else np.int64), rate
            )
        except codec.CodecError as exc:
            problem = str(exc)
    if rate:
        words = f"{n:,} {kind} samples · {seconds:.2f} s at {au.rate_text(rate)} · mono"
    else:
        words = f"{n:,} {kind} samples · sample rate not known"
    return AudioClip(
        feature=name,
        index=0,
        step=None,
        format="samples",
        mime="audio/wav",
        words=words,
        data=data,
        sample_rate=rate,
        channels=1,
        seconds=seconds,
        count=n,
        dtype=f.type,
        rate_from=rate_from,
        problem=problem,
        values=f.values,
    )


def find_audio(
    record: ex.Record,
    hints: MediaHints | None = None,
    rates: Mapping[str, int] | None = None,
) -> list[AudioClip]:
    """The audio of ``record``, in the record's order: encoded clips in bytes features (and
    in the steps of feature lists), at most :data:`MAX_CLIPS`, then sample lists. A sample
    list's rate is the record's (:func:`codec.audio.sample_rate_of`), else ``hints.rates``,
    else ``rates`` (what the person set, by feature), else not known."""
    hints = hints or MediaHints()
    out: list[AudioClip] = []

    def look(name: str, f: ex.Feature, step: int | None) -> None:
        if f.type != BYTES:
            return
        for i, v in enumerate(f.values):
            if len(out) >= MAX_CLIPS:
                return
            if len(v) >= 12 and au.sniff_audio(v) is not None:
                clip = _encoded_clip(name, i, step, v)
                if clip is not None:
                    out.append(clip)

    for name, f in record.features.items():
        look(name, f, None)
    for name, steps in record.feature_lists.items():
        for s, f in enumerate(steps):
            look(name, f, s)
    for name, f in record.features.items():
        if f.type not in (FLOAT, INT64) or not f.values:
            continue
        if not (au.is_sample_list(name, f) or name in hints.audio):
            continue
        rate = au.sample_rate_of(record.features, name)
        source = "record" if rate else ""
        if rate is None and name in hints.rates:
            rate, source = hints.rates[name], "metadata"
        if rate is None and rates and rates.get(name):
            rate, source = int(rates[name]), "you"
        out.append(_sample_clip(name, f, rate, source))
    return out


def _rgba_png(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def waveform_png(
    samples: Any, width: int = 640, height: int = 96, color: tuple[int, int, int] = WAVE_COLOR
) -> bytes:
    """The waveform of ``samples`` (float in [-1, 1], mono or ``(frames, channels)`` mixed
    down) as a PNG ``width`` × ``height`` on a transparent ground: each column the span from
    the smallest to the largest sample it covers (:func:`codec.audio.waveform`), a faint zero
    line across."""
    width, height = max(8, int(width)), max(8, int(height))
    lo, hi = au.waveform(samples, width)
    img = np.zeros((height, width, 4), np.uint8)
    mid = (height - 1) / 2
    img[round(mid), :] = MID_COLOR
    if lo.size:
        cols = lo.size
        # Each column reaches the one before it: the samples are joined, not dots.
        lo, hi = (
            np.concatenate([lo[:1], np.minimum(lo[1:], hi[:-1])]),
            np.concatenate([hi[:1], np.maximum(hi[1:], lo[:-1])]),
        )
        top = np.clip(np.round(mid - np.clip(hi, -1, 1) * mid), 0, height - 1).astype(np.int64)
        bottom = np.clip(np.round(mid - np.clip(lo, -1, 1) * mid), 0, height - 1).astype(np.int64)
        rows = np.arange(height)[:, None]
        spans = (rows >= top[None, :]) & (rows <= bottom[None, :])
        # Fewer samples than columns: each sample spreads over the columns up to the next.
        full = spans if cols == width else spans[:, (np.arange(width) * cols) // width]
        img[full] = (*color, 255)
    return _rgba_png(img)


def waveform_tile(clip: AudioClip, size: int = 160) -> bytes | None:
    """A gallery tile's picture of ``clip``: its waveform, ``size`` wide and a little less
    high; None when it cannot be drawn (FLAC, Ogg, MP3, a WAV that does not read)."""
    if not clip.drawable:
        return None
    try:
        samples = clip.samples()
    except codec.CodecError:
        return None
    return waveform_png(samples, size, max(24, size * 2 // 3))


def sound_badge(mime: str, size: int = 160) -> bytes:
    """A tile's picture of audio that is played, not drawn (FLAC, Ogg, MP3): a flat line
    with the format over it."""
    width, height = max(24, size), max(24, size * 2 // 3)
    img = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    mid = height // 2
    draw.line([(0, mid), (width, mid)], fill=(*WAVE_COLOR, 255), width=2)
    font = _label_font(max(10, size // 12))
    text = mime.split("/")[-1].upper()
    right, bottom = font.getbbox(text)[2:]
    x, y = (width - int(right)) // 2, mid - int(bottom) - 6
    draw.rectangle([x - 3, y - 1, x + int(right) + 3, y + int(bottom) + 2], fill=(*WAVE_COLOR, 255))
    draw.text((x, y), text, fill=(255, 255, 255, 255), font=font)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def spectrogram_png(samples: Any, sample_rate: int, width: int = 640, height: int = 160) -> bytes:
    """The spectrogram of ``samples`` (:func:`codec.audio.spectrogram`) as a PNG ``width`` ×
    ``height``: time from left to right, low frequencies at the bottom, 0 to 80 dB below the
    loudest cell in viridis."""
    db = au.spectrogram(samples, sample_rate, max_frames=max(8, width))
    level = np.clip((db + 80.0) / 80.0, 0.0, 1.0)
    gray = np.round(level[::-1] * 255).astype(np.uint8)
    rgb = im.colorize(gray, "viridis")
    out = Image.fromarray(rgb, "RGB").resize((width, height), Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    out.save(buf, format="PNG")
    return buf.getvalue()


# -- frames -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BoxLists:
    """Where a clip's per-frame boxes are: the four coordinate lists and the label lists."""

    ymin: str
    xmin: str
    ymax: str
    xmax: str
    text: str | None
    label: str | None
    normalized: bool


@dataclass(frozen=True)
class Frames:
    """A clip's frames: ``refs`` every frame in order (an :class:`codec.images.ImageRef`
    each: a step of the feature list ``feature``, or a value of the bytes feature
    ``feature``), the frame rate (``fps``; ``fps_from`` says where it came from:
    ``"record"``, ``"timestamps"`` or ``"default"``), each frame's ``timestamps`` in
    microseconds when the record has them, the clip's ``label`` and where its per-frame
    boxes are (``boxes``, None without)."""

    feature: str
    refs: tuple[im.ImageRef, ...]
    fps: float
    fps_from: str
    label: str = ""
    timestamps: tuple[int, ...] = ()
    boxes: BoxLists | None = None

    @property
    def count(self) -> int:
        return len(self.refs)

    @property
    def seconds(self) -> float:
        return self.count / self.fps if self.fps else 0.0

    @property
    def words(self) -> str:
        """``20 frames · 8 fps · 2.50 s · astronaut``."""
        fps = f"{self.fps:g} fps" + (" (assumed)" if self.fps_from == "default" else "")
        parts = [plural(self.count, "frame"), fps, f"{self.seconds:.2f} s"]
        return " · ".join(parts)

    def time_of(self, i: int) -> float:
        """Seconds from the clip's start to frame ``i``."""
        if self.timestamps and i < len(self.timestamps):
            return (self.timestamps[i] - self.timestamps[0]) / 1e6
        return i / self.fps if self.fps else 0.0


def _one_number(f: ex.Feature | None) -> float | None:
    if f is None or f.type not in (FLOAT, INT64) or len(f.values) != 1:
        return None
    v = float(f.values[0])
    return v if math.isfinite(v) else None


def _stated_fps(features: Mapping[str, ex.Feature], prefix: str) -> float | None:
    best: float | None = None
    for name, f in features.items():
        last = name.rsplit("/", 1)[-1].lower()
        if last not in _FPS_NAMES:
            continue
        v = _one_number(f)
        if v is None or not 0 < v <= 1000:
            continue
        if prefix and name.startswith(prefix):
            return v
        best = best if best is not None else v
    return best


def _step_values(steps: Sequence[ex.Feature]) -> list[int] | None:
    out = []
    for f in steps:
        if f.type != INT64 or len(f.values) != 1:
            return None
        out.append(int(f.values[0]))
    return out


def _box_lists(record: ex.Record, count: int) -> BoxLists | None:
    """The per-frame box lists of a clip: feature lists ``<prefix>bbox/xmin`` and its three
    siblings, as many steps as there are frames (or more)."""
    lists = record.feature_lists
    for name in sorted(lists):
        if not name.endswith("bbox/xmin"):
            continue
        prefix = name[: -len("bbox/xmin")]
        keys = [prefix + f"bbox/{k}" for k in ("ymin", "xmin", "ymax", "xmax")]
        if not all(k in lists and all(f.type == FLOAT for f in lists[k]) for k in keys):
            continue
        values = [float(v) for k in keys for f in lists[k] for v in f.values]
        finite = [v for v in values if math.isfinite(v)]
        normalized = not finite or sum(-0.01 <= v <= 1.01 for v in finite) >= 0.9 * len(finite)
        text = next(
            (
                prefix + k
                for k in ("label/string", "label/text", "class/text")
                if prefix + k in lists
            ),
            None,
        )
        label = next(
            (prefix + k for k in ("label/index", "class/label") if prefix + k in lists), None
        )
        ymin, xmin, ymax, xmax = keys
        return BoxLists(ymin, xmin, ymax, xmax, text, label, normalized)
    return None


def _picture_steps(steps: Sequence[ex.Feature]) -> list[im.ImageRef] | None:
    refs = []
    for s, f in enumerate(steps):
        if f.type != BYTES or len(f.values) != 1:
            return None
        v = f.values[0]
        row = image_magic(v)
        if row is None:
            return None
        refs.append(im.ImageRef("", 0, "encoded", row.format, v, step=s))
    return refs


def clip_label(record: ex.Record, names: Mapping[str, Any] | None = None) -> str:
    """The clip's label: ``clip/label/string`` (or ``clip/label/text``), else
    ``clip/label/index``, else ``label``; several joined by ``, ``; ``""`` without. An
    int label that ``names`` (class names by feature, :class:`codec.names.ClassNames`)
    names is shown by its name."""
    for name in _CLIP_LABELS:
        f = record.features.get(name)
        if f is None or not f.values:
            continue
        if f.type == BYTES:
            return ", ".join(v.decode("utf-8", "replace") for v in f.values[:5])
        known = (names or {}).get(name)
        if known is not None and f.type == INT64:
            return ", ".join(known.name(int(v)) or str(v) for v in f.values[:5])
        return ", ".join(str(v) for v in f.values[:5])
    return ""


def find_frames(
    record: ex.Record, hints: MediaHints | None = None, names: Mapping[str, Any] | None = None
) -> Frames | None:
    """The clip in ``record`` (see the module docstring), or None: a feature list of at
    least two steps, each one encoded picture (``image/encoded`` first when there are
    several), or a bytes feature of at least two encoded pictures named like a video (or a
    TFDS ``Video`` in ``hints``). Its label is :func:`clip_label`'s, named by ``names``."""
    hints = hints or MediaHints()
    chosen: tuple[str, list[im.ImageRef]] | None = None
    lists = sorted(record.feature_lists, key=lambda n: (n != "image/encoded", n))
    for name in lists:
        steps = record.feature_lists[name]
        if len(steps) < 2:
            continue
        refs = _picture_steps(steps)
        if refs:
            chosen = (name, [_named(r, name) for r in refs])
            break
    if chosen is None:
        for name, f in record.features.items():
            last = name.rsplit("/", 1)[-1].lower()
            if f.type != BYTES or len(f.values) < 2:
                continue
            if not (name in hints.video or last in _VIDEO_NAMES or name.lower() in _VIDEO_NAMES):
                continue
            rows = [image_magic(v) for v in f.values]
            if all(rows):
                refs = [
                    im.ImageRef(name, i, "encoded", row.format, v)  # type: ignore[union-attr]
                    for i, (row, v) in enumerate(zip(rows, f.values))
                ]
                chosen = (name, refs)
                break
    if chosen is None:
        return None
    name, refs = chosen
    prefix = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
    stamps: list[int] = []
    fps = _stated_fps(record.features, prefix)
    fps_from = "record" if fps else ""
    stamp_key = prefix + "timestamp"
    if stamp_key in record.feature_lists and refs[0].step is not None:
        stamps = _step_values(record.feature_lists[stamp_key]) or []
        if len(stamps) != len(refs):
            stamps = []
    if fps is None and len(stamps) >= 2:
        gaps = [b - a for a, b in itertools.pairwise(stamps) if b > a]
        if gaps:
            fps, fps_from = 1e6 / statistics.median(gaps), "timestamps"
    if fps is None:
        fps, fps_from = DEFAULT_FPS, "default"
    boxes = _box_lists(record, len(refs)) if refs[0].step is not None else None
    label = clip_label(record, names)
    return Frames(name, tuple(refs), fps, fps_from, label, tuple(stamps), boxes)


def _named(ref: im.ImageRef, name: str) -> im.ImageRef:
    return im.ImageRef(name, 0, ref.source, ref.format, ref.data, step=ref.step)


def frame_boxes(
    record: ex.Record, frames: Frames, i: int, width: int, height: int
) -> list[im.PixelBox]:
    """The boxes of frame ``i`` in pixels of a ``width`` × ``height`` picture, captioned
    ``text (label)``; a box whose coordinates disagree (more of one than of another, outside
    the frame, min past max) is kept with its problems (drawn dashed)."""
    lists = frames.boxes
    if lists is None:
        return []
    fl = record.feature_lists

    def step(key: str | None) -> list[Any]:
        if key is None or key not in fl or i >= len(fl[key]):
            return []
        return list(fl[key][i].values)

    ymin, xmin, ymax, xmax = (step(k) for k in (lists.ymin, lists.xmin, lists.ymax, lists.xmax))
    texts, labels = step(lists.text), step(lists.label)
    n = max(len(ymin), len(xmin), len(ymax), len(xmax))
    sx, sy = (width, height) if lists.normalized else (1.0, 1.0)
    out: list[im.PixelBox] = []
    for k in range(n):
        problems: list[str] = []
        coords = []
        for name, vals in (("ymin", ymin), ("xmin", xmin), ("ymax", ymax), ("xmax", xmax)):
            if k < len(vals):
                coords.append(float(vals[k]))
            else:
                coords.append(float("nan"))
                problems.append(f"no {name} (frame {i} has {len(vals)} of {n})")
        y0, x0, y1, x1 = coords
        drawable = all(math.isfinite(c) for c in coords)
        if drawable:
            if y0 > y1 or x0 > x1:
                problems.append("min past max")
            limit = 1.0 if lists.normalized else float("inf")
            if min(coords) < -0.001 or (lists.normalized and max(coords) > limit + 0.001):
                problems.append("outside the frame")
            x0, x1 = sorted((x0 * sx, x1 * sx))
            y0, y1 = sorted((y0 * sy, y1 * sy))
            x0, x1 = max(0.0, min(x0, width)), max(0.0, min(x1, width))
            y0, y1 = max(0.0, min(y0, height)), max(0.0, min(y1, height))
        text = texts[k] if k < len(texts) else None
        label = labels[k] if k < len(labels) else None
        out.append(
            im.PixelBox(
                x0 if drawable else 0.0,
                y0 if drawable else 0.0,
                x1 if drawable else 0.0,
                y1 if drawable else 0.0,
                text=text.decode("utf-8", "replace") if isinstance(text, bytes) else None,
                label=int(label) if isinstance(label, int) else None,
                normalized=lists.normalized,
                index=k,
                problems=tuple(problems),
                drawable=drawable,
            )
        )
    return out


def _scaled(boxes: Sequence[im.PixelBox], k: float) -> list[im.PixelBox]:
    """``boxes`` on a picture drawn ``k`` times the size they were read at."""
    return [
        dataclasses.replace(b, xmin=b.xmin * k, ymin=b.ymin * k, xmax=b.xmax * k, ymax=b.ymax * k)
        for b in boxes
    ]


def _encode(img: Image.Image, like: str) -> tuple[bytes, str]:
    buf = io.BytesIO()
    if like == "jpeg":
        img.convert("RGB").save(buf, format="JPEG", quality=90)
        return buf.getvalue(), "JPEG"
    img.save(buf, format="PNG")
    return buf.getvalue(), "PNG"


@dataclass(frozen=True)
class FramePicture:
    """Frame ``index`` as a browser shows it: ``data`` (``mime``; the stored bytes when the
    browser can show them as they are and they are at most :data:`FRAME_SIDE` on their
    longer side, else decoded, reduced and encoded again) of ``width`` × ``height`` pixels,
    its caption; ``error`` in place of a frame that cannot be decoded."""

    index: int
    data: bytes | None
    mime: str
    width: int
    height: int
    caption: str
    error: str | None = None


def frame_picture(frames: Frames, i: int, max_side: int = FRAME_SIDE) -> FramePicture:
    """Frame ``i`` (clamped to the clip) without anything drawn on it (see
    :func:`frame_marks` for its boxes): a stored JPEG or PNG small enough goes out as it is,
    its size read from its header alone. One that does not end as its format requires (cut
    off) is decoded, so that what is wrong with it is said."""
    i = min(max(0, i), frames.count - 1)
    ref = frames.refs[i]
    where = f"frame {i + 1:,} of {frames.count:,} · {frames.time_of(i):.2f} s"
    if (
        ref.source == "encoded"
        and ref.format in ("jpeg", "png")
        and image_complete(ref.format, ref.data)
    ):
        try:
            with Image.open(io.BytesIO(ref.data)) as head:
                w, h = head.size  # the header only: nothing is decoded
        except (OSError, ValueError, Image.DecompressionBombError):
            w = h = 0
        if 0 < max(w, h) <= max_side:
            mime = "image/jpeg" if ref.format == "jpeg" else "image/png"
            caption = f"{where} · {ref.format.upper()} {w}×{h}"
            return FramePicture(i, ref.data, mime, w, h, caption)
    try:
        img, (w, h) = im.thumbnail_image(ref.data, max_side)
    except codec.ImageError as exc:
        return FramePicture(i, None, "", 0, 0, where, error=str(exc))
    data, fmt = _encode(img, ref.format)
    caption = f"{where} · {ref.format.upper()} {w}×{h}"
    return FramePicture(i, data, f"image/{fmt.lower()}", img.width, img.height, caption)


def frame_marks(
    record: ex.Record,
    frames: Frames,
    i: int,
    width: int,
    height: int,
    *,
    hidden: Iterable[tuple[str | None, int | None]] = (),
) -> list[dict[str, Any]]:
    """The boxes of frame ``i`` as a browser draws them over a ``width`` × ``height``
    picture: each box's corners in its pixels, its colour and the colour of text on it
    (:func:`codec.images.box_color`, :func:`codec.images.ink`), its caption (``! `` in front
    for a box with a problem, drawn dashed) and its problems; boxes of ``hidden`` classes
    left out, boxes without a place (a coordinate not a number) kept for their problems."""
    off = set(hidden)
    out = []
    for b in frame_boxes(record, frames, i, width, height):
        if b.key in off:
            continue
        color = im.box_color(b)
        out.append(
            {
                "x0": round(b.xmin, 2),
                "y0": round(b.ymin, 2),
                "x1": round(b.xmax, 2),
                "y1": round(b.ymax, 2),
                "color": color,
                "ink": im.ink(color),
                "text": ("! " if b.problems else "") + b.caption,
                "bad": bool(b.problems),
                "drawable": b.drawable,
                "problems": f"box {b.index}: {', '.join(b.problems)}" if b.problems else "",
            }
        )
    return out


def _label_font(size: int) -> Any:
    return ImageFont.load_default(size=size)


def clip_thumbnail(
    record: ex.Record, frames: Frames, size: int, boxes: bool = True
) -> tuple[bytes, str]:
    """A gallery tile's picture of a clip: its first frame, ``size`` on its longer side, with
    the first frame's boxes when ``boxes``; ``(data, mime)``. Raises
    :class:`codec.ImageError` when the frame does not decode."""
    ref = frames.refs[0]
    img, (w, h) = im.thumbnail_image(ref.data, size)
    if boxes and frames.boxes is not None:
        drawn = _scaled(frame_boxes(record, frames, 0, w, h), img.width / w)
        if drawn:
            img = im.draw_boxes(img, drawn, captions=size >= 160)
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=85)
    return buf.getvalue(), "image/jpeg"


# -- token ids ----------------------------------------------------------------------------------


def decode_tokens(record: ex.Record, vocab: tk.Vocab) -> dict[str, tk.TokenText]:
    """The record's token id features (:func:`codec.tokens.token_id_features`) as text, in
    name order; ``input_ids`` (and its kind) with BERT's masked positions marked from
    ``masked_lm_positions`` / ``masked_lm_ids`` / ``masked_lm_weights``."""
    feats = record.features
    names = sorted(tk.token_id_features(feats, vocab))

    def values(name: str) -> list[Any] | None:
        f = feats.get(name)
        return list(f.values) if f is not None and f.values else None

    out: dict[str, tk.TokenText] = {}
    for name in names:
        ids = feats[name].values
        prefix = name.rsplit("/", 1)[0] + "/" if "/" in name else ""
        last = name.rsplit("/", 1)[-1]
        if last.startswith("masked_lm"):
            out[name] = tk.decode_ids(ids, vocab)
            continue
        out[name] = tk.decode_ids(
            ids,
            vocab,
            masked_positions=values(prefix + "masked_lm_positions"),
            masked_ids=values(prefix + "masked_lm_ids"),
            masked_weights=values(prefix + "masked_lm_weights"),
        )
    return out


# -- events -------------------------------------------------------------------------------------


def event_of(payload: bytes, plugins: dict[str, str] | None = None) -> Event | None:
    """The TensorBoard ``Event`` in a record of an event file (:func:`codec.events.decode_event`),
    or None."""
    return decode_event(payload, plugins)


# -- show --json ---------------------------------------------------------------------------------


def media_summary(
    record: ex.Record, vocab: tk.Vocab | None = None, hints: MediaHints | None = None
) -> dict[str, Any]:
    """What ``show --json`` adds about a record's media, each only when present: ``audio``
    (``feature``, ``index``, ``format`` — ``wav``, ``flac``, ``ogg``, ``mp3`` or
    ``samples`` —, ``seconds``, ``sample_rate``, ``channels``), ``frames`` (``feature``,
    ``count``) and ``text`` (feature → the decoded text with its marks)."""
    out: dict[str, Any] = {}
    clips = find_audio(record, hints)
    if clips:
        out["audio"] = [
            {
                "feature": c.feature,
                "index": c.index if c.step is None else c.step,
                "format": c.format,
                "seconds": round(c.seconds, 6) if c.seconds is not None else None,
                "sample_rate": c.sample_rate,
                "channels": c.channels,
            }
            for c in clips
        ]
    frames = find_frames(record, hints)
    if frames is not None:
        out["frames"] = {"feature": frames.feature, "count": frames.count}
    if vocab is not None:
        texts = decode_tokens(record, vocab)
        if texts:
            out["text"] = {k: t.marked for k, t in texts.items()}
    return out


def without_frames(record: ex.Record, frames: Frames) -> ex.Record:
    """``record`` without its clip's frames (the feature list, or the video feature): the
    pictures it holds besides them."""
    return ex.Record(
        record.kind,
        {k: f for k, f in record.features.items() if k != frames.feature},
        {k: v for k, v in record.feature_lists.items() if k != frames.feature},
        record.raw,
    )
