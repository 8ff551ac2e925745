"""Class names wherever a label shows (issue 26): the filter language (``label == "cat"``),
the records table, gallery captions, schema top values and findings, class facets, review
reports, and the command line's ``--names FEATURE=FILE`` on ``dump``, ``schema``,
``filter``, ``show`` and ``export``, with names files found beside the data by convention.

Bad input gets a message and loses nothing: a 100 MB names file (sparse: nothing is written
or read), a names file shorter than the labels used (those labels stay numbers), a CSV without
an index and a name column."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import codec
from browser_app.cli import main
from browser_app.edits import Journal
from browser_app.edits.review import (
    CLASSES_FIELD,
    REPORT_FIELDS,
    classes_text,
    report_csv,
    report_rows,
)
from browser_app.generators.audio import write_audioset
from browser_app.generators.tfds import SHAPES, write_image_classification, write_names_files
from browser_app.selection import Selection, class_label, facet_counts, record_facts, resolve
from browser_app.view.gallery import gallery_items, record_label
from browser_app.view.schema import named_schema, named_tops, names_findings, schema_rows
from browser_app.view.table import match_rows, page_view
from browser_app.view.values import class_name, named_preview, named_value
from codec import example as ex
from codec.filters import (
    MAX_FILTER_CHARS,
    FilterSyntaxError,
    UnknownClassError,
    compile_filter,
    run_filter,
    spell_names,
)
from codec.jobs import FilterJob, parse_executor, run, tasks_of
from codec.names import ClassNames, parse_names, read_names
from codec.schema import infer_schema

HUGE = 100 << 20


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TFDS image classification dataset: ``label`` named by ``label.labels.txt``."""
    return write_image_classification(tmp_path_factory.mktemp("tfds"))


@pytest.fixture(scope="module")
def names() -> ClassNames:
    return parse_names("\n".join(SHAPES) + "\n", source="label.labels.txt")


@pytest.fixture(scope="module")
def short() -> ClassNames:
    """A names file shorter than the labels used: it names 0–2 of 0–7."""
    return parse_names("circle\nsquare\ntriangle\n", source="short.txt")


def _train(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.glob("shapes-train.tfrecord-*"))


def _records(folder: Path) -> list[ex.Record]:
    with codec.TFRecordDataset(_train(folder)) as ds:
        return [ex.decode(ds.read(i)) for i in range(len(ds))]


def _label(rec: ex.Record) -> int:
    return int(rec.features["label"].values[0])


# -- the filter language -------------------------------------------------------------------


def test_a_class_name_compares_with_its_index(shapes: Path, names: ClassNames) -> None:
    recs = _records(shapes)
    bound = {"label": names}
    cases = {
        'label == "bar"': lambda r: _label(r) == SHAPES.index("bar"),
        'label != "bar"': lambda r: _label(r) != SHAPES.index("bar"),
        'label in ["circle", "dot"]': lambda r: SHAPES[_label(r)] in ("circle", "dot"),
        '"ring" in label': lambda r: SHAPES[_label(r)] == "ring",
        'all(label == "cross")': lambda r: SHAPES[_label(r)] == "cross",
        'not label == "cross" and label < "ring"': lambda r: (
            SHAPES[_label(r)] != "cross" and _label(r) < SHAPES.index("ring")
        ),
    }
    for text, want in cases.items():
        flt = compile_filter(text, bound)
        got = [i for i, r in enumerate(recs) if flt.matches(r, index=i)]
        assert got == [i for i, r in enumerate(recs) if want(r)], text
        assert got, text  # every case finds something in the 40 records


def test_without_names_a_string_never_matches_a_number(shapes: Path) -> None:
    recs = _records(shapes)
    flt = compile_filter('label == "bar"')
    assert not any(flt.matches(r) for r in recs)


def test_bytes_features_still_compare_as_text(names: ClassNames) -> None:
    rec = ex.decode(ex.encode_example({"label": ("bytes", [b"bar"]), "n": ("int64", [5])}))
    # A names file bound to a bytes feature: the value is text, and text compares as text.
    assert compile_filter('label == "bar"', {"label": names}).matches(rec)
    assert not compile_filter('label == "dot"', {"label": names}).matches(rec)


