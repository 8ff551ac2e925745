"""Overview: for a dataset that describes itself (a TFDS dataset, a TFX ExampleGen output)
its name, version, description, citation and homepage, its splits (one is open; the others a
click away) with their declared and counted records, what its metadata and first records say
against each other, and its declared features; then files, sizes, compression, record count,
kind, integrity and features."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from browser_app.edits import FEATURE_LISTS
from browser_app.ui import frame, navigation, services, state
from browser_app.ui.services import datasets
from browser_app.ui.source import Source
from browser_app.ui.state import splits as split_state
from browser_app.ui.widgets import jobs
from browser_app.view import kind_label, label_text, md_text, plural, problem_dict
from browser_app.view.summary import dataset_facts, declared_features, split_rows
from codec.kinds import COMPRESSION, DATA_CRC, RAW, TRUNCATED
from codec.tfds import check_shard_lengths
from codec.values import format_bytes

MAX_PROBLEM_BUTTONS = 25
MAX_FINDINGS = 30  # findings about a dataset folder listed; the rest counted
MAX_CHOICES = 24  # other datasets of a folder offered as buttons


def render() -> None:
    src = frame.start("Overview", needs_records=False)
    if src is None:
        return
    ds = src.dataset
    if src.split_folder is not None:
        _dataset(src)
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
    if src.skipped:
        _skipped(src)

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


def _skipped(src: Source) -> None:
    """What the folder or ``**`` glob, opened by the files' content, left out and why."""
    with st.expander(
        f"Left out: {plural(len(src.skipped), 'file')} that {md_text(src.spec)} holds",
        icon=":material/filter_alt_off:",
    ):
        st.caption(
            "Files are opened by their content: every file whose first record header checks"
            " out, whatever its name. These did not."
        )
        st.dataframe(
            pd.DataFrame([{"file": p, "why": why} for p, why in src.skipped]),
            hide_index=True,
            width="stretch",
            height=min(len(src.skipped), 12) * 35 + 38,
        )


# -- a dataset that describes itself ----------------------------------------------------------


def _on_split(folder_spec: str, name: str) -> None:
    split = state.widget_value(name)
    if split:
        state.set_source(f"{folder_spec}:{split}")


def _on_choice(spec: str) -> None:
    state.set_source(spec)


