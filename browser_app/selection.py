"""Which records a view shows, and in what order.

Two ways to say it: a record spec as people type it (``0:10,15,-1``, :func:`parse_record_spec`),
and a :class:`Selection` — the whole dataset, a filter's result, the flagged, passed or
unreviewed records, the damaged or recovered ones, or a schema finding, narrowed by facets
(review state, integrity status, object class) and sorted over the whole dataset (bytes,
number of boxes, any numeric feature). :func:`record_facts` reads what the facets and sorts
need in one pass; :func:`resolve` turns a selection into the record numbers it shows, in
order; :func:`facet_counts` counts the facets of a selection. Nothing here touches Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from browser_app.errors import SpecError
from codec.columns_index import ColumnsIndex, stored_column, stored_columns
from codec.dataset import DAMAGED, INTACT, RECOVERED
from codec.detection import BBOX, class_caption, layouts, record_boxes
from codec.example import decode
from codec.kinds import FLOAT, INT64
from codec.names import ClassNames

__all__ = [
    "BASES",
    "EVAL_PREFIX",
    "EVAL_SORTS",
    "FACET_GROUPS",
    "MAX_CLASS_VALUES",
    "NO_CLASS",
    "SORTS",
    "UNREVIEWED",
    "RecordFacts",
    "Selection",
    "SpecError",
    "between",
    "class_label",
    "facet_counts",
    "feature_keys",
    "index_facts",
    "index_feature_keys",
    "is_class_feature",
    "parse_record_spec",
    "position",
    "record_facts",
    "resolve",
]


def parse_record_spec(spec: str, total: int | Callable[[], int]) -> list[int]:
    """Turn ``"0:10,15,-1"`` into sorted unique record numbers below ``total``.

    Parts are separated by commas: ``N`` (negative counts from the end), ``A:B`` (Python slice
    semantics, either end may be left out, ``A:B:S`` with a step). Out-of-range single numbers
    are an error; slices are clipped as Python clips them.

    ``total`` may be a function that counts the records (which may mean reading the whole
    dataset's index): it is called only when the spec needs the count, for a part counted
    from the end or left open, or to check the largest number asked for."""
    counted: list[int] = []

    def count() -> int:
        if not counted:
            counted.append(total() if callable(total) else total)
        return counted[0]

    picked: set[int] = set()
    singles: list[int] = []
    if not spec.strip():
        raise SpecError("empty record selection")
    for raw in spec.split(","):
        part = raw.strip()
        if not part:
            continue
        try:
            if ":" in part:
                bits = part.split(":")
                if len(bits) > 3:
                    raise SpecError(f"{part!r}: too many ':'")
                nums = [int(b) if b.strip() else None for b in bits]
                if len(nums) == 3 and nums[2] == 0:
                    raise SpecError(f"{part!r}: the step cannot be 0")
                a, b = nums[0] or 0, nums[1]
                step = nums[2] if len(nums) == 3 else None
                if a >= 0 and b is not None and b >= 0 and (step is None or step > 0):
                    picked.update(range(a, b, step or 1))  # clipped below, by the largest
                else:
                    picked.update(range(*slice(*nums).indices(count())))
            else:
                n = int(part)
                if n < 0:
                    if n < -count():
                        raise SpecError(f"record {n} is out of range (0..{count() - 1})")
                    n %= count()
                singles.append(n)
                picked.add(n)
        except ValueError as exc:
            if isinstance(exc, SpecError):
                raise
            raise SpecError(f"{part!r} is not a record number or a range like 0:10") from exc
    if picked and (counted or not callable(total) or max(picked) >= _at_least(total, picked)):
        n = count()
        for k in singles:
            if k >= n:
                raise SpecError(f"record {k} is out of range (0..{n - 1})")
        picked = {k for k in picked if k < n}
    return sorted(picked)


def _at_least(total: Callable[[], int], picked: set[int]) -> int:
    """How many records there are at least, as far as it is known without counting them
    all: ``total`` may have the attribute ``at_least(n)`` (whether there are more than
    ``n`` records) to answer cheaply; else the count."""
    probe = getattr(total, "at_least", None)
    top = max(picked)
    if probe is not None:
        return top + 1 if probe(top) else 0
    return total()


# -- selections ---------------------------------------------------------------------------

UNREVIEWED = "unreviewed"
NO_CLASS = "(no class)"
# The base of a selection and how it reads on screen.
BASES: dict[str, str] = {
    "all": "All records",
    "filter": "Filter result",
    "flagged": "Flagged",
    "passed": "Passed",
    UNREVIEWED: "Unreviewed",
    DAMAGED: "Damaged",
    RECOVERED: "Recovered",
    "finding": "Schema finding",
    "sql": "SQL result",
}
# Bases with an argument (the filter expression, the finding, the query), which a link must name.
_ARG_BASES = ("filter", "finding", "sql")
# Facet groups and how they read on screen.
FACET_GROUPS: dict[str, str] = {
    "review": "Review",
    "status": "Integrity",
    "class": "Class",
    "outcome": "Outcome",
}
# The outcome facet's values: records with a prediction matching no object, with an object
# no prediction found, and with neither (every object found, no false prediction), as a
# record's evaluation counts them (``fp``, ``fn`` of the evaluation's record fields).
OUTCOME_FACETS = ("false positives", "missed objects", "all found")
# Sorts over the whole dataset besides file order; ``feature:<name>`` sorts by a feature.
SORTS: dict[str, str] = {"": "File order", "bytes": "Bytes", "boxes": "Number of boxes"}
# Sorts by a record's evaluation (predictions beside ground truth), ``eval:<field>`` of
# :meth:`codec.jobs.evaluate.EvaluationResult.record_fields`, and how they read on screen.
EVAL_PREFIX = "eval:"
EVAL_SORTS: dict[str, str] = {
    "eval:tp": "True positives",
    "eval:fp": "False positives",
    "eval:fn": "False negatives (missed objects)",
    "eval:mistakenness": "Mistakenness",
    "eval:mistakenness_loc": "Localisation mistakenness",
    "eval:possible_missing": "Possibly missing objects",
    "eval:possible_spurious": "Possibly spurious objects",
}
_STATUS_CODE = {INTACT: 0, RECOVERED: 1, DAMAGED: 2}


@dataclass(frozen=True)
class Selection:
    """What a view shows: ``base`` (a key of :data:`BASES`) with its ``arg`` (the filter
    expression; ``check:feature`` of a schema finding; the SQL query, whose ``record`` column
    gives the records in its order), narrowed by ``facets`` (``(group, value)`` pairs, all of
    which must hold) and ordered by ``sort`` (a key of :data:`SORTS` or :data:`EVAL_SORTS`, or
    ``feature:<name>``), ``descending`` or not."""

    base: str = "all"
    arg: str = ""
    facets: tuple[tuple[str, str], ...] = ()
    sort: str = ""
    descending: bool = False

    @property
    def is_all(self) -> bool:
        """Every record in file order: views page through the file itself."""
        return self.base == "all" and not self.facets and not self.sort

    @property
    def narrowed(self) -> bool:
        """Whether some records are left out."""
        return self.base != "all" or bool(self.facets)

    def with_facet(self, group: str, value: str) -> Selection:
        """This selection narrowed by one more facet (a facet of the same group replaces)."""
        kept = tuple(f for f in self.facets if f[0] != group)
        return replace(self, facets=(*kept, (group, value)))

    def without_facet(self, group: str) -> Selection:
        return replace(self, facets=tuple(f for f in self.facets if f[0] != group))

    def describe(self) -> str:
        """The selection in words (plain text: escape before Markdown)."""
        words = BASES.get(self.base, self.base)
        if self.base == "filter":
            words = f"Filter: {self.arg}"
        elif self.base == "sql":
            words = f"SQL: {self.arg}"
        elif self.base == "finding":
            check, _, feature = self.arg.partition(":")
            words = f"Finding: {check} on {feature}" if feature else f"Finding: {check}"
        for group, value in self.facets:
            words += f" · {FACET_GROUPS.get(group, group)}: {value}"
        return words

    def sort_words(self) -> str:
        if not self.sort:
            return SORTS[""]
        name = (
            SORTS.get(self.sort) or EVAL_SORTS.get(self.sort) or self.sort.removeprefix("feature:")
        )
        return f"{name}, {'largest' if self.descending else 'smallest'} first"

    # URL form: ``sel=flagged`` / ``sel=filter:<expr>`` / ``sel=finding:<check>:<feature>`` /
    # ``sel=sql:<query>``, ``facet=<group>:<value>`` (repeated), ``sort=bytes`` /
    # ``sort=-feature:<name>`` / ``sort=-eval:fp``.
    def to_params(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        if self.base != "all":
            out["sel"] = [f"{self.base}:{self.arg}" if self.arg else self.base]
        if self.facets:
            out["facet"] = [f"{g}:{v}" for g, v in self.facets]
        if self.sort:
            out["sort"] = [("-" if self.descending else "") + self.sort]
        return out

    @classmethod
    def from_params(
        cls, sel: str | None, facets: Iterable[str], sort: str | None
    ) -> tuple[Selection, list[str]]:
        """The selection a link describes, and what in it was not understood (left out)."""
        problems: list[str] = []
        base, arg = "all", ""
        if sel:
            head, _, rest = sel.partition(":")
            if head in BASES and (rest or head not in _ARG_BASES):
                base, arg = head, rest if head in _ARG_BASES else ""
            else:
                problems.append(f"sel={sel}")
        kept: list[tuple[str, str]] = []
        for raw in facets:
            group, _, value = raw.partition(":")
            if group in FACET_GROUPS and value:
                kept = [f for f in kept if f[0] != group] + [(group, value)]
            else:
                problems.append(f"facet={raw}")
        key, descending = "", False
        if sort:
            descending = sort.startswith("-")
            key = sort.removeprefix("-")
            known = key in SORTS or key in EVAL_SORTS
            if not known and not (key.startswith("feature:") and len(key) > 8):
                problems.append(f"sort={sort}")
                key, descending = "", False
        return cls(base, arg, tuple(kept), key, descending), problems


# -- one pass over the records: what facets and sorts need --------------------------------


@dataclass
class RecordFacts:
    """Per record (global number): ``status`` code (0 intact, 1 recovered, 2 damaged),
    ``nbytes`` (payload length), ``boxes`` (Object Detection boxes); ``classes`` maps a class
    to the sorted records that hold it: a box's class as boxes are captioned (``"text
    (label)"``), and a class label feature's value as ``"label = 3"`` (:func:`is_class_feature`).
    ``class_keys`` says, of each class, the feature its label comes from and the label (None
    for a class text alone): what names it (:func:`class_label`). The keys never depend on a
    names file, so a selection's URL means the same with or without one."""

    status: np.ndarray
    nbytes: np.ndarray
    boxes: np.ndarray
    classes: dict[str, np.ndarray] = field(default_factory=dict)
    class_keys: dict[str, tuple[str, int | None]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.status)

    @property
    def label_features(self) -> list[str]:
        """The class label features (not boxes') that classes come from, in order."""
        return list(
            dict.fromkeys(f for k, (f, _v) in self.class_keys.items() if k.startswith(f + " = "))
        )


# Whole-number features read as class labels for facets, by the last part of their key; a
# feature with more distinct values than MAX_CLASS_VALUES is an identifier, not a class.
_CLASS_WORDS = frozenset({"label", "labels", "class", "class_id", "label_id", "category"})
_CLASS_SUFFIXES = ("_label", "_labels")
MAX_CLASS_VALUES = 1_000


def is_class_feature(key: str) -> bool:
    """Whether a whole-number feature called ``key`` is read as a class label for facets:
    ``label``, ``labels``, ``image/class/label``, ``objects/label``, ``coarse_label`` (its last
    part ``label``, ``labels``, ``class``, ``class_id``, ``label_id``, ``category`` or ending
    in ``_label(s)``). The labels of boxes (``image/object/class/label``) and a model's
    predictions are read with their boxes instead."""
    last = key.rsplit("/", 1)[-1].lower()
    return last in _CLASS_WORDS or last.endswith(_CLASS_SUFFIXES)


def _class_key(feature: str, value: int) -> str:
    return f"{feature} = {value}"


def class_label(key: str, facts: RecordFacts, names: Mapping[str, ClassNames] | None = None) -> str:
    """A class facet as it reads on screen: a box's class as captioned (``cat (1)``; a bare
    label named by ``names`` when its feature has class names: ``3`` → ``cat (3)``), a class
    label feature's value by its name (``label = 3`` → ``cat (3)``, with the feature before
    it when the facts hold several: ``labels: cat (3)``), else the key itself."""
    feature, label = facts.class_keys.get(key, ("", None))
    known = (names or {}).get(feature) if feature else None
    name = known.name(label) if known is not None and label is not None else None
    if key == _class_key(feature, label if label is not None else 0) and feature:
        shown = f"{name} ({label})" if name is not None else str(label)
        if name is None or len(facts.label_features) > 1:
            return f"{feature}: {shown}" if name is not None else key
        return shown
    if name is not None and label is not None and key == str(label):
        return class_caption(name, label)
    return key


def record_facts(dataset: Any, progress: Callable[[int, int], None] | None = None) -> RecordFacts:
    """Read every record of ``dataset`` once (a :class:`codec.TFRecordDataset`): status,
    size, boxes and classes. Damaged records have no boxes and no class."""
    sizes, status, boxes = [], [], []
    holders: dict[str, list[int]] = {}
    keys: dict[str, tuple[str, int | None]] = {}
    layouts_of: dict[tuple[str, ...], _Readers] = {}
    counted: dict[str, set[int]] = {}  # distinct values of each class label feature
    total = len(dataset)
    base = 0
    for f in dataset.files:
        _offs, lens = f.spans()
        sizes.append(lens)
        st = np.zeros(len(lens), np.int8)
        nb = np.zeros(len(lens), np.int32)
        for info in f.records(0, len(lens)):
            j = info.index
            g = base + j
            if info.data is None:
                st[j] = 2
            else:
                if f.is_recovered(j):
                    st[j] = 1
                nb[j] = _classes(info.data, g, holders, keys, layouts_of, counted)
            if progress is not None and g % 4096 == 0:
                progress(g, total)
        status.append(st)
        boxes.append(nb)
        base += len(lens)
    dropped = {f for f, seen in counted.items() if len(seen) > MAX_CLASS_VALUES}
    kept = {k: v for k, v in holders.items() if keys.get(k, ("", None))[0] not in dropped}
    return RecordFacts(
        np.concatenate(status) if status else np.zeros(0, np.int8),
        np.concatenate(sizes) if sizes else np.zeros(0, np.int64),
        np.concatenate(boxes) if boxes else np.zeros(0, np.int32),
        {k: np.unique(np.asarray(v, np.int64)) for k, v in sorted(kept.items())},
        {k: keys[k] for k in sorted(kept) if k in keys},
    )


_Readers = tuple[list[Any], list[str]]
"""What is read of a record with some set of feature keys: its box layouts (ground truth)
and its class label features."""


def _readers(names: tuple[str, ...]) -> _Readers:
    every = layouts(names)
    # Ground truth only: a model's predictions are not the record's objects.
    found = [lay for lay in every if lay.kind == "objects"]
    taken = {k for lay in every for k in (*lay.parallel, lay.label, lay.text)}
    return found, [k for k in names if k not in taken and is_class_feature(k)]


def _classes(
    payload: bytes,
    g: int,
    holders: dict[str, list[int]],
    keys: dict[str, tuple[str, int | None]],
    layouts_of: dict[tuple[str, ...], _Readers],
    counted: dict[str, set[int]],
) -> int:
    """Record ``g``'s boxes and class labels: adds it to the holders of each of its classes;
    returns the number of boxes."""
    features = decode(payload).features
    names = tuple(features)
    found = layouts_of.get(names)
    if found is None:
        found = layouts_of[names] = _readers(names)
    box_layouts, label_features = found
    n = 0
    for layout in box_layouts:
        for box in record_boxes(features, layout, normalized=True).boxes:
            n += 1
            key = box.caption or NO_CLASS
            holders.setdefault(key, []).append(g)
            if key not in keys:
                keys[key] = (layout.label or "", box.label)
    for feature in label_features:
        f = features[feature]
        if f.type != INT64 or not f.values:
            continue
        seen = counted.setdefault(feature, set())
        if len(seen) > MAX_CLASS_VALUES:
            continue  # an identifier, not a class: left out at the end
        for v in dict.fromkeys(int(x) for x in f.values):
            seen.add(v)
            key = _class_key(feature, v)
            holders.setdefault(key, []).append(g)
            keys.setdefault(key, (feature, v))
    return n


def feature_keys(dataset: Any, name: str) -> np.ndarray:
    """The first value of numeric feature ``name`` of every record (NaN where a record has no
    such value, is damaged, or the feature is not a number): a sort key."""
    out = np.full(len(dataset), np.nan)
    base = 0
    for f in dataset.files:
        n = len(f)
        for info in f.records(0, n):
            if info.data is not None:
                feat = decode(info.data).features.get(name)
                if feat is not None and feat.type in (FLOAT, INT64) and feat.values:
                    v = float(feat.values[0])
                    out[base + info.index] = v if not math.isnan(v) else np.nan
        base += n
    return out


# -- the same from the stored columnar index (codec.columns_index) -------------------------


def _flat(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.Array]:
    """A list column's values and, for each, the row it belongs to."""
    arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not pa.types.is_list(arr.type):
        present = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), bool)
        return np.flatnonzero(present).astype(np.int64), arr.filter(pa.array(present))
    rows = np.asarray(pc.list_parent_indices(arr).to_numpy(zero_copy_only=False), np.int64)
    return rows, pc.list_flatten(arr)


