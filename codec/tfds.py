"""Datasets that describe themselves: a tensorflow-datasets folder read without TensorFlow, and
TFX ExampleGen split folders.

A TFDS dataset lies in ``<data_dir>/<name>[/<config>]/<version>/``: ``dataset_info.json``
(``DatasetInfo`` in protobuf JSON: splits, shard lengths, file names, description, citation),
``features.json`` (the ``FeaturesDict`` tree as a ``Feature`` proto in JSON) and one
``<feature>.labels.txt`` per ClassLabel with names. :func:`open_tfds` finds the version folder
from any of those levels (the newest version when there are several, and says which), reads
both files with their size checked first (:data:`MAX_INFO_BYTES`, :data:`MAX_FEATURES_BYTES`),
and gives a :class:`TfdsDataset`: its splits (:class:`Split`, each shard's path and declared
record count) and its features flattened to the keys the records carry
(:class:`FeatureSpec`). Anything it cannot use (JSON that does not parse, a field of the wrong
type, a template naming files outside the folder, a labels file that cannot be read) is a
finding in words, and what can still be used is: with no usable ``dataset_info.json`` the splits
come from the shard file names. The records themselves stay plain TFRecord files.

The folder may be local or in an object store (``gs://tfds-data/datasets/mnist/3.0.1``, an
``s3://`` or ``az://`` prefix): every file access goes through :mod:`codec.folders` (list a
folder, tell a file or a folder, read a small file with its size checked first), so a remote
dataset opens with the same splits, features, class names and findings as its local copy, its
paths being URLs. Opening a remote version folder lists it once and reads ``dataset_info.json``,
``features.json`` and each labels file with one request each; no shard is read or asked about.

What is read, and from where (TensorFlow Datasets 4.9, ``core/proto/dataset_info.proto`` and
``feature.proto`` as ``json_format`` writes them: lowerCamelCase, int64 as strings):

==================================  =========================================================
``dataset_info.json``
``name``                            :attr:`TfdsDataset.name`; ``{DATASET}`` of file names
``version``, ``configName``         :attr:`TfdsDataset.version`, :attr:`~TfdsDataset.config`
``description``, ``citation``       shown as they are (:attr:`~TfdsDataset.description`, …)
``location.urls``                   :attr:`TfdsDataset.homepage` (the first)
``fileFormat``                      ``{FILEFORMAT}``; anything but ``tfrecord`` is a finding
``supervisedKeys``                  :attr:`TfdsDataset.supervised_keys` (input, output)
``splits[].name``                   :attr:`Split.name`; ``{SPLIT}``
``splits[].shardLengths``           :attr:`Shard.declared_records`, checked against the files
                                    (:func:`check_shard_lengths`)
``splits[].numShards``              the shard count of older files without ``shardLengths``
``splits[].statistics.numExamples`` the split's declared records in older files
``splits[].numBytes``               :attr:`Split.num_bytes`
``splits[].filepathTemplate``       the shard file names (``naming.ShardedFileTemplate``)
``features.json``
``featuresDict.features``           the tree; keys joined with ``/`` as the records have them
``sequence.feature``, ``.length``   :attr:`FeatureSpec.sequence_lengths`; two levels or more
                                    are stored ragged (``<key>/ragged_flat_values``,
                                    ``<key>/ragged_row_lengths_<i>``)
``image.shape/dtype/encodingFormat`` :attr:`FeatureSpec.shape`, ``dtype``, ``encoding``
``classLabel.numClasses``           :attr:`FeatureSpec.num_classes`, and the names of
                                    ``<feature>.labels.txt`` (:mod:`codec.names`)
``boundingBox``                     kind ``bounding_box``: 4 floats per box, normalised
                                    ``[ymin, xmin, ymax, xmax]``
``tensor.shape/dtype/encoding``     encoding ``none`` (values), ``bytes`` or ``zlib`` (one
                                    bytes value of the raw array)
``video.shape/encodingFormat``      kind ``video``: a bytes value per frame
``audio.sampleRate/fileFormat``     :attr:`FeatureSpec.sample_rate`, ``file_format``
``text``, ``translation.languages`` kind ``text`` (one per language for a translation)
==================================  =========================================================

A ``BBoxFeature`` is drawn like any Object Detection box: :func:`box_features` reads, from
the declared features (never from a key's name), which record keys hold boxes and which
ClassLabel names them, as :class:`BoxFeature` values that :class:`codec.layers.LayerOptions`
carries; :func:`with_boxes` turns a record's flat ``[ymin, xmin, ymax, xmax]`` floats into the
``<key>/bbox/{xmin,ymin,xmax,ymax}`` and ``<key>/class/{label,text}`` lists
:mod:`codec.detection` reads.

A TFX ExampleGen output is a folder of ``Split-<name>/`` folders of ``data_tfrecord-*.gz``
shards; :func:`open_splits` gives them as the same :class:`Split` objects, and
:func:`open_split_folder` either kind as a :class:`SplitFolder`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import CodecError, DecodeError, RemoteError
from .folders import LOCAL, FolderAccess, folder_access
from .locations import is_url, local_path, protocol
from .names import MAX_NAMES_BYTES, ClassNames, labels_file_name, parse_names
from .values import image_size, plural

if TYPE_CHECKING:
    from .example import Record

__all__ = [
    "AUDIO",
    "BOUNDING_BOX",
    "CLASS_LABEL",
    "DATASET_INFO",
    "DEFAULT_TEMPLATE",
    "FEATURES_JSON",
    "FEATURE_KINDS",
    "IMAGE",
    "MAX_FEATURES_BYTES",
    "MAX_INFO_BYTES",
    "OTHER",
    "TENSOR",
    "TEXT",
    "TFDS",
    "TFX",
    "VIDEO",
    "BoxFeature",
    "FeatureSpec",
    "Shard",
    "Split",
    "SplitFolder",
    "TfdsChoiceError",
    "TfdsDataset",
    "box_features",
    "check_records",
    "check_shard_lengths",
    "open_split_folder",
    "open_splits",
    "open_tfds",
    "parse_split_spec",
    "url_split_spec",
    "with_boxes",
]

DATASET_INFO = "dataset_info.json"
FEATURES_JSON = "features.json"
DEFAULT_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"  # naming.py's default
TFRECORD_FORMAT = "tfrecord"

# Size caps, checked before a file is read. A dataset_info.json holds the statistics of every
# split (some MB for the largest catalogue datasets); features.json a few KB.
MAX_INFO_BYTES = 32 << 20
MAX_FEATURES_BYTES = 16 << 20
MAX_SPLITS = 1_000
MAX_SHARDS = 100_000  # per split, as codec.expand's name@N
MAX_FEATURES = 10_000  # leaves of a features tree
MAX_DEPTH = 32  # FeaturesDict and Sequence levels
MAX_LISTED = 10_000  # entries of a folder looked at while finding the version folder

TFDS = "tfds"
TFX = "tfx"

IMAGE = "image"
CLASS_LABEL = "class_label"
BOUNDING_BOX = "bounding_box"
TENSOR = "tensor"
VIDEO = "video"
AUDIO = "audio"
TEXT = "text"
OTHER = "other"  # a feature class this module knows no more of than its name
FEATURE_KINDS = (IMAGE, CLASS_LABEL, BOUNDING_BOX, TENSOR, VIDEO, AUDIO, TEXT, OTHER)

_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_SPLIT_NAME = re.compile(r"^[\w][\w.-]*$")
# A shard file named by the default template: naming.py's _VAR_REGEX_MAPPING.
_DEFAULT_SHARD = re.compile(
    r"^(?P<dataset>[a-zA-Z]\w*)-(?P<split>[\w-]+?)\.(?P<fmt>\w+)-(?P<i>\d{5,})-of-(?P<n>\d{5,})$"
)


class TfdsChoiceError(CodecError, LookupError):
    """A folder holding several TFDS datasets or configs where one is needed: ``choices``
    names them (paths to open instead)."""

    def __init__(self, message: str, choices: Sequence[str]) -> None:
        super().__init__(message)
        self.choices = tuple(choices)


@dataclass(frozen=True)
class Shard:
    """One shard file of a split: its ``path``, the records ``dataset_info.json`` declares in
    it (None when it declares none per shard), and whether the file is there."""

    path: str
    declared_records: int | None
    present: bool


@dataclass(frozen=True)
class Split:
    """A split of a self-describing dataset: its shards in order, the bytes and records
    declared for it (None when not declared), and the file name template they came from."""

    name: str
    shards: tuple[Shard, ...]
    num_bytes: int | None = None
    declared_total: int | None = None
    template: str | None = None

    @property
    def files(self) -> list[str]:
        """The paths of the shards that are there, in order."""
        return [s.path for s in self.shards if s.present]

    @property
    def missing(self) -> list[str]:
        """The paths of the declared shards that are not there."""
        return [s.path for s in self.shards if not s.present]

    @property
    def declared_records(self) -> list[int | None]:
        """The declared records of each shard (None where not declared)."""
        return [s.declared_records for s in self.shards]


@dataclass(frozen=True)
class FeatureSpec:
    """One feature as ``features.json`` declares it, by the key the records carry it under.

    ``kind`` is one of :data:`FEATURE_KINDS`; ``python_class`` the TFDS class
    (``tensorflow_datasets.core.features.image_feature.Image``). ``shape`` is the declared
    shape of one record's value, sequence levels first (None for a length not fixed), and
    ``item_shape`` that of one item. ``encoding``: a tensor's or an audio feature's
    ``none`` / ``bytes`` / ``zlib``, an image's or a video's ``png`` / ``jpeg`` (None: either).
    ``record_keys`` are the keys the records hold it under (one; or a ragged feature's
    ``<key>/ragged_flat_values`` and ``<key>/ragged_row_lengths_<i>``)."""

    key: str
    kind: str
    python_class: str
    dtype: str | None = None
    shape: tuple[int | None, ...] | None = None
    item_shape: tuple[int | None, ...] | None = None
    sequence_lengths: tuple[int | None, ...] = ()
    encoding: str | None = None
    num_classes: int | None = None
    names: ClassNames | None = None
    names_file: str | None = None
    sample_rate: int | None = None
    file_format: str | None = None
    description: str | None = None
    record_keys: tuple[str, ...] = ()

    @property
    def ragged(self) -> bool:
        """Whether the records hold it as ragged flat values and row lengths."""
        return len(self.record_keys) > 1


@dataclass(frozen=True)
class TfdsDataset:
    """A TFDS dataset folder (the version folder ``folder``) as its metadata describes it.

    ``findings`` are what does not check out, in words (a JSON file that cannot be used, a
    missing shard, a labels file shorter than its ClassLabel); ``notes`` what was decided on
    the reader's behalf (which version of several was opened)."""

    folder: str
    name: str
    version: str | None
    config: str | None
    description: str | None
    citation: str | None
    homepage: str | None
    file_format: str
    supervised_keys: tuple[str, ...] | None
    splits: tuple[Split, ...]
    features: dict[str, FeatureSpec]
    findings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    versions: tuple[str, ...] = ()

    def split(self, name: str) -> Split:
        """The split called ``name``; ``KeyError`` in words naming the splits there are."""
        return _split_named(self.splits, name, f"{self.name} {self.version or ''}".strip())

    def class_names(self) -> dict[str, ClassNames]:
        """The class names of every ClassLabel that has them, by record key."""
        return {k: f.names for k, f in self.features.items() if f.names is not None}

    def feature_of(self, record_key: str) -> FeatureSpec | None:
        """The feature a record key belongs to (a ragged feature's parts included)."""
        spec = self.features.get(record_key)
        if spec is not None:
            return spec
        for f in self.features.values():
            if record_key in f.record_keys:
                return f
        return None


