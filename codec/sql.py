"""SQL over a dataset's columnar index (:mod:`codec.columns_index`) with DuckDB: the table is
``records``, one row per record, its facts and its features as columns.

Queries only read the index. Each runs on a connection of its own, made for it: an
in-memory database whose only table is the view ``records`` over the index's Parquet
files; then DuckDB is told to touch no file but those (``allowed_paths``,
``enable_external_access = false``: no ``COPY … TO``, ``ATTACH``, ``INSTALL``/``LOAD``,
``read_csv('/etc/passwd')``, ``read_parquet('http://…')``) and its configuration is locked
(``lock_configuration``: no ``SET`` undoes that). Before any of it, the text must be one
``SELECT`` (``WITH … SELECT``, ``FROM records``, ``DESCRIBE``/``SUMMARIZE`` are SELECTs to
DuckDB) or ``EXPLAIN``: anything else is refused in words. Every query has a row limit (the
rows past it are not fetched; the result says it was cut) and a time limit (the query is
interrupted).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import duckdb
import pyarrow as pa

from .columns_index import FACTS, ColumnsIndex, IndexColumn, IndexFile, stored_column
from .errors import CodecError

__all__ = [
    "DEFAULT_ROWS",
    "DEFAULT_SECONDS",
    "EXAMPLES",
    "QueryResult",
    "SqlError",
    "SqlRefused",
    "SqlTimeout",
    "connect",
    "query",
    "view_sql",
]

DEFAULT_ROWS = 10_000  # rows a query returns at most, unless asked for more
DEFAULT_SECONDS = 60.0  # how long a query may run before it is interrupted
_BATCH = 2_048
_ALLOWED = {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}

EXAMPLES = (
    "SELECT status, count(*) AS records FROM records GROUP BY status",
    "SELECT record, bytes FROM records ORDER BY bytes DESC LIMIT 20",
    "SELECT record, boxes, classes FROM records WHERE boxes > 5",
    "SELECT c AS class, count(*) AS boxes FROM records, unnest(classes) AS t(c) GROUP BY 1"
    " ORDER BY 2 DESC",
    "DESCRIBE records",
)
"""Queries every index answers (the facts are in every index)."""


class SqlError(CodecError, ValueError):
    """A query that cannot run: DuckDB's message (a syntax error, an unknown column)."""


class SqlRefused(SqlError):
    """A query that would do more than read the index: write or read files, attach a
    database, install or load an extension, change settings."""


class SqlTimeout(SqlError):
    """A query interrupted at its time limit."""


@dataclass
class QueryResult:
    """A query's answer: its rows (``table``, at most the limit), whether rows past the
    limit were left out (``truncated``), and how long it took (``seconds``)."""

    table: pa.Table
    truncated: bool
    seconds: float

    @property
    def columns(self) -> list[str]:
        return list(self.table.column_names)

    def records(self) -> list[int] | None:
        """The ``record`` column's numbers (NULLs left out), when the result has a whole-number
        column of that name; else None."""
        if "record" not in self.table.column_names:
            return None
        col = self.table.column("record")
        if not pa.types.is_integer(col.type):
            return None
        return [int(v) for v in col.to_pylist() if v is not None]


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _feature_expr(col: IndexColumn, f: IndexFile) -> str:
    """A feature's column as one file's table gives it (NULL when the file has none)."""
    note = f.notes.get(col.feature)
    if note is None or note.get("left_out"):
        return f"CAST(NULL AS {col.sql_type})"
    stored = _ident(stored_column(col.feature))
    blob = col.type == "bytes" and note.get("type") == "string"
    if col.scalar:
        expr = f"{stored}[1]"
        return f"encode({expr})" if blob else expr
    return f"list_transform({stored}, v -> encode(v))" if blob else stored


def _file_select(index: ColumnsIndex, f: IndexFile) -> str:
    parts = [
        f"CAST({f.base} + local AS BIGINT) AS record",
        f"CAST({_text(f.path)} AS VARCHAR) AS file",
        "local",
        "status",
        "bytes",
        "boxes",
        "classes",
    ]
    parts += [f"{_feature_expr(c, f)} AS {_ident(c.name)}" for c in index.columns]
    return f"SELECT {', '.join(parts)} FROM read_parquet({_text(str(f.parquet))})"


