"""The evaluation's per-record names in the filter language: ``tp``, ``fp``, ``fn``, the
class lists and the likely-mistake figures hold, record by record, what the evaluation job
gives; class lists compare with names (a record's class text, or a names file bound to the
ground truth's labels); a feature of the same name wins; a dataset without predictions has
no such names; the command line and a job over byte ranges on two processes find the same
records as one process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from browser_app.cli import main
from browser_app.generators import write
from browser_app.generators.evaluation import known_dataset, planted_mistakes
from codec import evaluate as ev
from codec.example import decode, encode_example
from codec.filters import UnknownClassError, UnknownFeatureError, run_filter
from codec.jobs import EvaluateJob, FilterJob, Task, plan, run
from codec.jobs.evaluate import RECORD_FIELDS, payload_fields
from codec.names import parse_names


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    known = planted_mistakes(40, seed=6)
    path = tmp_path_factory.mktemp("planted") / "planted.tfrecord"
    write(path, known.records)
    return path, known


def test_each_records_fields_are_the_jobs(planted: tuple[Path, Any]) -> None:
    path, known = planted
    result = run(EvaluateJob(mistakes=True), plan([str(path)]), "inline")
    fields = result.record_fields()
    got = payload_fields(known.records)
    t, p = result.matches.truth, result.matches.predictions
    labels = result.labels
    for i, rec in enumerate(got):
        assert rec is not None and set(rec) == set(RECORD_FIELDS)
        for name, column in fields.items():
            want = [] if np.isnan(column[i]) else [column[i]]
            assert rec[name] == pytest.approx(want, abs=0), (i, name)
        for name, side, outcome in (
            ("tp_class", t, ev.TP),
            ("fn_class", t, ev.FN),
            ("fp_class", p, ev.FP),
        ):
            sel = (side.image == i) & (side.outcome == outcome)
            assert [c[0] for c in rec[name]] == [labels[k] for k in side.cls[sel]], (i, name)


def test_filters_ask_for_outcomes_and_mistakes(planted: tuple[Path, Any]) -> None:
    path, known = planted
    result = run(EvaluateJob(mistakes=True), plan([str(path)]), "inline")
    fields = result.record_fields()

    def where(cond: np.ndarray) -> list[int]:
        return np.flatnonzero(cond).tolist()

    records = known.records
    assert run_filter(records, "fp > 1").matches == where(fields["fp"] > 1)
    assert run_filter(records, "fn == 0 and tp >= 3").matches == where(
        (fields["fn"] == 0) & (fields["tp"] >= 3)
    )
    assert run_filter(records, "mistakenness > 0.95").matches == sorted(
        {r for r, _ in known.mislabelled}
    )
    assert run_filter(records, "possible_missing > 0").matches == sorted(
        {r for r, _ in known.missing}
    )
    assert run_filter(records, "possible_spurious").matches == sorted(
        {r for r, _ in known.spurious}
    )
    # a class of a missed object, by its text (the records hold class texts)
    t = result.matches.truth
    cat = result.labels.index(17)
    missed_cat = sorted(set(t.image[(t.cls == cat) & (t.outcome == ev.FN)].tolist()))
    assert missed_cat
    assert run_filter(records, 'any(fn_class == "cat")').matches == missed_cat
    assert run_filter(records, "any(fn_class == 17)").matches == missed_cat
    assert run_filter(records, 'not any(fn_class == "cat")').matches == [
        i for i in range(len(records)) if i not in missed_cat
    ]
    # len() of a class list is the count
    assert run_filter(records, "len(fp_class) == fp").matches == list(range(len(records)))


def _without_texts(records: list[bytes]) -> list[bytes]:
    out = []
    for payload in records:
        feats = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        feats.pop("image/object/class/text")
        out.append(encode_example(feats))
    return out


def test_class_names_bound_to_the_labels_name_the_class_lists() -> None:
    known = known_dataset("swapped", 16, seed=4)
    bare = _without_texts(known.records)
    text = "index,name\n" + "".join(f"{k},{v}\n" for k, v in known.names.items())
    names = {"image/object/class/label": parse_names(text, source="names.csv")}
    by_label = run_filter(bare, "any(fp_class == 1)").matches
    assert by_label
    assert run_filter(bare, 'any(fp_class == "person")', names=names).matches == by_label
    # without names, a label cannot be a text: nothing is "person"
    assert run_filter(bare, 'any(fp_class == "person")').matches == []
    with pytest.raises(UnknownClassError):
        run_filter(bare, 'any(fp_class == "persn")', names=names)


def test_a_feature_of_the_same_name_wins() -> None:
    known = known_dataset("perfect", 4, seed=1)
    own = []
    for payload in known.records:
        feats = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        feats["fp"] = ("int64", [7])
        own.append(encode_example(feats))
    assert run_filter(own, "fp == 7").matches == [0, 1, 2, 3]
    assert run_filter(known.records, "fp == 0").matches == [0, 1, 2, 3]


def test_no_predictions_no_names() -> None:
    known = known_dataset("perfect", 4, seed=1)
    bare = []
    for payload in known.records:
        feats = {k: (f.type, f.values) for k, f in decode(payload).features.items()}
        bare.append(encode_example({k: v for k, v in feats.items() if "detection" not in k}))
    with pytest.raises(UnknownFeatureError):
        run_filter(bare, "fp > 0")
    # a damaged record has none either
    assert payload_fields([None, known.records[0]])[0] is None


def test_the_command_line(planted: tuple[Path, Any], capsys: pytest.CaptureFixture[str]) -> None:
    path, known = planted
    code = main(["filter", str(path), "mistakenness > 0.95", "--json", "--executor", "inline"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert [json.loads(line)["index"] for line in out.splitlines()] == sorted(
        {r for r, _ in known.mislabelled}
    )
    code = main(["filter", str(path), "fp > 1"])
    out, _ = capsys.readouterr()
    assert [int(x) for x in out.split()] == run_filter(known.records, "fp > 1").matches


def test_a_job_over_ranges_finds_the_same(planted: tuple[Path, Any]) -> None:
    path, known = planted
    expression = "(fp > 0 or possible_spurious > 0) and index > 5"
    want = run_filter(known.records, expression).matches
    size = path.stat().st_size
    tasks = [Task(0, str(path), a, b, whole=False) for a, b in ((0, size // 3), (size // 3, size))]
    assert run(FilterJob(expression), tasks, "processes:2").matches == want
    assert want


def test_a_label_map_beside_the_data_reads_the_classes(tmp_path, capsys) -> None:
    """Ground truth naming its classes by text (the sample's COCO predictions) meets
    predictions numbering them only through the label map found with the data: the filter's
    tp, fp and fn are then the evaluation's (without it, every prediction was a false
    positive and `tp > 0` matched nothing)."""
    import codec
    from browser_app.cli import main
    from browser_app.sample_data import write_sample
    from codec.jobs import run, tasks_of
    from codec.jobs.evaluate import EvaluateJob, label_map_of
    from codec.names import names_beside

    write_sample(tmp_path)
    src = tmp_path / "coco" / "predictions.tfrecord"
    job = EvaluateJob(
        truth="image/object/",
        predictions="image/detection/",
        label_map=label_map_of(names_beside([str(src)]), "image/object/", "image/detection/"),
        mistakes=True,
    )
    with codec.TFRecordDataset([str(src)]) as ds:
        fields = run(job, tasks_of(ds.files), "inline").record_fields()
    for expression, want in (
        ("tp > 0", fields["tp"] > 0),
        ("fp >= 10", fields["fp"] >= 10),
        ("fn == 0", fields["fn"] == 0),
    ):
        assert main(["filter", str(src), expression, "--executor", "inline"]) == 0
        got = [int(x) for x in capsys.readouterr().out.split()]
        assert got == [int(i) for i in np.flatnonzero(want)], expression
    assert (fields["tp"] > 0).sum() >= 10


def test_the_filter_page_reads_the_classes_with_the_label_map(monkeypatch, tmp_path) -> None:
    """The Filter page on the sample's COCO predictions (ground truth by class text, a
    label_map.pbtxt beside them): `tp > 0` finds the eleven records with true positives."""
    from app_support import start_app

    from browser_app.sample_data import write_sample

    write_sample(tmp_path)
    at = start_app(monkeypatch, tmp_path, str(tmp_path / "coco" / "predictions.tfrecord"))
    at.switch_page("ui/pages/filter.py").run()
    at.text_input(key="tfb:w:filter:expr").input("tp > 0").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "11 matching records" in " ".join(m.value for m in at.main.markdown)