def _split_named(splits: Sequence[Split], name: str, what: str) -> Split:
    for s in splits:
        if s.name == name:
            return s
    there = ", ".join(s.name for s in splits) or "none"
    raise KeyError(f"{what} has no split {name!r} (its splits: {there})")


# -- finding the version folder -----------------------------------------------------------------


def _listing(fs: FolderAccess, folder: str) -> list[str]:
    return fs.folders(folder, MAX_LISTED)


def _is_version_folder(fs: FolderAccess, path: str) -> bool:
    return fs.is_file(fs.join(path, DATASET_INFO))


def _versions(fs: FolderAccess, folder: str) -> list[str]:
    """The version folders inside ``folder`` (``1.2.0``; TFDS's ``*.incomplete*`` folders
    left out), oldest first."""
    found = [
        n
        for n in _listing(fs, folder)
        if _VERSION.match(n) and _is_version_folder(fs, fs.join(folder, n))
    ]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


def _candidates(fs: FolderAccess, folder: str) -> list[str]:
    """The dataset folders (holding version folders) at ``folder`` and one or two levels
    below it (``<name>``, ``<name>/<config>``, ``<data_dir>/<name>[/<config>]``)."""
    if _versions(fs, folder):
        return [folder]
    found: list[str] = []
    for a in _listing(fs, folder):
        pa = fs.join(folder, a)
        if _versions(fs, pa):
            found.append(pa)
            continue
        for b in _listing(fs, pa):
            pb = fs.join(pa, b)
            if _versions(fs, pb):
                found.append(pb)
    return found


def _locate(fs: FolderAccess, path: str) -> tuple[str, list[str], list[str]] | None:
    """``(version folder, versions there, notes)`` of the TFDS dataset at ``path``, or None
    when there is none; :class:`TfdsChoiceError` when there are several to choose from."""
    if _is_version_folder(fs, path):
        return path, [], []
    found = _candidates(fs, path)
    if not found:
        return None
    if len(found) > 1:
        named = [fs.relative(f, path) for f in found]
        listed = ", ".join(named[:12]) + (
            f" and {len(named) - 12:,} more" if len(named) > 12 else ""
        )
        raise TfdsChoiceError(
            f"{fs.shown(path)} holds {len(found):,} TFDS datasets or configs ({listed}):"
            " open one of them",
            found,
        )
    versions = _versions(fs, found[0])
    newest = versions[-1]
    notes = []
    if len(versions) > 1:
        notes.append(
            f"versions {', '.join(versions)} found; opened {newest}, the newest"
            f" (open {fs.shown(fs.join(found[0], versions[0]))} for another)"
        )
    return fs.join(found[0], newest), versions, notes


