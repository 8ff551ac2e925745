"""The Compare page's parts: the second dataset picked (another split of the open dataset
folder, or any file, folder or split under the app's root), both sides run as diff jobs
(:mod:`codec.jobs.diff`) on the session's executor, and what changed shown with a link to the
records behind every figure: a record (``./?file=B&record=N``) or a filter that finds them
(``./?file=A&sel=filter:has(caption)``; the sidebar applies a link's selection).

The last comparison is kept for the session (its sides, and the comparison per key), so
clicking around the page does not read the datasets again.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode

import streamlit as st

import codec.jobs
from browser_app.errors import InputError
from browser_app.ui import opening, services, state
from browser_app.ui.services import datasets
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs
from browser_app.view import label_text, md_text, plural, progress_text
from browser_app.view.diff import (
    STATUS_WORDS,
    categorical_features,
    change_words,
    named,
    value_filter,
)
from codec.diff import DEFAULT_KEYS, DatasetDiff, DiffSide, compare, filter_name, value_text
from codec.errors import RemoteError
from codec.jobs.diff import DiffJob

__all__ = ["candidates", "compare_page"]

AUTOMATIC = "(automatic)"
SHOWN = 20  # record links written out per list
LINKED = 300  # records a list's selection link holds at most (a link is a URL: kept short)


def _folder_of(spec: str) -> str:
    """The folder a spec's files lie in (a split's ``FOLDER:SPLIT`` is in FOLDER's parent)."""
    path = spec if "://" in spec else spec.rsplit(":", 1)[0] if ":" in spec else spec
    return posixpath.dirname(path.rstrip("/"))


def candidates(src: Source) -> list[str]:
    """What the open source may be compared with: the other splits of its dataset folder
    (``FOLDER:SPLIT``), then the files beside it, then everything else the root's listing
    offers, the source itself left out."""
    out: list[str] = []
    folder = src.split_folder
    if folder is not None and src.split is not None:
        out += [src.split_spec(s.name) for s in folder.splits if s.name != src.split and s.files]
    if state.is_upload(src.spec):
        return out
    try:
        entries, _ = services.list_files(src.root, "", state.anon())
    except (OSError, RemoteError):
        entries = []
    listed = [e.rel for e in entries if e.rel != src.spec and e.rel not in out]
    # Files beside the open one first (two versions of a dataset usually lie side by side),
    # then the rest in the listing's order.
    here = _folder_of(src.spec)
    beside = [r for r in listed if _folder_of(r) == here]
    return out + beside + [r for r in listed if r not in beside]


def _small(src: Source) -> bool:
    return src.local_within(services.AUTO_VERIFY_BYTES)


def _classes(src: Source) -> dict[str, Any]:
    return dict(datasets.class_names(src))


# -- links ----------------------------------------------------------------------------------


def _url(src: Source, **params: str) -> str | None:
    if state.is_upload(src.spec):
        return None  # an upload is never in a URL
    return "./?" + urlencode({"file": src.link, **params}, quote_via=quote)


def _linked(text: str, url: str | None) -> str:
    """Markdown: ``text`` (already Markdown) as a link to ``url`` when there is one."""
    return f"[{text}]({url})" if url else text


def _record(src: Source, n: int) -> str:
    return _linked(str(n), _url(src, record=str(n)))


def _filtered(src: Source, expression: str) -> str | None:
    return _url(src, sel=f"filter:{expression}")


def _records(src: Source, numbers: Sequence[int], count: int, what: str = "record") -> str:
    """``12 records`` linked to a selection of them (the first :data:`LINKED`), then the
    first :data:`SHOWN` of them each linked to itself."""
    if not count:
        return plural(0, what)
    head = plural(count, what)
    picked = list(numbers[:LINKED])
    url = _filtered(src, f"index in [{', '.join(str(n) for n in picked)}]")
    note = f" (the link selects the first {len(picked):,})" if count > len(picked) else ""
    each = ", ".join(_record(src, n) for n in numbers[:SHOWN])
    more = " …" if count > min(len(numbers), SHOWN) else ""
    return f"{_linked(head, url)}{note}: {each}{more}"


