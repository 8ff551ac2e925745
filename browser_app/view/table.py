"""Tables: the records page's table of a page of slots (with the pending edits' status in
place), the filter's matches, a record's features, and a SequenceExample's steps.

A page comes as :class:`codec.Slot` values, or as :class:`~browser_app.edits.model.EditedSlot`
values when edits are pending: an edited record shows its effective values and how many
changes it has, a deleted one is marked, an added one sits after the record it was inserted
after, with no number or offset of its own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import codec
from browser_app.edits.model import (
    ADDED,
    DELETED,
    EDITED,
    FEATURE_LISTS,
    FEATURES,
    FLAGGED,
    PASSED,
    EditedSlot,
    Mark,
    RecordRef,
)
from codec import example as ex
from codec.dataset import DAMAGED, INTACT, RECOVERED, SKIPPED
from codec.kinds import FLOAT, INT64, NONE, RAW, SEQUENCE_EXAMPLE
from codec.layers import LayerOptions
from codec.values import format_bytes

from .pictures import BROKEN_PICTURE, data_url, thumbnail
from .values import (
    PREVIEW_VALUES,
    Names,
    named_preview,
    named_value,
    plural,
    scalar_text,
    short_text,
    text_preview,
    values_preview,
)

__all__ = [
    "MAX_COLUMNS",
    "Cell",
    "FeatureRow",
    "PageItem",
    "PageView",
    "as_edited_slot",
    "feature_rows",
    "match_rows",
    "page_view",
    "review_cells",
    "review_text",
    "sequence_table",
    "status_text",
]

MAX_COLUMNS = 40  # feature columns in the page table
MATCH_COLUMNS = 8  # feature columns in the table of a filter's matches
REVIEW_COMMENT_SHOWN = 80  # characters of a review comment in the table's review cell
UNREVIEWED = "· unreviewed"

Cell = int | float | str | None
"""What a table cell holds: numbers stay numbers, everything else is text."""

PageItem = codec.Slot | EditedSlot
"""One place on a page: a source slot, or one with the pending edits applied."""


def as_edited_slot(item: PageItem) -> EditedSlot:
    """``item`` as an :class:`EditedSlot` (a plain slot is an untouched one)."""
    return item if isinstance(item, EditedSlot) else EditedSlot(item, "", item.index)


@dataclass
class PageView:
    """The table of one page: ``columns`` as ``(name, kind)`` with kind ``int``, ``float``,
    ``text``, ``image`` or ``status``; one dict per row in ``rows``; per row, the record number
    in ``records`` (None for a skipped region; an added record's anchor) and in ``status`` the
    slot's status (``intact``, ``recovered``, ``damaged``, ``skipped``) or its edit
    (``edited``, ``deleted``, ``added``)."""

    columns: list[tuple[str, str]] = field(default_factory=list)
    rows: list[dict[str, Cell]] = field(default_factory=list)
    records: list[int | None] = field(default_factory=list)
    status: list[str] = field(default_factory=list)
    kinds: dict[str, int] = field(default_factory=dict)
    has_images: bool = False
    damaged: int = 0
    recovered: int = 0
    skipped: int = 0
    seconds: float = 0.0


def status_text(item: PageItem) -> str:
    """The status cell of a row: ``✓ intact``, ``◌ recovered…``, ``✗ damaged…``,
    ``⚠ … skipped (…)``, or the pending edit (``✎ edited (2 changes)``,
    ``– deleted (pending)``, ``+ new record n1``)."""
    e = as_edited_slot(item)
    if e.edit == DELETED:
        return "– deleted (pending)"
    if e.edit == EDITED:
        return f"✎ edited ({plural(e.changes, 'change')})"
    if e.edit == ADDED:
        return f"+ new record {e.ref}"
    slot = e.slot
    if slot.status == INTACT:
        return "✓ intact"
    if slot.status == RECOVERED:
        return "◌ recovered (found after damage)"
    if slot.status == DAMAGED:
        return "✗ damaged: data CRC fails"
    p = slot.problem
    kind = p.kind.replace("_", " ") if p else "skipped"
    return f"⚠ {format_bytes(slot.length)} skipped ({kind})"


def review_text(mark: Mark | None) -> str:
    """The review cell of a row: ``✓ passed``, ``⚑ flagged``, ``· unreviewed``, with the
    comment after a colon (cut to :data:`REVIEW_COMMENT_SHOWN` characters)."""
    if mark is None:
        return UNREVIEWED
    head = {PASSED: "✓ passed", FLAGGED: "⚑ flagged"}.get(mark.status, mark.status)
    comment = " ".join(mark.comment.split())
    return f"{head}: {short_text(comment, REVIEW_COMMENT_SHOWN)}" if comment else head


def review_cells(
    records: Sequence[int | None], status: Sequence[str], marks: Mapping[RecordRef, Mark]
) -> list[str | None]:
    """The review column of a page's table: one cell per row (``records`` and ``status`` as a
    :class:`PageView` has them); rows without a review of their own (skipped regions, new
    records placed after a record) have none."""
    return [
        None if n is None or kind in (SKIPPED, ADDED) else review_text(marks.get(n))
        for n, kind in zip(records, status)
    ]


def _decode(slot: codec.Slot) -> ex.Record | None:
    if slot.payload is None:
        return None
    try:
        return ex.decode(slot.payload, "auto")
    except codec.CodecError:  # pragma: no cover - auto decoding does not raise
        return None


def _columns(
    view: PageView, decoded: Sequence[ex.Record | None], named: Collection[str] = ()
) -> tuple[list[str], set[str]]:
    """Count the kinds and pick the feature columns: in first-seen order (at most
    :data:`MAX_COLUMNS`), with the names shown as text rather than as numbers (a column is
    numeric when every value present is a single number of one type, and has no class names:
    the features ``named`` are text, ``2 (cat)``)."""
    order: dict[str, None] = {}
    numeric: dict[str, str] = {}
    lists: set[str] = set()
    for rec in decoded:
        if rec is None:
            continue
        view.kinds[rec.kind] = view.kinds.get(rec.kind, 0) + 1
        for name, f in rec.features.items():
            order.setdefault(name, None)
            if len(f.values) == 1 and f.type in (INT64, FLOAT):
                prev = numeric.get(name)
                if prev is None or prev == f.type:
                    numeric[name] = f.type
                else:
                    lists.add(name)
            else:
                lists.add(name)
        for name in rec.feature_lists:
            order.setdefault("⋮" + name, None)
            lists.add("⋮" + name)
    names = list(order)[:MAX_COLUMNS]
    mixed = len(view.kinds) > 1
    cols: list[tuple[str, str]] = [("#", "int"), ("status", "status")]
    if view.has_images:
        cols.append(("picture", "image"))
    if mixed or RAW in view.kinds:
        cols.append(("kind", "text"))
    cols += [("offset", "int"), ("bytes", "int")]
    if RAW in view.kinds:
        cols.append(("preview", "text"))
    text = {name for name in names if name in lists or name not in numeric or name in named}
    for name in names:
        if name in text:
            cols.append((name, "text"))
        else:
            cols.append((name, "int" if numeric[name] == INT64 else "float"))
    view.columns = cols
    return names, text


def _thumbnail_url(
    view: PageView,
    rec: ex.Record | None,
    size: int,
    boxes: bool,
    normalized: bool | None,
    options: LayerOptions | None = None,
) -> str | None:
    if rec is None:
        return None
    try:
        t = thumbnail(rec, size, boxes, normalized=normalized, options=options)
    except codec.ImageError:
        view.has_images = True
        return BROKEN_PICTURE
    if t is None:
        return None
    view.has_images = True
    return data_url(t.data, t.mime)


def _feature_cells(
    rec: ex.Record, names: Sequence[str], text: set[str], classes: Names | None = None
) -> dict[str, Cell]:
    row: dict[str, Cell] = {"kind": rec.kind.replace("_", " ")}
    if rec.kind == RAW:
        row["preview"] = short_text(text_preview(rec.raw or b"", 80), 60)
    for name in names:
        if name.startswith("⋮"):
            steps = rec.feature_lists.get(name[1:])
            row[name] = None if steps is None else f"{plural(len(steps), 'step')}"
            continue
        feat = rec.features.get(name)
        if feat is None:
            row[name] = None
        elif name in text:
            known = classes.get(name) if classes and feat.type == INT64 else None
            if len(feat.values) == 1:
                row[name] = (
                    named_value(feat.values[0], known)
                    if known is not None
                    else scalar_text(feat.type, feat.values[0])
                )
            else:
                row[name] = f"[{len(feat.values)}] {named_preview(feat, known, 4, 24)}"
        else:
            v = feat.values[0]
            row[name] = v if feat.type == INT64 else (None if math.isnan(v) else v)
    return row


def page_view(
    items: Sequence[PageItem],
    thumb_size: int = 72,
    boxes: bool = True,
    normalized: bool | None = None,
    options: LayerOptions | None = None,
    names: Names | None = None,
) -> PageView:
    """One row per slot: record number, status, offset, size, kind, a thumbnail (data URL)
    when a picture exists (boxes read as the dataset's ``normalized`` decision), then a
    column per feature: the value for single values (numbers stay numbers), ``[n] a, b, …``
    for lists; an int64 feature with class names in ``names`` as ``2 (cat)``, a label its
    names file does not name as the number.

    Edited items show their status text (:func:`status_text`) and their edit in
    ``view.status``; rows of added records have no ``#`` and no ``offset`` and carry their
    anchor's number in ``view.records`` (selecting one opens the anchor)."""
    t0 = time.perf_counter()
    classes = names
    view = PageView()
    edited = [as_edited_slot(item) for item in items]
    decoded = [_decode(e.slot) for e in edited]
    thumbs = [_thumbnail_url(view, rec, thumb_size, boxes, normalized, options) for rec in decoded]
    columns, text = _columns(view, decoded, classes or {})
    for e, rec, thumb in zip(edited, decoded, thumbs):
        s = e.slot
        added = e.edit == ADDED
        row: dict[str, Cell] = {
            "#": None if added else s.index,
            "status": status_text(e),
            "offset": None if added else s.offset,
            "bytes": s.length,
        }
        if view.has_images:
            row["picture"] = thumb
        if rec is not None:
            row.update(_feature_cells(rec, columns, text, classes))
        view.rows.append(row)
        view.records.append(s.index)
        view.status.append(e.edit or s.status)
        if s.status == DAMAGED:
            view.damaged += 1
        elif s.status == RECOVERED:
            view.recovered += 1
        elif s.status == SKIPPED:
            view.skipped += 1
    view.seconds = time.perf_counter() - t0
    return view


def match_rows(
    ds: codec.TFRecordDataset,
    records: Sequence[int],
    max_columns: int = MATCH_COLUMNS,
    names: Names | None = None,
) -> list[dict[str, Cell]]:
    """One row per record of ``records`` (a filter's matches): its number, its kind (or why it
    cannot be read) and a preview of its first ``max_columns`` features (labels named by
    ``names``)."""
    classes = names or {}
    rows: list[dict[str, Cell]] = []
    for n in records:
        row: dict[str, Cell] = {"#": n}
        try:
            rec = ex.decode(ds.read(n))
        except codec.CodecError as exc:
            row["status"] = f"damaged: {exc}"
            rows.append(row)
            continue
        row["status"] = rec.kind
        for name, feat in list(rec.features.items())[:max_columns]:
            row[name] = named_preview(feat, classes.get(name))
        rows.append(row)
    return rows


# -- record detail -----------------------------------------------------------------------


@dataclass(frozen=True)
class FeatureRow:
    """One row of a record's feature table: a feature (``section`` ``features`` or
    ``context``) with its type, number of values and their preview, or a feature list
    (``section`` ``feature_lists``) with its types, number of steps and totals."""

    name: str
    type: str
    length: int
    preview: str
    section: str = FEATURES  # FEATURES, "context" (a SequenceExample's) or FEATURE_LISTS


def feature_rows(record: ex.Record, names: Names | None = None) -> list[FeatureRow]:
    """One row per feature (and per feature list) of a record; labels named by ``names``
    (``2 (cat)``)."""
    section = "context" if record.kind == SEQUENCE_EXAMPLE else FEATURES
    classes = names or {}
    rows = [
        FeatureRow(
            name,
            f.type,
            len(f.values),
            named_preview(f, classes.get(name), PREVIEW_VALUES),
            section,
        )
        for name, f in record.features.items()
    ]
    for name, steps in record.feature_lists.items():
        types = sorted({f.type for f in steps}) or [NONE]
        total = sum(len(f.values) for f in steps)
        rows.append(
            FeatureRow(
                name,
                "/".join(types),
                len(steps),
                f"{plural(len(steps), 'step')}, {plural(total, 'value')}",
                FEATURE_LISTS,
            )
        )
    return rows


def sequence_table(
    record: ex.Record, max_steps: int = 1000
) -> tuple[list[str], list[dict[str, Cell]]]:
    """A SequenceExample's feature lists as a steps × feature-lists table."""
    names = list(record.feature_lists)
    n = max((len(v) for v in record.feature_lists.values()), default=0)
    rows = []
    for step in range(min(n, max_steps)):
        row: dict[str, Cell] = {"step": step}
        for name in names:
            steps = record.feature_lists[name]
            if step < len(steps):
                f = steps[step]
                row[name] = (
                    scalar_text(f.type, f.values[0], 40)
                    if len(f.values) == 1
                    else f"[{len(f.values)}] {values_preview(f, 4, 20)}"
                )
            else:
                row[name] = None
        rows.append(row)
    return ["step", *names], rows
