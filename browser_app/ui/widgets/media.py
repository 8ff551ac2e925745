"""A record's media in the record view, as its users know them: audio (a player, a
waveform, a spectrogram on demand; a sample list's rate asked for when the record does not
say it), a clip (one player: the frame with its boxes, a frame slider, play at the clip's
frame rate, a film strip), token ids as text (with the ``vocab.txt`` beside the data), a
TensorBoard event (step, wall time, values, pictures) and a record that is one tensor.

Everything drawn comes from :mod:`browser_app.view.media`; what is remembered between runs
is in :mod:`browser_app.ui.state.media`."""

from __future__ import annotations

import html
import os
import re
from functools import partial
from typing import Any, Literal

import pandas as pd
import streamlit as st

import codec
from browser_app import view
from browser_app.ui import services, state
from browser_app.ui.components import player, waveform
from browser_app.ui.source import Source
from browser_app.ui.state import media as mstate
from browser_app.view import media as vm
from codec import audio as au
from codec import events as ev
from codec import example as ex
from codec import images as im
from codec import snapshot as sn
from codec import tokens as tk
from codec.values import format_float, plural

__all__ = [
    "CLIPS_SHOWN",
    "audio_section",
    "event_record",
    "frames_player",
    "hints",
    "saved_element",
    "token_section",
]

CLIPS_SHOWN = 8  # audio clips of a record drawn at once
WAVE_WIDTH = 720  # pixels of a waveform and a spectrogram


def hints(src: Source) -> vm.MediaHints:
    """What the source's dataset metadata says of its audio and video features (a TFDS
    folder's ``features.json``, when the source was opened as one)."""
    tfds = src.split_folder.tfds if src.split_folder is not None else None
    return vm.hints_of(tfds.features if tfds is not None else None)


# -- audio ------------------------------------------------------------------------------------


def _rates(src: Source, record: ex.Record) -> dict[str, int]:
    """The sample rates the person gave this source's sample lists."""
    out = {}
    for name, f in record.features.items():
        if f.type in ("float", "int64") and len(f.values) >= au.MIN_SAMPLES:
            rate = mstate.sample_rate(src.spec, name)
            if rate:
                out[name] = rate
    return out


def _on_rate(spec: str, feature: str, name: str) -> None:
    value = state.widget_value(name)
    mstate.set_sample_rate(spec, feature, int(value) if value else None)


def _on_spectrogram(key: str) -> None:
    mstate.show_spectrogram(key, not mstate.spectrogram_shown(key))


def audio_section(src: Source, record: ex.Record, number: int) -> bool:
    """The record's audio, each clip with a player, its waveform and a spectrogram button;
    False (nothing drawn) when the record has none."""
    clips = vm.find_audio(record, hints(src), _rates(src, record))
    if not clips:
        return False
    with st.container(key=f"tfb-audio-{number}"):
        st.markdown(f"**Audio** · {plural(len(clips), 'clip')}")
        for clip in clips[:CLIPS_SHOWN]:
            _clip(src, clip, number)
        if len(clips) > CLIPS_SHOWN:
            st.caption(
                f"… {plural(len(clips) - CLIPS_SHOWN, 'more clip')}: the feature values below"
                " have every one, each with a download."
            )
    return True