# -- the page --------------------------------------------------------------------------------


def _pick(src: Source) -> str | None:
    options = candidates(src)
    name = f"compare:other:{src.tag}"
    if state.widget_value(name) is None and options:
        state.set_widget_value(name, options[0])
    c = st.columns([3, 2], vertical_alignment="bottom")
    picked = c[0].selectbox(
        f"Compare {label_text(src.label)} (A) with (B)",
        options,
        key=state.widget_key(name),
        accept_new_options=True,
        format_func=label_text,
        help="Another split of this dataset, or any file, glob, folder or split under the"
        " app's root (type its path)",
    )
    return str(picked) if picked else None


def _run(
    src: Source, other: Source, key: str | None, fresh: bool
) -> tuple[DiffSide, DiffSide] | None:
    keys = (*DEFAULT_KEYS, key) if key else DEFAULT_KEYS
    job = DiffJob(tuple(keys))
    spec = state.executor()
    tasks_a = codec.jobs.tasks_of(src.dataset.files, executor=spec)
    tasks_b = codec.jobs.tasks_of(other.dataset.files, executor=spec)

    def work(ex: Any, bar: jobs.Bar) -> tuple[DiffSide, DiffSide]:
        def on(side: str, base: float) -> Any:
            return lambda p: bar.stage(f"{side}: {progress_text(p)}", base + p.fraction / 2)

        a = codec.jobs.run(job, tasks_a, ex, progress=on("A", 0.0))
        b = codec.jobs.run(job, tasks_b, ex, progress=on("B", 0.5))
        return a, b

    try:
        return jobs.run_work(
            work,
            key=f"compare:{src.tag}:{other.tag}:{key or ''}",
            what="The comparison",
            fresh=fresh,
            tasks=[*tasks_a, *tasks_b],
        )
    except jobs.Stopped:
        return None


def compare_page(src: Source) -> None:
    """The Compare page under its header: pick B, run, show."""
    picked = _pick(src)
    if picked is None:
        st.info("Nothing else under the root to compare with.", icon=":material/compare_arrows:")
        return
    try:
        other = opening.open_source(picked)
    except (InputError, RemoteError) as exc:
        st.error(
            f"{md_text(picked)} cannot be opened: {md_text(str(exc))}", icon=":material/error:"
        )
        return
    key_name = f"compare:key:{src.tag}:{other.tag}"
    chosen = state.widget_value(key_name)
    key = None if chosen in (None, AUTOMATIC) else str(chosen)
    ident = (repr(src.key), repr(other.key))
    kept = state.compare_result(ident)
    if kept is not None and key is not None and key not in kept["keys"]:
        kept = None  # the key's values were not kept: read both again
    if kept is None:
        if not (_small(src) and _small(other)):
            st.info(
                f"Comparing reads every record of **{md_text(src.label)}** and"
                f" **{md_text(other.label)}** once.",
                icon=":material/compare_arrows:",
            )
            if not st.button(
                "Compare",
                key=state.widget_key(f"compare:go:{src.tag}"),
                icon=":material/play_arrow:",
            ):
                return
            fresh = True
        else:
            fresh = False
        sides = _run(src, other, key, fresh)
        if sides is None:
            return
        kept = {
            "id": ident,
            "sides": sides,
            "keys": (*DEFAULT_KEYS, *([key] if key else [])),
            "diffs": {},
        }
        state.set_compare_result(kept)
    a, b = kept["sides"]
    classes = _classes(src)
    for k, v in _classes(other).items():
        classes.setdefault(k, v)
    diff = kept["diffs"].get(key)
    if diff is None:
        names = set(a.features) | set(b.features)
        diff = compare(a, b, key=key, categorical=categorical_features(names, classes))
        kept["diffs"][key] = diff
    _key_picker(key_name, a, b, diff)
    _show(src, other, diff, classes)


