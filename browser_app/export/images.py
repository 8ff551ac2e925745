"""Pictures output: every picture of the records (:func:`codec.images.find_images`) as a file,
in a ``.zip`` or a folder. Encoded images keep their own bytes; raw-pixel and tensor images
are written as PNG.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from browser_app.errors import ExportError
from browser_app.export.base import (
    IMAGES,
    ExportOptions,
    ExportReport,
    UnconvertedPicture,
)
from browser_app.export.exporter import Exporter
from browser_app.export.plan import ExportSource
from browser_app.export.remote import object_kind
from browser_app.export.running import run
from browser_app.export.staging import PieceRun
from codec.errors import CodecError
from codec.images import ImageRef, find_images
from codec.locations import is_url, shown

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["ImagesExporter", "export_images", "image_file_name"]

_EXT = {"jpeg": "jpg", "tiff": "tif"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def image_file_name(position: int, ref: ImageRef) -> str:
    """``00000012_image-encoded_0.jpg`` for the first picture of feature ``image/encoded``
    of record 12 (``..._s3_0`` for step 3 of a feature list)."""
    feature = _UNSAFE.sub("-", ref.feature).strip("-") or "feature"
    step = f"_s{ref.step}" if ref.step is not None else ""
    ext = _EXT.get(ref.format, ref.format) if ref.source == "encoded" else "png"
    return f"{position:08d}_{feature}{step}_{ref.index}.{ext}"


def _check_zip(path: str, expected: int, shown: str) -> None:
    with zipfile.ZipFile(path) as z:
        if len(z.namelist()) != expected:
            raise ExportError(f"{shown}: the written zip file is incomplete")


def _check_folder(path: str, expected: int, shown: str) -> None:
    if len(os.listdir(path)) != expected:
        raise ExportError(f"{shown}: image names collided; nothing written")


def _picture_files(job: PieceRun) -> Iterator[tuple[str, bytes]]:
    """``(file name, bytes)`` of every picture of the planned records, counted into the
    report (pictures that cannot be converted into its ``unconverted``)."""
    report = job.report
    for pos, rec in job.ticking(job.plan.decoded(report)):
        for ref in find_images(rec):
            try:
                data = ref.data if ref.source == "encoded" else ref.display_bytes()
            except CodecError as exc:
                report.unconverted.append(UnconvertedPicture(pos, ref.feature, ref.index, str(exc)))
                continue
            report.images += 1
            yield image_file_name(pos, ref), data


class ImagesExporter(Exporter):
    """Picture files named by :func:`image_file_name`: a destination ending in ``.zip``
    gives a zip file, anything else a folder. A new folder appears complete or not at all;
    into an existing folder each file is written atomically. A URL that does not end in
    ``.zip`` is a folder prefix of the object store."""

    name = IMAGES
    label = "Pictures (a .zip, or a folder)"
    suffix = "-pictures.zip"
    extensions = (".zip",)

    def write(self, job: PieceRun) -> None:
        dst = self.dst
        job.guard([dst])
        files = _picture_files(job)
        if dst.lower().endswith(".zip"):
            out = job.reserve(dst, _check_zip)
            with zipfile.ZipFile(out.tmp, "w", zipfile.ZIP_STORED) as z:
                for name, data in files:
                    z.writestr(name, data)
            out.expected = job.report.images
        elif not is_url(dst) and os.path.isdir(dst):
            for name, data in files:
                with job.atomic_file(os.path.join(dst, name)) as f:
                    f.write(data)
                job.report.bytes += len(data)
        else:
            # A URL is a folder prefix: its pictures are uploaded together, each one moved
            # under it only once all of them are uploaded and checked.
            kind = object_kind(dst, anon=job.anon) if is_url(dst) else None
            if kind == "object" or (not is_url(dst) and os.path.lexists(dst)):
                raise ExportError(f"{shown(dst)}: exists and is not a folder")
            out = job.reserve_folder(dst, _check_folder)
            for name, data in files:
                with open(os.path.join(out.tmp, name), "wb") as f:
                    f.write(data)
            out.expected = job.report.images
        job.tick("write", job.total)
        job.report.outputs = [dst]


def export_images(
    source: ExportSource,
    dst: str | os.PathLike[str],
    **options: Unpack[ExportOptions],
) -> ExportReport:
    """Write every picture of the records as a file (see :class:`ImagesExporter`;
    ``options``: :class:`ExportOptions`). Pictures that cannot be converted are listed in the
    report's ``unconverted``."""
    return run(ImagesExporter(dst), source, **options)
