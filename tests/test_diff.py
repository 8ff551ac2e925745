"""What changed between two datasets: TFDV's L-infinity distance and Jensen–Shannon
divergence against a straightforward reference written here from their definitions (to 1e-9,
on generated distributions: equal-width histograms over different ranges, point buckets,
infinite and NaN values, the schema's power-of-two histograms); two generated versions with
planted changes give every change (records added, removed and edited, a feature new and one
vanished, a new class, a shifted distribution, a duplicate key) with distances equal to a
direct computation from the decoded records; any split, a pool and a Dask cluster give the
same answer; damaged records and unreadable files are counted, never a crash; the filters
the app links figures with find the records behind them."""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dask_support import local_scheduler

from browser_app.generators import write
from browser_app.generators.versions import CLASS_NAMES, Versions, write_versions
from codec.diff import (
    Bucket,
    DatasetDiff,
    compare,
    filter_name,
    filter_value,
    js_counts,
    js_histograms,
    linf_distance,
)
from codec.example import decode, encode_example
from codec.filters import run_filter
from codec.jobs import Task, executor, plan, run
from codec.jobs.diff import DiffJob, diff_datasets
from codec.reader import TFRecordFile
from codec.schema.counters import Histogram

# -- the reference: TFDV's definitions, computed the plain way --------------------------------


def ref_linf(a: dict[bytes, float], b: dict[bytes, float]) -> tuple[float, set[bytes]]:
    """The largest |a(v)/|a| - b(v)/|b||, and every value where it is reached."""
    sa, sb = sum(a.values()), sum(b.values())
    diffs = {k: abs(a.get(k, 0) / sa - b.get(k, 0) / sb) for k in set(a) | set(b)}
    top = max(diffs.values())
    return top, {k for k, v in diffs.items() if abs(v - top) < 1e-12}


def ref_js_vectors(p: list[float], q: list[float]) -> float:
    sp, sq = sum(p), sum(q)
    total = 0.0
    for x, y in zip(p, q):
        x, y = x / sp, y / sq
        m = (x + y) / 2
        if x > 0:
            total += 0.5 * x * math.log2(x / m)
        if y > 0:
            total += 0.5 * y * math.log2(y / m)
    return min(total, 1.0)


def ref_js_histograms(
    h1: list[tuple[float, float, float]],
    nan1: float,
    h2: list[tuple[float, float, float]],
    nan2: float,
) -> float:
    """Finite buckets of width > 0 spread evenly (by overlap) on the buckets between every
    boundary of either; each point mass, each side's infinite mass and each side's NaN a
    bucket of its own (infinite and NaN masses never meet the other side's)."""

    def parts(h: list[tuple[float, float, float]]) -> tuple[list[Any], Counter[float], float]:
        finite = [
            (lo, hi, c) for lo, hi, c in h if math.isfinite(lo) and math.isfinite(hi) and hi > lo
        ]
        points: Counter[float] = Counter()
        inf = 0.0
        for lo, hi, c in h:
            if not (math.isfinite(lo) and math.isfinite(hi)):
                inf += c
            elif lo == hi:
                points[lo] += c
        return finite, points, inf

    f1, p1, i1 = parts(h1)
    f2, p2, i2 = parts(h2)
    edges = sorted({x for lo, hi, _ in f1 + f2 for x in (lo, hi)})

    def spread(f: list[Any]) -> list[float]:
        out = []
        for lo, hi in itertools.pairwise(edges):
            out.append(sum(c * max(0.0, min(hi, b) - max(lo, a)) / (b - a) for a, b, c in f))
        return out

    p, q = spread(f1), spread(f2)
    for x in sorted(set(p1) | set(p2)):
        p.append(p1[x])
        q.append(p2[x])
    p += [i1, 0.0, nan1, 0.0]
    q += [0.0, i2, 0.0, nan2]
    return ref_js_vectors(p, q)


def _equal_width(
    rng: random.Random, lo: float, hi: float, n: int
) -> list[tuple[float, float, float]]:
    width = (hi - lo) / n
    return [(lo + i * width, lo + (i + 1) * width, float(rng.randint(0, 50))) for i in range(n)]


def _as_buckets(h: list[tuple[float, float, float]]) -> list[Bucket]:
    return [Bucket(lo, hi, c) for lo, hi, c in h]


