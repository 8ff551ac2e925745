"""Class names from any names file: one home for every kind people keep beside their data.

=====================  ===========================================  ========================
kind                   what it is                                   index of a name
=====================  ===========================================  ========================
``label_map``          the Object Detection API's ``label_map.pbtxt``  the item's ``id``
                       (read by :mod:`codec.labelmap`, its caps kept)
``tfds_labels``        tensorflow-datasets' ``<feature>.labels.txt``   its place among the
                       (``ClassLabel.save_metadata``)                non-blank lines, as
                                                                    TFDS reads it back
``vocabulary_csv``     YouTube-8M's ``vocabulary.csv`` (``Index``,     the ``Index`` column
                       ``TrainVideoCount``, ``KnowledgeGraphId``,
                       ``Name``, …)
``class_labels_csv``   AudioSet's ``class_labels_indices.csv``         the ``index`` column
                       (``index,mid,display_name``)
``csv``                any other CSV whose header names an index      that column
                       column and a name column
``plain``              one name per line                            the line's number (0
                                                                    first); a blank line
                                                                    names nothing
=====================  ===========================================  ========================

The kind is told by the file's name and its first bytes (:func:`detect_kind`); a CSV's
columns are found by its header, never by position. A file is read only after its size is
checked (:data:`MAX_NAMES_BYTES`, nothing of a larger one is read) and holds at most
:data:`MAX_NAMES` names. A label the file does not name has no name (``None``): names are never
made up.

Names beside the data (:func:`names_beside`) follow the writers' conventions: TFDS names its
labels files after the feature (``objects-label.labels.txt`` for ``objects/label``: see
:func:`labels_file_name`), the Object Detection API keeps ``label_map.pbtxt`` beside its
records, YouTube-8M and AudioSet their CSVs beside theirs. A names file given by hand is
bound to a feature by a ``FEATURE=FILE`` spec (:func:`parse_names_spec`, the command line's
``--names``).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from .errors import DecodeError
from .labelmap import (
    LABEL_MAP_NAMES,
    MAX_LABEL_MAP_BYTES,
    MAX_LABEL_MAP_ITEMS,
    parse_label_map,
    read_capped,
)
from .values import plural

__all__ = [
    "CLASS_LABELS_CSV",
    "CSV",
    "LABEL_MAP",
    "MAX_NAMES",
    "MAX_NAMES_BYTES",
    "NAMES_KINDS",
    "PLAIN",
    "TFDS_LABELS",
    "VOCABULARY_CSV",
    "ClassNames",
    "detect_kind",
    "feature_of_labels_file",
    "labels_file_name",
    "names_beside",
    "parse_names",
    "parse_names_spec",
    "read_names",
    "read_names_specs",
]

LABEL_MAP = "label_map"
TFDS_LABELS = "tfds_labels"
VOCABULARY_CSV = "vocabulary_csv"
CLASS_LABELS_CSV = "class_labels_csv"
CSV = "csv"
PLAIN = "plain"
NAMES_KINDS = (LABEL_MAP, TFDS_LABELS, VOCABULARY_CSV, CLASS_LABELS_CSV, CSV, PLAIN)

# What each kind is called in words (messages, the app's captions).
KIND_WORDS = {
    LABEL_MAP: "label map",
    TFDS_LABELS: "TFDS labels file",
    VOCABULARY_CSV: "YouTube-8M vocabulary",
    CLASS_LABELS_CSV: "AudioSet class list",
    CSV: "CSV names file",
    PLAIN: "names list",
}

# The caps of a label map hold for every names file: the largest public class lists (YouTube-8M's
# vocabulary with its descriptions, some 4 MB; ImageNet-21k's 21,843 classes) fit well within.
MAX_NAMES_BYTES = MAX_LABEL_MAP_BYTES
MAX_NAMES = MAX_LABEL_MAP_ITEMS

TFDS_LABELS_SUFFIX = ".labels.txt"
YT8M_VOCABULARY = "vocabulary.csv"
AUDIOSET_CLASSES = "class_labels_indices.csv"

# Header words of a CSV's index and name columns, most telling first.
_INDEX_COLUMNS = ("index", "id", "class_id", "label_id", "class_index", "label_index")
_NAME_COLUMNS = ("display_name", "name", "class_name", "label_name", "class", "label")

_PBTXT_START = re.compile(r"\A\ufeff?(?:\s|#[^\n]*\n)*item\s*\{")


@dataclass(frozen=True)
class ClassNames:
    """Class names by index, with where they came from: ``source`` (the file as given) and
    ``kind`` (one of :data:`NAMES_KINDS`)."""

    names: Mapping[int, str]
    source: str
    kind: str
    _by_name: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = self._by_name
        for i, n in self.names.items():
            by_name.setdefault(n, i)

    def name(self, index: int) -> str | None:
        """The name of class ``index``, or None when the file names no such class."""
        return self.names.get(index)

    def index(self, name: str) -> int | None:
        """The index of the class named ``name`` (its first one), or None."""
        return self._by_name.get(name)

    def __contains__(self, index: object) -> bool:
        return index in self.names

    def __len__(self) -> int:
        return len(self.names)

    @property
    def largest(self) -> int | None:
        """The largest index named, or None for an empty list."""
        return max(self.names) if self.names else None

    def describe(self) -> str:
        """In words: ``10 class names from label.labels.txt (TFDS labels file)``."""
        what = KIND_WORDS.get(self.kind, self.kind)
        many = plural(len(self.names), "class name")
        return f"{many} from {os.path.basename(self.source) or self.source} ({what})"

    def as_list(self) -> list[str | None]:
        """The names as a list by index, 0 to the largest (None where an index is not
        named); empty when an index is negative or the list would be far longer than the
        names it holds (a label map numbered from 1,000,000)."""
        top = self.largest
        if top is None or min(self.names) < 0 or top >= 4 * len(self.names) + 16:
            return []
        return [self.names.get(i) for i in range(top + 1)]


# -- detecting the kind ----------------------------------------------------------------------


def detect_kind(file_name: str, head: str) -> str:
    """The kind of names file (:data:`NAMES_KINDS`) of a file called ``file_name`` whose
    text begins with ``head`` (its first few kilobytes are enough)."""
    base = os.path.basename(file_name).lower()
    if base.endswith(TFDS_LABELS_SUFFIX):
        return TFDS_LABELS
    if base.endswith(".pbtxt") or _PBTXT_START.match(head):
        return LABEL_MAP
    if base.endswith(".csv") or base.endswith(".tsv"):
        header = _header(head, base)
        if "mid" in header and "display_name" in header:
            return CLASS_LABELS_CSV
        if "index" in header and "name" in header:
            return VOCABULARY_CSV
        return CSV
    return PLAIN  # label_map.txt that does not begin like a label map too


def _header(head: str, base: str) -> list[str]:
    first = head.lstrip("\ufeff").split("\n", 1)[0]
    delimiter = "\t" if base.endswith(".tsv") else ","
    try:
        row = next(csv.reader([first], delimiter=delimiter), [])
    except csv.Error:
        return []
    return [c.strip().lower() for c in row]


# -- parsing -----------------------------------------------------------------------------------


def parse_names(
    data: bytes | str, *, source: str = "<memory>", kind: str | None = None
) -> ClassNames:
    """The class names in ``data`` (a file's bytes, or its text), of ``kind`` or of the kind
    :func:`detect_kind` tells from ``source``'s name and the first bytes. Raises
    :class:`~codec.errors.DecodeError` naming ``source`` and the problem: not UTF-8, too
    large, more than :data:`MAX_NAMES` names, a CSV without an index and a name column, an
    index that is not a whole number or appears twice, no name at all."""
    if isinstance(data, (bytes, bytearray)):
        if len(data) > MAX_NAMES_BYTES:
            raise DecodeError(f"{source}: more than {MAX_NAMES_BYTES:,} bytes; not a names file")
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"{source}: not UTF-8 text (byte {exc.start:,})") from None
    else:
        if len(data) > MAX_NAMES_BYTES:
            raise DecodeError(f"{source}: more than {MAX_NAMES_BYTES:,} characters")
        text = data.lstrip("\ufeff")
    if kind is None:
        kind = detect_kind(source, text[:4096])
    elif kind not in NAMES_KINDS:
        raise DecodeError(f"{source}: unknown kind of names file {kind!r}")
    if kind == LABEL_MAP:
        try:
            names: dict[int, str] = dict(parse_label_map(text).names)
        except DecodeError as exc:
            raise DecodeError(f"{source}: {exc}") from None
    elif kind == TFDS_LABELS:
        names = _tfds_labels(text, source)
    elif kind == PLAIN:
        names = _plain(text, source)
    else:
        names = _csv_names(text, source, kind)
    if not names:
        raise DecodeError(f"{source}: no class names in it")
    return ClassNames(names, source, kind)


def _too_many(source: str) -> DecodeError:
    return DecodeError(
        f"{source}: more than {plural(MAX_NAMES, 'name')}; not a names file (the limit is"
        f" {MAX_NAMES:,})"
    )


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one at a time (split on ``\\n`` as TFDS does; a ``\\r`` left is
    stripped with the rest of the blanks)."""
    start = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = end + 1


def _tfds_labels(text: str, source: str) -> dict[int, str]:
    """TFDS's ``_load_names_from_file``: the stripped non-blank lines, in order."""
    names: dict[int, str] = {}
    for line in _lines(text):
        name = line.strip()
        if name:
            if len(names) >= MAX_NAMES:
                raise _too_many(source)
            names[len(names)] = name
    return names


def _plain(text: str, source: str) -> dict[int, str]:
    """One name per line, the line's number its index; a blank line names nothing."""
    names: dict[int, str] = {}
    for i, line in enumerate(_lines(text)):
        name = line.strip()
        if name:
            if i >= MAX_NAMES:
                raise _too_many(source)
            names[i] = name
    return names


def _csv_names(text: str, source: str, kind: str) -> dict[int, str]:
    delimiter = "\t" if source.lower().endswith(".tsv") else ","
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(rows, None)
    except csv.Error as exc:
        raise DecodeError(f"{source}: not CSV ({exc})") from None
    if header is None:
        raise DecodeError(f"{source}: an empty CSV file")
    columns = [c.strip().lower() for c in header]
    at = _column(columns, _INDEX_COLUMNS)
    name_at = _column(columns, _NAME_COLUMNS, exclude=at)
    if at is None or name_at is None:
        shown = ", ".join(repr(c) for c in header[:8]) or "nothing"
        raise DecodeError(
            f"{source}: a CSV names file needs an index column ({', '.join(_INDEX_COLUMNS)})"
            f" and a name column ({', '.join(_NAME_COLUMNS)}) named in its first line;"
            f" it has {shown}"
        )
    names: dict[int, str] = {}
    first_line: dict[int, int] = {}
    try:
        for row in rows:
            line = rows.line_num
            if not row or all(not c.strip() for c in row):
                continue
            if len(names) >= MAX_NAMES:
                raise _too_many(source)
            if at >= len(row) or name_at >= len(row):
                raise DecodeError(f"{source}: line {line:,} has {plural(len(row), 'column')}")
            raw = row[at].strip()
            try:
                index = int(raw)
            except ValueError:
                raise DecodeError(
                    f"{source}: line {line:,}: index {raw[:40]!r} is not a whole number"
                ) from None
            if index in first_line:
                raise DecodeError(
                    f"{source}: index {index} appears twice (lines {first_line[index]:,}"
                    f" and {line:,})"
                )
            first_line[index] = line
            name = row[name_at].strip()
            if name:
                names[index] = name
    except csv.Error as exc:
        raise DecodeError(f"{source}: line {rows.line_num:,}: not CSV ({exc})") from None
    return names


def _column(columns: list[str], wanted: Sequence[str], exclude: int | None = None) -> int | None:
    for w in wanted:
        for i, c in enumerate(columns):
            if c == w and i != exclude:
                return i
    return None


def read_names(path: str, kind: str | None = None) -> ClassNames:
    """The class names in the file at ``path`` (:func:`parse_names`). Its size is checked
    before it is read: a file larger than :data:`MAX_NAMES_BYTES` is a
    :class:`~codec.errors.DecodeError` and nothing of it is read. ``OSError`` when it cannot
    be opened."""
    data = read_capped(path, MAX_NAMES_BYTES, "names file")
    return parse_names(data, source=path, kind=kind)


# -- the TFDS file naming ----------------------------------------------------------------------


def labels_file_name(keys: Sequence[str]) -> str:
    """The name TFDS gives the labels file of the ClassLabel at ``keys`` (its path of
    ``FeaturesDict`` keys, outermost first; a ``Sequence`` adds none):
    ``feature_lib.convert_feature_name_to_filename`` applied level by level, so each key's
    ``/`` becomes ``.`` and the levels are joined with ``-``: ``("objects", "label")`` →
    ``objects-label.labels.txt``, ``("image/class",)`` → ``image.class.labels.txt``."""
    if not keys:
        raise ValueError("a ClassLabel inside no FeaturesDict has no labels file of its own")
    return "-".join(k.replace("/", ".") for k in keys) + TFDS_LABELS_SUFFIX


def _spellings(key: str) -> Iterator[str]:
    """Every labels file name a record key could have been written under: each ``/`` of it
    either a level of nesting (``-``) or inside one key (``.``). At most 2^8 of them."""
    parts = key.split("/")
    if len(parts) > 9:
        parts = [*parts[:8], "/".join(parts[8:])]
    gaps = len(parts) - 1
    for mask in range(1 << gaps):
        out = [parts[0]]
        for g in range(gaps):
            out.append("-" if mask >> g & 1 else ".")
            out.append(parts[g + 1].replace("/", "."))
        yield "".join(out) + TFDS_LABELS_SUFFIX


def feature_of_labels_file(file_name: str, keys: Iterable[str] | None = None) -> str | None:
    """The record key whose labels file is ``file_name`` (TFDS's convention read backward).
    With ``keys`` (the records' feature keys) the one whose spelling matches exactly, or None;
    without, the usual reading: every ``-`` and ``.`` of the name a ``/`` of the key (a key
    with a ``-`` or ``.`` of its own needs ``keys``, or a ``features.json``: see
    :mod:`codec.tfds`)."""
    base = os.path.basename(file_name)
    if not base.endswith(TFDS_LABELS_SUFFIX) or len(base) == len(TFDS_LABELS_SUFFIX):
        return None
    if keys is not None:
        for key in keys:
            if base in _spellings(key):
                return key
        return None
    stem = base[: -len(TFDS_LABELS_SUFFIX)]
    return stem.replace("-", "/").replace(".", "/")


# -- names beside the data ----------------------------------------------------------------------

# Class lists of other public layouts, by file name, and the feature their records label.
_BESIDE = {YT8M_VOCABULARY: "labels", AUDIOSET_CLASSES: "labels"}
_DETECTION_LABELS = "image/object/class/label"
MAX_LISTED = 10_000  # entries of one folder looked at for names files


def names_beside(
    where: str | Sequence[str],
    keys: Iterable[str] | None = None,
    problems: list[str] | None = None,
) -> dict[str, ClassNames]:
    """The class names lying beside the data, by the record key they name: ``where`` is a
    folder, or the data files (their folders are looked in). By convention:

    - a TFDS ``<feature>.labels.txt`` names ``<feature>`` (:func:`feature_of_labels_file`);
    - ``label_map.pbtxt`` (:data:`~codec.labelmap.LABEL_MAP_NAMES`) names the Object
      Detection class labels: every key of ``keys`` ending in ``class/label``, or
      ``image/object/class/label``;
    - YouTube-8M's ``vocabulary.csv`` and AudioSet's ``class_labels_indices.csv`` name
      ``labels``.

    With ``keys`` (the records' feature keys), only files naming one of them are read. A
    file that cannot be read is left out, and its problem in words appended to
    ``problems`` when given. Local folders only; a URL names nothing here."""
    folders: list[str] = []
    for w in [where] if isinstance(where, str) else list(where):
        if "://" in w:
            continue
        folder = w if os.path.isdir(w) else os.path.dirname(w) or "."
        if folder not in folders:
            folders.append(folder)
    key_list = None if keys is None else list(dict.fromkeys(keys))
    found: dict[str, ClassNames] = {}
    for folder in folders:
        for base, feature_keys in _conventional(folder, key_list):
            path = os.path.join(folder, base)
            try:
                names = read_names(path)
            except (OSError, DecodeError) as exc:
                if problems is not None:
                    problems.append(f"{path}: {_reason(exc)}")
                continue
            for key in feature_keys:
                found.setdefault(key, names)
    return found


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def _conventional(folder: str, keys: list[str] | None) -> Iterator[tuple[str, list[str]]]:
    """``(file name, keys it names)`` of each names file in ``folder``, by convention."""
    try:
        with os.scandir(folder) as it:
            listing = []
            for i, entry in enumerate(it):
                if i >= MAX_LISTED:
                    break
                listing.append(entry.name)
    except OSError:
        return
    for base in sorted(listing):
        if base.endswith(TFDS_LABELS_SUFFIX):
            key = feature_of_labels_file(base, keys)
            if key is not None:
                yield base, [key]
        elif base in LABEL_MAP_NAMES:
            if keys is None:
                yield base, [_DETECTION_LABELS]
            else:
                targets = [k for k in keys if k.endswith("class/label")]
                if targets:
                    yield base, targets
        elif base in _BESIDE:
            key = _BESIDE[base]
            if keys is None or key in keys:
                yield base, [key]


# -- FEATURE=FILE --------------------------------------------------------------------------------


def parse_names_spec(spec: str) -> tuple[str, str]:
    """``FEATURE=FILE`` → ``(feature, file)``. A bare ``FILE`` is taken when it is a TFDS
    labels file, its feature read from its name (``label.labels.txt`` → ``label``). Raises
    ``ValueError`` in words for anything else."""
    feature, eq, path = spec.partition("=")
    if eq:
        feature = feature.strip()
        if not feature or not path:
            raise ValueError(f"{spec!r}: give FEATURE=FILE, both named (label=classes.txt)")
        return feature, path
    key = feature_of_labels_file(spec)
    if key is None:
        raise ValueError(
            f"{spec!r}: give FEATURE=FILE (label=classes.txt); only a TFDS labels file"
            " (<feature>.labels.txt) names its feature by itself"
        )
    return key, spec


def read_names_specs(specs: Iterable[str]) -> dict[str, ClassNames]:
    """The class names of each ``FEATURE=FILE`` spec (:func:`parse_names_spec`,
    :func:`read_names`), by feature; a later spec for the same feature wins. Raises
    ``ValueError`` for a spec that does not parse, :class:`~codec.errors.DecodeError` or
    ``OSError`` for a file that cannot be used."""
    out: dict[str, ClassNames] = {}
    for spec in specs:
        feature, path = parse_names_spec(spec)
        out[feature] = read_names(path)
    return out
