"""Pending edits and review marks: the journal file, the change set it feeds, the edited
dataset, value parsing and conversion, the edit commands, and review reports.

:class:`Journal` is the one object the rest of the app uses; the modules below it are its
parts:

- :mod:`~browser_app.edits.model` records, changes, marks and the vocabularies of edits
- :mod:`~browser_app.edits.values` typed text to checked values, conversion, JSON forms
- :mod:`~browser_app.edits.journal_file` the JSON Lines file: lock, append, fsync, identity
- :mod:`~browser_app.edits.changeset` the in-memory state: undo/redo, added, deleted, marks
- :mod:`~browser_app.edits.edited` the edited dataset: records, order, pages of slots
- :mod:`~browser_app.edits.cells` a cell of the record editor's table read back: placeholders, bytes
- :mod:`~browser_app.edits.commands` the edit commands, each checking its input
- :mod:`~browser_app.edits.journal` the :class:`Journal` facade
- :mod:`~browser_app.edits.review` review progress and the report

Errors are :mod:`browser_app.errors`' (``EditError``, ``ValueParseError``,
``ConversionError``, ``JournalError``, ``JournalMismatchError``).
"""

from browser_app.edits.changeset import ChangeSet
from browser_app.edits.commands import Edit, FeatureInput
from browser_app.edits.edited import DatasetSource, EditedDataset, apply_change, as_dataset
from browser_app.edits.journal import Journal
from browser_app.edits.journal_file import (
    FsyncMode,
    JournalFile,
    discard_journal,
    journal_path,
    source_identity,
)
from browser_app.edits.model import (
    ADD_FEATURE,
    ADD_FEATURE_LIST,
    ADD_RECORD,
    ADDED,
    CONVERT_FEATURE,
    DELETE_FEATURE,
    DELETE_FEATURE_LIST,
    DELETE_RECORD,
    DELETED,
    EDITED,
    FEATURE_LISTS,
    FEATURES,
    FLAGGED,
    MARK_STATUSES,
    OPS,
    PASSED,
    RECORD,
    REPLACE_IMAGE,
    SECTIONS,
    SET_FEATURE,
    SET_FEATURE_LIST,
    SET_STEP,
    SET_VALUE,
    Change,
    EditedSlot,
    EditStatus,
    FeatureDiff,
    Mark,
    MarkStatus,
    Op,
    RecordRef,
    Section,
    sort_refs,
)
from browser_app.edits.values import (
    BYTES_PREFIXES,
    ParsedValue,
    Value,
    check_value,
    convert_values,
    feature_from_json,
    feature_to_json,
    parse_value,
    parse_values,
    render_value,
    type_warnings,
)

__all__ = [
    "ADDED",
    "ADD_FEATURE",
    "ADD_FEATURE_LIST",
    "ADD_RECORD",
    "BYTES_PREFIXES",
    "CONVERT_FEATURE",
    "DELETED",
    "DELETE_FEATURE",
    "DELETE_FEATURE_LIST",
    "DELETE_RECORD",
    "EDITED",
    "FEATURES",
    "FEATURE_LISTS",
    "FLAGGED",
    "MARK_STATUSES",
    "OPS",
    "PASSED",
    "RECORD",
    "REPLACE_IMAGE",
    "SECTIONS",
    "SET_FEATURE",
    "SET_FEATURE_LIST",
    "SET_STEP",
    "SET_VALUE",
    "Change",
    "ChangeSet",
    "DatasetSource",
    "Edit",
    "EditStatus",
    "EditedDataset",
    "EditedSlot",
    "FeatureDiff",
    "FeatureInput",
    "FsyncMode",
    "Journal",
    "JournalFile",
    "Mark",
    "MarkStatus",
    "Op",
    "ParsedValue",
    "RecordRef",
    "Section",
    "Value",
    "apply_change",
    "as_dataset",
    "check_value",
    "convert_values",
    "discard_journal",
    "feature_from_json",
    "feature_to_json",
    "journal_path",
    "parse_value",
    "parse_values",
    "render_value",
    "sort_refs",
    "source_identity",
    "type_warnings",
]