# -- reading JSON -------------------------------------------------------------------------------


def _read_json(fs: FolderAccess, path: str, limit: int, findings: list[str]) -> Any:
    """The JSON at ``path``, or None with a finding: too large (refused before reading),
    unreadable, not UTF-8, not JSON, nested too deeply. A store that cannot be reached
    raises (:class:`~codec.errors.RemoteError`): that says nothing of the file."""
    base = fs.name(path)
    try:
        data = fs.read(path, limit, base)
    except FileNotFoundError:
        return None
    except DecodeError as exc:
        findings.append(f"{exc}; not read")
        return None
    except RemoteError:
        raise
    except OSError as exc:
        findings.append(f"{base}: cannot be read ({exc.strerror or exc})")
        return None
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        findings.append(f"{base}: not UTF-8 text (byte {exc.start:,}); not used")
    except json.JSONDecodeError as exc:
        findings.append(
            f"{base}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); not used"
        )
    except RecursionError:
        findings.append(f"{base}: nested too deeply to be read; not used")
    return None


def _get(obj: Mapping[str, Any], *names: str) -> Any:
    """The field of a protobuf JSON object under its JSON name or its proto name."""
    for n in names:
        if n in obj:
            return obj[n]
    return None


def _int(value: Any) -> int | None:
    """An int64 as protobuf JSON writes it (a string of digits) or as a number; None for
    anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,19}", value.strip()):
        return int(value)
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


# -- opening ------------------------------------------------------------------------------------


def _access(path: str, anon: bool) -> tuple[FolderAccess, str]:
    """The folder access of ``path`` and the path as it uses it (``file://`` taken off)."""
    if is_url(path):
        return folder_access(path, anon=anon), path.rstrip("/") if _has_path(path) else path
    return LOCAL, local_path(path)


def _has_path(url: str) -> bool:
    """Whether a URL names more than its protocol (``s3://`` alone names nothing)."""
    return bool(url.split("://", 1)[1].strip("/"))


def open_tfds(path: str, *, anon: bool = False) -> TfdsDataset | None:
    """The TFDS dataset at ``path``: a version folder (``dataset_info.json`` in it), or a
    dataset, config or data folder above one (the newest version is opened, and
    :attr:`TfdsDataset.notes` says so). None when ``path`` is no such folder.
    :class:`TfdsChoiceError` when it holds several datasets or configs.

    ``path`` is a local folder or a URL (``gs://tfds-data/datasets/mnist/3.0.1``, an
    ``s3://`` or ``az://`` prefix; read without credentials with ``anon``), read through
    :mod:`codec.folders`: a remote version folder is listed once and its JSON and labels
    files read with one request each, their sizes checked first; the shards' presence comes
    from the listing. Its paths (:attr:`Shard.path`, :attr:`TfdsDataset.folder`) are URLs.

    Nothing here raises for what the files say: a ``dataset_info.json`` or ``features.json``
    that cannot be used is a finding, and the splits then come from the shard file names. A
    store that cannot be reached raises (:class:`~codec.errors.RemoteError`, or
    ``PermissionError`` when it refuses)."""
    fs, path = _access(path, anon)
    return _open_tfds(fs, path)


def _open_tfds(fs: FolderAccess, path: str) -> TfdsDataset | None:
    if (fs.remote and not _has_path(path)) or not fs.is_dir(path):
        return None
    located = _locate(fs, path)
    if located is None:
        return None
    folder, versions, notes = located
    findings: list[str] = []
    info = _read_json(fs, fs.join(folder, DATASET_INFO), MAX_INFO_BYTES, findings)
    if info is not None and not isinstance(info, dict):
        findings.append(f"{DATASET_INFO}: not a JSON object; not used")
        info = None
    info = info or {}
    name = _text(_get(info, "name")) or _name_from_files(fs, folder) or _folder_name(fs, folder)
    file_format = _text(_get(info, "fileFormat", "file_format")) or TFRECORD_FORMAT
    if file_format != TFRECORD_FORMAT:
        findings.append(
            f"{DATASET_INFO}: fileFormat {file_format!r}: its shards are not TFRecord files"
            " and cannot be read here"
        )
    splits = _splits(fs, folder, name, file_format, info, findings)
    features_json = _read_json(fs, fs.join(folder, FEATURES_JSON), MAX_FEATURES_BYTES, findings)
    if features_json is None and isinstance(_get(info, "features"), dict):
        features_json = _get(info, "features")  # as_proto_with_features
    features: dict[str, FeatureSpec] = {}
    if features_json is not None:
        if isinstance(features_json, dict):
            features = _features(features_json, fs, folder, findings)
        else:
            findings.append(f"{FEATURES_JSON}: not a JSON object; not used")
    version = _text(_get(info, "version"))
    dirname = fs.name(folder)
    if version is None and _VERSION.match(dirname):
        version = dirname
    elif version is not None and _VERSION.match(dirname) and version != dirname:
        findings.append(f"{DATASET_INFO} says version {version}, its folder is called {dirname}")
    location = _get(info, "location")
    urls = _get(location, "urls") if isinstance(location, dict) else None
    homepage = urls[0] if isinstance(urls, list) and urls and isinstance(urls[0], str) else None
    return TfdsDataset(
        folder=folder,
        name=name,
        version=version,
        config=_text(_get(info, "configName", "config_name")),
        description=_text(_get(info, "description")),
        citation=_text(_get(info, "citation")),
        homepage=homepage,
        file_format=file_format,
        supervised_keys=_supervised_keys(_get(info, "supervisedKeys", "supervised_keys")),
        splits=tuple(splits),
        features=features,
        findings=tuple(findings),
        notes=tuple(notes),
        versions=tuple(versions),
    )


def _folder_name(fs: FolderAccess, folder: str) -> str:
    if fs.remote:
        parts = folder.split("://", 1)[1].split("/")
    else:
        parts = os.path.normpath(os.path.abspath(folder)).split(os.sep)
    for p in reversed(parts):
        if p and not _VERSION.match(p):
            return p
    return "dataset"


def _name_from_files(fs: FolderAccess, folder: str) -> str | None:
    for entry in _files(fs, folder):
        m = _DEFAULT_SHARD.match(entry)
        if m:
            return m.group("dataset")
    return None


def _files(fs: FolderAccess, folder: str) -> list[str]:
    return fs.files(folder, 10 * MAX_LISTED)


def _supervised_keys(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, dict):
        return None
    a, b = _get(value, "input"), _get(value, "output")
    if isinstance(a, str) and isinstance(b, str) and a and b:
        return (a, b)
    nest = value.get("tuple")
    items = _get(nest, "items") if isinstance(nest, dict) else None
    if isinstance(items, list):
        keys = [_get(i, "featureKey", "feature_key") for i in items if isinstance(i, dict)]
        if keys and all(isinstance(k, str) for k in keys):
            return tuple(keys)
    return None


# -- splits -------------------------------------------------------------------------------------


def _splits(
    fs: FolderAccess,
    folder: str,
    name: str,
    file_format: str,
    info: Mapping[str, Any],
    findings: list[str],
) -> list[Split]:
    raw = _get(info, "splits")
    if raw is None:
        if info:
            findings.append(f"{DATASET_INFO} declares no splits; they are read from the file names")
        return _splits_from_names(fs, folder, file_format)
    if not isinstance(raw, list):
        findings.append(f"{DATASET_INFO}: splits is not a list; read from the file names instead")
        return _splits_from_names(fs, folder, file_format)
    if len(raw) > MAX_SPLITS:
        findings.append(f"{DATASET_INFO}: {len(raw):,} splits; the first {MAX_SPLITS:,} are used")
        raw = raw[:MAX_SPLITS]
    out: list[Split] = []
    for i, entry in enumerate(raw):
        split = _split(fs, folder, name, file_format, entry, i, findings)
        if split is not None:
            if any(s.name == split.name for s in out):
                findings.append(
                    f"{DATASET_INFO}: split {split.name!r} is declared twice; the first is used"
                )
                continue
            out.append(split)
    return out


def _split(
    fs: FolderAccess,
    folder: str,
    name: str,
    file_format: str,
    entry: Any,
    i: int,
    findings: list[str],
) -> Split | None:
    where = f"{DATASET_INFO}: splits[{i}]"
    if not isinstance(entry, dict):
        findings.append(f"{where} is not an object; left out")
        return None
    split = _get(entry, "name")
    if not isinstance(split, str) or not _SPLIT_NAME.match(split):
        findings.append(f"{where}: name {split!r} is not a split name; left out")
        return None
    where = f"{DATASET_INFO}: split {split!r}"
    lengths_raw = _get(entry, "shardLengths", "shard_lengths")
    lengths: list[int] | None = None
    if lengths_raw is not None:
        if not isinstance(lengths_raw, list):
            findings.append(f"{where}: shardLengths is not a list; not checked")
        elif len(lengths_raw) > MAX_SHARDS:
            findings.append(
                f"{where}: {plural(len(lengths_raw), 'shard')} is more than"
                f" {MAX_SHARDS:,}; left out"
            )
            return None
        else:
            parsed = [_int(v) for v in lengths_raw]
            if any(v is None or v < 0 for v in parsed):
                findings.append(f"{where}: shardLengths holds something not a count; not checked")
            else:
                lengths = [int(v) for v in parsed if v is not None]
    num_shards = (
        len(lengths) if lengths is not None else _int(_get(entry, "numShards", "num_shards"))
    )
    if num_shards is not None and not 0 <= num_shards <= MAX_SHARDS:
        findings.append(
            f"{where}: {plural(num_shards, 'shard')} is outside 0 to {MAX_SHARDS:,}; left out"
        )
        return None
    template = _get(entry, "filepathTemplate", "filepath_template")
    if template is not None and not isinstance(template, str):
        findings.append(f"{where}: filepathTemplate is not text; the default is used")
        template = None
    template = template or DEFAULT_TEMPLATE
    declared_total = sum(lengths) if lengths is not None else _stat_examples(entry)
    num_bytes = _int(_get(entry, "numBytes", "num_bytes"))
    if num_shards is None:  # nothing says how many: the files matching the template
        paths = _matching(fs, folder, template, name, split, file_format, findings, where)
        shards = tuple(Shard(p, None, True) for p in paths)
    else:
        expanded = _expand_template(
            fs, folder, template, name, split, file_format, num_shards, findings, where
        )
        if expanded is None:
            return None
        shards = tuple(
            Shard(p, lengths[k] if lengths is not None else None, fs.is_file(p))
            for k, p in enumerate(expanded)
        )
    result = Split(split, shards, num_bytes, declared_total, template)
    missing = result.missing
    if missing:
        findings.append(
            f"split {split!r}: {len(missing):,} of {plural(len(shards), 'declared shard')}"
            f" missing, first {fs.name(missing[0])}"
        )
    return result


def _stat_examples(entry: Mapping[str, Any]) -> int | None:
    stats = _get(entry, "statistics")
    if isinstance(stats, dict):
        n = _int(_get(stats, "numExamples", "num_examples"))
        if n is not None and n >= 0:
            return n
    return None


_TEMPLATE_VARS = ("DATASET", "SPLIT", "FILEFORMAT", "SHARD_INDEX", "NUM_SHARDS", "SHARD_X_OF_Y")


def _fill(template: str, mapping: Mapping[str, str]) -> str | None:
    """``template`` with its ``{VAR}`` filled (``str.format`` as naming.py does); None when
    it names a variable not given or does not parse."""
    try:
        return template.format_map(dict(mapping))
    except (KeyError, ValueError, IndexError, AttributeError):
        return None


def _expand_template(
    fs: FolderAccess,
    folder: str,
    template: str,
    name: str,
    split: str,
    file_format: str,
    num_shards: int,
    findings: list[str],
    where: str,
) -> list[str] | None:
    """The shard paths of ``naming.ShardedFileTemplate.sharded_filepaths``: the shard numbers
    zero-padded to at least 5 digits (more when the count has more)."""
    digits = max(len(str(num_shards)), 5)
    paths = []
    for k in range(num_shards):
        mapping = {
            "DATASET": name,
            "SPLIT": split,
            "FILEFORMAT": file_format,
            "SHARD_INDEX": f"{k:0{digits}d}",
            "NUM_SHARDS": f"{num_shards:0{digits}d}",
            "SHARD_X_OF_Y": f"{k:0{digits}d}-of-{num_shards:0{digits}d}",
        }
        filled = _fill(template, mapping)
        if filled is None:
            findings.append(
                f"{where}: filepathTemplate {template[:80]!r} cannot be filled"
                f" (variables: {', '.join(_TEMPLATE_VARS)}); left out"
            )
            return None
        path = fs.child(folder, filled)
        if path is None:
            findings.append(
                f"{where}: filepathTemplate {template[:80]!r} names a file outside the"
                " dataset folder; left out"
            )
            return None
        paths.append(path)
    return paths


def _template_regex(
    template: str, name: str, split: str, file_format: str
) -> re.Pattern[str] | None:
    """naming.py's ``_filename_template_to_regex`` with the known values put in."""
    out = []
    pos = 0
    for m in re.finditer(r"\{(\w+)\}", template):
        out.append(re.escape(template[pos : m.start()]))
        var = m.group(1)
        if var == "DATASET":
            out.append(re.escape(name))
        elif var == "SPLIT":
            out.append(re.escape(split))
        elif var == "FILEFORMAT":
            out.append(re.escape(file_format))
        elif var in ("SHARD_INDEX", "NUM_SHARDS"):
            out.append(r"\d{5,}")
        elif var == "SHARD_X_OF_Y":
            out.append(r"\d{5,}-of-\d{5,}")
        else:
            return None
        pos = m.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out))