def _clip(src: Source, clip: vm.AudioClip, number: int) -> None:
    key = f"{src.tag}:{number}:{clip.key}"
    where = {"record": " (from the record)", "metadata": " (from the dataset's metadata)"}
    words = clip.words + where.get(clip.rate_from, "")
    st.caption(f"{view.md_code(clip.name)} · {view.md_text(words)}")
    if clip.problem:
        st.warning(view.md_text(clip.problem), icon=":material/graphic_eq:")
    if clip.format == "samples" and clip.rate_from in ("", "you"):
        name = f"rate:{src.tag}:{clip.feature}"
        if state.widget_value(name) is None and clip.sample_rate:
            state.set_widget_value(name, clip.sample_rate)
        st.number_input(
            f"Sample rate of {view.label_text(clip.feature)} (Hz)",
            min_value=1,
            max_value=768_000,
            step=1000,
            value=None,
            placeholder="e.g. 16000",
            key=state.widget_key(name),
            on_change=_on_rate,
            args=(src.spec, clip.feature, name),
            help="The record does not say at what rate its samples were taken: give it to"
            " play them and time the waveform. It is kept for this feature of every record"
            " of the source.",
        )
    if clip.data is not None:
        st.audio(clip.data, format=clip.mime)
    if not clip.drawable:
        # not decoded here: the browser decodes the bytes it plays and draws them
        (url,) = services.tiles.picture_urls([(clip.data, clip.mime)], f"tfb-wave.{key}")
        if url is None:
            st.caption(
                f"No waveform: {view.md_text(clip.mime)} is played as stored, not drawn here."
            )
            return
        with st.container(key=f"tfb-wave-{number}-{_css(clip.key)}"):
            waveform.mount(state.widget_key(f"wave:{key}"), waveform.wave_data(url, WAVE_WIDTH))
        return
    try:
        samples = clip.samples()
    except codec.CodecError as exc:
        st.caption(f"No waveform: {view.md_text(str(exc))}")
        return
    span = (
        f"0 – {clip.seconds:.2f} s"
        if clip.seconds is not None
        else f"{plural(len(samples), 'sample')}"
    )
    with st.container(key=f"tfb-wave-{number}-{_css(clip.key)}"):
        st.image(
            vm.waveform_png(samples, WAVE_WIDTH, 96),
            caption=f"waveform · {span}",
            output_format="PNG",
        )
    if not clip.sample_rate:
        return
    shown = mstate.spectrogram_shown(key)
    st.button(
        "Hide the spectrogram" if shown else "Spectrogram",
        key=state.widget_key(f"spectrogram:{key}"),
        on_click=_on_spectrogram,
        args=(key,),
        icon=":material/equalizer:",
        type="tertiary",
    )
    if shown:
        top = au.rate_text(clip.sample_rate / 2)
        st.image(
            vm.spectrogram_png(samples, clip.sample_rate, WAVE_WIDTH, 160),
            caption=f"spectrogram · 0 – {top} from bottom to top · {span}",
            output_format="PNG",
        )


def _css(text: str) -> str:
    """``text`` as part of a CSS class name (a container's key)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", text)


# -- frames -----------------------------------------------------------------------------------


def frames_player(
    src: Source, record: ex.Record, number: int, frames: vm.Frames, boxes: bool
) -> None:
    """The clip as one player drawn in the browser (:mod:`browser_app.ui.components.player`):
    the frame with its boxes, a frame slider (every frame), the previous and next frame, play
    and pause at the clip's frame rate, and a film strip. It plays on its own, with no run of
    the script per frame; a long clip's frames come a window at a time, as it asks."""
    key = f"{src.tag}:{number}:{frames.feature}"
    name = f"player:{key}"
    label = f" · {view.md_text(frames.label)}" if frames.label else ""
    with st.container(key=f"tfb-frames-{number}"):
        st.markdown(f"**Frames** · {view.md_code(frames.feature)} · {frames.words}{label}")
        data = player.clip_data(
            key,
            record,
            frames,
            lambda pictures: services.tiles.picture_urls(pictures, f"tfb-player.{key}"),
            first=mstate.frame_window(key),
            boxes=boxes,
        )
        player.mount(
            state.widget_key(name), data, on_want=partial(_on_want, key, name, frames.count)
        )


def _on_want(key: str, name: str, count: int) -> None:
    """The player needs a frame outside the frames it was sent: send the window holding it."""
    got = state.widget_value(name)
    want = player.want_of(got.get("want") if hasattr(got, "get") else None)
    if want is not None:
        mstate.set_frame_window(key, player.window_start(count, want[0]))


# -- token ids --------------------------------------------------------------------------------


def _vocab(path: str) -> tk.Vocab | None:
    """The vocab beside the data file ``path`` (read once per session while it is the same
    file), or None."""
    found = tk.vocab_beside(path)
    if found is None:
        return None
    try:
        st_ = os.stat(found)
    except OSError:
        return None
    identity = (st_.st_size, st_.st_mtime_ns)
    kept = mstate.kept_vocab(found, identity)
    if isinstance(kept, tk.Vocab):
        return kept
    try:
        vocab = tk.read_vocab(found)
    except (OSError, codec.CodecError) as exc:
        st.warning(
            f"The vocab beside the data could not be read: {view.md_text(str(exc))}",
            icon=":material/translate:",
        )
        return None
    mstate.keep_vocab(found, identity, vocab)
    return vocab