def test_an_unknown_class_name_is_an_error_in_words(names: ClassNames) -> None:
    with pytest.raises(UnknownClassError) as got:
        compile_filter('label == 3 or label in ["circle", "barr"]', {"label": names})
    err = got.value
    assert isinstance(err, FilterSyntaxError)
    assert err.position == len('label == 3 or label in ["circle", ')
    assert "label has no class named 'barr' in label.labels.txt" in str(err)
    assert "did you mean 'bar'" in str(err)
    assert err.suggestions[0] == "bar"
    # A name that is not a class at all: no suggestion, still an error.
    with pytest.raises(UnknownClassError, match="no class named 'zebra'"):
        compile_filter('"zebra" in label', {"label": names})


def test_the_parser_caps_hold_with_names(names: ClassNames) -> None:
    with pytest.raises(FilterSyntaxError, match="at most"):
        compile_filter("label == " + '"bar" or label == ' * 200 + '"bar"', {"label": names})
    long = "label == " + " " * MAX_FILTER_CHARS + '"bar"'
    with pytest.raises(FilterSyntaxError, match="characters"):
        compile_filter(long, {"label": names})


def test_a_label_past_a_short_names_file_is_found_by_number(
    shapes: Path, short: ClassNames
) -> None:
    recs = _records(shapes)
    flt = compile_filter('label == 7 or label == "circle"', {"label": short})
    got = [i for i, r in enumerate(recs) if flt.matches(r)]
    assert got == [i for i, r in enumerate(recs) if _label(r) in (0, 7)]
    with pytest.raises(UnknownClassError, match="'dot'"):  # past the file: not a name
        compile_filter('label == "dot"', {"label": short})


def test_class_names_spelled_as_labels_select_the_same_records(
    shapes: Path, names: ClassNames
) -> None:
    recs = _records(shapes)
    bound = {"label": names}
    text = 'label in ["dot", "bar"] or ("ring" in label and label != "circle") or t == "x"'
    spelled = spell_names(text, bound)
    assert spelled == 'label in [7, 5] or (4 in label and label != 0) or t == "x"'
    a, b = compile_filter(text, bound), compile_filter(spelled)
    assert [a.matches(r) for r in recs] == [b.matches(r) for r in recs]
    assert spell_names("index > 3", bound) == "index > 3"
    with pytest.raises(UnknownClassError):
        spell_names('label == "nope"', bound)


def test_the_filter_job_carries_names_to_worker_processes(shapes: Path, names: ClassNames) -> None:
    files = _train(shapes)
    want = run_filter(
        codec.TFRecordDataset(files), 'label in ["dot", "bar"]', names={"label": names}
    )
    job = FilterJob('label in ["dot", "bar"]', names={"label": names})
    pickle.loads(pickle.dumps(job))  # what a pool sends
    with codec.TFRecordDataset(files) as ds:
        tasks = tasks_of(ds.files, executor=parse_executor("processes:2"))
    got = run(job, tasks, parse_executor("processes:2"))
    assert got.matches == want.matches and got.matches
    with pytest.raises(UnknownClassError):
        FilterJob('label == "nope"', names={"label": names})


# -- views ---------------------------------------------------------------------------------


def test_values_are_named_or_stay_numbers(names: ClassNames, short: ClassNames) -> None:
    assert named_value(5, names) == "5 (bar)"
    assert named_value(5, short) == "5"  # the file names 0–2 only
    assert class_name(True, names) is None and class_name(2.0, names) is None
    feat = ex.Feature("int64", [0, 5, 7, 1])
    assert named_preview(feat, short, bare=True) == "circle, 5, 7, square"
    assert named_preview(feat, names, 2) == "0 (circle), 5 (bar), … (+2)"
    assert named_preview(ex.Feature("float", [0.5]), names) == "0.5"


def test_table_gallery_and_matches_name_labels(shapes: Path, short: ClassNames) -> None:
    files = _train(shapes)
    with codec.TFRecordDataset(files) as ds:
        slots = ds.page(0, 8)
        plain = page_view(slots)
        named = page_view(slots, names={"label": short})
        tiles = gallery_items(slots, 48, names={"label": short})
        rows = match_rows(ds, [0, 1], names={"label": short})
        recs = [ex.decode(s.payload) for s in slots]
    assert ("label", "int") in plain.columns and ("label", "text") in named.columns
    for rec, row, tile, bare in zip(recs, named.rows, tiles, plain.rows):
        v = _label(rec)
        assert bare["label"] == v  # without names: the number, still a number
        name = ["circle", "square", "triangle"][v] if v < 3 else None
        assert row["label"] == (f"{v} ({name})" if name else str(v))
        assert tile.caption.endswith(f" · {name or v}")
        assert record_label(rec, {"label": short}) == (name or str(v))
    assert rows[0]["label"] == named.rows[0]["label"]


