"""Overview: files, sizes, compression, record count, kind, integrity and features."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from browser_app.edits import FEATURE_LISTS
from browser_app.ui import frame, navigation, services, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import jobs
from browser_app.view import kind_label, md_text, plural, problem_dict
from codec.kinds import COMPRESSION, DATA_CRC, RAW, TRUNCATED
from codec.values import format_bytes

MAX_PROBLEM_BUTTONS = 25


def render() -> None:
    src = frame.start("Overview", needs_records=False)
    if src is None:
        return
    ds = src.dataset
    summary = services.feature_summary(src)
    reports = services.verified(src)
    if reports is None and (services.should_auto_verify(src) or state.verify_asked(src.spec)):
        reports = jobs.verify(src)

    records = ds.indexed if ds.index_complete else None
    damaged = sum(r["damaged"] for r in reports) if reports is not None else None
    recovered = sum(r["recovered"] for r in reports) if reports is not None else None
    skipped = (
        sum(r["skipped_bytes"] for r in reports)
        if reports is not None
        else sum(p.skipped for p in ds.problems)
    )
    m = st.columns(6)
    m[0].metric("Records", f"{records:,}" if records is not None else f"{ds.indexed:,}+")
    m[1].metric(
        "Intact",
        f"{records - damaged - (recovered or 0):,}"
        if records is not None and damaged is not None
        else "—",
        help="CRCs check and reached by following record lengths from the start of the file",
    )
    m[2].metric(
        "Recovered",
        f"{recovered:,}" if recovered is not None else "—",
        help="CRCs check, but found by searching past damaged bytes: possibly content of a"
        " damaged record",
    )
    m[3].metric("Damaged records", f"{damaged:,}" if damaged is not None else "—")
    m[4].metric("Skipped bytes", f"{skipped:,}")
    m[5].metric("Kind", kind_label(summary["kinds"]))

    st.markdown("##### Files")
    _files_table(src, reports)

    st.markdown("##### Integrity")
    if reports is None:
        total = sum(f.size for f in ds.files)
        st.info(
            f"The header scan has run; data CRCs are checked as records are read. Check every"
            f" CRC of {format_bytes(total)} now?",
            icon=":material/verified:",
        )
        st.caption(f"Jobs run on {md_text(jobs.where())} (see the sidebar).")
        if st.button("Check every CRC", key=state.widget_key("verify"), icon=":material/search:"):
            state.ask_verify(src.spec)
            state.set_job_cancelled(jobs.verify_key(src), False)  # asked again: run it
            st.rerun()
        problems = [problem_dict(p) for p in ds.problems]
    else:
        problems = [p for r in reports for p in r["problems"]]
        if not problems and not recovered:
            st.success(
                "Every CRC checks out: "
                + plural(sum(r["records"] for r in reports), "intact record")
                + ".",
                icon=":material/verified:",
            )
    if problems:
        _problems(src, problems, recovered)

    sampled = records is None or records > summary["records"] + summary["damaged"]
    st.markdown("##### Features" + (" — a sample" if sampled else ""))
    _features(summary, sampled)


def _files_table(src: Source, reports: list[dict[str, Any]] | None) -> None:
    by_path = {r["path"]: r for r in reports} if reports else {}
    rows = []
    for f in src.dataset.files:
        r = by_path.get(f.path)
        problems = len(r["problems"]) if r else len(f.problems)
        rows.append(
            {
                "file": src.rel(f.path),
                "size": format_bytes(f.file_size),
                "compression": f.compression,
                "stream bytes": f.size,
                "records": f.indexed if f.index_complete else None,
                "damaged": r["damaged"] if r else None,
                "recovered": r["recovered"] if r else None,
                "problems": problems,
                "status": (
                    "✓ intact"
                    if r and r["ok"]
                    else (
                        "✗ damaged"
                        if problems
                        else "header scan clean"
                        if f.index_complete
                        else "indexing…"
                    )
                ),
            }
        )
    df = pd.DataFrame(rows)
    df["records"] = pd.array(df["records"], dtype="Int64")
    df["damaged"] = pd.array(df["damaged"], dtype="Int64")
    df["recovered"] = pd.array(df["recovered"], dtype="Int64")
    st.dataframe(
        df,
        hide_index=True,
        width="stretch",
        height=min(len(df), 10) * 35 + 38,
        column_config={
            "stream bytes": st.column_config.NumberColumn(
                "stream bytes", format="%d", help="decompressed size"
            ),
        },
    )


def _problems(src: Source, problems: list[dict[str, Any]], recovered: int | None) -> None:
    st.error(_damage_sentence(problems, recovered), icon=":material/report:")
    for n, p in enumerate(problems[:MAX_PROBLEM_BUTTONS]):
        at = f"byte {p['offset']:,}" if p["offset"] is not None else "unknown offset"
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        c1.markdown(
            f"`{p['kind']}` · {md_text(src.rel(p['path']))} · **{at}** — {md_text(p['message'])}"
        )
        if p["offset"] is None:
            continue
        target = p["offset"] if p["kind"] == DATA_CRC else (p["end"] or p["offset"])
        index = src.dataset.record_at(p["path"], target)
        if index is None:
            index = max(0, src.dataset.indexed - 1)
        label = f"Record {index:,}" if p["kind"] == DATA_CRC else f"Before record {index:,}"
        if c2.button(label, key=state.widget_key(f"problem:{n}"), icon=":material/arrow_forward:"):
            state.set_record(index)
            navigation.goto("records")
    if len(problems) > MAX_PROBLEM_BUTTONS:
        st.caption(f"… and {len(problems) - MAX_PROBLEM_BUTTONS:,} more problems.")


def _damage_sentence(problems: list[dict[str, Any]], recovered: int | None) -> str:
    """What the damage means for the rest of the records, saying only what is known: damaged
    records and skipped regions, whether the records after them were reached by following
    the record lengths (intact) or by searching past the damage (recovered), and whether
    reading stopped (a damaged compressed stream, a cut)."""
    damaged = [p for p in problems if p["kind"] == DATA_CRC]
    other = [p for p in problems if p["kind"] != DATA_CRC]
    skipped = sum(
        max(0, (p["end"] or 0) - (p["offset"] or 0)) for p in other if p["offset"] is not None
    )
    parts = []
    if damaged:
        parts.append(plural(len(damaged), "damaged record"))
    if other:
        parts.append(plural(len(other), "unreadable region"))
    head = f"**{' and '.join(parts)}** ({skipped:,} bytes skipped)."
    stops = [p for p in other if p["kind"] in (COMPRESSION, TRUNCATED)]
    tail = []
    if recovered:
        were, are = ("was", "is") if recovered == 1 else ("were", "are")
        tail.append(
            f"{plural(recovered, 'record')} after a skipped region {were} found by searching"
            f" past the damage and {are} shown as *recovered*: their CRCs check, but they might"
            " be content of a damaged record."
        )
    elif recovered is None and other:
        tail.append("Records found after a skipped region are marked *recovered*.")
    if stops:
        before = "" if recovered else "; every other record before it is intact"
        tail.append(
            "Reading stopped where the stream is damaged or cut: nothing after that point can"
            f" be read{before}."
        )
    elif recovered == 0:
        tail.append("Every other record is intact and readable.")
    return " ".join([head, *tail])


def _features(summary: dict[str, Any], sampled: bool) -> None:
    feats = summary["features"]
    n = summary["records"]
    if not feats:
        if summary["kinds"].get(RAW):
            st.caption(
                "The records are raw bytes (not Examples): no features."
                f" ({plural(n, 'record')} seen)"
            )
        else:
            st.caption("No features in the records seen so far.")
        return
    rows = []
    presence = f"in the first {n:,}" if sampled else "in records"
    for e in feats:
        lo, hi = e["min_len"], e["max_len"]
        rows.append(
            {
                "feature": e["name"],
                "type": e["type"],
                "holds": e["content"],
                presence: f"{e['records']:,} of {n:,}",
                "length": f"{lo}" if lo == hi else f"{lo}–{hi}",
                "where": "feature list" if e["section"] == FEATURE_LISTS else "",
                "example": e["example"],
                "drift": "⚠ types differ" if e["drift"] else "",
            }
        )
    df = pd.DataFrame(rows)
    if not any(r["where"] for r in rows):
        df = df.drop(columns=["where"])
    if not any(r["drift"] for r in rows):
        df = df.drop(columns=["drift"])
    st.dataframe(df, hide_index=True, width="stretch", height=min(len(df), 20) * 35 + 38)
    more = f" ({summary['damaged']} damaged skipped)" if summary["damaged"] else ""
    if sampled:
        st.caption(
            f"A **sample**: the first {plural(n, 'record')} read{more}; types, presence and"
            " lengths may differ further on. The Schema page counts every record."
        )
    else:
        st.caption(f"Every record: {plural(n, 'record')} read{more}.")


if __name__ == "__main__":
    render()