def _label_candidates(index: ColumnsIndex) -> tuple[dict[str, list[str]], str | None] | None:
    """The whole-number features named as class labels that :func:`record_facts` may read,
    each with the box prefixes (features ending ``bbox/xmin``) it lies under, longest first:
    a record whose boxes under one of them take the feature (:func:`_taken`) does not count
    it as a class. Second, a box prefix whose class label features are read from the records
    instead, where the index cannot say (a label or box list too long for it): the only box
    prefix of the dataset, every such feature under it, so a record with boxes has them
    taken and only records without boxes are read. None when the index cannot say
    otherwise."""
    names = [c.feature for c in index.columns] + list(index.left_out)
    suffix = "bbox/xmin"
    prefixes = sorted({n[: -len(suffix)] for n in names if n.endswith(suffix)}, key=len)
    classy = [n for n in names if is_class_feature(n)]

    def under(name: str) -> list[str]:
        return [p for p in prefixes if name.startswith(p)][::-1]

    unknown = [
        n
        for n in classy
        if n in index.left_out
        or any(f"{p}bbox/{s}" in index.left_out for p in under(n) for s in BBOX)
    ]
    read: str | None = None
    if unknown:
        if len(prefixes) != 1 or prefixes[0].endswith("detection/"):
            return None
        read = prefixes[0]
        if any(not n.startswith(read) for n in unknown):
            return None
    out: dict[str, list[str]] = {}
    for c in index.columns:
        if (
            c.feature in classy
            and c.type == "int64"
            and (read is None or not c.feature.startswith(read))
        ):
            out[c.feature] = under(c.feature)
    return out, read