def _key_picker(name: str, a: DiffSide, b: DiffSide, diff: DatasetDiff) -> None:
    common = sorted(
        n
        for n in set(a.features) & set(b.features)
        if a.features[n].type in ("bytes", "int64") and not a.features[n].pictures
    )
    options = [AUTOMATIC, *common]
    if state.widget_value(name) not in options:
        state.set_widget_value(name, AUTOMATIC)
    st.selectbox(
        "Join records by",
        options,
        key=state.widget_key(name),
        format_func=lambda k: (
            f"automatic ({diff.join.key})"
            if k == AUTOMATIC and diff.join is not None
            else label_text(k)
        ),
        help="The feature whose value says which record of B is which record of A (automatic:"
        f" the first of {', '.join(DEFAULT_KEYS)} both have)",
    )


def _side_line(name: str, src: Source, side: DiffSide) -> str:
    parts = [f"**{name}**: {md_text(src.label)} — {plural(side.records, 'record')}"]
    if side.damaged:
        url = _url(src, sel="damaged")
        parts.append(_linked(plural(side.damaged, "damaged record"), url) + " left out")
    for path, why in side.unreadable:
        parts.append(f"not read: {md_text(src.rel(path))} ({md_text(why)})")
    return " · ".join(parts)


def _show(src: Source, other: Source, diff: DatasetDiff, classes: dict[str, Any]) -> None:
    st.markdown(_side_line("A", src, diff.a) + "  \n" + _side_line("B", other, diff.b))
    _join(src, other, diff)
    _features(src, other, diff, classes)
    _values(src, other, diff, classes)
    _changed(src, other, diff)


def _features(src: Source, other: Source, diff: DatasetDiff, classes: dict[str, Any]) -> None:
    st.markdown("#### Features")
    st.caption(
        "L-inf: TFDV's L-infinity distance of the value counts (categorical features: text,"
        " class labels); JS: its Jensen–Shannon divergence (log 2, 0 to 1) of the value counts"
        " or of the histograms, as TFDV's anomalies/metrics.cc computes them. Every figure"
        " links to the records behind it."
    )
    with st.container(key="tfb-compare-features"):
        st.markdown(_feature_table(src, other, diff, classes))


def _pct(x: int, of: int) -> str:
    return f"{x / of:.1%}" if of else "-"