def _dataset(src: Source) -> None:
    """The dataset folder ``src`` is a split of: its facts, the split chooser, its splits with
    their declared and counted records, its findings, citation and declared features."""
    folder = src.split_folder
    assert folder is not None
    folder_spec = src.folder_spec or src.spec
    facts = dataset_facts(folder)
    st.markdown("##### Dataset")
    title = [f"**{md_text(str(facts['name']))}**"]
    if facts["config"]:
        title.append(f"config {md_text(str(facts['config']))}")
    if facts["version"]:
        title.append(f"version {md_text(str(facts['version']))}")
    title.append(str(facts["kind"]))
    if facts["supervised_keys"]:
        title.append(f"supervised: {md_text(str(facts['supervised_keys']))}")
    head = st.columns([5, 1], vertical_alignment="center")
    head[0].markdown(" · ".join(title))
    homepage = facts["homepage"]
    if isinstance(homepage, str) and homepage.startswith(("https://", "http://")):
        head[1].link_button("Homepage", homepage, icon=":material/open_in_new:")
    if facts["description"]:
        lines = [md_text(line) for line in str(facts["description"]).splitlines() if line.strip()]
        st.markdown("  \n".join(lines[:40]) + ("  \n…" if len(lines) > 40 else ""))

    names = [s.name for s in folder.splits]
    files = {s.name: s.files for s in folder.splits}
    sizes = {n: datasets.split_bytes(f, src.anon) for n, f in files.items()}
    auto = sum(sizes.values()) <= services.AUTO_VERIFY_BYTES
    counting = auto or split_state.counts_asked(folder_spec)
    counts: dict[str, tuple[int, ...] | None] = {}
    errors: list[str] = []
    for n in names:
        if not files[n]:
            counts[n] = ()
        elif n == src.split or counting:
            got = datasets.split_counts(tuple(files[n]), src.anon)
            counts[n] = got.counts
            if got.error:
                errors.append(f"split {n!r}: {got.error}")

    widget = f"split:{folder_spec}"
    state.set_widget_value(widget, src.split)
    st.radio(
        "Split",
        names,
        key=state.widget_key(widget),
        horizontal=True,
        on_change=_on_split,
        args=(folder_spec, widget),
        format_func=lambda n: label_text(
            n + (f" · {plural(sum(c), 'record')}" if (c := counts.get(n)) is not None else "")
        ),
        help="The split the pages show; the URL carries it (file=FOLDER:SPLIT).",
    )
    rows = split_rows(folder, counts, src.split)
    table = pd.DataFrame(rows)
    table["split"] = [r["split"] + (" · open" if r["open"] else "") for r in rows]
    table = table.drop(columns=["open"])
    for col in ("declared", "counted", "bytes"):
        table[col] = pd.array(table[col], dtype="Int64")
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        height=min(len(table), 10) * 35 + 38,
        column_config={
            "declared": st.column_config.NumberColumn(
                "declared records", help="dataset_info.json's shardLengths, summed"
            ),
            "counted": st.column_config.NumberColumn(
                "counted records", help="records found by a header scan of the split's files"
            ),
            "bytes": st.column_config.NumberColumn("declared bytes", format="%d"),
        },
    )
    if not counting and any(counts.get(n) is None for n in names):
        total = format_bytes(sum(sizes.values()))
        st.caption(f"The other splits are counted when asked ({total} in all).")
        if st.button(
            "Count the records of every split",
            key=state.widget_key(f"split:count:{folder_spec}"),
            icon=":material/numbers:",
        ):
            split_state.ask_counts(folder_spec)
            st.rerun()

    findings = list(folder.findings) + errors
    for s in folder.splits:
        counted = counts.get(s.name)
        if counted is not None and len(counted) == len(s.files):
            findings.extend(check_shard_lengths(s, counted))
    checked = datasets.first_checks(src)
    _findings(findings, checked, folder.tfds is not None)
    for note in folder.notes:
        st.caption(md_text(note))
    if src.choices:
        _choices(src)
    if facts["citation"]:
        with st.expander("Citation", icon=":material/format_quote:"):
            st.code(str(facts["citation"]), language="bibtex", wrap_lines=True)
    if folder.tfds is not None and folder.tfds.features:
        with st.expander(
            f"Declared features ({len(folder.tfds.features):,})", icon=":material/schema:"
        ):
            st.dataframe(
                pd.DataFrame(declared_features(folder.tfds.features)),
                hide_index=True,
                width="stretch",
            )


def _findings(findings: list[str], checked: list[str], tfds: bool) -> None:
    """What the dataset's metadata and its files say against each other, in words."""
    if not findings and not checked:
        if tfds:
            st.success(
                "The metadata and the files agree: the splits counted hold the records"
                " dataset_info.json declares, and the first records match features.json.",
                icon=":material/fact_check:",
            )
        return
    lines = [f"- {md_text(f)}" for f in findings[:MAX_FINDINGS]]
    if len(findings) > MAX_FINDINGS:
        lines.append(f"- … and {len(findings) - MAX_FINDINGS:,} more")
    if checked:
        first = plural(datasets.CHECKED_RECORDS, "record")
        head = f"The first {first} against features.json:"
        lines.append(f"- {head}")
        lines += [f"    - {md_text(c)}" for c in checked[:MAX_FINDINGS]]
    st.warning(
        f"**{plural(len(findings) + len(checked), 'finding')}** about this dataset"
        " (its records still open as plain records):\n\n" + "\n".join(lines),
        icon=":material/rule:",
    )


def _choices(src: Source) -> None:
    """The other TFDS datasets and configs of the folder the spec named, as buttons."""
    held = plural(len(src.choices), "TFDS dataset or config", "TFDS datasets or configs")
    st.caption(f"{md_text(src.spec)} holds {held}: {md_text(src.folder_spec or '')} is open.")
    cols = st.columns(4)
    for i, choice in enumerate(src.choices[:MAX_CHOICES]):
        cols[i % 4].button(
            label_text(choice),
            key=state.widget_key(f"split:choice:{choice}"),
            type="primary" if choice == src.folder_spec else "secondary",
            disabled=choice == src.folder_spec,
            on_click=_on_choice,
            args=(choice,),
            width="stretch",
        )
    if len(src.choices) > MAX_CHOICES:
        st.caption(f"… and {len(src.choices) - MAX_CHOICES:,} more: open them by path.")


if __name__ == "__main__":
    render()
