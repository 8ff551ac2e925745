"""Old home of the edit journal; it lives in :mod:`browser_app.edits` now. A re-export shim
for code that has not moved yet (removed in the last step of the reshape)."""

from browser_app.edits import (
    BYTES_PREFIXES,
    MARK_STATUSES,
    Change,
    FeatureDiff,
    Journal,
    Mark,
    ParsedValue,
    RecordRef,
    as_dataset,
    check_value,
    convert_values,
    discard_journal,
    feature_from_json,
    feature_to_json,
    journal_path,
    parse_value,
    parse_values,
    render_value,
    source_identity,
    type_warnings,
)
from browser_app.edits.edited import DatasetSource
from browser_app.errors import (
    ConversionError,
    EditError,
    JournalError,
    JournalMismatchError,
    ValueParseError,
)
from codec.cache import FileIdentity
from codec.kinds import FEATURE_TYPES

__all__ = [
    "BYTES_PREFIXES",
    "FEATURE_TYPES",
    "MARK_STATUSES",
    "Change",
    "ConversionError",
    "DatasetSource",
    "EditError",
    "FeatureDiff",
    "FileIdentity",
    "Journal",
    "JournalError",
    "JournalMismatchError",
    "Mark",
    "ParsedValue",
    "RecordRef",
    "ValueParseError",
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
    "source_identity",
    "type_warnings",
]