def _matching(
    fs: FolderAccess,
    folder: str,
    template: str,
    name: str,
    split: str,
    file_format: str,
    findings: list[str],
    where: str,
) -> list[str]:
    regex = _template_regex(template, name, split, file_format)
    if regex is None or "/" in template or os.sep in template:
        findings.append(f"{where}: declares no shard count and its files cannot be listed")
        return []
    found = [fs.join(folder, f) for f in _files(fs, folder) if regex.fullmatch(f)]
    return found[:MAX_SHARDS]


def _splits_from_names(fs: FolderAccess, folder: str, file_format: str) -> list[Split]:
    """Splits read from the shard file names alone (the default template)."""
    by_split: dict[str, list[str]] = {}
    for f in _files(fs, folder):
        m = _DEFAULT_SHARD.match(f)
        if m and m.group("fmt") == file_format:
            by_split.setdefault(m.group("split"), []).append(fs.join(folder, f))
    return [
        Split(s, tuple(Shard(p, None, True) for p in paths[:MAX_SHARDS]))
        for s, paths in by_split.items()
    ]


# -- features -----------------------------------------------------------------------------------

_ONEOFS = {
    "featuresDict": "features_dict",
    "tensor": "tensor",
    "classLabel": "class_label",
    "image": "image",
    "video": "video",
    "audio": "audio",
    "boundingBox": "bounding_box",
    "text": "text",
    "translation": "translation",
    "sequence": "sequence",
    "jsonFeature": "json_feature",
}