@pytest.mark.parametrize("seed", range(40))
def test_js_of_histograms_is_tfdvs(seed: int) -> None:
    rng = random.Random(seed)
    lo1 = rng.uniform(-5, 5)
    lo2 = rng.choice([lo1, rng.uniform(-5, 5)])
    h1 = _equal_width(rng, lo1, lo1 + rng.uniform(0.5, 6), rng.randint(1, 12))
    h2 = _equal_width(rng, lo2, lo2 + rng.uniform(0.5, 6), rng.randint(1, 12))
    if seed % 3 == 0:  # a point bucket (all values equal), on one side or both
        v = round(rng.uniform(-3, 3), 2)
        h1.append((v, v, float(rng.randint(1, 9))))
        if seed % 2:
            h2.append((v, v, float(rng.randint(1, 9))))
    if seed % 4 == 1:  # infinite values, as TFDV's buckets with an infinite bound
        h1.append((-math.inf, h1[0][0], float(rng.randint(1, 5))))
    if seed % 5 == 2:
        h2.append((h2[-1][1], math.inf, float(rng.randint(1, 5))))
    h1.sort(key=lambda b: (b[0], b[1]))
    h2.sort(key=lambda b: (b[0], b[1]))
    nan1 = float(rng.choice([0, 0, 3]))
    nan2 = float(rng.choice([0, 2]))
    if sum(c for *_, c in h1) + nan1 == 0 or sum(c for *_, c in h2) + nan2 == 0:
        h1.append((0.0, 1.0, 1.0))
        h2.append((0.0, 1.0, 1.0))
        h1.sort()
        h2.sort()
    got = js_histograms(_as_buckets(h1), nan1, _as_buckets(h2), nan2)
    want = ref_js_histograms(h1, nan1, h2, nan2)
    assert got is not None
    assert abs(got - want) <= 1e-9, (got, want)


def test_js_of_the_schemas_histograms_with_distant_and_shifted_values() -> None:
    rng = np.random.default_rng(7)
    for shift, scale in [(0.0, 1.0), (0.3, 1.0), (2.0, 0.5), (40.0, 3.0), (0.0, 100.0)]:
        x = rng.normal(0, 1, 3000).astype(np.float32)
        y = rng.normal(shift, scale, 2000).astype(np.float32)
        ha, hb = Histogram(), Histogram()
        ha.add(x)
        hb.add(y)
        ja, jb = ha.to_json(), hb.to_json()
        ea = [(ja["edges"][i], ja["edges"][i + 1], float(c)) for i, c in enumerate(ja["counts"])]
        eb = [(jb["edges"][i], jb["edges"][i + 1], float(c)) for i, c in enumerate(jb["counts"])]
        got = js_histograms(_as_buckets(ea), 0, _as_buckets(eb), 0)
        assert got is not None
        assert abs(got - ref_js_histograms(ea, 0, eb, 0)) <= 1e-9
    same = [(0.0, 1.0, 5.0), (1.0, 2.0, 5.0)]
    assert js_histograms(_as_buckets(same), 0, _as_buckets(same), 0) == 0.0
    apart = js_histograms(_as_buckets([(0.0, 1.0, 5.0)]), 0, _as_buckets([(2.0, 3.0, 5.0)]), 0)
    assert apart == 1.0
    assert js_histograms([], 0, _as_buckets(same), 0) is None  # nothing on one side


@pytest.mark.parametrize("seed", range(30))
def test_linf_and_js_of_counts_are_tfdvs(seed: int) -> None:
    rng = random.Random(seed)
    values = [f"v{i}".encode() for i in range(rng.randint(1, 12))]
    a = {v: float(rng.randint(1, 40)) for v in values if rng.random() < 0.8} or {b"x": 1.0}
    b = {v: float(rng.randint(1, 40)) for v in values if rng.random() < 0.8} or {b"y": 2.0}
    at, dist = linf_distance(a, b)
    top, where = ref_linf(a, b)
    assert abs(dist - top) <= 1e-9
    assert at in where  # (of exact ties, the last value in byte order: below)
    keys = sorted(set(a) | set(b))
    want = ref_js_vectors([a.get(k, 0.0) for k in keys], [b.get(k, 0.0) for k in keys])
    got = js_counts(a, b)
    assert got is not None and abs(got - want) <= 1e-9


