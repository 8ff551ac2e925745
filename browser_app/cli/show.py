"""``tfrecord-browser show SRC [--records SPEC] [--json] [--out DIR] [--score-threshold X]
[--label-map FILE] [--no-layers]``: each record's view as the app draws it, for scripts,
reports and CI.

Per record: its main picture (:func:`codec.roles.main_picture`), the layers over it
(:mod:`codec.layers`: ground-truth boxes, predictions at or above the score threshold, masks,
a class map, keypoints) and every picture with its role. ``--json`` prints one line per
record (:func:`browser_app.view.pictures.view_summary`, with ``index``, ``path`` and
``local`` before it, and what the record holds besides pictures, each only when present
(:func:`browser_app.view.media.media_summary`): ``"audio"`` (each clip's ``feature``,
``index``, ``format``, ``seconds``, ``sample_rate``, ``channels``), ``"frames"`` (a clip's
``feature`` and ``count``) and ``"text"`` (token ids read with the ``vocab.txt`` beside the
data, by feature)); without it, one short line in words. ``--out DIR`` writes
``<global index>.png``, the main picture with its layers as the record view draws it
(:func:`browser_app.view.pictures.main_view_png`).

Boxes and keypoints are read as normalised or as pixels by one decision for the dataset, made
as the app makes it: from the ground truth of its first records
(:func:`browser_app.view.pictures.boxes_normalized`).

Exit codes as for ``dump``: 0 when every record asked for was read and drawn, 1 when one was
damaged or its picture could not be decoded (named on stderr; the others are still shown), 2
for usage errors (``--score-threshold 2``, a label map that cannot be read) and inputs or
outputs that cannot be opened.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import codec
from browser_app.cli.inputs import (
    add_input,
    add_names,
    anon,
    names_of,
    open_inputs,
    records_option,
    split_folder,
)
from browser_app.errors import EXIT_DAMAGED, EXIT_OK, UsageError
from codec import example
from codec.kinds import DATA_CRC
from codec.locations import is_url
from codec.values import plural
from codec.writer import atomic_output

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands
    from browser_app.view.media import MediaHints
    from codec.layers import LayerOptions
    from codec.names import ClassNames
    from codec.tokens import Vocab

__all__ = ["cmd_show", "register", "summary_words"]


def register(sub: Subcommands) -> None:
    """Add ``show`` to the command line."""
    p = sub.add_parser(
        "show",
        help="each record's main picture and its layers, as the app draws them",
        description="Each record's main picture, the layers over it (boxes, predictions,"
        " masks, class map, keypoints) and every picture with its role: one line in words per"
        " record, or --json; --out DIR writes the picture with its layers as DIR/<index>.png."
        " Box coordinates are read as normalised or pixels by one decision for the dataset,"
        " from its first records, as in the app.",
    )
    p.add_argument(
        "path",
        metavar="SRC",
        help="a file, glob, shard pattern, name@N, folder or URL (record numbers are global)",
    )
    add_input(p, many=False)
    p.add_argument("--records", metavar="SPEC", help="e.g. 0:10,15,-1 (default: every record)")
    p.add_argument(
        "--json",
        action="store_true",
        help='one JSON object per record: {"index", "path", "local", "picture", "layers",'
        ' "pictures"}, and "names", "audio", "frames", "text" when the record has them',
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write <index>.png per record into DIR (made if missing): the main picture with"
        " its layers",
    )
    p.add_argument(
        "--score-threshold",
        type=score_threshold,
        default=None,
        metavar="X",
        help="draw and count the predictions scoring at least X, 0–1 (default: 0.5)",
    )
    p.add_argument(
        "--label-map",
        metavar="FILE",
        help="the Object Detection API's label_map.pbtxt (a file or a URL): class names",
    )
    p.add_argument(
        "--no-layers",
        action="store_true",
        help='the plain main picture: no layers read or drawn (--json: "layers": [])',
    )
    add_names(p)
    p.set_defaults(handler=cmd_show)


def score_threshold(text: str) -> float:
    """``--score-threshold``: a number from 0 to 1 (for argparse's ``type=``)."""
    try:
        x = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from exc
    if not math.isfinite(x) or not 0.0 <= x <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a score from 0 to 1")
    return x


def cmd_show(args: argparse.Namespace, out: TextIO) -> int:
    """Every record (or the ``--records`` selection): its view as a line of words or JSON,
    and with ``--out`` its main picture drawn. A record that cannot be read, or whose picture
    cannot be decoded, is named on stderr and the rest are still shown."""
    # Imported here: pictures bring Pillow and numpy, which the parser of another command
    # never needs (this module is imported to build ``show``'s parser).
    from browser_app.view.media import media_summary
    from browser_app.view.pictures import BOX_SAMPLE, boxes_normalized, main_view_png
    from browser_app.view.pictures import view_summary as summary_of
    from browser_app.view.summary import first_payloads

    folder = _out_folder(args.out) if args.out else None
    label_map = _label_map(args.label_map, anon(args)) if args.label_map else None
    files = open_inputs([args.path], args.compression, anon=anon(args))
    ds = codec.TFRecordDataset(files)
    damaged = False
    try:
        names = names_of(args, [f.path for f in files], [args.path])
        label_map = label_map if label_map is not None else box_names(names)
        wanted = records_option(args.records, ds) if args.records else range(len(ds))
        hints = _media_hints(args.path, anon(args))
        vocabs: dict[str, Vocab | None] = {}
        options: LayerOptions | None = None
        if not args.no_layers:
            normalized = boxes_normalized(first_payloads(ds, BOX_SAMPLE)).normalized
            options = show_options(args.score_threshold, normalized, label_map)
        for i in wanted:
            k, local = ds.locate(i)
            f = ds.files[k]
            try:
                payload = f.read(local)
            except codec.CorruptRecordError as exc:
                damaged = True
                sys.stderr.write(f"{exc}\n")
                continue
            where = f"{f.path}: record {local}" + (f" (record {i})" if len(files) > 1 else "")
            try:
                record = example.decode(payload, "auto")
                summary = summary_of(record, options)
                if f.path not in vocabs:
                    vocabs[f.path] = _vocab(f.path)
                summary.update(media_summary(record, vocabs[f.path], hints))
            except codec.CodecError as exc:
                damaged = True
                sys.stderr.write(f"{where}: {exc}\n")
                continue
            if args.no_layers:
                summary["layers"] = []
            if args.json:
                line: dict[str, Any] = {"index": i, "path": f.path, "local": local, **summary}
                if by_name := record_names(record, names):
                    line["names"] = by_name
                if f.is_recovered(local):
                    line["recovered"] = True
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
            else:
                named = f" ({f.path} record {local})" if len(files) > 1 else ""
                note = " · recovered (found after damage)" if f.is_recovered(local) else ""
                out.write(f"record {i}{named}: {summary_words(summary)}{note}\n")
            if folder is None:
                continue
            if summary["picture"] is None:
                sys.stderr.write(f"{where}: no picture, no {i}.png written\n")
                continue
            try:
                png = main_view_png(record, options)
            except codec.CodecError as exc:
                damaged = True
                sys.stderr.write(f"{where}: cannot draw its picture: {exc}\n")
                continue
            if png is None:  # pragma: no cover - the summary found a picture
                continue
            with atomic_output(os.path.join(folder, f"{i}.png")) as fh:
                fh.write(png)
        for f in files:
            for p in f.problems:
                if p.kind != DATA_CRC:
                    damaged = True
                    sys.stderr.write(p.describe() + "\n")
    finally:
        files.close()
    return EXIT_DAMAGED if damaged else EXIT_OK


def _media_hints(spec: str, anon: bool = False) -> MediaHints:
    """What a TFDS dataset's ``features.json`` says of its ``Video`` and ``Audio`` features
    (sample rates), when ``spec`` names one; nothing otherwise."""
    from browser_app.view.media import hints_of

    got = split_folder(spec, anon=anon)
    tfds = got[0].tfds if got is not None else None
    return hints_of(tfds.features if tfds is not None else None)


def _vocab(path: str) -> Vocab | None:
    """The WordPiece vocab beside the data file ``path`` (``vocab.txt``), or None; one that
    cannot be read is named on stderr and left out."""
    from codec.tokens import read_vocab, vocab_beside

    found = vocab_beside(path)
    if found is None:
        return None
    try:
        return read_vocab(found)
    except (OSError, codec.CodecError) as exc:
        sys.stderr.write(f"{found}: not used: {exc}\n")
        return None


def show_options(
    threshold: float | None,
    normalized: bool | None,
    label_map: Mapping[int, str] | None,
) -> LayerOptions:
    """The layers ``show`` reads and draws: every kind, predictions from ``threshold`` (None:
    the app's default), boxes read as the dataset's decision says, classes named by
    ``label_map``."""
    from codec.layers import LayerOptions

    if threshold is None:
        return LayerOptions(normalized=normalized, label_map=label_map)
    return LayerOptions(score_threshold=threshold, normalized=normalized, label_map=label_map)


def record_names(
    record: example.Record, names: Mapping[str, ClassNames]
) -> dict[str, list[str | None]]:
    """``"names"`` of ``show --json``: for each feature of ``record`` with class names, the
    name of each of its values in order (None for a label its names file does not name)."""
    out: dict[str, list[str | None]] = {}
    for feature, cn in names.items():
        f = record.features.get(feature)
        if f is not None and f.type == "int64" and f.values:
            out[feature] = [cn.name(int(v)) for v in f.values]
    return out


def box_names(names: Mapping[str, ClassNames]) -> dict[int, str] | None:
    """The class names of the boxes' labels (``image/object/class/label``, else another
    ``<prefix>class/label``) as the layers' label map; None when none has names."""
    keys = sorted(
        (k for k in names if k.endswith("class/label")),
        key=lambda k: k != "image/object/class/label",
    )
    return dict(names[keys[0]].names) if keys else None


def _out_folder(path: str) -> str:
    """``--out``: a local folder, made when missing."""
    if is_url(path):
        raise UsageError(f"--out {path}: give a local folder (URLs are not written by show)")
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"--out {path}: not a folder")
    os.makedirs(path, exist_ok=True)
    return path