_MARK = re.compile(r"(\[[^\[\]]*\])")
_SPECIAL = re.compile(r"^\[(PAD|UNK|CLS|SEP|unused\d+)\]$")

TOKENS_CSS = (
    ".tfb-tokens{font-family:var(--st-code-font,monospace);font-size:0.9rem;line-height:1.7;"
    "white-space:pre-wrap;word-break:break-word}"
    ".tfb-tokens .mask{background:rgba(255,164,33,0.35);border-radius:3px;padding:0 2px}"
    ".tfb-tokens .kept{background:rgba(41,176,157,0.3);border-radius:3px;padding:0 2px}"
    ".tfb-tokens .special{opacity:0.6;font-size:0.8rem}"
    ".tfb-tokens .outside{background:rgba(255,43,43,0.3);border-radius:3px;padding:0 2px}"
)


def token_html(marked: str) -> str:
    """``marked`` text (:attr:`codec.tokens.TokenText.marked`) as HTML, every part escaped:
    masked positions highlighted, special tokens dimmed, ids outside the vocab in red."""
    parts = []
    for piece in _MARK.split(marked):
        if not piece:
            continue
        text = html.escape(piece)
        if not _MARK.fullmatch(piece):
            parts.append(text)
        elif piece.startswith("[MASK"):
            parts.append(f'<span class="mask">{text}</span>')
        elif _SPECIAL.match(piece):
            parts.append(f'<span class="special">{text}</span>')
        elif piece.startswith("[? "):
            parts.append(f'<span class="outside">{text}</span>')
        else:
            parts.append(f'<span class="kept">{text}</span>')
    return f'<style>{TOKENS_CSS}</style><div class="tfb-tokens">{"".join(parts)}</div>'


def token_section(record: ex.Record, path: str, number: int) -> bool:
    """The record's token ids as text, read with the ``vocab.txt`` beside its file: masked
    positions marked (``[MASK→cat]``), special tokens dimmed. False (nothing drawn) without
    a vocab or token ids."""
    if not any(f.type == "int64" for f in record.features.values()):
        return False
    vocab = _vocab(path)
    if vocab is None:
        return False
    texts = vm.decode_tokens(record, vocab)
    if not texts:
        return False
    where = os.path.basename(vocab.path or "vocab.txt")
    with st.container(key=f"tfb-tokens-{number}"):
        st.markdown(
            f"**Text** · token ids read with {view.md_code(where)} ({plural(len(vocab), 'token')})"
        )
        for name, t in texts.items():
            facts = [plural(len(t.tokens) - t.padding, "token")]
            if t.masked:
                facts.append(f"{len(t.masked):,} masked")
            if t.padding:
                facts.append(f"{t.padding:,} padding")
            if t.outside:
                facts.append(f":red[{plural(len(t.outside), 'id')} outside the vocab]")
            st.caption(f"{view.md_code(name)} · {' · '.join(facts)}")
            st.html(token_html(t.marked))
    return True


# -- events -----------------------------------------------------------------------------------


def _holds_events(src: Source, path: str) -> bool:
    """Whether the file ``path`` of the source holds TensorBoard events (its first record is
    an ``Event``; looked at once per file)."""
    ds = src.dataset
    try:
        k = list(src.paths).index(path)
        f = ds.files[k]
    except (ValueError, IndexError):
        return False
    identity = getattr(f, "identity", None)
    known = mstate.event_file(path, identity)
    if known is not None:
        return known
    try:
        first = f.read(0)
    except (IndexError, codec.CodecError):
        first = b""
    holds = bool(first) and ev.is_event_file(path, first)
    mstate.set_event_file(path, identity, holds)
    return holds


def _what(v: Any) -> str:
    """What a summary value holds, without its tag (the table has a column for it)."""
    text = str(v.describe())
    head = f"{v.tag}: "
    return text[len(head) :] if text.startswith(head) else text