# The legacy features.json ({"type": class, "content": {...}}, TFDS before 4.4) by class name.
_LEGACY = {
    "FeaturesDict": "featuresDict",
    "Sequence": "sequence",
    "SequenceDict": "sequence",
    "Dataset": "sequence",
    "Image": "image",
    "LabeledImage": "image",
    "ClassLabel": "classLabel",
    "Tensor": "tensor",
    "Scalar": "tensor",
    "BBoxFeature": "boundingBox",
    "Text": "text",
    "Video": "video",
    "Audio": "audio",
    "Translation": "translation",
}


@dataclass
class _Walk:
    fs: FolderAccess
    folder: str
    findings: list[str]
    out: dict[str, FeatureSpec] = field(default_factory=dict)
    too_many: bool = False
    labels_cache: dict[str, ClassNames | None] = field(default_factory=dict)


def _features(
    doc: Mapping[str, Any], fs: FolderAccess, folder: str, findings: list[str]
) -> dict[str, FeatureSpec]:
    walk = _Walk(fs, folder, findings)
    try:
        _node(walk, doc, [], [], 0)
    except RecursionError:
        findings.append(f"{FEATURES_JSON}: nested too deeply to be read; features not used")
        return {}
    return walk.out


def _oneof(node: Mapping[str, Any]) -> tuple[str | None, Any]:
    """The ``oneof content`` field a Feature object sets: ``(JSON name, value)``."""
    for json_name, proto_name in _ONEOFS.items():
        for n in (json_name, proto_name):
            if n in node:
                return json_name, node[n]
    return None, None


def _legacy(node: Mapping[str, Any]) -> dict[str, Any] | None:
    """A legacy ``{"type", "content"}`` node in the proto form."""
    cls = node.get("type")
    content = node.get("content")
    if not isinstance(cls, str) or not isinstance(content, dict):
        return None
    kind = _LEGACY.get(cls.rsplit(".", 1)[-1])
    if kind == "featuresDict":
        inner = content.get("features", content) if "features" in content else content
        return {"pythonClassName": cls, "featuresDict": {"features": inner}}
    if kind == "sequence":
        return {"pythonClassName": cls, "sequence": content}
    if kind == "image" and "encoding_format" in content:
        content = {**content, "encodingFormat": content["encoding_format"]}
    if kind is None:
        return {"pythonClassName": cls, "jsonFeature": {}}
    return {"pythonClassName": cls, kind: content}


def _where(keys: Sequence[str]) -> str:
    return "/".join(keys) or "(top level)"


def _node(walk: _Walk, node: Any, keys: list[str], seq: list[int | None], depth: int) -> None:
    if walk.too_many:
        return
    if depth > MAX_DEPTH:
        walk.findings.append(
            f"{FEATURES_JSON}: {_where(keys)} is nested more than {MAX_DEPTH} levels; not read"
        )
        return
    if not isinstance(node, dict):
        walk.findings.append(f"{FEATURES_JSON}: {_where(keys)} is not an object; left out")
        return
    if "type" in node and "content" in node and "pythonClassName" not in node:
        legacy = _legacy(node)
        if legacy is None:
            walk.findings.append(f"{FEATURES_JSON}: {_where(keys)} cannot be read; left out")
            return
        node = legacy
    cls = _get(node, "pythonClassName", "python_class_name")
    cls = cls if isinstance(cls, str) else ""
    kind, body = _oneof(node)
    if kind is None:
        walk.findings.append(
            f"{FEATURES_JSON}: {_where(keys)} ({cls or 'no class'}) declares no feature; left out"
        )
        return
    if not isinstance(body, dict):
        walk.findings.append(f"{FEATURES_JSON}: {_where(keys)}: {kind} is not an object; left out")
        return
    if kind == "featuresDict":
        children = _get(body, "features")
        if not isinstance(children, dict):
            if children is None:
                return  # an empty FeaturesDict
            walk.findings.append(
                f"{FEATURES_JSON}: {_where(keys)}: features is not an object; left out"
            )
            return
        for k, child in children.items():
            if not isinstance(k, str) or not k:
                walk.findings.append(
                    f"{FEATURES_JSON}: {_where(keys)} has a key that is not a name"
                )
                continue
            _node(walk, child, [*keys, k], seq, depth + 1)
        return
    if kind == "sequence":
        length = _int(_get(body, "length"))
        inner = _get(body, "feature")
        _node(
            walk, inner, keys, [*seq, None if length is None or length < 0 else length], depth + 1
        )
        return
    if kind == "translation":
        languages = _get(body, "languages")
        variable = bool(_get(body, "variableLanguagesPerExample", "variable_languages_per_example"))
        if variable:
            for sub in ("language", "translation"):
                _leaf(walk, [*keys, sub], [*seq, None], cls, TEXT, {})
        elif isinstance(languages, list):
            for lang in languages:
                if isinstance(lang, str) and lang:
                    _leaf(walk, [*keys, lang], seq, cls, TEXT, {})
        return
    leaf_kind = {
        "tensor": TENSOR,
        "classLabel": CLASS_LABEL,
        "image": IMAGE,
        "video": VIDEO,
        "audio": AUDIO,
        "boundingBox": BOUNDING_BOX,
        "text": TEXT,
        "jsonFeature": OTHER,
    }[kind]
    description = _text(_get(node, "description"))
    _leaf(walk, keys, seq, cls, leaf_kind, body, description)


