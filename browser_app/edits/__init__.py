"""Pending edits and review marks (being moved here from browser_app.journal)."""

from browser_app.edits.model import ADDED, DELETED, EDITED, EditedSlot, EditStatus
from browser_app.journal import *  # noqa: F403 - temporary, until the journal moves here
from browser_app.journal import __all__ as _journal_all

__all__ = ["ADDED", "DELETED", "EDITED", "EditStatus", "EditedSlot", *_journal_all]