def event_record(src: Source, path: str, payload: bytes, number: int) -> bool:
    """A record of a TensorBoard event file as its ``Event``: step, wall time, what it
    holds, each summary value in a table, pictures as pictures, audio as players, text as
    text. False (nothing drawn) when the file does not hold events or the record is not
    one."""
    if not _holds_events(src, path):
        return False
    event = vm.event_of(payload)
    if event is None:
        return False
    with st.container(key=f"tfb-event-{number}"):
        st.markdown(
            f"**TensorBoard event** · step {event.step:,} · {view.md_text(event.when)}"
            f" · {view.md_text(event.what.replace('_', ' ') or 'nothing set')}"
        )
        if event.what != "summary":
            st.code(event.text(), language=None, wrap_lines=True)
            return True
        rows = [
            {
                "tag": v.tag,
                "kind": v.kind,
                "value": format_float(v.scalar) if v.scalar is not None else _what(v),
                "plugin": v.plugin,
            }
            for v in event.values
        ]
        st.dataframe(
            pd.DataFrame(rows, columns=["tag", "kind", "value", "plugin"]),
            hide_index=True,
            width="stretch",
            height=min(len(rows), 12) * 35 + 38,
        )
        for v in event.values:
            if v.problem:
                st.warning(f"{view.md_code(v.tag)}: {view.md_text(v.problem)}")
            for i, picture in enumerate(v.images[:8]):
                caption = v.tag if len(v.images) == 1 else f"{v.tag} [{i}]"
                fmt = im.sniff_image(picture)
                if fmt in im.BROWSER_FORMATS:
                    as_stored: Literal["JPEG", "PNG", "auto"] = (
                        "JPEG" if fmt == "jpeg" else "PNG" if fmt == "png" else "auto"
                    )
                    st.image(picture, caption=view.md_text(caption), output_format=as_stored)
                else:
                    st.caption(f"{view.md_code(caption)}: {len(picture):,} bytes, not a picture")
            for clip in v.audio[:4]:
                info = au.describe_audio(clip)
                st.caption(
                    f"{view.md_code(v.tag)} · "
                    + view.md_text(info.text() if info else f"{len(clip):,} bytes")
                )
                st.audio(clip, format=info.mime if info else "audio/wav")
            if v.histogram is not None and v.histogram.counts:
                h = v.histogram
                left = [h.min, *h.limits[:-1]]
                edges = [f"{(a + b) / 2:.3g}" for a, b in zip(left, h.limits)]  # centres
                st.caption(f"{view.md_code(v.tag)} · {view.md_text(_what(v))}")
                st.bar_chart(
                    pd.DataFrame({"count": list(h.counts)}, index=pd.Index(edges, name="bucket")),
                    height=180,
                    sort=False,
                )
            if v.kind == "text" and v.text:
                st.caption(view.md_code(v.tag))
                st.code(v.text[:20_000], language=None, wrap_lines=True)
    return True


# -- tf.data.Dataset.save elements ------------------------------------------------------------


def _snapshot(folder: str) -> sn.Snapshot | None:
    try:
        meta = os.stat(os.path.join(folder, sn.SNAPSHOT_METADATA))
        identity: object = (meta.st_size, meta.st_mtime_ns)
    except OSError:
        identity = None
    kept = mstate.kept_snapshot(folder, identity)
    if isinstance(kept, sn.Snapshot):
        return kept
    if kept is False:
        return None
    found: sn.Snapshot | None = None
    if sn.is_snapshot_folder(folder):
        try:
            found = sn.open_snapshot(folder)
        except OSError:
            found = None
    mstate.keep_snapshot(folder, identity, found if found is not None else False)
    return found


def saved_element(src: Source, path: str, index: int) -> str | None:
    """Where record ``index`` (of the file ``path``, a ``tf.data.Dataset.save`` checkpoint
    file ``<folder>/<run>/<n>.shard/<n>.snapshot``) stands in the saved dataset: ``element
    3 · component image``; None for a record of any other file."""
    if not path.endswith(".snapshot") or "://" in path:
        return None
    folder = os.path.dirname(os.path.dirname(os.path.dirname(path)))
    saved = _snapshot(folder)
    if saved is None:
        return None
    try:
        _k, local = src.dataset.locate(index)
    except (IndexError, codec.CodecError):
        return None
    element, component = sn.element_of(local, saved.width)
    names = saved.component_names()
    name = names[component] if component < len(names) else str(component)
    return f"element {element:,} of {os.path.basename(path)} · component {name}"
