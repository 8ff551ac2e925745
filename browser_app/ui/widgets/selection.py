"""The sidebar's selection: which records the records table, the gallery and the review
buttons go through (the whole dataset, a filter's result, the flagged, passed or unreviewed
records, the damaged or recovered ones, a schema finding, a SQL query's result in its order),
the facets that narrow it (review state, integrity, object class, each with its count in the
selection), and the sort over the whole dataset (by a record's evaluation too, for predictions
beside ground truth). The URL carries all of it (:func:`browser_app.ui.state.selection`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import streamlit as st

from browser_app.selection import (
    BASES,
    EVAL_PREFIX,
    EVAL_SORTS,
    FACET_GROUPS,
    SORTS,
    RecordFacts,
    Selection,
    class_label,
    facet_counts,
)
from browser_app.ui import services, state
from browser_app.ui.services.order import (
    NoSqlIndex,
    evaluated,
    evaluation_fields,
    evaluation_layouts,
    facts_indexed,
    sort_indexed,
    sql_records,
)
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs, names, schema
from browser_app.view import label_text, md_text, plural
from codec.errors import CodecError
from codec.filters import FilterSyntaxError
from codec.kinds import FLOAT, INT64
from codec.schema.drift import findings
from codec.sql import SqlError

__all__ = ["FACTS_AUTO_RECORDS", "sidebar_facets", "sidebar_selection"]

# Facets are counted without asking up to this many records (one pass reads every record);
# past it, at once too when the dataset's columnar index is stored (read, not the records).
FACTS_AUTO_RECORDS = 50_000
_CLASS_PILLS = 12  # classes shown as pills; the rest in a list


def _choices(src: Source, sel: Selection) -> list[tuple[str, str]]:
    """The bases offered: the fixed ones, the filter of this session (or of the link), every
    schema finding once the schema is inferred, and the SQL query selected (on the SQL page,
    or by the link)."""
    out = [(b, "") for b in BASES if b not in ("filter", "finding", "sql")]
    expressions = []
    last = state.filter_selection(repr(src.key))
    if last is not None:
        # Class names bound in this session only are spelled as labels (names.spelled): the
        # selection then means the same in a link, and to the cached matches.
        expressions.append(names.spelled(src, last["expression"]))
    if sel.base == "filter" and sel.arg not in expressions:
        expressions.append(sel.arg)
    out += [("filter", e) for e in expressions]
    got = schema.stored(src)
    if got is not None:
        for f in findings(got.schema):
            if f.records:
                out.append(("finding", f"{f.check}:{f.feature}"))
    if sel.base in ("finding", "sql") and (sel.base, sel.arg) not in out:
        out.append((sel.base, sel.arg))
    return out


def _choice_label(choice: tuple[str, str]) -> str:
    return label_text(Selection(*choice).describe())


def _set(value: Selection) -> None:
    state.set_selection(value)


def _on_base(choices: list[tuple[str, str]]) -> None:
    picked = state.widget_value("sel:base")
    if isinstance(picked, tuple) and picked in choices:
        sel = state.selection()
        _set(replace(sel, base=picked[0], arg=picked[1]))


def _on_sort() -> None:
    key = state.widget_value("sel:sort") or ""
    _set(replace(state.selection(), sort=str(key), descending=bool(state.widget_value("sel:desc"))))


def _on_facet(group: str) -> None:
    value = state.widget_value(f"sel:facet:{group}")
    sel = state.selection()
    _set(sel.with_facet(group, str(value)) if value else sel.without_facet(group))


def _clear() -> None:
    _set(Selection())


def _sort_choices(src: Source) -> list[str]:
    feats, _ = services.usual_types(src)
    numeric = sorted(n for n, t in feats.items() if t in (FLOAT, INT64))
    by_evaluation = list(EVAL_SORTS) if evaluation_layouts(src) is not None else []
    return [*SORTS, *by_evaluation, *(f"feature:{n}" for n in numeric)]


def _sort_label(key: str) -> str:
    return label_text(SORTS.get(key) or EVAL_SORTS.get(key) or key.removeprefix("feature:"))


def _evaluation(src: Source, sel: Selection, asked: bool = False) -> None:
    """For a sort by a record's evaluation or the outcome facet (or when ``asked``: "Count
    outcomes"): the evaluation job (with its likely mistakes) run now, on the session's
    executor with its progress and Cancel, unless kept; said when the dataset has nothing to
    evaluate or the job stopped (the records keep file order)."""
    outcome = any(g == "outcome" for g, _ in sel.facets)
    if not (asked or outcome or sel.sort.startswith(EVAL_PREFIX)):
        return
    if evaluation_layouts(src) is None:
        st.sidebar.info(
            f"This {'facet' if outcome else 'sort'} needs a model's predictions beside the"
            " ground truth in the records; the first records have no such pair."
            + ("" if outcome else " The records keep their file order."),
            icon=":material/info:",
        )
        return
    key = f"selection:evaluate:{src.tag}"
    try:
        with st.sidebar:
            evaluation_fields(
                src,
                names.for_evaluation(src),
                jobs.runner(key, "The evaluation for sorting"),
                state.executor(),
            )
    except jobs.Stopped:
        pass  # said by the job; the records keep their file order


def _empty(src: Source) -> bool:
    """Whether ``src`` is known to hold no record (without indexing further: the index of
    a large remote dataset is built in the background, never by the sidebar)."""
    ds = src.dataset
    return ds.index_complete and ds.indexed == 0


def _linked(src: Source) -> None:
    """A selection that came with a link: applied at once for a local dataset of a usual
    size (its facts are read at once anyway) or one whose stored columnar index answers it
    (:func:`_from_index`), else said with a button. A link alone never
    sets the server reading a large or remote dataset whole (for a filter, a sort, facets)."""
    linked = state.linked_selection()
    if linked is None:
        return
    ds = src.dataset
    small = ds.index_complete and ds.indexed <= FACTS_AUTO_RECORDS and not src.remote
    if small or _from_index(src, linked):
        state.apply_linked_selection()
        return
    side = st.sidebar
    size = plural(ds.indexed, "record") if ds.index_complete else "every record"
    side.info(
        f"The link selects **{md_text(_linked_words(linked))}**, which reads {size} of this"
        " dataset once. Showing every record until you apply it.",
        icon=":material/link:",
    )
    c = side.columns(2)
    c[0].button(
        "Apply",
        key=state.widget_key("sel:linked:apply"),
        on_click=state.apply_linked_selection,
        type="primary",
        width="stretch",
    )
    c[1].button(
        "Ignore",
        key=state.widget_key("sel:linked:drop"),
        on_click=state.drop_linked_selection,
        width="stretch",
    )


def _from_index(src: Source, sel: Selection) -> bool:
    """Whether ``sel`` is answered without reading the records: its facets and sort from
    the stored columnar index of ``src``, its records by the review marks, the facts, a
    stored schema's finding or a query over that index (a filter still reads every record;
    an evaluation sort runs the evaluation)."""
    if sel.base == "filter" or sel.sort.startswith(EVAL_PREFIX):
        return False
    return facts_indexed(src) and sort_indexed(src, sel.sort)


def _sql_base(src: Source, sel: Selection) -> bool:
    """Whether the query of a SQL selection gave more rows than were read (said in the
    count); raises :class:`codec.sql.SqlError` when it cannot run. Without the stored index
    it says where the index is built (a link never builds it) and selects nothing."""
    try:
        return sql_records(src, sel.arg)[1]
    except NoSqlIndex:
        st.sidebar.info(
            "This selection is a SQL query over the dataset's columnar index, which is not"
            " built yet. Open the SQL page to build it; the query then selects its records.",
            icon=":material/database:",
        )
        return False


def _linked_words(sel: Selection) -> str:
    words = sel.describe() if sel.narrowed else "every record"
    return f"{words}, sorted by {sel.sort_words().lower()}" if sel.sort else words


def sidebar_selection(src: Source | None) -> None:
    """The selection section of the sidebar (nothing while no source with records is open)."""
    if src is None or _empty(src):
        return
    ds = src.dataset
    side = st.sidebar
    side.markdown("**Selection**")
    _linked(src)
    sel = state.selection()
    choices = _choices(src, sel)
    current = (sel.base, sel.arg)
    state.set_widget_value("sel:base", current if current in choices else choices[0])
    side.selectbox(
        "Show",
        choices,
        format_func=_choice_label,
        key=state.widget_key("sel:base"),
        on_change=_on_base,
        args=(choices,),
        help="The records the records table, the gallery and the review buttons go through."
        " Filters come from the Filter page, findings from the Schema page.",
    )
    sorts = _sort_choices(src)
    if sel.sort and sel.sort not in sorts:
        sorts.append(sel.sort)
    state.set_widget_value("sel:sort", sel.sort)
    state.set_widget_value("sel:desc", sel.descending)
    side.selectbox(
        "Sort by",
        sorts,
        format_func=_sort_label,
        key=state.widget_key("sel:sort"),
        on_change=_on_sort,
        help="Over the whole dataset; records without the value come last",
    )
    side.toggle(
        "Largest first",
        key=state.widget_key("sel:desc"),
        on_change=_on_sort,
        disabled=not sel.sort,
    )
    inferred = schema.stored(src)
    _evaluation(src, sel)
    truncated = False
    try:
        if sel.base == "sql":
            truncated = _sql_base(src, sel)
        order = services.order(src, sel, inferred)
    except FilterSyntaxError as exc:
        side.error(
            f"The selection's filter cannot run: {md_text(exc.message)}. Showing every record.",
            icon=":material/error:",
        )
        _set(replace(sel, base="all", arg=""))
        return
    except SqlError as exc:
        side.error(
            f"The selection's query cannot run: {md_text(str(exc))}. Showing every record.",
            icon=":material/error:",
        )
        _set(replace(sel, base="all", arg=""))
        return
    except (CodecError, OSError) as exc:
        side.error(f"The selection cannot be read: {md_text(str(exc))}.", icon=":material/error:")
        return
    total = ds.indexed if ds.index_complete else None
    if sel.base == "finding" and services.finding_records(src, sel.arg, inferred) is None:
        side.info(
            "Open the Schema page to infer the schema: the finding's records come from it.",
            icon=":material/schema:",
        )
    if order is not None:
        count, finding_total = len(order), None
        if sel.base == "finding":
            got = services.finding_records(src, sel.arg, inferred)
            finding_total = got[1] if got is not None else None
        note = f"{count:,} of {plural(total, 'record') if total is not None else '…'} selected"
        if finding_total is not None and finding_total > count:
            note += f" (the schema lists the first {count:,} of {finding_total:,})"
        if truncated:
            note += " (the query gave more rows than the dataset has records: the first ones)"
        if not sel.narrowed:
            note = f"Every record, sorted by {sel.sort_words().lower()}"
        side.caption(md_text(note))
    if sel.narrowed or sel.sort:
        side.button(
            "Clear selection",
            key=state.widget_key("sel:clear"),
            on_click=_clear,
            icon=":material/close:",
        )
    names.sidebar(src)


def sidebar_facets(src: Source | None) -> None:
    """The facets of the current selection, under it in the sidebar. Drawn after the page,
    so the first look at a file does not wait for the pass that counts them."""
    if src is None or _empty(src):
        return
    sel = state.selection()
    try:
        order = services.order(src, sel, schema.stored(src))
    except (CodecError, OSError):
        return  # said above the facets already
    ds = src.dataset
    side = st.sidebar
    if not ds.index_complete:
        side.caption("Facets are counted once the index is complete.")
        return
    asked = state.facets_asked(src.spec)
    # Counted at once for a local dataset of a usual size; a remote one is read whole only
    # when asked (it is downloaded, block by block).
    # Past that, or remote, at once as well when the stored columnar index answers.
    if (ds.indexed > FACTS_AUTO_RECORDS or src.remote) and not asked and not facts_indexed(src):
        if side.button(
            "Count facets",
            key=state.widget_key("sel:count"),
            help=f"Reads each of the {plural(ds.indexed, 'record')} once"
            + (" (every byte of the remote objects)" if src.remote else ""),
        ):
            state.ask_facets(src.spec)
            st.rerun()
        return
    import numpy as np

    facts = services.facts(src)
    picked = order if isinstance(order, np.ndarray) else np.arange(facts.total, dtype=np.int64)
    outcomes = evaluated(src)
    can_evaluate = outcomes is None and evaluation_layouts(src) is not None
    if can_evaluate and side.button(
        "Count outcomes",
        key=state.widget_key("sel:outcomes"),
        help="Evaluates the predictions against the ground truth in every record (as the"
        " evaluate command does, IoU 0.5): records with false positives, with missed"
        " objects, or with every object found",
    ):
        _evaluation(src, sel, asked=True)
        outcomes = evaluated(src)
    counts = facet_counts(picked, facts, services.marks(src), outcomes)
    classes = names.for_source(src)
    active = dict(sel.facets)
    for group, title in FACET_GROUPS.items():
        values = counts.get(group, [])
        if group in active and active[group] not in dict(values):
            values = [*values, (active[group], 0)]
        if not values:
            continue
        shown = values[:_CLASS_PILLS]
        number = dict(values)
        state.set_widget_value(f"sel:facet:{group}", active.get(group))
        options = [v for v, _ in shown]
        if active.get(group) and active[group] not in options:
            options.append(active[group])
        side.pills(
            title,
            options,
            selection_mode="single",
            format_func=_facet_label(number, facts if group == "class" else None, classes),
            key=state.widget_key(f"sel:facet:{group}"),
            on_change=_on_facet,
            args=(group,),
            help=f"Counts in the current selection. Click one to narrow the selection to it;"
            f" click it again to widen. {_help(group)}",
        )
        rest = [v for v, _ in values[_CLASS_PILLS:] if v not in options]
        if rest:
            side.caption(f"and {plural(len(rest), 'more class', 'more classes')}")


def _facet_label(
    number: dict[str, int], facts: RecordFacts | None = None, classes: names.Names | None = None
) -> Callable[[str], str]:
    """A pill's label: the facet value (a class by its name when it has one:
    :func:`browser_app.selection.class_label`) and its count."""

    def label(v: str) -> str:
        shown = class_label(v, facts, classes) if facts is not None else v
        return f"{md_text(shown)} · {number.get(v, 0):,}"  # pills read Markdown

    return label


def _help(group: str) -> str:
    if group == "class":
        return (
            "A class is the box caption, “text (label)”, or a class label feature's value"
            " (“label = 3”, by its name when a names file names it); a record counts once per"
            " class. Classes are counted as the files have them: pending edits are not counted."
        )
    if group == "status":
        return "Intact: both CRCs check; recovered: found past damage; damaged: a CRC fails."
    if group == "outcome":
        return (
            "The predictions against the ground truth, as the evaluate command counts them"
            " (IoU 0.5, class by class): a record with a prediction matching no object, with"
            " an object no prediction found, or with every object found and no false"
            " prediction."
        )
    return "Review marks of this dataset (passed, flagged, or none yet)."