def test_schema_rows_and_findings_name_labels(shapes: Path, short: ClassNames) -> None:
    doc = infer_schema(codec.TFRecordDataset(_train(shapes))).to_json(top=20)
    before = json.dumps(doc, sort_keys=True)
    row = next(r for r in schema_rows(doc, {"label": short}) if r["feature"] == "label")
    assert '0 "circle" (5)' in row["top values"]
    assert "3 (5)" in row["top values"]  # not named: the number
    [finding] = names_findings(doc, {"label": short})
    assert finding.unnamed == (3, 4, 5, 6, 7)
    assert "short.txt does not name" in finding.message and "0–2" in finding.message
    out = named_schema(doc, {"label": short})
    assert out["features"]["label"]["names"] == {"source": "short.txt", "kind": "plain", "count": 3}
    tops = out["features"]["label"]["int_values"]
    assert tops["top_names"][: len(tops["top"])] == [
        ("circle", "square", "triangle")[v] if v < 3 else None for v, _c in tops["top"]
    ]
    assert out["names_findings"][0]["unnamed"] == [3, 4, 5, 6, 7]
    assert named_tops(doc, {"label": short})["features"]["label"]["int_values"]["top"][0][0] == (
        '0 "circle"'
    )
    assert json.dumps(doc, sort_keys=True) == before  # the schema itself is left alone
    # A names file bound to a feature that is not whole numbers: said, not guessed.
    doc2 = {"features": {"t": {"types": {"bytes": 3}}}}
    [odd] = names_findings(doc2, {"t": short})
    assert "not class labels" in odd.message


def test_class_facets_read_by_name_with_keys_that_need_none(
    shapes: Path, names: ClassNames
) -> None:
    with codec.TFRecordDataset(_train(shapes)) as ds:
        facts = record_facts(ds)
    recs = _records(shapes)
    assert set(facts.classes) == {f"label = {v}" for v in range(len(SHAPES))}
    assert facts.label_features == ["label"]
    for v, shape in enumerate(SHAPES):
        key = f"label = {v}"
        assert facts.classes[key].tolist() == [i for i, r in enumerate(recs) if _label(r) == v]
        assert class_label(key, facts, {"label": names}) == f"{shape} ({v})"
        assert class_label(key, facts) == key  # no names: the key
    picked = resolve(Selection(facets=(("class", "label = 5"),)), facts, marks={})
    assert picked.tolist() == [i for i, r in enumerate(recs) if _label(r) == 5]
    counts = dict(facet_counts(np.arange(facts.total), facts, {})["class"])
    assert counts["label = 5"] == len(picked)


def test_box_classes_are_named_when_they_have_no_text(tmp_path: Path) -> None:
    path = tmp_path / "boxes.tfrecord"
    with codec.TFRecordWriter(str(path)) as w:
        for labels in ([1, 2], [2], [1]):
            n = len(labels)
            w.write(
                ex.encode_example(
                    {
                        "image/object/bbox/xmin": ("float", [0.1] * n),
                        "image/object/bbox/xmax": ("float", [0.5] * n),
                        "image/object/bbox/ymin": ("float", [0.1] * n),
                        "image/object/bbox/ymax": ("float", [0.5] * n),
                        "image/object/class/label": ("int64", labels),
                    }
                )
            )
    with codec.TFRecordDataset(str(path)) as ds:
        facts = record_facts(ds)
    assert set(facts.classes) == {"1", "2"}  # the boxes' labels; never a "label = " facet
    label_map = parse_names(
        "item { id: 1 name: 'person' }\nitem { id: 2 name: 'bicycle' }\n", source="lm.pbtxt"
    )
    named = {"image/object/class/label": label_map}
    assert class_label("1", facts, named) == "person (1)"
    assert class_label("2", facts, named) == "bicycle (2)"