def _feature_table(src: Source, other: Source, diff: DatasetDiff, classes: dict[str, Any]) -> str:
    head = "| Feature | Change | Type | In A | In B | L-inf | JS | Largest change |"
    lines = [head, "|" + "---|" * 8]
    for f in diff.features:
        has = f"has({filter_name(f.name)})"
        in_a = _linked(_pct(f.present_a, diff.a.intact), _filtered(src, has)) if f.type_a else "-"
        in_b = _linked(_pct(f.present_b, diff.b.intact), _filtered(other, has)) if f.type_b else "-"
        linf = "-" if f.linf is None else f"{f.linf:.4f}"
        change = md_text(change_words(f, classes))
        if f.linf is not None and f.linf_at is not None and f.shares is not None:
            expr = value_filter(f.name, f.linf_at)
            shown = md_text(named(f.name, f.linf_at, classes))
            if expr is not None:
                change = (
                    f"{shown}: {_linked(f'{f.shares[0]:.1%}', _filtered(src, expr))} →"
                    f" {_linked(f'{f.shares[1]:.1%}', _filtered(other, expr))}"
                )
        js = "-" if f.js is None else f"{f.js:.4f}"
        if f.js is not None:
            js += f" ({_linked('A', _filtered(src, has))} · {_linked('B', _filtered(other, has))})"
        type_text = f.type_a or f.type_b
        if f.status == "type":
            type_text = f"{f.type_a} → {f.type_b}"
        cells = [
            md_text(f.name),
            md_text(STATUS_WORDS.get(f.status, f.status)),
            md_text(type_text),
            in_a,
            in_b,
            linf,
            js,
            change,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _values(src: Source, other: Source, diff: DatasetDiff, classes: dict[str, Any]) -> None:
    """Classes (and a few-valued feature's values) found on one side only, each linked to
    the records that hold it."""
    lines = []
    for f in diff.features:
        if not f.classes or not (f.new_values or f.vanished_values):
            continue
        for title, got, side in (
            ("new in B", f.new_values, other),
            ("gone from B", f.vanished_values, src),
        ):
            for v, c in got[:SHOWN]:
                expr = value_filter(f.name, v)
                text = f"{md_text(named(f.name, v, classes))} ({plural(c, 'value')})"
                url = _filtered(side, expr) if expr is not None else None
                lines.append(f"- **{md_text(f.name)}** {title}: {_linked(text, url)}")
    if lines:
        st.markdown("#### Classes on one side only")
        st.markdown("\n".join(lines))


def _join(src: Source, other: Source, diff: DatasetDiff) -> None:
    st.markdown("#### Records")
    j = diff.join
    if j is None:
        st.info(md_text(diff.join_note), icon=":material/key_off:")
        return
    c = j.counts
    st.caption(
        "Records with the same key are compared feature by feature through a 64-bit digest of"
        " each feature's values (their CRC-32C and CRC-32): two different values agree only by"
        " chance, about once in 2⁶⁴."
    )
    st.markdown(
        f"Joined by **{md_text(j.key)}**.\n\n"
        f"- **Added** (in B only): {_records(other, j.added, c['added'])}\n"
        f"- **Removed** (in A only): {_records(src, j.removed, c['removed'])}\n"
        f"- **Changed**: {_records(src, [p[0] for p in j.changed], c['changed'])} of A"
        f" ({_linked('in B', _filtered(other, _index_in([p[1] for p in j.changed])))})\n"
        f"- **Unchanged**: {plural(c['unchanged'], 'record')}"
    )
    if j.by_feature:
        rows = []
        for name, n in j.by_feature.items():
            pairs = j.by_feature_pairs.get(name, [])
            a_url = _filtered(src, _index_in([p[0] for p in pairs]))
            b_url = _filtered(other, _index_in([p[1] for p in pairs]))
            rows.append(
                f"- **{md_text(name)}** changed in {plural(n, 'record')}:"
                f" {_linked('in A', a_url)} · {_linked('in B', b_url)}"
            )
        st.markdown("Changed, feature by feature:\n\n" + "\n".join(rows))


def _changed(src: Source, other: Source, diff: DatasetDiff) -> None:
    """The first changed pairs with the features that changed, keys held twice, and records
    without the key."""
    j = diff.join
    if j is None:
        return
    c = j.counts
    if j.changed:
        st.markdown("#### Changed records")
        lines = ["| A | B | Features changed |", "|---|---|---|"]
        for (ra, rb), feats in list(zip(j.changed, j.changed_features))[:SHOWN]:
            lines.append(
                f"| {_record(src, ra)} | {_record(other, rb)} | {md_text(', '.join(feats))} |"
            )
        if c["changed"] > SHOWN:
            lines.append(
                f"| … | … | the first {SHOWN} of {plural(c['changed'], 'changed record')} |"
            )
        with st.container(key="tfb-compare-changed"):
            st.markdown("\n".join(lines))
    for side_name, side, groups, keys in (
        ("A", src, j.duplicates_a, c["duplicate_keys_a"]),
        ("B", other, j.duplicates_b, c["duplicate_keys_b"]),
    ):
        if keys:
            shown = "; ".join(
                f"{md_text(value_text(k))}: " + ", ".join(_record(side, n) for n in recs)
                for k, recs in groups[:SHOWN]
            )
            st.warning(
                f"{plural(keys, 'key')} of {md_text(j.key)} held by several records of"
                f" {side_name} (left out of the counts above): {shown}",
                icon=":material/content_copy:",
            )
    for side_name, side, nums, n in (
        ("A", src, j.no_key_a, c["no_key_a"]),
        ("B", other, j.no_key_b, c["no_key_b"]),
    ):
        if n:
            st.caption(f"Without {md_text(j.key)} in {side_name}: {_records(side, nums, n)}")


def _index_in(numbers: Sequence[int]) -> str:
    return f"index in [{', '.join(str(n) for n in numbers[:LINKED])}]"
