"""Every export writes, beside its output, where each source record went: the index map
(``<output>.index-map.csv``). One row per source record (and per new record): source file,
index in that file, index in the dataset, then the output file and the index in it, or why
the record is not there (deleted, filtered out, damaged). It is staged, read back and
committed with the outputs."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest
from conftest import DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs
from test_app_edit import harness, no_crash, root, texts  # noqa: F401  (root: a fixture)
from test_cmd_export import run as run_cli

import codec
from browser_app import export as E
from browser_app.edits import Journal
from browser_app.errors import ExportError
from browser_app.export import index_map
from codec.example import encode_example
from codec.values import plural
from codec.writer import TFRecordWriter


def _read_map(path: str | Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return rows


def _payloads(path: str | Path) -> list[bytes]:
    with codec.TFRecordFile(str(path)) as f:
        return [f.read(i) for i in range(len(f))]


def _files(folder: Path, sizes: list[int]) -> list[Path]:
    paths, g = [], 0
    for k, n in enumerate(sizes):
        p = folder / f"in-{k}.tfrecord"
        with TFRecordWriter(p) as w:
            for _ in range(n):
                w.write(encode_example({"g": ("int64", [g])}))
                g += 1
        paths.append(p)
    return paths


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=hs.data())
def test_the_map_says_where_every_record_went(
    tmp_path_factory: pytest.TempPathFactory, data: hs.DataObject
) -> None:
    sizes = data.draw(hs.lists(hs.integers(1, 8), min_size=1, max_size=3), label="sizes")
    total = sum(sizes)
    deleted = data.draw(hs.sets(hs.integers(0, total - 1), max_size=total - 1), label="deleted")
    copies = data.draw(hs.lists(hs.integers(0, total - 1), max_size=3), label="copied")
    selection = data.draw(
        hs.none() | hs.sets(hs.integers(0, total - 1), min_size=1).map(sorted), label="selection"
    )
    shards = data.draw(hs.integers(1, 3), label="shards")
    folder = tmp_path_factory.mktemp("map")
    paths = _files(folder, sizes)
    starts = [sum(sizes[:k]) for k in range(len(sizes))]
    dst = folder / "out" / "o.tfrecord"
    dst.parent.mkdir()
    with Journal([str(p) for p in paths], path=folder / "j.jsonl") as j:
        anchors = {j.duplicate_record(r): r for r in copies if r not in deleted}
        new = list(anchors)
        for r in deleted:
            j.delete_record(r)
        report = E.export_tfrecord(j, dst, shards=shards, selection=selection)
        expected = {ref: j.effective_payload(ref) for ref in [*range(total), *new]}
    assert report.index_map == E.index_map_path(dst) and Path(report.index_map).is_file()
    assert str(report.index_map) in report.summary()
    rows = _read_map(report.index_map)
    assert tuple(rows[0]) == index_map.MAP_FIELDS
    outputs = {Path(p).name: _payloads(p) for p in report.outputs}
    seen = [row["global_index"] for row in rows]
    assert sorted(seen) == sorted(str(r) for r in expected)  # every record, once
    wanted = None if selection is None else set(selection)
    written = 0
    for row in rows:
        ref: int | str = (
            int(row["global_index"]) if row["global_index"].isdigit() else row["global_index"]
        )
        if isinstance(ref, int):
            k = max(i for i, s in enumerate(starts) if s <= ref)
            assert (row["source_file"], row["local_index"]) == (paths[k].name, str(ref - starts[k]))
            anchor = ref
        else:
            assert (row["source_file"], row["local_index"]) == ("", "")
            anchor = anchors[ref]
        if ref in deleted:
            assert (row["output_file"], row["dropped"]) == ("", index_map.DELETED)
        elif wanted is not None and anchor not in wanted:
            assert (row["output_file"], row["dropped"]) == ("", index_map.FILTERED_OUT)
        else:
            assert row["dropped"] == ""
            assert outputs[row["output_file"]][int(row["new_index"])] == expected[ref]
            written += 1
    assert written == report.records == sum(len(v) for v in outputs.values())


def test_a_damaged_record_is_dropped_with_why(tmp_path: Path) -> None:
    src = tmp_path / "bad.tfrecord"
    shutil.copy(DATA / "corrupt_data_crc.tfrecord", src)
    report = E.export(str(src), tmp_path / "o.jsonl")
    rows = _read_map(tmp_path / "o.jsonl.index-map.csv")
    (bad,) = [r for r in rows if r["dropped"]]
    assert bad["dropped"].startswith("damaged: ") and bad["global_index"] == "5"
    assert bad["source_file"] == "bad.tfrecord" and bad["output_file"] == ""
    good = [r for r in rows if not r["dropped"]]
    assert [int(r["new_index"]) for r in good] == list(range(report.records))
    assert {r["output_file"] for r in good} == {"o.jsonl"}


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "images"])
def test_every_format_writes_its_map(tmp_path: Path, fmt: str) -> None:
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    dst = tmp_path / {"csv": "t.csv", "json": "t.json", "parquet": "t.parquet"}.get(fmt, "pics")
    report = E.export(str(DATA / "images_png.tfrecord"), dst, format=fmt)
    rows = _read_map(E.index_map_path(dst))
    assert [int(r["new_index"]) for r in rows] == list(range(report.records))
    assert {r["output_file"] for r in rows} == {dst.name}


def test_replacing_the_source_maps_beside_it(tmp_path: Path) -> None:
    src = tmp_path / "basic.tfrecord"
    shutil.copy(DATA / "basic.tfrecord", src)
    with Journal(str(src)) as j:
        j.delete_record(0)
        report = E.export_tfrecord(j, replace_source=True)
    rows = _read_map(str(src) + ".index-map.csv")
    assert rows[0]["dropped"] == "deleted"
    assert [int(r["new_index"]) for r in rows[1:]] == list(range(63))
    assert report.backup is not None and len(_payloads(src)) == 63


def test_a_map_that_does_not_read_back_leaves_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(path: str, expected: int, shown: str) -> None:
        raise ExportError(f"{shown}: read back wrong")

    monkeypatch.setattr(index_map, "check_index_map", failing)
    with pytest.raises(ExportError, match="read back wrong"):
        E.export(str(DATA / "basic.tfrecord"), tmp_path / "o.tfrecord")
    assert list(tmp_path.iterdir()) == []


def test_the_check_reads_the_map_back(tmp_path: Path) -> None:
    E.export(str(DATA / "basic.tfrecord"), tmp_path / "o.tfrecord")
    path = tmp_path / "o.tfrecord.index-map.csv"
    index_map.check_index_map(str(path), 64, "o")
    with pytest.raises(ExportError, match="65 written"):
        index_map.check_index_map(str(path), 64 + 1, "o")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], *lines[1:-1], "x,1"]) + "\n")
    with pytest.raises(ExportError, match="cut short"):
        index_map.check_index_map(str(path), 64, "o")
    path.write_text("not,the,header\n")
    with pytest.raises(ExportError, match="header"):
        index_map.check_index_map(str(path), 0, "o")


def test_the_command_line_names_the_map_and_can_leave_it_out(tmp_path: Path) -> None:
    code, out = run_cli("export", str(DATA / "basic.tfrecord"), str(tmp_path / "a.tfrecord"))
    assert code == 0 and "a.tfrecord.index-map.csv" in out
    assert len(_read_map(tmp_path / "a.tfrecord.index-map.csv")) == 64
    code, out = run_cli(
        "export", str(DATA / "basic.tfrecord"), str(tmp_path / "b.tfrecord"), "--no-index-map"
    )
    assert code == 0 and "index-map" not in out
    assert not (tmp_path / "b.tfrecord.index-map.csv").exists()


# -- the Export page: what it will write and leave out, before Export is pressed --------------


def _captions(at) -> str:  # type: ignore[no-untyped-def]
    """The captions as a reader sees them: no Markdown escapes, no code-span fences."""
    return texts(at.main.caption).replace("`", "")


def test_the_export_page_names_every_output_and_the_map_first(monkeypatch, root):  # noqa: F811
    at = harness(monkeypatch, root, "detection.tfrecord", 0, page="export")
    no_crash(at)
    assert (
        "Writes exports/detection-edited.tfrecord, and where each record went in"
        " exports/detection-edited.tfrecord.index-map.csv" in _captions(at)
    )
    for n in (3, 12):
        at.number_input(key="tfb:w:export:shards").set_value(n).run()
        no_crash(at)
        names = [f"exports/detection-edited-{k:05d}-of-{n:05d}.tfrecord" for k in range(n)]
        shown = _captions(at) + "\n" + "\n".join(str(c.value) for c in at.main.code)
        assert all(name in shown for name in names), shown
        assert f"Writes {n} files" in shown
    assert not (root / "exports").exists()  # nothing written yet
    at.button(key="tfb:w:export:go").click().run()
    no_crash(at)
    assert "detection-edited.tfrecord.index-map.csv" in texts(at.success)
    assert len(_read_map(root / "exports" / "detection-edited.tfrecord.index-map.csv")) > 0


def test_the_export_page_lists_the_damaged_records_it_leaves_out(monkeypatch, root):  # noqa: F811
    at = harness(monkeypatch, root, "damaged.tfrecord", 0, page="export")
    no_crash(at)
    with codec.TFRecordFile(str(root / "damaged.tfrecord")) as f:
        f.verify()  # finds every data CRC
        bad = [i for i in range(len(f)) if f.is_damaged(i) is not None]
    assert bad
    (warned,) = [w.value for w in at.main.warning if "leaves out" in w.value]
    assert f"leaves out {plural(len(bad), 'damaged record')}" in warned
    for r in bad:
        assert f"[{r}](./?file=damaged.tfrecord&record={r})" in warned
    # A selection without them leaves none out (and no damaged region: it is not whole).
    keep = next(i for i in range(5) if i not in bad)
    at.radio(key="tfb:w:export:selection").set_value("Records by number").run()
    at.text_input(key="tfb:w:export:range").input(str(keep)).run()
    no_crash(at)
    assert not [w for w in at.main.warning if "leaves out" in w.value]
    # Deleting a damaged record: the export leaves it out as deleted, not as damaged.
    at.text_input(key="tfb:w:export:range").input(str(bad[0])).run()
    assert [w for w in at.main.warning if "leaves out" in w.value]
    with Journal(str(root / "damaged.tfrecord")) as j:
        j.delete_record(bad[0])
    at = harness(monkeypatch, root, "damaged.tfrecord", 0, page="export")
    (warned,) = [w.value for w in at.main.warning if "leaves out" in w.value]
    assert f"record={bad[0]})" not in warned
