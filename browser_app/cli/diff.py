"""``tfrecord-browser diff A B [--key FEATURE] [--json]``: what changed between two datasets
(two versions, train against eval, training against serving data).

Feature by feature: in how many records of each it is present, its type, and how far its
values moved — TFDV's L-infinity distance for categorical features (text; integer class
labels) and its Jensen–Shannon divergence for every feature with values (of the value counts
for categorical ones, of the histograms for numbers), computed as TFDV's
``anomalies/metrics.cc`` does (:mod:`codec.diff`) — features new in B or gone from it, and
values (classes) on one side only. Record by record, when a key feature joins them
(``--key``; else ``image/source_id``, ``image/key/sha256``, ``image/filename``, ``id`` or
``key``, the first both have): records added, removed, changed (with the features that
changed), unchanged, and keys held by several records of a side. Both sides run as dataset
jobs (:mod:`codec.jobs.diff`) on the executor the options name; the answer is the same on all.

``--json`` prints :meth:`codec.diff.DatasetDiff.to_json`. Exit codes as for every command: 0
when every record read was intact, 1 when damage was found (damaged records or files that
could not be read are left out of every figure, and said), 2 for usage errors or inputs that
cannot be opened.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, TextIO

from browser_app.cli.inputs import COMPRESSION_CHOICES, add_names, anon, names_of, open_inputs
from browser_app.cli.jobs import add_job_options, executor_of, run_job
from browser_app.errors import EXIT_DAMAGED, EXIT_OK
from browser_app.view.diff import (
    categorical_features,
    feature_rows,
    join_lines,
    new_value_lines,
    side_line,
)
from codec.diff import DEFAULT_KEYS, DatasetDiff, compare
from codec.jobs import tasks_of
from codec.jobs.diff import DiffJob
from codec.locations import shown

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = ["cmd_diff", "format_diff", "register"]


def register(sub: Subcommands) -> None:
    """Add ``diff`` to the command line."""
    p = sub.add_parser(
        "diff",
        help="what changed between two datasets: features, distributions, records",
        description="Compare dataset A (the old version, train, training data) with B: per"
        " feature presence, type, TFDV's L-infinity distance (categorical values) and"
        " Jensen-Shannon divergence, new and vanished features and classes; and, joined by a"
        " key feature, the records added, removed, changed (which features) and unchanged.",
    )
    p.add_argument(
        "a", metavar="A", help="the first dataset (files, a glob, a folder, FOLDER:SPLIT, a URL)"
    )
    p.add_argument("b", metavar="B", help="the second dataset, named the same ways")
    p.add_argument(
        "--key",
        metavar="FEATURE",
        help="the feature that joins records of A and B (default: the first of "
        + ", ".join(DEFAULT_KEYS)
        + " both have)",
    )
    p.add_argument(
        "--compression",
        choices=COMPRESSION_CHOICES,
        default="auto",
        help="default: detected from the first bytes",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as one JSON object")
    add_names(p)
    add_job_options(p)
    p.set_defaults(handler=cmd_diff)


def cmd_diff(args: argparse.Namespace, out: TextIO) -> int:
    """Compare the two datasets and print the report (or JSON)."""
    keys = (*DEFAULT_KEYS, args.key) if args.key else DEFAULT_KEYS
    job = DiffJob(keys, compression=args.compression)
    spec = executor_of(args)
    sides = []
    classes: dict[str, Any] = {}
    for path in (args.a, args.b):
        files = open_inputs([path], args.compression, anon=anon(args))
        try:
            for key, cn in names_of(args, [f.path for f in files], [path]).items():
                classes.setdefault(key, cn)
            tasks = tasks_of(files, executor=spec, compression=args.compression)
        finally:
            files.close()
        sides.append(run_job(job, tasks, args))
    a, b = sides
    names = set(a.features) | set(b.features)
    diff = compare(a, b, key=args.key, categorical=categorical_features(names, classes))
    if args.json:
        json.dump(diff.to_json(), out, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(format_diff(diff, shown(args.a), shown(args.b), classes))
    damaged = a.damaged or b.damaged or a.unreadable or b.unreadable
    return EXIT_DAMAGED if damaged else EXIT_OK


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def _fig(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def format_diff(diff: DatasetDiff, a: str, b: str, classes: Any = None) -> str:
    """The text report: both sides, a row per feature (status, type, presence in A and B,
    L-infinity, Jensen–Shannon, what moved most), the values on one side only, then the
    records joined by the key."""
    lines = [side_line("A", a, diff.a), side_line("B", b, diff.b), ""]
    head = ["feature", "status", "type", "in A", "in B", "L-inf", "JS", "largest change"]
    table = [head]
    for r in feature_rows(diff, classes):
        table.append(
            [
                r["feature"],
                r["status"],
                r["type"],
                _pct(r["in_a"]),
                _pct(r["in_b"]),
                _fig(r["linf"]),
                _fig(r["js"]),
                r["change"],
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(head) - 1)]
    for n, row in enumerate(table):
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].ljust(widths[2])]
        cells += [v.rjust(w) for v, w in zip(row[3:7], widths[3:7])]
        lines.append("  ".join([*cells, row[7]]).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("")
    lines.append(
        "L-inf: TFDV's L-infinity distance of the value counts (categorical features); JS: its"
        " Jensen-Shannon divergence (log 2) of the value counts or the histograms."
    )
    extra = new_value_lines(diff, classes)
    if extra:
        lines.append("")
        lines.extend(extra)
    for side, s in (("A", diff.a), ("B", diff.b)):
        if s.damaged:
            first = ", ".join(str(n) for n in s.damaged_records[:10])
            lines.append(f"DAMAGED in {side} (left out): {first}{', …' if s.damaged > 10 else ''}")
        for path, why in s.unreadable:
            lines.append(f"NOT READ in {side}: {shown(path)}: {why}")
    lines.append("")
    lines.extend(join_lines(diff))
    return "\n".join(lines) + "\n"
