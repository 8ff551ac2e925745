"""``tfrecord-browser sql SRC... "SELECT label, count(*) FROM records GROUP BY 1" [--json]
[--csv] [--limit N] [--timeout S]``: SQL over a dataset's records.

The table is ``records``: one row per record, its facts (``record``, ``file``, ``local``,
``status``, ``bytes``, ``boxes``, ``classes``, ``mark``) and its scalar and short-list
features as columns (:mod:`codec.columns_index` says which, and the command says on stderr
which features were left out and why). The index is built the first time as a dataset job
on the executor the options name (:mod:`codec.jobs.columns`) and stored in the cache; the
next query of the same files reads no record. The query runs in DuckDB, reading the index
only (:mod:`codec.sql`): a statement that is not a query, or that would read or write other
files, is refused.

Output: a text table (values cut to fit; ``--csv`` and ``--json`` give them whole); ``--csv``:
CSV with a header row (lists as JSON, bytes in base64); ``--json``: one object, ``columns``,
``rows`` (lists of values; bytes in base64, non-finite floats as ``"NaN"``/``"Infinity"``),
``truncated``, ``records`` (in the index) and ``left_out`` (feature → why).

Exit codes: 0 answered; 1 answered from an index missing files that could not be read (said);
2 for a query DuckDB refuses (its message, no traceback), a refused statement, a query past
its time limit, or inputs that cannot be opened.
"""

from __future__ import annotations

import argparse
import base64
import csv
import json
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

from browser_app.cli.inputs import add_input, anon, open_inputs
from browser_app.cli.jobs import add_job_options, executor_of, run_job
from browser_app.errors import EXIT_DAMAGED, EXIT_OK, UsageError
from codec.columns_index import ColumnsIndex, columns_index
from codec.sql import DEFAULT_ROWS, DEFAULT_SECONDS, QueryResult, SqlError, query
from codec.values import plural

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = ["cmd_sql", "register"]

CELL = 60  # characters a value may take in the text table


def _positive_float(text: str) -> float:
    try:
        x = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from exc
    if not x > 0:
        raise argparse.ArgumentTypeError("must be above 0")
    return x


def _rows(text: str) -> int:
    try:
        n = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from exc
    if n < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return n


def register(sub: Subcommands) -> None:
    """Add ``sql`` to the command line."""
    p = sub.add_parser(
        "sql",
        help="answer a SQL query over the records (the table is records)",
        usage="tfrecord-browser sql [options] SRC [SRC ...] QUERY",
        description="Query the records of a dataset with SQL (DuckDB): the sources, then the"
        " query as the last argument. The table is records:"
        " one row per record with its facts (record, file, local, status, bytes, boxes,"
        " classes, mark) and its scalar and short-list features as columns (write a name"
        ' with / in double quotes: "image/height"). The columns are built into an index'
        " the first time (a dataset job) and kept in the cache for the next query. Only"
        " queries run: nothing is written, attached, installed or read besides the index.",
    )
    add_input(p)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--csv", action="store_true", help="print the result as CSV")
    p.add_argument(
        "--limit",
        type=_rows,
        default=DEFAULT_ROWS,
        metavar="N",
        help=f"print at most N rows (default {DEFAULT_ROWS:,}); a result cut there says so",
    )
    p.add_argument(
        "--timeout",
        type=_positive_float,
        default=DEFAULT_SECONDS,
        metavar="SECONDS",
        help=f"stop a query that runs longer (default {DEFAULT_SECONDS:g})",
    )
    add_job_options(p)
    p.set_defaults(handler=cmd_sql)


def cmd_sql(args: argparse.Namespace, out: TextIO) -> int:
    """Build (or find) the index, run the query, print its rows."""
    if len(args.paths) < 2:
        raise UsageError('sql needs at least one source and a query ("SELECT … FROM records")')
    if args.json and args.csv:
        raise UsageError("--json and --csv cannot be used together")
    *srcs, text = args.paths
    files = open_inputs(srcs, args.compression, anon=anon(args))
    try:
        spec = executor_of(args)
        index = columns_index(
            files,
            runner=lambda job, tasks: run_job(job, tasks, args),
            executor=spec,
            compression=args.compression,
        )
    finally:
        files.close()
    try:
        result = query(index, text, limit=args.limit, timeout=args.timeout)
    except SqlError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        json.dump(_json(result, index), out, ensure_ascii=False)
        out.write("\n")
    elif args.csv:
        _csv(result, out)
    else:
        out.write(_table(result))
    _notes(result, index, args)
    return EXIT_DAMAGED if index.unreadable else EXIT_OK


def _notes(result: QueryResult, index: ColumnsIndex, args: argparse.Namespace) -> None:
    """What the answer leaves out, on stderr: rows past the limit, features not indexed,
    files that could not be read."""
    err = sys.stderr
    if result.truncated:
        err.write(
            f"tfrecord-browser: only the first {plural(args.limit, 'row')} are printed;"
            " raise --limit for more\n"
        )
    if index.left_out:
        names = ", ".join(sorted(index.left_out))
        err.write(
            f"tfrecord-browser: not in the index (too long, or of two types):"
            f" {names} (--json says why)\n"
        )
    for path, why in index.unreadable:
        err.write(
            f"tfrecord-browser: {path} could not be read, its records are not in the index: {why}\n"
        )


def _plain(v: Any) -> Any:
    """A value as JSON takes it: bytes in base64, non-finite floats as strings."""
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (int, float, str)) or v is None:
        return v
    return str(v)  # dates, decimals, intervals: as DuckDB's Python values say them


def _json(result: QueryResult, index: ColumnsIndex) -> dict[str, Any]:
    rows = [[_plain(v) for v in row] for row in _lines(result)]
    return {
        "columns": result.columns,
        "rows": rows,
        "truncated": result.truncated,
        "records": index.records,
        "left_out": dict(sorted(index.left_out.items())),
        "unreadable": [{"path": p, "why": w} for p, w in index.unreadable],
    }


def _lines(result: QueryResult) -> list[list[Any]]:
    """The rows as lists of Python values (column names may repeat: ``SELECT a, a``)."""
    table = result.table
    renamed = table.rename_columns([f"{i}" for i in range(table.num_columns)])
    return [[row[f"{i}"] for i in range(table.num_columns)] for row in renamed.to_pylist()]


def _cell(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, (bytes, list, dict)) or (isinstance(v, float) and not math.isfinite(v)):
        return json.dumps(_plain(v), ensure_ascii=False)
    return str(v)


def _csv(result: QueryResult, out: TextIO) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(result.columns)
    for row in _lines(result):
        w.writerow(["" if v is None else _cell(v) for v in row])


def _cut(s: str) -> str:
    s = s.replace("\n", "⏎").replace("\r", "")
    return s if len(s) <= CELL else s[: CELL - 1] + "…"


def _table(result: QueryResult) -> str:
    """The rows as an aligned text table, numbers to the right, and how many there are."""
    cols = result.columns
    lines = _lines(result)
    cells = [[_cut(_cell(v)) for v in row] for row in lines]
    numeric = [
        all(isinstance(row[i], (int, float)) or row[i] is None for row in lines)
        for i in range(len(cols))
    ]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(cols)]

    def fmt(row: Sequence[str]) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(row, widths, numeric)]
        return "  ".join(parts).rstrip()

    out = [fmt(cols), "  ".join("-" * w for w in widths)]
    out += [fmt(r) for r in cells]
    more = " (cut at the limit)" if result.truncated else ""
    out.append(f"({plural(len(lines), 'row')}{more})")
    return "\n".join(out) + "\n"