def _read_labels(
    dataset: Any, records: np.ndarray, prefix: str
) -> tuple[dict[str, list[int]], dict[str, tuple[str, int | None]], dict[str, set[int]]]:
    """The class label features under ``prefix`` of the given records, read from them as
    :func:`record_facts` reads them (records without boxes: nothing takes them there)."""
    holders: dict[str, list[int]] = {}
    keys: dict[str, tuple[str, int | None]] = {}
    counted: dict[str, set[int]] = {}
    layouts_of: dict[tuple[str, ...], _Readers] = {}
    starts = np.cumsum([0, *(len(f) for f in dataset.files)])
    for g in records.tolist():
        k = int(np.searchsorted(starts, g, side="right")) - 1
        local = g - int(starts[k])
        for info in dataset.files[k].records(local, local + 1):
            if info.data is None:
                continue
            features = decode(info.data).features
            names = tuple(features)
            found = layouts_of.get(names)
            if found is None:
                found = layouts_of[names] = _readers(names)
            for feature in found[1]:
                f = features[feature]
                if not feature.startswith(prefix) or f.type != INT64 or not f.values:
                    continue
                for v in dict.fromkeys(int(x) for x in f.values):
                    counted.setdefault(feature, set()).add(v)
                    key = _class_key(feature, v)
                    holders.setdefault(key, []).append(g)
                    keys.setdefault(key, (feature, v))
    return holders, keys, counted


