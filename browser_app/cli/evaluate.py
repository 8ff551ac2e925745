"""``tfrecord-browser evaluate SRC... [--predictions SRC2...] [--iou 0.5] [--agnostic]
[--json]``: how good a model's predictions are against the ground truth, COCO-style.

The figures are pycocotools' COCOeval's on the same boxes (:mod:`codec.evaluate`): per class
and over classes AP at IoU .50:.05:.95, AP50, AP75 and AR@100; and at the chosen IoU (0.5 by
default) the ground-truth objects counted (crowd and difficult ones are ignored), true and
false positives and misses. The predictions are those in the same records
(``image/detection/*`` as ``infer_detections.py`` writes them) or, with ``--predictions``,
another dataset's, joined by ``image/source_id``, else ``image/filename``, else record number
(:func:`codec.jobs.evaluate.evaluate_apart`). The work runs as a dataset job
(:mod:`codec.jobs.evaluate`) on the executor the options name; the answer is the same on all.

``--json`` prints one object: ``classes`` (per class ``name``, ``label``, ``ap``, ``ap50``,
``ap75``, ``ar100``, ``gt``, ``tp``, ``fp``, ``fn``), ``map``, ``map50``, ``map75``, and what
:meth:`codec.jobs.evaluate.EvaluationResult.to_json` adds (``mar100``, the records left out
and why, the confusion matrix, the precision curves at the chosen IoU, the join's misses).

Exit codes as for every command: 0 when every record read was intact, 1 when damage was found
(damaged records or files that could not be read are left out of the figures, and said), 2
for usage errors or inputs that cannot be opened.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from browser_app.cli.inputs import (
    InputFiles,
    add_input,
    add_names,
    anon,
    names_of,
    open_inputs,
)
from browser_app.cli.jobs import add_job_options, executor_of, run_job
from browser_app.errors import EXIT_DAMAGED, EXIT_OK, UsageError
from codec.jobs import tasks_of
from codec.jobs.evaluate import (
    DAMAGED,
    PREDICTIONS_PREFIX,
    TRUTH_PREFIX,
    EvaluateJob,
    EvaluationResult,
    Looked,
    evaluate_apart,
    label_map_of,
    look,
)
from codec.locations import shown
from codec.values import plural

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = ["cmd_evaluate", "format_evaluation", "register"]

LOOK_AT = 200  # first records read to find the layouts and how they name classes


def _iou(text: str) -> float:
    try:
        x = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from exc
    if not 0 < x <= 1:
        raise argparse.ArgumentTypeError("must be above 0 and at most 1")
    return x


def register(sub: Subcommands) -> None:
    """Add ``evaluate`` to the command line."""
    p = sub.add_parser(
        "evaluate",
        help="score a model's predictions against the ground truth (COCO-style AP)",
        description="Match the predictions (image/detection/*, or --predictions SRC2) to the"
        " ground truth (image/object/*) as pycocotools' COCOeval does and print per class AP"
        " (IoU .50:.95), AP50, AP75, AR@100 and, at --iou, the true and false positives and"
        " misses. Crowd (is_crowd) and Pascal VOC difficult objects are ignored.",
    )
    add_input(p)
    p.add_argument(
        "--predictions",
        action="append",
        metavar="SRC2",
        help="read the predictions from this dataset (repeatable: files, globs, folders),"
        " joined to the ground truth by image/source_id, else image/filename, else record"
        " number",
    )
    p.add_argument(
        "--iou",
        type=_iou,
        default=0.5,
        metavar="T",
        help="the IoU at which predictions count as true positives for TP/FP/FN, the curves"
        " and the confusion matrix (default 0.5; AP is always over .50:.95)",
    )
    p.add_argument(
        "--agnostic",
        action="store_true",
        help="match predictions to objects of any class (COCOeval's useCats=0): one row",
    )
    p.add_argument(
        "--iou-type",
        choices=("bbox", "segm"),
        default="bbox",
        help="what IoU compares, as COCOeval's iouType: the boxes (bbox, the default) or the"
        " instance masks (segm: <prefix>mask on both sides, one 0/1 PNG per object or N·H·W"
        " numbers, > 0 inside; areas are the masks' pixel counts)",
    )
    p.add_argument("--json", action="store_true", help="print the evaluation as one JSON object")
    p.add_argument(
        "--truth-prefix",
        metavar="PREFIX",
        help="where the ground truth's lists are (default: found in the first records;"
        f" {TRUTH_PREFIX} as the Object Detection API writes them)",
    )
    p.add_argument(
        "--predictions-prefix",
        metavar="PREFIX",
        help="where the predictions' lists are (default: found in the first records;"
        f" {PREDICTIONS_PREFIX} as infer_detections.py writes them)",
    )
    add_names(p)
    add_job_options(p)
    p.set_defaults(handler=cmd_evaluate)


def _first_payloads(files: InputFiles, count: int) -> list[bytes | None]:
    """The payloads of the first ``count`` records of ``files`` (None for a damaged one)."""
    out: list[bytes | None] = []
    for f in files:
        for info in f.records(0, count - len(out)):
            out.append(info.data)
        if len(out) >= count:
            break
    return out


def cmd_evaluate(args: argparse.Namespace, out: TextIO) -> int:
    """Evaluate the predictions and print the table (or JSON)."""
    files = open_inputs(args.paths, args.compression, anon=anon(args))
    pred_files: InputFiles | None = None
    try:
        seen = look(_first_payloads(files, LOOK_AT))
        names = names_of(args, [f.path for f in files], args.paths)
        if args.predictions:
            pred_files = open_inputs(args.predictions, args.compression, anon=anon(args))
            there = look(_first_payloads(pred_files, LOOK_AT))
            for key, cn in names_of(args, [f.path for f in pred_files], args.predictions).items():
                names.setdefault(key, cn)
        else:
            there = seen
        truth = args.truth_prefix or seen.truth or TRUTH_PREFIX
        preds = args.predictions_prefix or there.predictions
        if preds is None:
            where = ", ".join(shown(p) for p in (args.predictions or args.paths))
            raise UsageError(
                f"no predictions found in the first {plural(there.records, 'record')} of"
                f" {where} (no <prefix>bbox/* lists with scores, such as {PREDICTIONS_PREFIX}"
                "bbox/*): give the dataset that holds them with --predictions, or name their"
                " prefix with --predictions-prefix"
            )
        label_map = label_map_of(names, truth, preds)
        _check_classes(seen, there, label_map, truth, preds)
        if args.iou_type == "segm":
            _check_masks(seen, there, truth, preds)
        job = EvaluateJob(
            iou=args.iou,
            agnostic=args.agnostic,
            truth=truth,
            predictions=preds,
            label_map=label_map,
            normalized=(seen.truth_normalized, there.predictions_normalized),
            compression=args.compression,
            iou_type=args.iou_type,
        )
        spec = executor_of(args)
        tasks = tasks_of(files, executor=spec, compression=args.compression)
        pred_tasks = (
            tasks_of(pred_files, executor=spec, compression=args.compression)
            if pred_files is not None
            else None
        )
    finally:
        files.close()
        if pred_files is not None:
            pred_files.close()
    if pred_tasks is None:
        result: EvaluationResult = run_job(job, tasks, args)
    else:
        result = evaluate_apart(
            job, tasks, pred_tasks, runner=lambda side, t: run_job(side, t, args)
        )
    if args.json:
        json.dump(result.to_json(), out, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(format_evaluation(result))
    damaged = bool(result.unreadable) or bool((result.status == DAMAGED).any())
    return EXIT_DAMAGED if damaged else EXIT_OK


def _check_masks(seen: Looked, there: Looked, truth: str, preds: str) -> None:
    """Refuse ``--iou-type segm`` when the first records of a side hold no masks."""
    lacking = [
        f"the {side} have no masks ({prefix}mask)"
        for side, prefix, has in (
            ("ground truth objects", truth, seen.truth_masks),
            ("predictions", preds, there.predictions_masks),
        )
        if not has
    ]
    if lacking:
        raise UsageError(
            "--iou-type segm compares instance masks, but in the first records"
            f" {' and '.join(lacking)}: evaluate the boxes (--iou-type bbox), or give records"
            " that carry masks"
        )


def _check_classes(
    seen: Looked, there: Looked, label_map: Mapping[int, str] | None, truth: str, preds: str
) -> None:
    """Refuse ground truth that names its classes by text only against predictions that
    number them only (or the other way round), without a label map to meet them: no object
    could ever match."""
    sides = {seen.truth_classes, there.predictions_classes}
    if label_map is None and sides == {"text", "label"}:
        by_text = truth if seen.truth_classes == "text" else preds
        by_label = preds if by_text == truth else truth
        raise UsageError(
            f"{by_text}class/text names the classes and {by_label} numbers them: give the"
            f" label map that joins them, --names {by_label}"
            f"{'class/' if by_label == truth else ''}label=label_map.pbtxt"
        )


def _fig(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"


def format_evaluation(result: EvaluationResult) -> str:
    """The text report: what was evaluated, one row per class (AP, AP50, AP75, AR@100 and,
    at the chosen IoU, GT, TP, FP, FN) and the means, then what was left out and why."""
    doc = result.to_json()
    recs = doc["records"]
    how = "any class (class-agnostic)" if result.agnostic else "class by class"
    lines = [
        f"{plural(recs['total'], 'record')}, {recs['evaluated']:,} evaluated; predictions"
        f" matched {how}; TP/FP/FN at IoU {result.iou:g}"
        + ("; IoU of the instance masks (segm)" if result.iou_type == "segm" else ""),
    ]
    head = ["class", "label", "AP", "AP50", "AP75", "AR@100", "GT", "TP", "FP", "FN"]
    rows = [head]
    for c in doc["classes"]:
        rows.append(
            [
                c["name"],
                "" if c["label"] is None else str(c["label"]),
                _fig(c["ap"]),
                _fig(c["ap50"]),
                _fig(c["ap75"]),
                _fig(c["ar100"]),
                f"{c['gt']:,}",
                f"{c['tp']:,}",
                f"{c['fp']:,}",
                f"{c['fn']:,}",
            ]
        )
    total = [sum(c[k] for c in doc["classes"]) for k in ("gt", "tp", "fp", "fn")]
    rows.append(
        [
            "mean (mAP)",
            "",
            _fig(doc["map"]),
            _fig(doc["map50"]),
            _fig(doc["map75"]),
            _fig(doc["mar100"]),
            *(f"{n:,}" for n in total),
        ]
    )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines.append("")
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [v.rjust(w) for v, w in zip(r[1:], widths[1:])]
        lines.append("  ".join(cells).rstrip())
        if n == 0 or n == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(
        "AP: COCO's, over IoU .50:.05:.95 (101 recall points, at most"
        f" {result.max_dets} predictions per picture and class)."
    )
    lines.append("'-': a class without ground truth. Crowd and difficult objects are ignored.")
    objects = doc["objects"]
    if objects["truth_ignored"] or objects["predictions_ignored"]:
        lines.append(
            f"ignored: {plural(objects['truth_ignored'], 'ground-truth object')} (crowd,"
            f" difficult) and {plural(objects['predictions_ignored'], 'prediction')} matching"
            " them"
        )
    if objects["predictions_unevaluated"]:
        lines.append(
            f"not evaluated: {plural(objects['predictions_unevaluated'], 'prediction')} past"
            f" the first {result.max_dets} of a picture's class (by score)"
        )
    if recs["without_truth"] or recs["without_predictions"]:
        lines.append(
            f"{plural(recs['without_truth'], 'record')} without ground-truth boxes,"
            f" {plural(recs['without_predictions'], 'record')} without predictions"
            " (evaluated: they have no objects of that side)"
        )
    for why, got in recs["left_out"].items():
        first = ", ".join(str(r) for r in got["first"])
        more = "" if got["count"] <= len(got["first"]) else ", …"
        lines.append(f"LEFT OUT: {plural(got['count'], 'record')}: {why} ({first}{more})")
    for u in doc.get("unreadable", []):
        lines.append(f"NOT READ: {u['path']}: {u['why']}")
    join = doc.get("join")
    if join is not None:
        lines.append(
            f"predictions joined by {join['by']}: {plural(join['joined'], 'record')} paired"
        )
        for key, one, what in (
            ("truth_alone", "ground-truth record", "without predictions (left out)"),
            ("predictions_alone", "prediction record", "without ground truth"),
            ("repeated", "record", "whose key repeats an earlier one's (left out)"),
        ):
            got = join[key]
            if got["count"]:
                first = ", ".join(repr(k) for k in got["first"])
                lines.append(f"  {plural(got['count'], one)} {what}: {first}")
    return "\n".join(lines) + "\n"