def _label_map(path: str, anon: bool) -> dict[int, str]:
    # Imported here: the schema command's module, for its one reader of label maps (an
    # unreadable or unparsable file is an InputError, exit code 2, as for ``schema``).
    from browser_app.cli.schema import read_label_map

    return read_label_map(path, anon=anon)


# The order layers are named in: what a reviewer looks at first.
_WORD_ORDER = ("boxes", "predictions", "masks", "class_map", "keypoints")


def _layer_words(layer: Mapping[str, Any]) -> str | None:
    kind, n = layer.get("kind"), int(layer.get("count") or 0)
    if kind == "predictions":
        total = layer.get("total")
        if not n and not total:
            return None
        threshold = layer.get("threshold")
        if threshold is None:
            return plural(n, "prediction")
        return f"{n:,} of {plural(int(total or 0), 'prediction')} ≥ {threshold:g}"
    if not n:
        return None
    if kind == "boxes":
        return plural(n, "box", "boxes")
    if kind == "masks":
        return plural(n, "mask")
    if kind == "class_map":
        return f"class map: {plural(n, 'class', 'classes')}"
    if kind == "keypoints":
        return plural(n, "keypoint")
    return f"{kind} {n:,}"


def _media_words(summary: Mapping[str, Any]) -> list[str]:
    """What a record holds besides pictures, in words: ``20 frames in image/encoded``,
    ``audio/encoded wav 0.72 s 16 kHz``, ``input_ids "[CLS] the river …"``."""
    from codec.audio import rate_text

    words = []
    frames = summary.get("frames")
    if frames:
        words.append(f"{plural(int(frames['count']), 'frame')} in {frames['feature']}")
    for a in summary.get("audio") or []:
        bits = [a["feature"] + (f"[{a['index']}]" if a["index"] else ""), str(a["format"])]
        if a.get("seconds") is not None:
            bits.append(f"{a['seconds']:.2f} s")
        if a.get("sample_rate"):
            bits.append(rate_text(a["sample_rate"]))
        words.append(" ".join(bits))
    for name, text in (summary.get("text") or {}).items():
        short = text if len(text) <= 60 else text[:59] + "…"
        words.append(f"{name} {json.dumps(short, ensure_ascii=False)}")
    return words