def test_review_report_has_a_classes_column(
    shapes: Path, short: ClassNames, tmp_path: Path
) -> None:
    rec = _records(shapes)[0]
    assert classes_text(rec, {"label": short}) in {"label: circle", f"label: {_label(rec)}"}
    with Journal(_train(shapes), path=tmp_path / "j.jsonl") as j:
        for r in (0, 1, 2):
            j.set_mark(r, "flagged", "look")
        plain = report_csv(report_rows(j)).decode()
        rows = report_rows(j, names={"label": short})
    assert plain.splitlines()[0] == ",".join(REPORT_FIELDS)
    text = report_csv(rows).decode().splitlines()
    assert text[0] == ",".join((*REPORT_FIELDS, CLASSES_FIELD))
    recs = _records(shapes)
    for line, rec in zip(text[1:], recs):
        v = _label(rec)
        assert line.endswith(f"label: {('circle', 'square', 'triangle')[v] if v < 3 else v}")


# -- the command line ----------------------------------------------------------------------


def test_dump_names_labels_in_text_and_keeps_json_raw(capsys, shapes: Path) -> None:
    code, out, err = run_cli(capsys, "dump", f"{shapes}:train", "--records", "0:3")
    assert code == 0, err
    recs = _records(shapes)[:3]
    for rec in recs:
        assert f"  label: {_label(rec)} {SHAPES[_label(rec)]}\n" in out
    code, out, _ = run_cli(capsys, "dump", f"{shapes}:train", "--records", "0", "--json")
    line = json.loads(out)
    assert "names" not in line and "class names" not in out
    got = line["record"]["features"]["feature"]["label"]["int64List"]["value"]
    assert got == [str(_label(recs[0]))]


def test_names_given_win_and_short_files_leave_numbers(capsys, shapes: Path, tmp_path) -> None:
    short = tmp_path / "short.txt"
    short.write_text("circle\nsquare\ntriangle\n")
    code, out, err = run_cli(
        capsys, "dump", f"{shapes}:train", "--records", "0:8", "--names", f"label={short}"
    )
    assert code == 0, err
    assert "(not named in short.txt)" in out and " circle" in out and " bar" not in out


def test_schema_names_top_values_and_what_a_short_file_misses(
    capsys, shapes: Path, tmp_path: Path
) -> None:
    short = tmp_path / "short.txt"
    short.write_text("circle\nsquare\ntriangle\n")
    code, out, err = run_cli(capsys, "schema", f"{shapes}:train")
    assert code == 0, err
    assert '0 "circle" (5)' in out and "label: 8 class names from label.labels.txt" in out
    code, out, err = run_cli(capsys, "schema", f"{shapes}:train", "--names", f"label={short}")
    assert code == 0, err
    assert "names: label has labels 3, 4, 5, 6, 7 that short.txt does not name" in out
    code, out, err = run_cli(capsys, "schema", f"{shapes}:train", "--json")
    doc = json.loads(out)
    assert doc["features"]["label"]["names"]["kind"] == "tfds_labels"
    assert doc["names_findings"] == []


def test_filter_by_class_name(capsys, shapes: Path) -> None:
    recs = _records(shapes)
    code, out, err = run_cli(capsys, "filter", f"{shapes}:train", 'label == "bar"')
    assert code == 0, err
    assert [int(x) for x in out.split()] == [i for i, r in enumerate(recs) if _label(r) == 5]
    code, out, err = run_cli(capsys, "filter", f"{shapes}:train", 'label == "barr"')
    assert code == 2 and not out
    assert "label has no class named 'barr' in label.labels.txt; did you mean 'bar'?" in err


def test_show_json_carries_names(capsys, shapes: Path) -> None:
    code, out, err = run_cli(capsys, "show", f"{shapes}:train", "--records", "0:3", "--json")
    assert code == 0, err
    for line, rec in zip(out.splitlines(), _records(shapes)):
        assert json.loads(line)["names"] == {"label": [SHAPES[_label(rec)]]}


