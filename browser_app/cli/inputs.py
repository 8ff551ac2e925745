"""What the reading commands share: the input arguments, opening the inputs, ``--records``.

Problems become :mod:`browser_app.errors` exceptions (an input that cannot be opened is an
:class:`~browser_app.errors.InputError`, a selection that does not parse a
:class:`~browser_app.errors.UsageError`); :func:`browser_app.cli.main.run` puts them into words.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TextIO

import codec
from browser_app.errors import InputError, SpecError, UsageError, message, os_error_message
from codec.errors import CodecError, LimitError, RemoteError
from codec.kinds import COMPRESSIONS
from codec.locations import is_url, shown
from codec.settings import MAX_INFLATE_ENV, parse_size
from codec.text_index import Listings, use_text_index
from codec.values import plural

if TYPE_CHECKING:
    from typing import TypeAlias

    from codec.names import ClassNames
    from codec.tfds import SplitFolder

    Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"

__all__ = [
    "COMPRESSION_CHOICES",
    "Handler",
    "InputFiles",
    "add_anon",
    "add_input",
    "add_max_inflate",
    "add_names",
    "anon",
    "expand_inputs",
    "max_inflate",
    "names_of",
    "open_inputs",
    "positive",
    "records_option",
    "split_folder",
    "with_split",
]

Handler = Callable[[argparse.Namespace, TextIO], int]
"""A command: ``handler(args, out) -> exit code``; it writes its report to ``out`` and raises
for anything that stops it."""

COMPRESSION_CHOICES = ("auto", *COMPRESSIONS)  # what --compression accepts when reading


def add_input(p: argparse.ArgumentParser, many: bool = True) -> None:
    """The input arguments every reading command shares: PATH... and --compression."""
    if many:
        p.add_argument(
            "paths",
            nargs="+",
            metavar="PATH",
            help="files, globs, shard patterns (train-*-of-00010), name@N, folders; or URLs"
            " of the same (s3://bucket/train-*, gs://bucket/x@16, a folder prefix, https://...);"
            " a TFDS dataset folder or a TFX ExampleGen output, one split of it as FOLDER:SPLIT",
        )
    p.add_argument(
        "--compression",
        choices=COMPRESSION_CHOICES,
        default="auto",
        help="default: detected from the first bytes",
    )


def positive(text: str) -> int:
    """An option's whole number of 1 or more (for argparse's ``type=``)."""
    try:
        n = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from exc
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def _size(text: str) -> int:
    try:
        n = parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    if n <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a size above 0")
    return n


def add_max_inflate(p: argparse.ArgumentParser, *, command: bool = True) -> None:
    """``--max-inflate SIZE``, on the main parser and (``command``) on every command, so it
    may come before the command or after it."""
    p.add_argument(
        "--max-inflate",
        type=_size,
        metavar="SIZE",
        default=argparse.SUPPRESS if command else None,
        help="how far a GZIP/ZLIB file may inflate (10G, 500M or bytes; default: 100 times"
        f" its size, within the cache disk's free space; also {MAX_INFLATE_ENV})",
    )


@contextlib.contextmanager
def max_inflate(args: argparse.Namespace) -> Iterator[None]:
    """While a command runs, the ``--max-inflate`` it was given is the limit of every file it
    opens, in this process, in the processes it starts and in the app ``view`` starts (the
    environment carries it)."""
    size = getattr(args, "max_inflate", None)
    if size is None:
        yield
        return
    before = os.environ.get(MAX_INFLATE_ENV)
    os.environ[MAX_INFLATE_ENV] = str(size)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(MAX_INFLATE_ENV, None)
        else:
            os.environ[MAX_INFLATE_ENV] = before


def add_anon(p: argparse.ArgumentParser, *, command: bool = True) -> None:
    """``--anon``, on the main parser and (``command``) on every command, so it may come
    before the command or after it."""
    p.add_argument(
        "--anon",
        action="store_true",
        default=argparse.SUPPRESS if command else False,
        help="read s3://, gs:// and az:// URLs without credentials (public buckets)",
    )


def anon(args: argparse.Namespace) -> bool:
    """Whether the command was given ``--anon``."""
    return bool(getattr(args, "anon", False))


def expand_inputs(paths: Sequence[str], *, anon: bool = False) -> list[str]:
    """The files named by ``paths`` (files, folders, globs, shard patterns, and URLs of the
    same); raises :class:`InputError` when one of them names nothing, or ``name@N`` too many
    shards. A remote listing that fails is a :class:`~codec.errors.RemoteError` (and a URL
    whose library is missing a :class:`~codec.errors.MissingExtraError`), raised as is."""
    found = [split_folder(p, anon=anon) for p in paths]
    if not any(found):
        return _expand(paths, anon)
    out: list[str] = []
    skipped: list[tuple[str, str]] = []
    for p, f in zip(paths, found):
        if f is None:
            more = _expand([p], anon)
            skipped.extend(getattr(more, "skipped", ()))
            out.extend(more)
            continue
        folder, split = f
        for note in folder.notes:
            sys.stderr.write(f"tfrecord-browser: {folder.folder}: {note}\n")
        out.extend(_split_files(folder, split))
    files = list(dict.fromkeys(out))  # a file named twice is read once, as expand_paths has it
    try:
        from codec.expand import Expanded  # type: ignore[attr-defined]
    except ImportError:
        return files
    return Expanded(files, skipped)  # what a folder or a ** glob left out, kept


def _expand(paths: Sequence[str], anon: bool) -> list[str]:
    try:
        return codec.expand_paths(list(paths), anon=anon)
    except RemoteError:
        raise
    except (FileNotFoundError, LimitError) as exc:
        raise InputError(message(exc)) from exc


def split_folder(spec: str, *, anon: bool = False) -> tuple[SplitFolder, str | None] | None:
    """The TFDS dataset or TFX split folder a spec names (``FOLDER`` or ``FOLDER:SPLIT``: see
    :func:`codec.tfds.parse_split_spec`; a local folder or a URL, read without credentials
    with ``anon``) and the split asked for; None for any other spec (a file, a glob, a folder
    of records that describes no splits, an object whose name holds a colon). A folder holding
    several TFDS datasets or configs (and no records of its own), or a split asked of a folder
    that has none, is an :class:`InputError` saying what to open instead. A URL that names a
    pattern or a TFRecord-named object is not asked about (no request)."""
    # Imported here: most inputs are files, and a file needs none of the dataset metadata.
    from codec.tfds import TfdsChoiceError, open_split_folder, parse_split_spec

    folder, split = parse_split_spec(spec)
    if is_url(folder):
        if split is None and not _may_be_folder(folder):
            return None
    elif not os.path.isdir(folder):
        return None
    try:
        found = open_split_folder(folder, anon=anon)
    except TfdsChoiceError as exc:
        if split is None and _holds_records(folder, anon):
            return None  # a folder of records that also holds datasets further down
        raise InputError(str(exc)) from exc
    except (OSError, CodecError):
        if is_url(folder) and split is None:
            # Whether it is a dataset folder cannot be told (the network, a refusal): it is
            # opened as given, and that says what is wrong.
            return None
        raise
    if found is None:
        if split is not None and not (is_url(spec) and _is_object(spec, anon)):
            raise InputError(
                f"{shown(folder)} is not a TFDS dataset folder or a TFX ExampleGen output:"
                f" it has no split {split!r}"
            )
        return None
    if not found.splits:
        return None
    return found, split


def _may_be_folder(url: str) -> bool:
    """Whether the URL ``url`` may name a folder (:func:`browser_app.paths.may_be_folder`)."""
    from browser_app.paths import may_be_folder

    return may_be_folder(url)


def _is_object(url: str, anon: bool) -> bool:
    """Whether the URL ``url`` names an object (one listing of its folder)."""
    from codec.folders import folder_access

    return folder_access(url, anon=anon).is_file(url)


def _holds_records(folder: str, anon: bool = False) -> bool:
    """Whether ``folder`` (a path or a URL) holds TFRecord-named files of its own."""
    from codec.folders import folder_access

    try:
        names = folder_access(folder, anon=anon).files(folder, 100_000)
    except (OSError, RemoteError):
        return False
    return any(codec.looks_like_tfrecord(n) for n in names)


def _split_files(folder: SplitFolder, split: str | None) -> list[str]:
    """The files of ``split`` of ``folder`` (every split's, split after split, for None)."""
    try:
        splits = [folder.split(split)] if split is not None else list(folder.splits)
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from exc
    files = [p for s in splits for p in s.files]
    if not files:
        which = f"split {split!r} of {folder.name}" if split is not None else folder.name
        declared = sum(len(s.shards) for s in splits)
        raise InputError(
            f"{which} ({shown(folder.folder)}) has no shard file"
            + (f" ({plural(declared, 'declared shard')}, all missing)" if declared else "")
        )
    return files


def with_split(paths: Sequence[str], split: str | None) -> list[str]:
    """``paths`` with ``--split NAME`` applied: each a dataset folder, asked for that split
    (``FOLDER:NAME``). A path that is no folder, or names another split already, is a
    :class:`UsageError`."""
    from codec.tfds import parse_split_spec

    if split is None:
        return list(paths)
    out = []
    for p in paths:
        folder, named = parse_split_spec(p)
        if named is not None and named != split:
            raise UsageError(f"--split {split}: {p} names the split {named!r} already")
        if not (_may_be_folder(folder) if is_url(folder) else os.path.isdir(folder)):
            raise UsageError(f"--split {split}: {p} is not a dataset folder")
        out.append(f"{folder}:{split}")
    return out


# -- class names -----------------------------------------------------------------------------


def add_names(p: argparse.ArgumentParser) -> None:
    """``--names FEATURE=FILE`` (repeatable): the class names of a feature's labels."""
    p.add_argument(
        "--names",
        action="append",
        default=[],
        metavar="FEATURE=FILE",
        help="class names of FEATURE's labels (repeatable): a TFDS labels file, a"
        " label_map.pbtxt, YouTube-8M's vocabulary.csv, AudioSet's class_labels_indices.csv,"
        " a CSV with index and name columns, or one name per line (a file or a URL);"
        " <feature>.labels.txt alone names its feature. Names files beside the data"
        " (<feature>.labels.txt, label_map.pbtxt, vocabulary.csv, class_labels_indices.csv)"
        " are read without asking; these win",
    )


def names_of(
    args: argparse.Namespace, paths: Sequence[str], specs: Sequence[str] = ()
) -> dict[str, ClassNames]:
    """The class names of the inputs, by record key: those of a TFDS dataset folder among
    ``specs`` (its ``features.json`` and labels files), those lying beside the files
    ``paths`` by convention (:func:`codec.names.names_beside`), then every ``--names`` given
    (which win). A names file beside the data that cannot be used (too large, not a names
    file, a CSV without index and name columns) is named on stderr and left out: the data
    is read all the same. One given by ``--names`` that cannot be used stops the command
    (:class:`UsageError` for a spec that does not parse, :class:`InputError` for the file)."""
    from codec.names import names_beside

    found: dict[str, ClassNames] = {}
    for spec in specs:
        try:
            got = split_folder(spec, anon=anon(args))
        except InputError:
            continue  # the command says so when it opens the inputs
        tfds = got[0].tfds if got is not None else None
        if tfds is not None:
            for key, cn in tfds.class_names().items():
                found.setdefault(key, cn)
    problems: list[str] = []
    for key, cn in names_beside([p for p in paths if not is_url(p)], problems=problems).items():
        found.setdefault(key, cn)
    for problem in problems:
        sys.stderr.write(f"tfrecord-browser: names beside the data left out: {problem}\n")
    for spec in getattr(args, "names", None) or []:
        feature, cn = _given_names(spec, anon(args))
        found[feature] = cn
    return found


def _given_names(spec: str, anon: bool) -> tuple[str, ClassNames]:
    """``--names FEATURE=FILE`` read: the feature and its names."""
    from codec.names import MAX_NAMES_BYTES, parse_names, parse_names_spec, read_names

    try:
        feature, path = parse_names_spec(spec)
    except ValueError as exc:
        raise UsageError(f"--names {exc}") from exc
    name = shown(path)
    try:
        if not is_url(path):
            return feature, read_names(path)
        # Imported here: the export's remote reading, for a names file given as a URL.
        from browser_app.export.remote import open_input

        with open_input(path, anon=anon) as f:
            data = f.read(MAX_NAMES_BYTES + 1)
        return feature, parse_names(data, source=name)
    except RemoteError:
        raise
    except OSError as exc:
        raise InputError(os_error_message(exc, name), path=name) from exc
    except codec.DecodeError as exc:
        text = str(exc)
        raise InputError(text if text.startswith(name) else f"{name}: {text}", path=name) from exc


class InputFiles(list[codec.TFRecordFile]):
    """The open inputs of a command, in order; ``text_indexes`` names, by file (as shown),
    the text index beside the data that was used instead of scanning it."""

    def __init__(self) -> None:
        super().__init__()
        self.text_indexes: dict[str, str] = {}

    def close(self) -> None:
        for f in self:
            f.close()


def open_inputs(
    paths: Sequence[str], compression: str, *, anon: bool = False, text_index: bool = True
) -> InputFiles:
    """Every file named by ``paths``, open; raises :class:`InputError` naming the first one
    that cannot be opened (the ones opened before it are closed again). A remote object that
    cannot be read raises its :class:`~codec.errors.RemoteError`.

    With ``text_index`` (the default), a file whose index is not known yet uses the text index
    beside it (``<name>.idx``, DALI's and the ``tfrecord`` package's) when it checks out
    (:func:`codec.text_index.use_text_index`): one listing per remote folder."""
    files = InputFiles()
    listings: Listings = {}
    for p in expand_inputs(paths, anon=anon):
        try:
            f = codec.TFRecordFile(p, compression=compression, anon=anon)
        except RemoteError:
            files.close()
            raise
        except OSError as exc:
            files.close()
            raise InputError(os_error_message(exc), path=exc.filename or shown(p)) from exc
        except LimitError as exc:  # it would inflate past the limit: not opened
            files.close()
            raise InputError(str(exc), path=shown(p)) from exc
        files.append(f)
        if text_index:
            used = use_text_index(f, anon=anon, listings=listings)
            if used is not None:
                files.text_indexes[f.path] = used
    return files


def records_option(spec: str, total: int | codec.TFRecordDataset) -> list[int]:
    """The record numbers a ``--records`` selection picks out of ``total`` (a count, or a
    dataset: counted only when the selection needs it, so ``--records 0:10`` of a large
    remote object reads its first records, not its whole index); raises
    :class:`UsageError` naming the option when it does not parse."""
    # Imported here: the selection module brings numpy and the message decoder, which a
    # command without ``--records`` never needs.
    from browser_app.selection import parse_record_spec

    try:
        if isinstance(total, codec.TFRecordDataset):
            return parse_record_spec(spec, _Count(total))
        return parse_record_spec(spec, total)
    except SpecError as exc:
        raise UsageError(f"--records: {exc}") from exc


class _Count:
    """A dataset's record count, asked for only when needed; ``at_least(i)``: whether record
    ``i`` exists, indexing no further than it."""

    def __init__(self, ds: codec.TFRecordDataset) -> None:
        self.ds = ds

    def __call__(self) -> int:
        return len(self.ds)

    def at_least(self, i: int) -> bool:
        try:
            self.ds.locate(i)
        except IndexError:
            return False
        return True