def summary_words(summary: Mapping[str, Any]) -> str:
    """A record's view (:func:`~browser_app.view.pictures.view_summary`, with
    :func:`~browser_app.view.media.media_summary`) in one line: ``image/encoded jpeg 640×480
    · 4 boxes · 12 of 20 predictions ≥ 0.5 · 4 masks · 17 keypoints``, then a clip's frames,
    audio and text (``20 frames in image/encoded``, ``audio wav 0.72 s 16 kHz``); ``no
    picture`` for a record with none of these. Layers with nothing drawn are left out
    (predictions all below the threshold are not: ``0 of 20 predictions ≥ 0.5``)."""
    media = _media_words(summary)
    pic = summary.get("picture")
    if pic is None:
        return " · ".join(media) if media else "no picture"
    size = f"{pic['width']}×{pic['height']}" if pic["width"] and pic["height"] else "size unknown"
    if pic["feature"]:
        name = pic["feature"] + (f"[{pic['index']}]" if pic["index"] else "")
        words = [f"{name} {pic['format']} {size}"]
    else:  # a record that is itself one serialized tensor
        words = [f"{pic['format']} {size} (the whole record)"]
    pictures: Sequence[Mapping[str, Any]] = summary.get("pictures") or []
    role = next(
        (
            p["role"]
            for p in pictures
            if (p["feature"], p["index"]) == (pic["feature"], pic["index"])
        ),
        "photo",
    )
    if role != "photo":
        words[0] += f" ({role.replace('_', ' ')})"
    layers = sorted(
        summary.get("layers") or [],
        key=lambda x: _WORD_ORDER.index(x["kind"]) if x["kind"] in _WORD_ORDER else 99,
    )
    words.extend(w for x in layers if (w := _layer_words(x)))
    frames = summary.get("frames") or {}
    if len(pictures) > 1 and len(pictures) != frames.get("count"):
        words.append(f"{plural(len(pictures), 'picture')} in all")
    return " · ".join(words + media)