def _shape(body: Mapping[str, Any]) -> tuple[int | None, ...] | None:
    shape = _get(body, "shape")
    if isinstance(shape, list):  # the legacy form: a plain list, null for unknown
        dims = shape
    elif isinstance(shape, dict):
        dims = _get(shape, "dimensions") or []
    else:
        return None
    if not isinstance(dims, list):
        return None
    out: list[int | None] = []
    for d in dims:
        if d is None:
            out.append(None)
            continue
        n = _int(d)
        if n is None:
            return None
        out.append(None if n < 0 else n)
    return tuple(out)


def _leaf(
    walk: _Walk,
    keys: list[str],
    seq: list[int | None],
    cls: str,
    kind: str,
    body: Mapping[str, Any],
    description: str | None = None,
) -> None:
    if len(walk.out) >= MAX_FEATURES:
        walk.too_many = True
        walk.findings.append(
            f"{FEATURES_JSON}: more than {MAX_FEATURES:,} features; the rest are left out"
        )
        return
    key = "/".join(keys)
    item_shape = _shape(body)
    dtype = _text(_get(body, "dtype"))
    encoding = None
    num_classes = None
    sample_rate = None
    file_format = None
    frames: list[int | None] = []
    if kind == CLASS_LABEL:
        num_classes = _int(_get(body, "numClasses", "num_classes"))
        item_shape, dtype = (), dtype or "int64"
    elif kind == BOUNDING_BOX:
        item_shape, dtype = item_shape or (4,), dtype or "float32"
    elif kind == IMAGE:
        encoding = _text(_get(body, "encodingFormat", "encoding_format"))
        label = _get(body, "label")
        if isinstance(label, dict):  # a LabeledImage
            num_classes = _int(_get(label, "numClasses", "num_classes"))
    elif kind == VIDEO:
        encoding = _text(_get(body, "encodingFormat", "encoding_format"))
        frames = [item_shape[0] if item_shape else None]  # a Sequence of Image inside
        item_shape = item_shape[1:] if item_shape else item_shape
    elif kind == TENSOR:
        encoding = (_text(_get(body, "encoding")) or "none").lower()
    elif kind == AUDIO:
        encoding = (_text(_get(body, "encoding")) or "none").lower()
        sample_rate = _int(_get(body, "sampleRate", "sample_rate"))
        sample_rate = sample_rate if sample_rate and sample_rate > 0 else None
        file_format = _text(_get(body, "fileFormat", "file_format"))
    elif kind == TEXT:
        item_shape, dtype = (), dtype or "string"
    levels = [*seq, *frames]
    shape = None if item_shape is None else (*levels, *item_shape)
    if len(levels) >= 2:
        rows = [f"{key}/ragged_row_lengths_{i}" for i in range(len(levels) - 1)]
        record_keys: tuple[str, ...] = (f"{key}/ragged_flat_values", *rows)
    else:
        record_keys = (key,)
    names = None
    names_file = None
    if (num_classes is not None or kind == CLASS_LABEL) and keys:
        names_file = labels_file_name(keys)
        names = _labels(walk, names_file, key, num_classes)
    walk.out[key] = FeatureSpec(
        key=key,
        kind=kind,
        python_class=cls,
        dtype=dtype,
        shape=shape,
        item_shape=item_shape,
        sequence_lengths=tuple(levels),
        encoding=encoding,
        num_classes=num_classes,
        names=names,
        names_file=names_file,
        sample_rate=sample_rate,
        file_format=file_format,
        description=description,
        record_keys=record_keys,
    )


