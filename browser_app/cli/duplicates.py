"""``tfrecord-browser duplicates SRC... [--across SRC2...] [--threshold N] [--json]``: the
same picture more than once — in one dataset, or leaked across datasets or splits.

Each record's main picture (:func:`codec.roles.main_picture`, never the first in byte order)
is fingerprinted: a digest of its stored bytes, a digest of its decoded pixels, its pHash and
dHash (:mod:`codec.perceptual`, equal to the ``imagehash`` package's). Records are grouped
when their bytes are identical, their pixels equal, or both hashes are within ``--threshold``
bits (a mirrored copy too, unless ``--no-mirror``); with ``--embedding FEATURE`` the vectors
stored in that float feature are compared by cosine distance instead (``--cosine``). The work
runs as a dataset job (:mod:`codec.jobs.duplicates`) on the executor the options name; the
answer is the same on all of them.

Sources: each SRC is a dataset (files, globs, folders, URLs); a TFDS dataset folder or a TFX
output given without a split is searched split by split (each split a source, named by it),
``FOLDER:SPLIT`` is that split. With ``--across``, only the groups holding records of both
sides are reported: the pictures of SRC that are also in SRC2 (train against eval).

``--json`` prints one object (:meth:`codec.jobs.duplicates.DuplicatesResult.to_json`):
``search``, ``sources``, ``records`` (left out and why), ``groups`` (each member's source,
record number in it, file and index there, relation to the group's first record and distance).

Exit codes as for every command: 0 when every record read was intact, 1 when damage was found
(damaged records, files that could not be read: left out and said), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from browser_app.cli.inputs import InputFiles, add_input, anon, open_inputs, split_folder
from browser_app.cli.jobs import add_job_options, executor_of, run_job
from browser_app.errors import EXIT_DAMAGED, EXIT_OK, UsageError
from browser_app.view.duplicates import duplicates_report
from codec import duplicates as dup
from codec.errors import CodecError
from codec.jobs.duplicates import DuplicatesJob, DuplicatesResult, source_tasks
from codec.locations import shown

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = ["cmd_duplicates", "embedding_length", "register", "sources_of"]

LOOK_AT = 200  # first records read to learn an embedding's length


def _threshold(text: str) -> int:
    try:
        n = int(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of bits") from exc
    if not 0 <= n <= dup.MAX_THRESHOLD:
        raise argparse.ArgumentTypeError(f"must be from 0 to {dup.MAX_THRESHOLD} bits")
    return n


def _cosine(text: str) -> float:
    try:
        x = float(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from exc
    if not 0 <= x <= 2:
        raise argparse.ArgumentTypeError("must be from 0 to 2")
    return x


def register(sub: Subcommands) -> None:
    """Add ``duplicates`` to the command line."""
    p = sub.add_parser(
        "duplicates",
        help="find the same picture more than once, within a dataset or across splits",
        description="Group records whose main pictures are the same: identical bytes, equal"
        " decoded pixels, or near by perceptual hashes (pHash and dHash, Hamming distance;"
        " mirrored copies too), or by an embedding feature's cosine distance. A TFDS dataset"
        " folder without a split is searched split by split; --across SRC2 reports only the"
        " pictures found on both sides (leakage).",
    )
    add_input(p)
    p.add_argument(
        "--across",
        action="append",
        metavar="SRC2",
        help="the other side of a leakage search (repeatable: files, globs, folders,"
        " FOLDER:SPLIT): only groups holding records of SRC and of SRC2 are reported",
    )
    p.add_argument(
        "--threshold",
        type=_threshold,
        default=dup.DEFAULT_THRESHOLD,
        metavar="N",
        help="the most bits in which the pHash, and the dHash, of two near copies may differ"
        f" (default {dup.DEFAULT_THRESHOLD}, at most {dup.MAX_THRESHOLD}; 0: equal hashes)",
    )
    p.add_argument(
        "--no-mirror",
        action="store_true",
        help="do not look for mirrored copies (flipped left to right)",
    )
    p.add_argument(
        "--embedding",
        metavar="FEATURE",
        help="compare the float vectors of this feature (one fixed length) by cosine distance"
        " instead of the pictures' hashes",
    )
    p.add_argument(
        "--cosine",
        type=_cosine,
        default=None,
        metavar="D",
        help=f"with --embedding, the largest cosine distance of near copies (default"
        f" {dup.DEFAULT_COSINE:g})",
    )
    p.add_argument("--json", action="store_true", help="print the groups as one JSON object")
    add_job_options(p)
    p.set_defaults(handler=cmd_duplicates)


def sources_of(
    specs: Sequence[str], compression: str, *, across: bool = False, anon: bool = False
) -> list[tuple[str, InputFiles, bool]]:
    """Each spec opened as one source, or one per split for a dataset folder given without a
    split: ``(label, files, across)``. Raises :class:`~browser_app.errors.InputError` for a
    spec that names nothing."""
    out: list[tuple[str, InputFiles, bool]] = []
    try:
        for spec in specs:
            found = split_folder(spec, anon=anon)
            if found is None:
                out.append((shown(spec), open_inputs([spec], compression, anon=anon), across))
                continue
            folder, split = found
            names = [split] if split is not None else [s.name for s in folder.splits]
            for name in names:
                files = open_inputs([f"{folder.folder}:{name}"], compression, anon=anon)
                out.append((name, files, across))
    except BaseException:
        for _, files, _ in out:
            files.close()
        raise
    return out


def embedding_length(sources: Sequence[tuple[str, InputFiles, bool]], feature: str) -> int:
    """The length of ``feature``'s float list in the first records that have it."""
    from codec.example import decode

    seen = 0
    for _, files, _ in sources:
        for f in files:
            for info in f.records(0, LOOK_AT):
                if info.data is None:
                    continue
                seen += 1
                try:
                    feat = decode(info.data).features.get(feature)
                except CodecError:  # an odd record says nothing of the length
                    continue
                if feat is not None and feat.type == "float" and feat.values:
                    return len(feat.values)
                if seen >= LOOK_AT:
                    break
    raise UsageError(
        f"--embedding {feature}: no record among the first read has a float list {feature!r}"
    )


def cmd_duplicates(args: argparse.Namespace, out: TextIO) -> int:
    """Find the groups and print them (or JSON)."""
    if args.cosine is not None and not args.embedding:
        raise UsageError("--cosine is the distance of --embedding vectors: give --embedding too")
    named = sources_of(args.paths, args.compression, anon=anon(args))
    try:
        named += sources_of(args.across or [], args.compression, across=True, anon=anon(args))
        embedding = None
        if args.embedding:
            embedding = (args.embedding, embedding_length(named, args.embedding))
        sources, tasks = source_tasks(
            named, executor=executor_of(args), compression=args.compression
        )
    finally:
        for _, files, _ in named:
            files.close()
    job = DuplicatesJob(
        sources,
        threshold=args.threshold,
        mirror=not args.no_mirror,
        embedding=embedding,
        cosine=(args.cosine if args.cosine is not None else dup.DEFAULT_COSINE)
        if embedding
        else None,
        compression=args.compression,
    )
    result: DuplicatesResult = run_job(job, tasks, args)
    if args.json:
        json.dump(result.to_json(), out, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(duplicates_report(result))
    damaged = bool(result.unreadable) or bool((result.fingerprints.status == dup.DAMAGED).any())
    return EXIT_DAMAGED if damaged else EXIT_OK