def _present(t: pa.Table, feature: str) -> np.ndarray:
    col = stored_column(feature)
    if col not in t.column_names:
        return np.zeros(t.num_rows, bool)
    return np.asarray(t.column(col).is_valid().to_numpy(zero_copy_only=False), bool)


def _taken(t: pa.Table, feature: str, under: Sequence[str]) -> np.ndarray:
    """Per row of a file's table, whether the record's box layouts take ``feature`` (a list
    of theirs, so not a class label): as :func:`codec.detection.layouts` reads the feature
    names of the record, from the presence of the box lists under each prefix in ``under``
    (longest first): the longest holding ``bbox/xmin`` takes what is under it when it holds
    all four, and a prefix's class label and text lists are its own whatever nests."""
    taken = np.zeros(t.num_rows, bool)
    decided = np.zeros(t.num_rows, bool)
    for p in under:  # longest first
        full = np.all([_present(t, f"{p}bbox/{s}") for s in BBOX], axis=0)
        xmin = _present(t, f"{p}bbox/xmin")
        taken |= ~decided & xmin & full
        decided |= xmin
        if feature in (f"{p}class/label", f"{p}class/text"):
            taken |= full
    return taken


def _groups(records: np.ndarray, codes: np.ndarray) -> list[np.ndarray]:
    """The sorted distinct records of each code (0..max)."""
    if not records.size:
        return []
    order = np.lexsort((records, codes))
    r, c = records[order], codes[order]
    keep = np.ones(r.size, bool)
    keep[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    r, c = r[keep], c[keep]
    cuts = np.flatnonzero(np.diff(c)) + 1
    return np.split(r, cuts)


def index_facts(
    index: ColumnsIndex, dataset: Any, read_at_most: int = 50_000
) -> RecordFacts | None:
    """What :func:`record_facts` reads of ``dataset``, from its stored columnar ``index``
    (status, size, boxes and classes per record: the same answer), reading only the first
    record holding each box class (what names it), and, when the index leaves out the box or
    class label lists of the dataset's one box layout (more than it keeps), the records
    without boxes (:func:`_label_candidates`; at most ``read_at_most`` of them, so the index
    never means reading a large dataset). None when the index cannot answer so (another
    number of records, a class label feature it leaves out elsewhere, more records to read):
    the records are then read, as without the index."""
    plan = _label_candidates(index)
    if plan is None or index.records != len(dataset) or not index.complete:
        return None
    labels, read_under = plan
    boxes_of = {f"{p}bbox/{s}" for under in labels.values() for p in under for s in BBOX}
    wanted = [
        "status",
        "bytes",
        "boxes",
        "classes",
        *(stored_column(n) for n in sorted(set(labels) | boxes_of)),
    ]
    tables = stored_columns(index, wanted)
    codes = {word: code for word, code in _STATUS_CODE.items()}
    status, sizes, boxes = [], [], []
    cap_rec: list[np.ndarray] = []
    cap_val: list[pa.Array] = []
    lab: dict[str, tuple[list[np.ndarray], list[np.ndarray]]] = {n: ([], []) for n in labels}
    for f, t in zip(index.files, tables):
        words = t.column("status").to_pylist()
        status.append(np.fromiter((codes[w] for w in words), np.int8, len(words)))
        sizes.append(np.asarray(t.column("bytes").to_numpy(), np.int64))
        boxes.append(np.asarray(t.column("boxes").to_numpy(), np.int32))
        rows, values = _flat(t.column("classes"))
        cap_rec.append(rows + f.base)
        cap_val.append(pc.fill_null(values.cast(pa.string()), NO_CLASS))
        for name in labels:
            col = stored_column(name)
            if col not in t.column_names:
                continue
            rows, values = _flat(t.column(col))
            ok = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), bool)
            ok &= ~_taken(t, name, labels[name])[rows]
            vals = np.asarray(values.filter(pa.array(ok)).to_numpy(zero_copy_only=False))
            lab[name][0].append(rows[ok] + f.base)
            lab[name][1].append(vals.astype(np.int64))
    holders: dict[str, np.ndarray] = {}
    keys: dict[str, tuple[str, int | None]] = {}
    if cap_val:
        captions = pa.chunked_array(cap_val, pa.string()).combine_chunks().dictionary_encode()
        rec = np.concatenate(cap_rec)
        code = np.asarray(captions.indices.to_numpy(zero_copy_only=False), np.int64)
        names = captions.dictionary.to_pylist()
        for c, records in zip(np.unique(code).tolist(), _groups(rec, code)):
            holders[names[c]] = records
        keys.update(_box_class_keys(dataset, holders))
    if read_under is not None:
        every = np.concatenate(boxes) if boxes else np.zeros(0, np.int32)
        state = np.concatenate(status) if status else np.zeros(0, np.int8)
        unboxed = np.flatnonzero((every == 0) & (state != 2))
        if unboxed.size > read_at_most:
            return None
        got, got_keys, counted = _read_labels(dataset, unboxed, read_under)
        for key, holding in got.items():
            feature = got_keys[key][0]
            if len(counted[feature]) > MAX_CLASS_VALUES:
                continue  # an identifier, not a class
            if key in holders:
                return None
            holders[key] = np.unique(np.asarray(holding, np.int64))
            keys[key] = got_keys[key]
    for name in labels:
        if not lab[name][0]:
            continue
        rec = np.concatenate(lab[name][0])
        vals = np.concatenate(lab[name][1])
        distinct, code = np.unique(vals, return_inverse=True)
        if distinct.size > MAX_CLASS_VALUES:
            continue  # an identifier, not a class
        for v, records in zip(distinct.tolist(), _groups(rec, code.astype(np.int64))):
            key = _class_key(name, int(v))
            if key in holders:  # a box caption that reads the same
                return None
            holders[key] = records
            keys[key] = (name, int(v))
    return RecordFacts(
        np.concatenate(status) if status else np.zeros(0, np.int8),
        np.concatenate(sizes) if sizes else np.zeros(0, np.int64),
        np.concatenate(boxes) if boxes else np.zeros(0, np.int32),
        {k: holders[k] for k in sorted(holders)},
        {k: keys[k] for k in sorted(holders) if k in keys},
    )


