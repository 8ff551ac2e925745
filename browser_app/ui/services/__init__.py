"""Every ``st.cache_*`` of the app: shared readers and journals, the executors jobs run on,
the results of jobs, and the plain-data results drawn from them.

One module per thing served, each holding its own caches:

- :mod:`.readers`: the shared reader of a set of files, the root's listings, remote objects
  replaced on the server, and forgetting a source to open it again as it is now;
- :mod:`.executors`: where jobs run (a shared Dask client per setting, a pool per job);
- :mod:`.results`: the results of dataset-wide jobs, in one store shared by every session
  (a verify report; a schema, per files and label map);
- :mod:`.summary`: what the first records say (features, usual types, how boxes are read);
- :mod:`.journals`: the shared edit journal of a source;
- :mod:`.order`: the order a selection shows (record facts, filter matches, sort keys);
- :mod:`.pages`: a page's table rows and gallery tiles, pending edits applied;
- :mod:`.landing`: the records a jump into the bytes landed on.

Results that are plain data (a verify report, a feature summary, a page's table, a page's
gallery tiles) are keyed by the files' identities (:class:`codec.identity.FileIdentity`).
Nothing here reads the session: what a view shows (its selection, the schema inferred, the
classes hidden, where jobs run) is an argument, so a cached result depends only on what it
is given.
"""

from __future__ import annotations

from browser_app.ui.services.executors import (
    DASK_TIMEOUT,
    Runner,
    job_executor,
    release_executor,
    shared_executor,
)
from browser_app.ui.services.journals import (
    forget_journals,
    journal_usable,
    open_journal,
    shared_journal,
    write_mark,
)
from browser_app.ui.services.landing import (
    Spans,
    landed_numbers,
    landed_page,
    landed_tiles,
)
from browser_app.ui.services.order import (
    facts,
    finding_records,
    marks,
    neighbours,
    order,
    page_records,
    record_at,
)
from browser_app.ui.services.pages import gallery_items, page_view
from browser_app.ui.services.readers import (
    CHANGES_CHECKED,
    forget_source,
    list_files,
    open_dataset,
    remote_changes,
    remote_files,
    remote_source,
)
from browser_app.ui.services.results import (
    AUTO_VERIFY_BYTES,
    LabelChoice,
    keep_schema_result,
    last_schema_result,
    schema_result,
    should_auto_verify,
    verified,
    verify,
)
from browser_app.ui.services.summary import box_scale, feature_summary, usual_types
from browser_app.ui.services.tiles import picture_urls as picture_urls
from browser_app.ui.services.tiles import tile_urls as tile_urls

__all__ = [
    "AUTO_VERIFY_BYTES",
    "CHANGES_CHECKED",
    "DASK_TIMEOUT",
    "LabelChoice",
    "Runner",
    "Spans",
    "box_scale",
    "facts",
    "feature_summary",
    "finding_records",
    "forget_journals",
    "forget_source",
    "gallery_items",
    "job_executor",
    "journal_usable",
    "keep_schema_result",
    "landed_numbers",
    "landed_page",
    "landed_tiles",
    "last_schema_result",
    "list_files",
    "marks",
    "neighbours",
    "open_dataset",
    "open_journal",
    "order",
    "page_records",
    "page_view",
    "record_at",
    "release_executor",
    "remote_changes",
    "remote_files",
    "remote_source",
    "schema_result",
    "shared_executor",
    "shared_journal",
    "should_auto_verify",
    "usual_types",
    "verified",
    "verify",
    "write_mark",
]