def view_sql(index: ColumnsIndex, marks: bool = False) -> str:
    """The definition of the view ``records`` over ``index`` (with ``marks``: joined to the
    table ``tfb_marks(record, mark)``)."""
    if index.files:
        body = "\nUNION ALL\n".join(_file_select(index, f) for f in index.files)
    else:
        nothing = [
            "CAST(NULL AS BIGINT) AS record",
            "CAST(NULL AS VARCHAR) AS file",
            "CAST(NULL AS BIGINT) AS local",
            "CAST(NULL AS VARCHAR) AS status",
            "CAST(NULL AS BIGINT) AS bytes",
            "CAST(NULL AS BIGINT) AS boxes",
            "CAST(NULL AS VARCHAR[]) AS classes",
        ]
        nothing += [f"CAST(NULL AS {c.sql_type}) AS {_ident(c.name)}" for c in index.columns]
        body = f"SELECT {', '.join(nothing)} WHERE false"
    features = "".join(f", u.{_ident(c.name)}" for c in index.columns)
    facts = ", ".join(f"u.{name}" for name in FACTS if name != "mark")
    if marks:
        mark = "m.mark"
        join = " LEFT JOIN tfb_marks AS m ON m.record = u.record"
    else:
        mark, join = "CAST(NULL AS VARCHAR)", ""
    return (
        f"CREATE VIEW records AS SELECT {facts}, {mark} AS mark{features} FROM ({body}) AS u{join}"
    )


def connect(
    index: ColumnsIndex, marks: Mapping[int, str] | None = None, threads: int | None = None
) -> duckdb.DuckDBPyConnection:
    """A connection whose only table is ``records`` over ``index`` (with the review
    ``marks`` by record number), locked as the module says."""
    config: dict[str, str | bool | int | float | list[str]] = {
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    if threads is not None:
        config["threads"] = threads
    con = duckdb.connect(":memory:", config=config)
    try:
        if marks:
            table = pa.table(
                {
                    "record": pa.array(list(marks.keys()), pa.int64()),
                    "mark": pa.array(list(marks.values()), pa.string()),
                }
            )
            con.register("tfb_marks", table)
        con.execute(view_sql(index, bool(marks)))
        paths = ", ".join(_text(str(f.parquet)) for f in index.files)
        con.execute(f"SET allowed_paths = [{paths}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise
    return con


def _check(sql: str) -> None:
    """Refuse anything but one SELECT or EXPLAIN, in words."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise SqlError(_message(exc)) from None
    if not statements:
        raise SqlError("the query is empty")
    if len(statements) > 1:
        raise SqlRefused(
            f"one statement at a time: this text holds {len(statements)} (separated by ;)"
        )
    kind = statements[0].type
    if kind not in _ALLOWED:
        words = statements[0].query.split()
        what = words[0].upper() if words else str(kind).rsplit(".", 1)[-1]
        raise SqlRefused(
            f"only SELECT queries read the index here; a {what} statement is not allowed"
            " (nothing is written, attached, installed, loaded or set)"
        )


def _message(exc: BaseException) -> str:
    """DuckDB's message, without its trailing blank lines."""
    return "\n".join(line.rstrip() for line in str(exc).strip().splitlines())


@contextlib.contextmanager
def _deadline(con: duckdb.DuckDBPyConnection, seconds: float) -> Iterator[threading.Event]:
    """Interrupt ``con``'s query after ``seconds``; the event says it was."""
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        con.interrupt()

    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    timer.start()
    try:
        yield fired
    finally:
        timer.cancel()


def query(
    index: ColumnsIndex,
    sql: str,
    *,
    marks: Mapping[int, str] | None = None,
    limit: int = DEFAULT_ROWS,
    timeout: float = DEFAULT_SECONDS,
    threads: int | None = None,
) -> QueryResult:
    """Run one read-only query over ``index`` (the table ``records``): its first ``limit``
    rows. Raises :class:`SqlRefused` for a statement that is not a query or that would touch
    anything but the index, :class:`SqlTimeout` past ``timeout`` seconds, :class:`SqlError`
    with DuckDB's message for any other error."""
    if limit < 0:
        raise ValueError(f"a row limit is at least 0, not {limit}")
    _check(sql)
    start = time.perf_counter()
    con = connect(index, marks, threads)
    try:
        with _deadline(con, timeout) as fired:
            try:
                reader = con.sql(sql).to_arrow_reader(_BATCH)
                batches: list[pa.RecordBatch] = []
                rows = 0
                while rows <= limit:
                    try:
                        batch = reader.read_next_batch()
                    except StopIteration:
                        break
                    batches.append(batch)
                    rows += batch.num_rows
                table = pa.Table.from_batches(batches, schema=reader.schema)
            except duckdb.InterruptException:
                raise SqlTimeout(
                    f"the query ran longer than {timeout:g} s and was stopped"
                ) from None
            except duckdb.PermissionException as exc:
                raise SqlRefused(
                    "a query here reads the index only (the table records); it may not read,"
                    " write or attach other files or load extensions. DuckDB said: " + _message(exc)
                ) from None
            except (duckdb.Error, pa.ArrowException) as exc:
                if fired.is_set():
                    raise SqlTimeout(
                        f"the query ran longer than {timeout:g} s and was stopped"
                    ) from None
                raise SqlError(_message(exc)) from None
    finally:
        con.close()
    truncated = table.num_rows > limit
    return QueryResult(table.slice(0, limit), truncated, time.perf_counter() - start)