def _box_class_keys(
    dataset: Any, holders: Mapping[str, np.ndarray]
) -> dict[str, tuple[str, int | None]]:
    """What names each box class (its label feature and label), as :func:`record_facts` sets
    it: from the first record holding it, read alone."""
    firsts = sorted({int(r[0]) for r in holders.values() if r.size})
    starts = np.cumsum([0, *(len(f) for f in dataset.files)])
    keys: dict[str, tuple[str, int | None]] = {}
    layouts_of: dict[tuple[str, ...], _Readers] = {}
    for g in firsts:
        k = int(np.searchsorted(starts, g, side="right")) - 1
        f = dataset.files[k]
        for info in f.records(g - int(starts[k]), g - int(starts[k]) + 1):
            if info.data is not None:
                seen: dict[str, tuple[str, int | None]] = {}
                _classes(info.data, g, {}, seen, layouts_of, {})
                for key, value in seen.items():
                    if key in holders and key not in keys and int(holders[key][0]) == g:
                        keys[key] = value
    return keys


def index_feature_keys(index: ColumnsIndex, name: str) -> np.ndarray | None:
    """:func:`feature_keys` of ``name`` from the stored columnar ``index`` (the same keys),
    or None when the index leaves the feature out (the records are then read)."""
    if name in index.left_out:
        return None
    column = next((c for c in index.columns if c.feature == name), None)
    out = np.full(index.records, np.nan)
    if column is None or column.type not in ("int64", "float"):
        return out  # no record holds a number of that name
    col = stored_column(name)
    for f, t in zip(index.files, stored_columns(index, [col])):
        if col not in t.column_names:
            continue
        rows, values = _flat(t.column(col))
        rows, first = np.unique(rows, return_index=True)
        got = values.take(pa.array(first))
        ok = np.asarray(got.is_valid().to_numpy(zero_copy_only=False), bool)
        vals = np.asarray(got.cast(pa.float64()).fill_null(np.nan).to_numpy(), np.float64)
        out[f.base + rows[ok]] = vals[ok]
    return out


