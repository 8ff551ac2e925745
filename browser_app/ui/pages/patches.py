"""Patches: one tile per object — the ground truth's or the predictions' — cropped from its
picture, chosen by class and evaluation outcome, sorted by the likely-mistake score (or score,
IoU, record order), each marking its record passed or flagged in the review journal: the view
that finds a mislabelled class by sorting.

The evaluation (:class:`codec.jobs.EvaluateJob`, with its likely mistakes) runs as a job on
the session's executor the first time the page opens a source, on the files as stored (pending
edits are not in it), and is kept for the session."""

from __future__ import annotations

import streamlit as st

from browser_app.ui import frame, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs, names, patches_grid
from browser_app.view import md_text, plural
from browser_app.view.patches import OUTCOME_WORDS, SIDES, SORTS, PatchTable
from codec import evaluate as ev
from codec.jobs import EvaluateJob, tasks_of
from codec.jobs.evaluate import PREDICTIONS_PREFIX, TRUTH_PREFIX, label_map_of, look

LOOK_AT = 200  # first records whose layouts decide the prefixes, as evaluate's
PER_PAGE = (24, 48, 96)
PER_ROW = 6
TILE = 176


def _first_payloads(src: Source) -> list[bytes | None]:
    out: list[bytes | None] = []
    for f in src.dataset.files:
        for info in f.records(0, LOOK_AT - len(out)):
            out.append(info.data)
        if len(out) >= LOOK_AT:
            break
    return out


def _table(src: Source) -> PatchTable | None:
    """The evaluation's patches of ``src``: kept for the session, else made now (a job with
    its progress and Cancel); None when there is nothing to evaluate or the job stopped
    (said)."""
    kept = state.patches_table(src.tag)
    if isinstance(kept, PatchTable):
        return kept
    seen = look(_first_payloads(src))
    if seen.predictions is None:
        st.info(
            f"No predictions in the first {plural(seen.records, 'record')}: the patches view"
            f" shows a model's predictions beside the ground truth (lists such as"
            f" {PREDICTIONS_PREFIX}bbox/* with scores, as infer_detections.py writes them).",
            icon=":material/info:",
        )
        return None
    truth = seen.truth or TRUTH_PREFIX
    job = EvaluateJob(
        truth=truth,
        predictions=seen.predictions,
        label_map=label_map_of(names.for_evaluation(src), truth, seen.predictions),
        normalized=(seen.truth_normalized, seen.predictions_normalized),
        mistakes=True,
    )
    try:
        result = jobs.run(
            job,
            tasks_of(src.dataset.files, executor=state.executor()),
            key=f"patches:{src.tag}",
            what="The evaluation",
        )
    except jobs.Stopped:
        return None
    table = PatchTable.of(result, job)
    state.set_patches_table(src.tag, table)
    return table


def _stem(label: str) -> str:
    """A file name's stem made of a source's label (letters, digits, ``-`` and ``_``)."""
    stem = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in label.split("/")[-1])
    return stem.strip("-") or "patches"


def render() -> None:
    src = frame.start("Patches")
    if src is None:
        return
    if patches_grid.opening():
        return
    table = _table(src)
    if table is None:
        return
    c = st.columns([1.3, 2.4, 2.4, 1.6], vertical_alignment="bottom")
    side = c[0].radio(
        "Objects",
        list(SIDES),
        format_func=lambda s: SIDES[s],
        key=state.widget_key("patches:side"),
    )
    side = side if side in SIDES else "truth"
    everything = table.rows(side)
    by_class, by_outcome = table.counts(everything)
    classes = c[1].multiselect(
        "Classes",
        sorted(by_class, key=lambda k: table.name(k)),
        format_func=lambda k: f"{table.name(k)} ({by_class.get(k, 0):,})",
        key=state.widget_key(f"patches:classes:{side}"),
        placeholder="every class",
    )
    outcomes = c[2].multiselect(
        "Outcomes",
        [o for o in ev.OUTCOMES if o in by_outcome],
        format_func=lambda o: f"{OUTCOME_WORDS[o]} ({by_outcome.get(o, 0):,})",
        key=state.widget_key(f"patches:outcomes:{side}"),
        placeholder="every outcome",
    )
    sort = c[3].selectbox(
        "Sort", list(SORTS), format_func=lambda s: SORTS[s], key=state.widget_key("patches:sort")
    )
    rows = table.ordered(table.rows(side, classes or None, outcomes or None), sort or "mistake")
    per_page = int(state.widget_value("patches:per-page") or PER_PAGE[0])
    pages = max(1, -(-len(rows) // per_page))
    bar = st.columns([3, 1, 1], vertical_alignment="bottom")
    bar[0].caption(
        md_text(
            f"{table.summary(rows, side)} · the likely-mistake score is FiftyOne's"
            " mistakenness from the stored predictions (a confident prediction of another"
            " class on the box; for a prediction matching nothing, its confidence)"
        )
    )
    page_widget = f"patches:page:{side}:{sort}:{classes}:{outcomes}"
    page = int(
        bar[1].number_input(  # its first value is 1; N and B of the grid set it
            "Page", min_value=1, max_value=pages, key=state.widget_key(page_widget)
        )
    )
    bar[2].selectbox("Tiles a page", PER_PAGE, key=state.widget_key("patches:per-page"))
    tools = st.container(horizontal=True, vertical_alignment="center")
    with tools, st.popover("Keys", icon=":material/keyboard:"):
        st.markdown(patches_grid.KEYS_HELP)
    tools.download_button(
        "Review list (CSV)",
        data=table.review_list(rows),
        file_name=f"{_stem(src.label)}-{side}-review-list.csv",
        mime="text/csv",
        icon=":material/download:",
        key=state.widget_key("patches:download"),
        help="Every object chosen, in this order (likely mistakes first when sorted so): its"
        " record, class, outcome, IoU, score and likely-mistake score",
        disabled=not len(rows),
    )
    shown = rows[(page - 1) * per_page : page * per_page]
    if not len(shown):
        st.info("No object of this side has the classes and outcomes chosen.")
        return
    patches_grid.grid(
        src,
        table,
        shown,
        page=page,
        pages=pages,
        page_widget=page_widget,
        per_row=PER_ROW,
        size=TILE,
        j=services.shared_journal(src),
    )


if __name__ == "__main__":
    render()