def _labels(walk: _Walk, names_file: str, key: str, num_classes: int | None) -> ClassNames | None:
    if names_file in walk.labels_cache:
        return walk.labels_cache[names_file]
    fs = walk.fs
    path = fs.join(walk.folder, names_file)
    names: ClassNames | None = None
    if fs.exists(path):
        try:
            data = fs.read(path, MAX_NAMES_BYTES, "names file")
            names = parse_names(data, source=fs.shown(path), kind="tfds_labels")
        except RemoteError:
            raise
        except (OSError, DecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            walk.findings.append(f"{names_file}: cannot be used ({reason})")
    if names is not None and num_classes is not None and len(names) != num_classes:
        walk.findings.append(
            f"{names_file} has {plural(len(names), 'name')}; features.json declares"
            f" {plural(num_classes, 'class', 'classes')} for {key}"
        )
    walk.labels_cache[names_file] = names
    return names


# -- checks -------------------------------------------------------------------------------------


def check_shard_lengths(split: Split, actual_counts: Sequence[int]) -> list[str]:
    """The declared records of ``split`` against the records counted in its files
    (``actual_counts``, one per file of :attr:`Split.files`, in order): a finding in words for
    every shard that differs (the first ten; then how many more), for missing shards, and for
    the split's total. Nothing when they agree or nothing was declared."""
    findings: list[str] = []
    present = [s for s in split.shards if s.present]
    if len(actual_counts) != len(present):
        raise ValueError(
            f"{plural(len(actual_counts), 'count')} for {plural(len(present), 'file')}"
        )
    differ = []
    for shard, actual in zip(present, actual_counts):
        if shard.declared_records is not None and shard.declared_records != actual:
            differ.append((shard, actual))
    for shard, actual in differ[:10]:
        findings.append(
            f"split {split.name!r}: {os.path.basename(shard.path)} holds"
            f" {plural(actual, 'record')}; {DATASET_INFO} declares {shard.declared_records:,}"
        )
    if len(differ) > 10:
        findings.append(
            f"split {split.name!r}: {len(differ) - 10:,} more shards differ from their"
            " declared lengths"
        )
    if split.missing:
        lost = sum(s.declared_records or 0 for s in split.shards if not s.present)
        what = f" ({plural(lost, 'declared record')})" if lost else ""
        findings.append(
            f"split {split.name!r}: {plural(len(split.missing), 'shard')} missing{what},"
            f" first {os.path.basename(split.missing[0])}"
        )
    total = sum(actual_counts)
    if split.declared_total is not None and split.declared_total != total:
        findings.append(
            f"split {split.name!r}: {plural(total, 'record')} in its files;"
            f" {DATASET_INFO} declares {split.declared_total:,}"
        )
    return findings


def _record_type(dtype: str | None) -> str | None:
    """The Example list type TFDS stores a dtype in (``example_serializer``)."""
    if dtype is None:
        return None
    if dtype in ("string", "str", "bytes", "object"):
        return "bytes"
    if dtype.startswith(("float", "bfloat", "complex")):
        return "float"
    if dtype.startswith(("int", "uint", "bool")):
        return "int64"
    return None


def _product(shape: Sequence[int | None]) -> int | None:
    n = 1
    for d in shape:
        if d is None:
            return None
        n *= d
    return n


class _Tally:
    """Findings counted: each distinct one once, with how many records and the first."""

    def __init__(self) -> None:
        self.seen: dict[str, list[int]] = {}

    def add(self, text: str, index: int) -> None:
        hit = self.seen.get(text)
        if hit is None:
            self.seen[text] = [1, index]
        else:
            hit[0] += 1

    def findings(self, total: int) -> list[str]:
        out = []
        for text, (count, first) in self.seen.items():
            if count == total and total > 1:
                out.append(f"{text} (every record read, {total:,})")
            elif count == 1:
                out.append(f"{text} (record {first:,})")
            else:
                out.append(f"{text} ({plural(count, 'record')}, first {first:,})")
        return out


def check_records(
    features: Mapping[str, FeatureSpec], records: Iterable[tuple[int, Record]]
) -> list[str]:
    """What ``features`` (a :attr:`TfdsDataset.features`) declares against ``records``
    (``(record number, decoded record)`` pairs, a sample: the first few hundred say enough),
    in words, each distinct finding once with how many records show it: a declared feature
    no record has, a value of another type, a count that does not fit the declared shape,
    a picture of another size or format, a class label outside ``numClasses`` or past the
    end of its labels file, boxes not in fours."""
    tally = _Tally()
    seen = 0
    present: set[str] = set()
    for index, record in records:
        seen += 1
        feats = record.features
        for spec in features.values():
            for rk in spec.record_keys:
                if rk in feats:
                    present.add(rk)
            feat = feats.get(spec.record_keys[0])
            if feat is None or feat.type == "none":
                continue
            for text in _check_value(spec, feat.type, feat.values):
                tally.add(f"{spec.key}: {text}", index)
    out = tally.findings(seen)
    if seen:
        for spec in features.values():
            if spec.record_keys[0] not in present:
                where = "the record read" if seen == 1 else f"the {seen:,} records read"
                out.append(f"{spec.key}: declared in {FEATURES_JSON}; none of {where} has it")
    return out


def _check_value(spec: FeatureSpec, type_: str, values: list[Any]) -> Iterator[str]:
    if spec.ragged:
        return  # flat values of several levels: their counts follow the row lengths
    wanted = _record_type(spec.dtype)
    if spec.kind in (IMAGE, VIDEO, TEXT) or (
        spec.kind in (TENSOR, AUDIO) and spec.encoding in ("bytes", "zlib")
    ):
        wanted = "bytes"
    if wanted is not None and type_ != wanted:
        what = f"{spec.dtype or ''} {spec.kind.replace('_', ' ')}".strip()
        yield f"stored as {type_} values; a {what} is stored as {wanted}"
        return
    n = len(values)
    levels = spec.sequence_lengths
    item = spec.item_shape
    if spec.kind == CLASS_LABEL:
        yield from _check_labels(spec, values)
    elif spec.kind == BOUNDING_BOX:
        if n % 4:
            yield f"{n:,} numbers is not a whole number of boxes (4 each)"
    elif spec.kind in (IMAGE, VIDEO):
        yield from _check_pictures(spec, values)
        return
    if spec.kind in (TENSOR, AUDIO) and spec.encoding in ("bytes", "zlib"):
        return
    if item is None or spec.kind == TEXT:
        return
    per_item = _product(item)
    if per_item is None:
        return
    fixed = _product(levels) if levels else 1
    if fixed is not None:
        expected = fixed * per_item
        if n != expected:
            shown = _shape_text(spec.shape)
            yield f"{plural(n, 'value')}; its declared shape {shown} holds {expected:,}"
    elif per_item and n % per_item:
        yield f"{plural(n, 'value')} is not a whole number of items of shape {_shape_text(item)}"


def _check_labels(spec: FeatureSpec, values: list[Any]) -> Iterator[str]:
    ints = [v for v in values if isinstance(v, int)]
    if not ints:
        return
    top = max(ints)
    if min(ints) < -1:
        yield f"label {min(ints)} is below -1 (TFDS's 'no label')"
    if spec.num_classes is not None and top >= spec.num_classes:
        classes = plural(spec.num_classes, "class", "classes")
        yield f"label {top} is outside its {classes} (numClasses)"
    if spec.names is not None and top >= 0 and spec.names.name(top) is None:
        yield f"label {top} has no name: {spec.names_file} has {plural(len(spec.names), 'name')}"


def _check_pictures(spec: FeatureSpec, values: list[Any]) -> Iterator[str]:
    shape = spec.item_shape or ()
    want_h = shape[0] if len(shape) >= 2 else None
    want_w = shape[1] if len(shape) >= 2 else None
    for v in values[:64]:
        if not isinstance(v, (bytes, bytearray)):
            continue
        size = image_size(bytes(v))
        if size is None:
            yield "a value that is not a picture (no PNG or JPEG header)"
            return
        fmt, w, h = size
        if spec.encoding in ("png", "jpeg") and fmt != spec.encoding:
            yield f"a {fmt.upper()} picture; {FEATURES_JSON} declares {spec.encoding.upper()}"
        if (want_h is not None and h != want_h) or (want_w is not None and w != want_w):
            yield (
                f"a picture of {w}×{h} pixels; its declared shape {_shape_text(shape)} is"
                f" {want_w if want_w is not None else '?'}×{want_h if want_h is not None else '?'}"
            )
        return  # one picture a record tells it


def _shape_text(shape: Sequence[int | None] | None) -> str:
    if shape is None:
        return "(unknown)"
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"


# -- boxes --------------------------------------------------------------------------------------

# The leaf names a ClassLabel beside a BBoxFeature is preferred under, in order (TFDS's own
# object detection builders call it ``label``; a few ``labels`` or ``category``).
_BOX_LABEL_NAMES = ("label", "labels", "category", "class")


@dataclass(frozen=True)
class BoxFeature:
    """A TFDS ``BBoxFeature`` as boxes are drawn from it (hashable: it is part of
    :class:`codec.layers.LayerOptions`, a cache key).

    ``key`` is the record key of its values, four float32 per box, normalised
    ``[ymin, xmin, ymax, xmax]``; ``label`` the record key of the ClassLabel that names its
    boxes (one int64 per box, in the same ``Sequence``), or None; ``names`` that ClassLabel's
    names as ``(index, name)`` pairs (from its ``*.labels.txt``), empty when it has none."""

    key: str
    label: str | None = None
    names: tuple[tuple[int, str], ...] = ()

    @property
    def prefix(self) -> str:
        """The Object Detection prefix its boxes are given under (``objects/bbox/``): the
        lists :func:`with_boxes` adds are ``<prefix>bbox/xmin`` …, ``<prefix>class/label``
        and ``<prefix>class/text``, none of them a key a TFDS record has."""
        return self.key + "/"


def box_features(features: Mapping[str, FeatureSpec]) -> tuple[BoxFeature, ...]:
    """The ``BBoxFeature`` of ``features`` (a :attr:`TfdsDataset.features`) as
    :class:`BoxFeature` values, in key order: each with the ClassLabel that names its boxes,
    the one in the same ``FeaturesDict`` with as many sequence levels (``objects/label`` for
    ``objects/bbox``), by preference the one called ``label`` (then ``labels``, ``category``,
    ``class``), else the only one there is. Read from the declared features alone, never
    guessed from a key's name."""
    out = []
    for key in sorted(features):
        spec = features[key]
        if spec.kind != BOUNDING_BOX:
            continue
        parent = key.rpartition("/")[0]
        levels = len(spec.sequence_lengths)
        beside = {
            f.key.rpartition("/")[2]: f
            for f in features.values()
            if f.kind == CLASS_LABEL
            and f.key.rpartition("/")[0] == parent
            and len(f.sequence_lengths) == levels
            and not f.ragged
        }
        label = next((beside[n] for n in _BOX_LABEL_NAMES if n in beside), None)
        if label is None and len(beside) == 1:
            label = next(iter(beside.values()))
        names: tuple[tuple[int, str], ...] = ()
        if label is not None and label.names is not None:
            names = tuple(sorted(label.names.names.items()))
        out.append(BoxFeature(spec.record_keys[0], label.record_keys[0] if label else None, names))
    return tuple(out)


def with_boxes(features: Mapping[str, Any], boxes: Sequence[BoxFeature]) -> dict[str, Any]:
    """``features`` (a record's, :class:`codec.example.Feature` by key) with the boxes of each
    of ``boxes`` added as :mod:`codec.detection` reads them: under :attr:`BoxFeature.prefix`,
    ``bbox/xmin``, ``bbox/ymin``, ``bbox/xmax``, ``bbox/ymax`` (from the flat
    ``[ymin, xmin, ymax, xmax]`` floats; a last incomplete box left out), ``class/label`` (the
    ClassLabel's values, as stored: a count that differs from the boxes' is then a problem of
    the record, as for any layout) and ``class/text`` (their names, when every label has
    one). A record without a box feature's values, or with values of another type, gets
    nothing for it. ``features`` itself is not changed."""
    from .example import Feature
    from .kinds import BYTES, FLOAT, INT64

    out = dict(features)
    for box in boxes:
        f = features.get(box.key)
        if f is None or f.type != FLOAT:
            continue
        values = list(f.values)
        n = len(values) // 4
        ymin, xmin, ymax, xmax = (values[k : 4 * n : 4] for k in range(4))
        p = box.prefix
        for side, vals in (("xmin", xmin), ("ymin", ymin), ("xmax", xmax), ("ymax", ymax)):
            out[f"{p}bbox/{side}"] = Feature(FLOAT, list(vals))
        lab = features.get(box.label) if box.label is not None else None
        if lab is None or lab.type != INT64:
            continue
        labels = [int(v) for v in lab.values]
        out[f"{p}class/label"] = Feature(INT64, labels)
        names = dict(box.names)
        if names and all(v in names for v in labels):
            out[f"{p}class/text"] = Feature(BYTES, [names[v].encode("utf-8") for v in labels])
    return out


# -- TFX ExampleGen splits ----------------------------------------------------------------------

_TFX_SPLIT = re.compile(r"^Split-(?P<name>.+)$")


def open_splits(path: str, *, anon: bool = False) -> list[Split] | None:
    """The splits of a TFX ExampleGen output folder (``Split-train/``, ``Split-eval/``, each
    holding ``data_tfrecord-*.gz`` shards), as :class:`Split` objects named ``train``,
    ``eval``…; None when ``path`` holds no ``Split-*`` folder. A TFX output declares no record
    counts: nothing is declared. ``path`` is a local folder or a URL (as :func:`open_tfds`)."""
    fs, path = _access(path, anon)
    return _open_splits(fs, path)


def _open_splits(fs: FolderAccess, path: str) -> list[Split] | None:
    from .expand import looks_like_tfrecord  # one rule for what a shard's name looks like

    if (fs.remote and not _has_path(path)) or not fs.is_dir(path):
        return None
    out = []
    for sub in _listing(fs, path):
        m = _TFX_SPLIT.match(sub)
        if not m:
            continue
        folder = fs.join(path, sub)
        files = [
            fs.join(folder, f)
            for f in _files(fs, folder)
            if not f.startswith(".") and (f.startswith("data_tfrecord") or looks_like_tfrecord(f))
        ]
        out.append(Split(m.group("name"), tuple(Shard(p, None, True) for p in files[:MAX_SHARDS])))
    return out or None


# -- either kind --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SplitFolder:
    """A folder whose splits are known: a TFDS dataset (``kind`` :data:`TFDS`, with its
    :attr:`tfds`) or a TFX ExampleGen output (:data:`TFX`)."""

    kind: str
    folder: str
    name: str
    splits: tuple[Split, ...]
    findings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    tfds: TfdsDataset | None = None

    def split(self, name: str) -> Split:
        """The split called ``name``; ``KeyError`` in words naming the splits there are."""
        return _split_named(self.splits, name, self.name)

    @property
    def files(self) -> list[str]:
        """Every split's files, split after split."""
        return [p for s in self.splits for p in s.files]


def open_split_folder(path: str, *, anon: bool = False) -> SplitFolder | None:
    """The TFDS dataset (:func:`open_tfds`) or TFX split folder (:func:`open_splits`) at
    ``path`` (a local folder or a URL, read without credentials with ``anon``); None when it
    is neither. :class:`TfdsChoiceError` when it holds several TFDS datasets or configs. A
    remote folder is looked at through one :class:`codec.folders.RemoteFolders`: each folder
    listed once for both kinds."""
    fs, path = _access(path, anon)
    ds = _open_tfds(fs, path)
    if ds is not None:
        label = f"{ds.name}{'/' + ds.config if ds.config else ''} {ds.version or ''}".strip()
        return SplitFolder(TFDS, ds.folder, label, ds.splits, ds.findings, ds.notes, ds)
    splits = _open_splits(fs, path)
    if splits is not None:
        return SplitFolder(TFX, path, fs.name(path) or path, tuple(splits))
    return None


_PATTERN = re.compile(r"[*?\[]|@\d+$")


def parse_split_spec(spec: str) -> tuple[str, str | None]:
    """``FOLDER:SPLIT`` → ``(FOLDER, SPLIT)``; anything else (a path that exists as given, no
    folder before the colon) → ``(spec, None)``.

    A URL is read by its form alone, asking the store nothing (:func:`url_split_spec`):
    whether its folder is a dataset is for :func:`open_split_folder` to say, and a caller
    that finds none there opens the spec as it is (an object whose name holds a colon)."""
    if is_url(spec):
        return url_split_spec(spec)
    if "://" in spec or os.path.exists(spec):
        return spec, None
    folder, colon, split = spec.rpartition(":")
    if colon and folder and _SPLIT_NAME.match(split) and os.path.isdir(folder):
        return folder, split
    return spec, None


def url_split_spec(url: str) -> tuple[str, str | None]:
    """``URL:SPLIT`` → ``(URL, SPLIT)`` by its form: a split name after the last colon, a
    URL naming a bucket or a folder before it (not a pattern, no query string, and for
    ``http(s)://`` not a host's port); anything else → ``(url, None)``."""
    folder, colon, split = url.rpartition(":")
    if not colon or not _SPLIT_NAME.match(split) or not is_url(folder):
        return url, None
    rest = folder.split("://", 1)[1].strip("/")
    if not rest or "?" in folder or "#" in folder or _PATTERN.search(folder):
        return url, None
    if protocol(folder) in ("http", "https") and "/" not in rest:
        return url, None  # https://host:8080
    return folder.rstrip("/"), split
