"""Pure presentation: codec values in, rows, captions, text and picture bytes out.

Nothing here imports Streamlit or touches session state; every function takes codec objects or
plain values and returns plain data, so it can be tested and timed without a server.
"""

from __future__ import annotations

from .cells import cell_text, parse_bytes_cell
from .changes import diff_rows, part_preview
from .export import ExportOutcome, export_outcome
from .files import file_options
from .gallery import GalleryItem, gallery_items, record_label
from .pictures import (
    BOX_SAMPLE,
    BROKEN_PICTURE,
    BoxScale,
    Picture,
    Thumb,
    boxes_normalized,
    data_url,
    record_pictures,
    thumbnail,
)
from .schema import (
    DETECTION_CHECKS,
    DRIFT_CHECKS,
    LINKS_SHOWN,
    SchemaResult,
    finding_lines,
    number_text,
    record_links,
    schema_result,
    schema_rows,
)
from .summary import feature_summary, kind_label, problem_dict, report_dict, usual_types
from .table import (
    MAX_COLUMNS,
    Cell,
    FeatureRow,
    PageItem,
    PageView,
    as_edited_slot,
    feature_rows,
    match_rows,
    page_view,
    sequence_table,
    status_text,
)
from .values import (
    PREVIEW_VALUES,
    TensorView,
    ValueView,
    all_values,
    hex_dump,
    label_text,
    md_code,
    md_text,
    plural,
    scalar_text,
    short_text,
    tensor_view,
    text_preview,
    value_view,
    values_preview,
)

__all__ = [
    "BOX_SAMPLE",
    "BROKEN_PICTURE",
    "DETECTION_CHECKS",
    "DRIFT_CHECKS",
    "LINKS_SHOWN",
    "MAX_COLUMNS",
    "PREVIEW_VALUES",
    "BoxScale",
    "Cell",
    "ExportOutcome",
    "FeatureRow",
    "GalleryItem",
    "PageItem",
    "PageView",
    "Picture",
    "SchemaResult",
    "TensorView",
    "Thumb",
    "ValueView",
    "all_values",
    "as_edited_slot",
    "boxes_normalized",
    "cell_text",
    "data_url",
    "diff_rows",
    "export_outcome",
    "feature_rows",
    "feature_summary",
    "file_options",
    "finding_lines",
    "gallery_items",
    "hex_dump",
    "kind_label",
    "label_text",
    "match_rows",
    "md_code",
    "md_text",
    "number_text",
    "page_view",
    "parse_bytes_cell",
    "part_preview",
    "plural",
    "problem_dict",
    "record_label",
    "record_links",
    "record_pictures",
    "report_dict",
    "scalar_text",
    "schema_result",
    "schema_rows",
    "sequence_table",
    "short_text",
    "status_text",
    "tensor_view",
    "text_preview",
    "thumbnail",
    "usual_types",
    "value_view",
    "values_preview",
]
