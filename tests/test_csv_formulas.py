"""CSV cells that a spreadsheet would run as formulas: kept exact and counted by default,
written with a leading ' on request, and verified either way."""

from __future__ import annotations

import csv
import io
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import codec
from browser_app import export as E
from browser_app.cli.main import build_parser
from browser_app.cli.main import run as run_command
from browser_app.edits import render_value
from browser_app.errors import ExportError
from browser_app.export.base import FORMULA_RECORDS_SHOWN
from browser_app.export.csv import CsvExporter
from codec import example as ex
from codec.kinds import BYTES


def is_number(text: str) -> bool:
    """A plain decimal number, as a spreadsheet reads one (ASCII digits, no spaces, no
    digit separators, finite)."""
    if not text.isascii() or "_" in text or text != text.strip():
        return False
    try:
        return Decimal(text).is_finite()
    except InvalidOperation:
        return False


def spreadsheet_runs(text: str) -> bool:
    """OWASP's rule: a cell that starts with one of these characters is a formula, unless
    it is a number."""
    return text[:1] in ("=", "+", "-", "@", "\t", "\r") and not is_number(text)


_FORMULA = st.tuples(st.sampled_from("=+-@\t\r"), st.text(max_size=12)).map("".join)
_SIGNED = st.one_of(
    st.integers(-(10**20), 10**20).map(lambda n: f"{n:+d}"),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:+}"),
    st.decimals(allow_nan=False, allow_infinity=False, places=3).map(lambda d: f"-{abs(d)}"),
)
CELL = st.one_of(_FORMULA, _SIGNED, st.text(min_size=1, max_size=12))  # "" is base64:


def _source(tmp_path: Path, texts: list[str], title: str) -> Path:
    payloads = [
        ex.encode_example(
            {
                "t": ("bytes", [t.encode("utf-8")]),
                "n": ("int64", [-k - 1]),  # numbers: never counted, never changed
                "f": ("float", [float("-inf") if k % 2 else -0.5]),
                title: ("bytes", [b"x"]),
            }
        )
        for k, t in enumerate(texts)
    ]
    src = tmp_path / "src.tfrecord"
    codec.write_records(src, payloads)
    return src


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(CELL, min_size=1, max_size=12),
    title=st.one_of(_FORMULA, st.text(min_size=1, max_size=6)).filter(
        lambda s: s not in ("t", "n", "f", "_index")
    ),
)
def test_formula_cells_are_counted_kept_or_neutralised(
    tmp_path: Path, texts: list[str], title: str
) -> None:
    src = _source(tmp_path, texts, title)
    cells = [render_value(BYTES, t.encode("utf-8")) for t in texts]  # as CSV writes them
    runs = [k for k, c in enumerate(cells) if spreadsheet_runs(c)]
    title_runs = spreadsheet_runs(title)

    kept = E.export(str(src), tmp_path / "kept.csv")
    assert kept.verified and kept.formulas is not None
    assert kept.formulas.cells == len(runs) and kept.formulas.titles == title_runs
    assert kept.formulas.records == runs[:FORMULA_RECORDS_SHOWN]
    rows = _read(tmp_path / "kept.csv")
    assert [r["t"] for r in rows] == cells  # the exact values
    assert title in rows[0]
    assert (kept.formula_warning() is not None) == bool(runs or title_runs)

    safe = E.export(str(src), tmp_path / "safe.csv", neutralize_formulas=True)
    assert safe.verified and safe.formula_warning() is None
    assert (safe.formulas.cells, safe.formulas.titles) == (len(runs), title_runs)
    rows = _read(tmp_path / "safe.csv")
    expected = ["'" + c if k in runs else c for k, c in enumerate(cells)]
    assert [r["t"] for r in rows] == expected
    assert not any(spreadsheet_runs(v) for r in rows for v in r.values() if v != r["f"])
    assert ("'" + title if title_runs else title) in rows[0]
    # Numbers are numbers: never counted, never changed.
    assert [r["n"] for r in rows] == [str(-k - 1) for k in range(len(texts))]
    assert {r["f"] for r in rows} <= {"-inf", "-0.5"}
    if runs or title_runs:
        assert "written with a leading '" in safe.summary()
        assert "would run as" in kept.summary()
    else:
        assert "leading '" not in safe.summary() and "would run as" not in kept.summary()