# -- resolving ----------------------------------------------------------------------------


def _review_sets(marks: Mapping[int, str], total: int) -> dict[str, np.ndarray]:
    by: dict[str, list[int]] = {"passed": [], "flagged": []}
    for record, status in marks.items():
        if 0 <= record < total and status in by:
            by[status].append(record)
    out = {k: np.unique(np.asarray(v, np.int64)) for k, v in by.items()}
    marked = np.union1d(out["passed"], out["flagged"])
    out[UNREVIEWED] = np.setdiff1d(np.arange(total, dtype=np.int64), marked, assume_unique=True)
    return out


def outcome_records(value: str, outcomes: Mapping[str, np.ndarray] | None) -> np.ndarray:
    """The records of the outcome facet ``value`` (:data:`OUTCOME_FACETS`) by the records'
    evaluation ``outcomes`` (``fp`` and ``fn`` per record, NaN where a record was left out);
    none while there is no evaluation."""
    if outcomes is None or "fp" not in outcomes or "fn" not in outcomes:
        return np.zeros(0, np.int64)
    fp, fn = np.asarray(outcomes["fp"], float), np.asarray(outcomes["fn"], float)
    if value == "false positives":
        return np.flatnonzero(fp > 0)
    if value == "missed objects":
        return np.flatnonzero(fn > 0)
    if value == "all found":
        return np.flatnonzero((fp == 0) & (fn == 0))
    return np.zeros(0, np.int64)