def test_linf_of_equal_counts_is_zero_at_the_last_value() -> None:
    assert linf_distance({b"a": 1, b"b": 1}, {b"a": 2, b"b": 2}) == (b"b", 0.0)
    assert linf_distance({b"a": 3}, {b"b": 1}) == (b"b", 1.0)


# -- two versions with planted changes ---------------------------------------------------------


@pytest.fixture(scope="module")
def versions(tmp_path_factory: pytest.TempPathFactory) -> Versions:
    return write_versions(tmp_path_factory.mktemp("versions"), 160, added=10, max_side=40)


def _diff(v: Versions, executor_spec: str = "inline", **kw: Any) -> DatasetDiff:
    return diff_datasets(
        plan([str(v.a)]),
        plan([str(v.b)]),
        categorical={"label"},
        runner=lambda job, tasks: run(job, tasks, executor_spec),
        **kw,
    )


def _decoded(payloads: list[bytes]) -> list[dict[str, Any]]:
    return [{k: list(f.values) for k, f in decode(p).features.items()} for p in payloads]


def test_every_planted_change_is_found(versions: Versions) -> None:
    d = _diff(versions)
    j = d.join
    assert j is not None and j.key == "image/source_id"
    assert j.removed == versions.removed
    assert j.added == versions.added
    assert j.duplicates_b == [(b"%06d" % 160, versions.duplicate_b)]
    assert j.counts["removed"] == len(versions.removed)
    assert j.counts["added"] == len(versions.added)
    assert j.counts["duplicate_records_b"] == 2
    # every record in both changed: brightness drawn again, legacy/flag gone, quality new;
    # the caption only in the edited ones
    assert j.changed == versions.pairs
    assert j.counts["unchanged"] == 0
    edited = [p for p, f in zip(j.changed, j.changed_features) if "caption" in f]
    assert edited == versions.edited
    assert j.by_feature["caption"] == len(versions.edited)
    assert j.by_feature_pairs["caption"] == versions.edited
    for name in ("brightness", "legacy/flag", "image/quality"):
        assert j.by_feature[name] == len(versions.pairs)
    for name in ("image/encoded", "label", "image/filename"):
        assert name not in j.by_feature
    rows = {f.name: f for f in d.features}
    assert rows[versions.vanished].status == "vanished"
    assert rows[versions.new_feature].status == "new"
    assert rows["label"].new_values == [(versions.new_class, 5)]
    assert rows["image/class/text"].new_values == [(CLASS_NAMES[versions.new_class].encode(), 5)]
    assert rows["label"].classes
    assert rows["label"].vanished_values == []
    assert rows["image/encoded"].kind == "pictures"
    assert d.a.records == 160 and d.b.records == len(versions.records_b)


def test_distances_equal_a_direct_computation(versions: Versions) -> None:
    d = _diff(versions)
    ra, rb = _decoded(versions.records_a), _decoded(versions.records_b)
    rows = {f.name: f for f in d.features}
    for name, key in (("label", lambda v: str(v).encode()), ("caption", bytes)):
        ca = Counter(key(x) for r in ra for x in r[name])
        cb = Counter(key(x) for r in rb for x in r[name])
        top, _ = ref_linf(dict(ca), dict(cb))
        assert rows[name].linf is not None and abs(rows[name].linf - top) <= 1e-9
        keys = sorted(set(ca) | set(cb))
        js = ref_js_vectors([ca[k] for k in keys], [cb[k] for k in keys])
        assert rows[name].js is not None and abs(rows[name].js - js) <= 1e-9
    assert rows["label"].linf_at == versions.new_class  # the new class moved the most
    hists = []
    for recs in (ra, rb):
        h = Histogram()
        h.add(np.array([x for r in recs for x in r["brightness"]], np.float32))
        got = h.to_json()
        hists.append(
            [(got["edges"][i], got["edges"][i + 1], float(c)) for i, c in enumerate(got["counts"])]
        )
    want = ref_js_histograms(hists[0], 0, hists[1], 0)
    assert rows["brightness"].js is not None and abs(rows["brightness"].js - want) <= 1e-9
    assert rows["brightness"].js > 0.3  # the planted shift shows
    assert rows["brightness"].mean_b > rows["brightness"].mean_a + 0.2
    assert rows["image/width"].js is not None and rows["image/width"].js < 0.01