def test_the_report_names_the_first_records_and_how_many_more(tmp_path: Path) -> None:
    texts = ["=1", "ok", "@a", "@b", "-x", "+y", "=2", "=3", "=4"]
    src = _source(tmp_path, texts, "title")
    report = E.export(str(src), tmp_path / "o.csv")
    assert report.formulas is not None
    assert report.formulas.cells == report.formulas.rows == 8
    assert "records 0, 2, 3, 4, 5 and 3 more" in report.summary()
    (tmp_path / "one").mkdir()
    one = E.export(str(_source(tmp_path / "one", ["=1"], "t2")), tmp_path / "one.csv")
    assert "1 text cell starts with" in one.summary() and "(record 0)" in one.summary()


def test_a_cell_that_reads_back_differently_fails_the_verification(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _source(tmp_path, ["=1+1", "plain"], "title")
    real = CsvExporter.write_rows

    def write_rows(self, path, cols, rows):  # type: ignore[no-untyped-def]
        digest = real(self, path, cols, rows)
        text = Path(path).read_text(encoding="utf-8")
        Path(path).write_text(text.replace("'=1+1", "=1+1"), encoding="utf-8")  # same counts
        return digest

    monkeypatch.setattr(CsvExporter, "write_rows", write_rows)
    with pytest.raises(ExportError, match="cells read back are not the cells written"):
        E.export(str(src), tmp_path / "o.csv", neutralize_formulas=True)
    assert not (tmp_path / "o.csv").exists()


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    args = build_parser().parse_args(["export", *argv])
    return run_command(args.handler, args, out), out.getvalue()


def test_the_command_line_warns_or_neutralises(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    src = _source(tmp_path, ['=HYPERLINK("x")', "-3", "@SUM(A1)"], "title")
    code, out = _cli(str(src), str(tmp_path / "kept.csv"))
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: 2 text cells start with" in err and "(records 0, 2)" in err
    assert "--csv-neutralize-formulas" in err
    assert "would run as formulas" in out
    assert [r["t"] for r in _read(tmp_path / "kept.csv")] == ['=HYPERLINK("x")', "-3", "@SUM(A1)"]

    code, out = _cli(str(src), str(tmp_path / "safe.csv"), "--csv-neutralize-formulas")
    err = capsys.readouterr().err
    assert code == 0 and "warning" not in err
    assert "written with a leading '" in out and "verified" in out
    assert [r["t"] for r in _read(tmp_path / "safe.csv")] == [
        '\'=HYPERLINK("x")',
        "-3",
        "'@SUM(A1)",
    ]

    code, _ = _cli(str(src), str(tmp_path / "o.jsonl"), "--csv-neutralize-formulas")
    assert code == 2 and "applies to CSV output only" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()


def test_carriage_returns_inside_cells_and_titles_read_back(tmp_path: Path) -> None:
    """The csv module leaves a lone carriage return unquoted when lines end in "\\n"; a
    spreadsheet (and the module itself) then starts a new row there."""
    texts = ["a\rb", "\r", "end\r", "x\r\ny", "\n"]
    src = _source(tmp_path, texts, "ti\rtle")
    report = E.export(str(src), tmp_path / "o.csv")
    assert report.verified
    rows = _read(tmp_path / "o.csv")
    assert [r["t"] for r in rows] == texts and "ti\rtle" in rows[0]
    raw = (tmp_path / "o.csv").read_bytes()
    assert raw.startswith(b'_index,t,n,f,"ti\rtle"\n') and raw.endswith(b",x\n")