def _facet_records(
    group: str,
    value: str,
    facts: RecordFacts,
    review: dict[str, np.ndarray],
    outcomes: Mapping[str, np.ndarray] | None = None,
) -> np.ndarray:
    if group == "outcome":
        return outcome_records(value, outcomes)
    if group == "review":
        return review.get(value, np.zeros(0, np.int64))
    if group == "status":
        code = _STATUS_CODE.get(value)
        return np.flatnonzero(facts.status == code) if code is not None else np.zeros(0, np.int64)
    return facts.classes.get(value, np.zeros(0, np.int64))


def resolve(
    sel: Selection,
    facts: RecordFacts,
    *,
    marks: Mapping[int, str],
    base_records: Sequence[int] | None = None,
    sort_keys: np.ndarray | None = None,
    outcomes: Mapping[str, np.ndarray] | None = None,
) -> np.ndarray:
    """The records ``sel`` shows, in its order (int64 global numbers). ``marks`` maps records
    to their review status; ``base_records`` are the filter's matches or the finding's records
    (for those bases), or the query's records in its order (``sql``: kept in that order, each
    once, where no sort asks for another); ``sort_keys`` the per-record keys of a
    ``feature:`` or ``eval:`` sort (NaN last); ``outcomes`` the records' evaluation, for the
    outcome facet (no record has an outcome without it)."""
    total = facts.total
    review = _review_sets(marks, total)
    if sel.base == "sql":
        given = np.asarray(list(base_records or ()), np.int64)
        given = given[(given >= 0) & (given < total)]
        _, first = np.unique(given, return_index=True)
        picked = given[np.sort(first)]  # each record once, where the query first gives it
        for group, value in sel.facets:
            picked = picked[np.isin(picked, _facet_records(group, value, facts, review, outcomes))]
    elif sel.base in ("filter", "finding"):
        picked = np.unique(np.asarray(list(base_records or ()), np.int64))
        picked = picked[(picked >= 0) & (picked < total)]
    elif sel.base in review:
        picked = review[sel.base]
    elif sel.base in (DAMAGED, RECOVERED):
        picked = np.flatnonzero(facts.status == _STATUS_CODE[sel.base])
    else:
        picked = np.arange(total, dtype=np.int64)
    if sel.base != "sql":
        for group, value in sel.facets:
            picked = np.intersect1d(
                picked, _facet_records(group, value, facts, review, outcomes), True
            )
    if sel.sort:
        keys = {"bytes": facts.nbytes, "boxes": facts.boxes}.get(sel.sort, sort_keys)
        if keys is not None and len(keys) == total:
            k = np.asarray(keys, np.float64)[picked]
            k = np.where(np.isnan(k), np.inf, -k if sel.descending else k)
            picked = picked[np.argsort(k, kind="stable")]
    return picked.astype(np.int64, copy=False)


