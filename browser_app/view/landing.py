"""A jump into the bytes, in words: the numbers of records found by searching for a record
boundary (``≈ 512,000`` until the index reaches them, then exact, or "inside a record" when
the index finds that no record of the file starts there), and the tiles and table rows of a
page of them.

The records themselves come from :meth:`codec.TFRecordDataset.land`; their pictures and
features from the same code as any page (:func:`~browser_app.view.table.page_view`,
:func:`~browser_app.view.gallery.gallery_items`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .gallery import GalleryItem
from .table import Cell, PageView

__all__ = [
    "INSIDE",
    "LandedNumber",
    "landed_caption",
    "landed_rows",
    "landed_tiles",
    "percent_text",
]

INSIDE = "inside a record"


@dataclass(frozen=True)
class LandedNumber:
    """The number of a landed record: ``exact`` once the index reaches it, ``estimate``
    until then; ``inside`` when the index reached its byte and no record of the file starts
    there (the boundary found was inside a record that holds TFRecord data itself)."""

    exact: int | None
    estimate: int | None
    inside: bool = False

    @property
    def text(self) -> str:
        """``512,000``, ``≈ 512,000``, or ``inside a record``."""
        if self.inside:
            return INSIDE
        if self.exact is not None:
            return f"{self.exact:,}"
        if self.estimate is not None:
            return f"≈ {self.estimate:,}"
        return "≈ ?"


def percent_text(percent: float) -> str:
    """``50 %``, ``12.5 %``."""
    return f"{percent:g} %"


def landed_caption(percent: float, numbers: Sequence[LandedNumber], where: str) -> str:
    """What the page of landed records is, in words (plain text: ``where`` names the file
    and byte, and is escaped by the caller)."""
    estimates = sum(1 for n in numbers if n.exact is None and not n.inside)
    inside = sum(1 for n in numbers if n.inside)
    text = (
        f"Records found at {percent_text(percent)} of the bytes ({where}) by searching for a"
        " record boundary: the length CRC and the data CRC of each check."
    )
    if estimates:
        text += (
            " Their numbers (≈) are estimates from the average record size until the index"
            " reaches them; the index grows in the background while a page is open."
        )
    elif numbers:
        text += " The index has reached them: their numbers are exact."
    if inside:
        text += (
            f" {inside:,} of them {'is' if inside == 1 else 'are'} not records of the file:"
            " the index found that no record starts there (a record holding TFRecord data of"
            " its own)."
        )
    return text


def landed_rows(view: PageView, numbers: Sequence[LandedNumber]) -> list[dict[str, Cell]]:
    """The table rows of landed records: those of ``view`` with ``#`` written as their
    numbers' text."""
    return [{**row, "#": n.text} for row, n in zip(view.rows, numbers)]


def landed_tiles(
    items: Sequence[GalleryItem], numbers: Sequence[LandedNumber]
) -> list[GalleryItem]:
    """Gallery tiles of landed records (made with their place on the page as ``index``),
    captioned with their numbers' text instead, and opening no record."""
    out = []
    for item, n in zip(items, numbers):
        head = f"#{item.index}"
        caption = item.caption
        caption = n.text + caption[len(head) :] if caption.startswith(head) else caption
        out.append(replace(item, caption=caption, index=n.exact))
    return out