def test_names_of_each_kind_name_a_list_feature(capsys, tmp_path: Path) -> None:
    files = write_names_files(tmp_path / "names")
    data = tmp_path / "clips.tfrecord"
    with codec.TFRecordWriter(str(data)) as w:
        for labels in ([0, 2], [1], [3, 0]):
            w.write(ex.encode_example({"labels": ("int64", labels)}))
    want = {
        "vocabulary_csv": ("Vehicle", [0]),  # YouTube-8M: Index/Name columns
        "class_labels_csv": ("Female speech, woman speaking", [0]),  # AudioSet
        "plain": ("bicycle", [2]),  # line 3 (a blank line at 2)
        "csv": ("dog", [1]),  # id,class_name
        "tfds_labels": ("triangle", [0]),
        "label_map": ("bicycle", [0]),  # ids 1 and 2
    }
    for kind, (name, records) in want.items():
        code, out, err = run_cli(
            capsys, "filter", str(data), f'labels == "{name}"', "--names", f"labels={files[kind]}"
        )
        assert code == 0, (kind, err)
        assert [int(x) for x in out.split()] == records, kind


def test_audioset_names_beside_the_data_reach_show(capsys, tmp_path: Path) -> None:
    path = write_audioset(tmp_path / "audioset", 4)
    code, out, err = run_cli(capsys, "show", str(path), "--json")
    assert code == 0, err
    classes = read_names(str(path.parent / "class_labels_indices.csv"))
    for line in out.splitlines():
        doc = json.loads(line)
        with codec.TFRecordDataset(str(path)) as ds:
            rec = ex.decode(ds.read(doc["index"]))
        labels = [int(v) for v in rec.features["labels"].values]
        assert doc["names"] == {"labels": [classes.name(v) for v in labels]}


def test_export_writes_given_names_beside_a_tfrecord_output(
    capsys, shapes: Path, tmp_path: Path
) -> None:
    short = tmp_path / "short.txt"
    short.write_text("circle\nsquare\ntriangle\n")
    dst = tmp_path / "out" / "test.tfrecord"
    dst.parent.mkdir()
    src = next(shapes.glob("shapes-test.tfrecord-*"))
    code, out, err = run_cli(capsys, "export", str(src), str(dst), "--names", f"label={short}")
    assert code == 0, err
    written = dst.parent / "label.labels.txt"
    assert f"class names of label: {written}" in out
    assert written.read_text() == "circle\nsquare\ntriangle\n"
    code, out, err = run_cli(capsys, "filter", str(dst), 'label == "square"')
    assert code == 0, err  # found beside the output by convention
    # Export again: the file is there with the same names; a different one is left alone.
    written.write_text("a\nb\n")
    code, out, err = run_cli(capsys, "export", str(src), str(dst), "--names", f"label={short}")
    assert code == 0 and "exists and differs; left as it is" in err
    assert written.read_text() == "a\nb\n"


# -- bad input -----------------------------------------------------------------------------


def test_a_100mb_names_file_is_a_message_and_the_data_still_reads(
    capsys, shapes: Path, tmp_path: Path
) -> None:
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as fh:
        fh.truncate(HUGE)  # sparse: nothing written, and nothing of it may be read
    code, out, err = run_cli(capsys, "dump", f"{shapes}:train", "--names", f"label={huge}")
    assert code == 2 and not out
    assert "huge.txt" in err and "too large" in err
    # The same file beside the data is left out with a word; the records still dump.
    folder = tmp_path / "beside"
    folder.mkdir()
    src = next(shapes.glob("shapes-test.tfrecord-*"))
    (folder / "test.tfrecord").write_bytes(src.read_bytes())
    with open(folder / "label.labels.txt", "wb") as fh:
        fh.truncate(HUGE)
    code, out, err = run_cli(capsys, "dump", str(folder / "test.tfrecord"), "--records", "0")
    assert code == 0, err
    assert "names beside the data left out" in err and "too large" in err
    assert "label (int64, 1)" in out and "class names" not in out


def test_a_csv_without_the_expected_header_is_a_message(
    capsys, shapes: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "classes.csv"
    bad.write_text("number,word\n0,cat\n")
    code, out, err = run_cli(
        capsys, "filter", f"{shapes}:train", "label == 1", "--names", f"label={bad}"
    )
    assert code == 2 and not out
    assert "needs an index column" in err and "'number', 'word'" in err
    code, _, err = run_cli(capsys, "filter", f"{shapes}:train", "label == 1", "--names", "label")
    assert code == 2 and "give FEATURE=FILE" in err