def _in_file_order(order: np.ndarray) -> bool:
    return bool(np.all(order[:-1] <= order[1:]))


def position(order: np.ndarray, record: int) -> int:
    """Where ``record`` stands in ``order``: its position; when the selection does not hold
    it, the position of the first selected record after it in the file (the last position
    when none is after it), or 0 for a sorted selection."""
    hits = np.flatnonzero(order == record)
    if hits.size:
        return int(hits[0])
    if not len(order) or not _in_file_order(order):
        return 0
    return min(int(np.searchsorted(order, record)), len(order) - 1)


def between(order: np.ndarray, record: int) -> tuple[int | None, int | None]:
    """The records before and after ``record`` in ``order``; None at either end. A record
    ``order`` does not hold (just marked, in "unreviewed") has the neighbours of the place it
    would have in a selection in file order, and the first record of a sorted one after it."""
    hits = np.flatnonzero(order == record)
    if hits.size:
        before, after = int(hits[0]) - 1, int(hits[0]) + 1
    elif len(order) and _in_file_order(order):
        after = int(np.searchsorted(order, record))
        before = after - 1
    else:
        before, after = -1, 0
    return (
        int(order[before]) if before >= 0 else None,
        int(order[after]) if after < len(order) else None,
    )


def facet_counts(
    picked: np.ndarray,
    facts: RecordFacts,
    marks: Mapping[int, str],
    outcomes: Mapping[str, np.ndarray] | None = None,
) -> dict[str, list[tuple[str, int]]]:
    """How many of the ``picked`` records fall in each facet value, by group (values with no
    record left out; classes by count, most first); the outcome group when the records'
    evaluation ``outcomes`` are known."""
    review = _review_sets(marks, facts.total)
    inside = np.sort(picked)

    def count(records: np.ndarray) -> int:
        return int(np.intersect1d(inside, records, True).size)

    out: dict[str, list[tuple[str, int]]] = {}
    out["review"] = [(v, count(review[v])) for v in ("passed", "flagged", UNREVIEWED)]
    st = facts.status[inside] if inside.size else np.zeros(0, np.int8)
    out["status"] = [(name, int((st == code).sum())) for name, code in _STATUS_CODE.items()]
    classes = [(k, count(v)) for k, v in facts.classes.items()]
    out["class"] = sorted(classes, key=lambda kv: (-kv[1], kv[0]))
    if outcomes is not None:
        out["outcome"] = [(v, count(outcome_records(v, outcomes))) for v in OUTCOME_FACETS]
    return {g: [(v, n) for v, n in items if n] for g, items in out.items()}