def test_a_named_key_and_a_missing_one(versions: Versions) -> None:
    d = _diff(versions, key="image/filename")
    assert d.join is not None and d.join.key == "image/filename"
    assert d.join.removed == versions.removed
    none = _diff(versions, key="no/such")
    assert none.join is None and "no/such" in none.join_note


def _cut(paths: list[str], cuts: list[float]) -> list[Task]:
    tasks = []
    for t in plan(paths, split=1 << 40):
        at = sorted({int(c * t.end) for c in cuts if 0 < int(c * t.end) < t.end})
        edges = [0, *at, t.end]
        tasks += [Task(t.file, t.path, a, b, whole=False) for a, b in itertools.pairwise(edges)]
    return tasks


def _side_bytes(side: Any) -> str:
    t = side.table
    doc = {
        "features": {
            n: {
                **{
                    k: v
                    for k, v in vars(f).items()
                    if k not in ("histogram", "counts", "int_counts")
                },
                "histogram": [(b.low, b.high, b.count) for b in f.histogram],
                "counts": sorted(f.counts.items()) if f.counts is not None else None,
                "ints": sorted(f.int_counts.items()) if f.int_counts is not None else None,
            }
            for n, f in side.features.items()
        },
        "numbers": t.numbers.tolist(),
        "names": t.names,
        "digests": t.digests.tolist(),
        "keys": {k: [repr(x) for x in v] for k, v in t.keys.items()},
        "records": side.records,
        "damaged": [side.damaged, side.damaged_records],
    }
    return json.dumps(doc, default=repr, sort_keys=True)


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory, versions: Versions) -> list[str]:
    """Version B in three shards, one of them with a damaged record."""
    folder = tmp_path_factory.mktemp("shards")
    out = []
    recs = versions.records_b
    for k, part in enumerate([recs[:50], recs[50:110], recs[110:]]):
        path = folder / f"b-{k:05d}-of-00003.tfrecord"
        write(path, part)
        out.append(str(path))
    raw = bytearray(Path(out[1]).read_bytes())
    raw[len(raw) // 2] ^= 0x10  # inside some record's payload: its data CRC fails
    Path(out[1]).write_bytes(bytes(raw))
    return out


@pytest.mark.parametrize("cuts", [[0.5], [0.13, 0.5, 0.77], [0.01, 0.02, 0.3, 0.31, 0.9]])
def test_any_split_gives_the_same_side(shards: list[str], cuts: list[float]) -> None:
    job = DiffJob()
    whole = _side_bytes(run(job, plan(shards, split=0), "inline"))
    assert _side_bytes(run(job, _cut(shards, cuts), "inline")) == whole
    parts = [job.task(t) for t in _cut(shards, cuts)]
    random.Random(len(cuts)).shuffle(parts)
    assert _side_bytes(job.merge(parts)) == whole


def test_a_pool_and_a_dask_cluster_give_the_same_answer(
    shards: list[str], versions: Versions
) -> None:
    job = DiffJob()
    whole = run(job, plan(shards, split=0), "inline")
    tasks = _cut(shards, [0.25, 0.5, 0.75])
    assert _side_bytes(run(job, tasks, "processes:2")) == _side_bytes(whole)
    with (
        local_scheduler(2, threads_per_worker=1) as cluster,
        executor(f"dask:{cluster.scheduler_address}") as ex,
    ):
        on_dask = run(job, tasks, ex)
    assert _side_bytes(on_dask) == _side_bytes(whole)
    a = run(job, plan([str(versions.a)]), "inline")
    assert json.dumps(compare(a, on_dask).to_json()) == json.dumps(compare(a, whole).to_json())


def test_damaged_records_are_counted_and_left_out(shards: list[str], versions: Versions) -> None:
    side = run(DiffJob(), plan(shards), "inline")
    with TFRecordFile(shards[1]) as f:
        bad = [i for i in range(len(f)) if f.is_damaged(i) is not None or _fails(f, i)]
    assert len(bad) == 1 and side.damaged == 1
    assert side.damaged_records == [50 + bad[0]]
    assert side.records == len(versions.records_b)
    assert len(side.table) == len(versions.records_b) - 1
    a = run(DiffJob(), plan([str(versions.a)]), "inline")
    d = compare(a, side)
    assert d.join is not None
    # the damaged record's key is neither added nor matched: it was not read
    total = sum(d.join.counts[k] for k in ("added", "changed", "unchanged", "duplicate_records_b"))
    assert total == len(versions.records_b) - 1


def _fails(f: TFRecordFile, i: int) -> bool:
    try:
        f.read(i)
    except Exception:
        return True
    return False


def test_an_unreadable_file_is_said(tmp_path: Path, shards: list[str]) -> None:
    gone = tmp_path / "gone.tfrecord"
    gone.write_bytes(Path(shards[0]).read_bytes())
    tasks = plan([shards[2], str(gone)], split=0)
    gone.unlink()
    side = run(DiffJob(), tasks, "inline")
    assert [p for p, _ in side.unreadable] == [str(gone)]
    assert side.records == len(TFRecordFile(shards[2]))


def test_records_that_are_not_examples_and_sequence_examples(tmp_path: Path) -> None:
    from codec.example import encode_sequence_example

    a, b = tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"
    write(
        a,
        [
            b"not a proto \xff",
            encode_sequence_example({"id": ("bytes", [b"1"])}, {"f": [("int64", [1])]}),
        ],
    )
    write(
        b,
        [
            b"not a proto \xfe",
            encode_sequence_example({"id": ("bytes", [b"1"])}, {"f": [("int64", [2])]}),
        ],
    )
    d = diff_datasets(plan([str(a)]), plan([str(b)]), runner=lambda job, t: run(job, t, "inline"))
    assert d.join is not None and d.join.key == "id"
    assert d.join.changed_features == [["(feature lists)"]]
    assert d.join.counts["no_key_a"] == 1


# -- the records behind a figure ----------------------------------------------------------------


def test_filters_find_the_records_behind_a_value() -> None:
    names = ["label", "my feature", "and", "a`b", "image/class/text"]
    values = [b"cat", b'say "hi" \\ there', 3, -7, 0.5, b"caf\xc3\xa9"]
    recs = []
    for i in range(12):
        feats = {
            n: ("bytes", [values[i % 6]])
            if isinstance(values[i % 6], bytes)
            else (("float" if isinstance(values[i % 6], float) else "int64"), [values[i % 6]])
            for n in names
        }
        recs.append(encode_example(feats))
    for n in names:
        for k, v in enumerate(values):
            literal = filter_value(v)
            assert literal is not None
            found = run_filter(recs, f"{filter_name(n)} == {literal}")
            assert found.matches == [i for i in range(12) if i % 6 == k], (n, v)
    assert filter_value(b"\xff\xfe") is None
    assert filter_value((1, 2)) is None
    assert filter_name("image/object/class/label") == "image/object/class/label"
    assert filter_name("index") == "`index`"


def test_the_statistics_pages_split_comparison_gives_tfdvs_js() -> None:
    """The Statistics page compares two splits from their schemas' histograms; its
    Jensen–Shannon divergence is TFDV's, as the diff's is (one home), not a rebucketing of
    its own on the coarser grid (which gave other figures for distributions on different
    grids)."""
    from browser_app.view.compare import js_divergence

    rng = np.random.default_rng(11)
    for shift, scale in [(0.0, 1.0), (0.5, 1.0), (3.0, 0.25), (0.0, 50.0)]:
        ha, hb = Histogram(), Histogram()
        ha.add(rng.normal(0, 1, 2500).astype(np.float32))
        hb.add(rng.normal(shift, scale, 1500).astype(np.float32))
        ja, jb = ha.to_json(), hb.to_json()
        ea = [(ja["edges"][i], ja["edges"][i + 1], float(c)) for i, c in enumerate(ja["counts"])]
        eb = [(jb["edges"][i], jb["edges"][i + 1], float(c)) for i, c in enumerate(jb["counts"])]
        got = js_divergence(ja, jb)
        assert got is not None
        assert abs(got - ref_js_histograms(ea, 0, eb, 0)) <= 1e-9
    assert js_divergence({"edges": [0.0, 1.0], "counts": [0]}, ja) is None
