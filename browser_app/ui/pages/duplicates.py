"""Duplicates: the same picture more than once in the open source, or in the open split and
another split of its dataset (leakage), found by a dataset job on the session's executor
(:mod:`codec.jobs.duplicates`); the groups side by side with their records and splits, a copy
kept and the others dropped through the edit journal."""

from __future__ import annotations

import streamlit as st

from browser_app.ui import frame, opening, state
from browser_app.ui.source import Source
from browser_app.ui.widgets import compare, jobs
from browser_app.ui.widgets import duplicates as dup_widget
from browser_app.view import first_payloads, md_text
from browser_app.view.duplicates import (
    embedding_features,
    group_views,
    search_text,
    summary_text,
)
from codec import duplicates as dup
from codec.jobs.duplicates import DuplicatesJob, DuplicatesResult, source_tasks

GROUPS_PER_PAGE = 10
_ALONE = "(this split only)"


def _others(src: Source) -> list[str]:
    """What the open source may be searched with: the other splits of its dataset folder
    (by name), then the other datasets under the root (by spec, those beside it first; the
    files and splits of its own folder left out)."""
    folder = src.split_folder
    splits = []
    if folder is not None and src.split is not None:
        splits = [s.name for s in folder.splits if s.name != src.split and s.files]
    own = {src.split_spec(s) for s in splits}
    home = (src.folder_spec or "").rstrip("/")
    rest = [
        spec
        for spec in compare.candidates(src)
        if spec not in own
        and spec != home
        and not (home and (spec.startswith(home + "/") or spec.startswith(home + ":")))
    ]
    return splits + rest


def _sources(src: Source, other: str | None) -> list[Source] | None:
    if other is None:
        return [src]
    folder = src.split_folder
    names = {s.name for s in folder.splits} if folder is not None else set()
    spec = src.split_spec(other) if other in names else other  # a split's name, or a spec
    try:
        return [src, opening.open_source(spec)]
    except Exception as exc:
        st.error(f"{md_text(other)} cannot be opened: {md_text(str(exc))}")
        return None


_PICTURES = ""  # "Compare by": the pictures, not an embedding feature
_LOOK_AT = 50  # first records read for the features that hold embeddings

# Sources of at most this many bytes (all on this machine) are searched on opening the page
# (a page script's bare strings would be drawn on it: a comment, not a docstring).
AUTO_SEARCH_BYTES = 32 << 20


def render() -> None:
    src = frame.start("Duplicates")
    if src is None:
        return
    st.caption(
        "Records whose main pictures are the same: identical bytes, equal decoded pixels, or"
        " near copies by perceptual hashes (pHash and dHash; re-encoded, resized, cropped a"
        " little, mirrored)."
    )
    others = _others(src)
    features = embedding_features(first_payloads(src.dataset, _LOOK_AT))
    by = _PICTURES
    if features:
        by = str(
            st.selectbox(
                "Compare by",
                [_PICTURES, *features],
                format_func=lambda f: (
                    "the pictures (pHash and dHash)"
                    if f == _PICTURES
                    else f"{f} (an embedding of {features[f]} numbers, cosine distance)"
                ),
                key=state.widget_key("dups:by"),
                help="A feature holding an embedding (a float list of one length) is compared"
                " by the cosine distance of its vectors instead of the pictures' hashes",
            )
        )
    embedding = (by, features[by]) if by in features else None
    c = st.columns([2.2, 1.4, 1.2, 1], vertical_alignment="bottom")
    other = None
    across = False
    if others:
        pick = c[0].selectbox(
            f"Search {src.split or src.label} with",
            [_ALONE, *others],
            key=state.widget_key("dups:other"),
            help="Another split of the dataset, or another dataset under the root: a picture"
            " in both is a leak",
        )
        other = None if pick == _ALONE else str(pick)
        across = other is not None and c[0].checkbox(
            "Only pictures in both",
            value=True,
            key=state.widget_key("dups:across"),
        )
    cosine: float | None = None
    if embedding is None:
        threshold = int(
            c[1].number_input(
                "Threshold (bits)",
                min_value=0,
                max_value=dup.MAX_THRESHOLD,
                value=dup.DEFAULT_THRESHOLD,
                key=state.widget_key("dups:threshold"),
                help="The most bits in which the pHash, and the dHash, of two near copies may"
                " differ (0: equal hashes)",
            )
        )
        mirror = bool(
            c[2].checkbox("Mirrored copies", value=True, key=state.widget_key("dups:mirror"))
        )
    else:
        threshold, mirror = dup.DEFAULT_THRESHOLD, False
        cosine = float(
            c[1].number_input(
                "Cosine distance",
                min_value=0.0,
                max_value=2.0,
                value=dup.DEFAULT_COSINE,
                step=0.01,
                format="%g",
                key=state.widget_key("dups:cosine"),
                help="The largest cosine distance (1 − cosine similarity) between the"
                " embeddings of two copies",
            )
        )
    clicked = c[3].button(
        "Find duplicates", key=state.widget_key("dups:run"), icon=":material/content_copy:"
    )
    setting = (src.tag, repr(src.key), other, across, threshold, mirror, embedding, cosine)
    kept = state.duplicates_result(setting)
    result: DuplicatesResult | None = kept if isinstance(kept, DuplicatesResult) else None
    sources = _sources(src, other)
    if sources is None:
        return
    # A small local search runs at once (every picture is decoded: a few seconds at most).
    small = all(s.local_within(AUTO_SEARCH_BYTES) for s in sources)
    if clicked or (result is None and (small or state.duplicates_asked(setting))):
        state.ask_duplicates(setting)
        named = [
            (s.split or s.label, list(s.dataset.files), i > 0 and across)
            for i, s in enumerate(sources)
        ]
        sources_, tasks = source_tasks(named, executor=state.executor())
        try:
            result = jobs.run(
                DuplicatesJob(
                    sources_,
                    threshold=threshold,
                    mirror=mirror,
                    embedding=embedding,
                    cosine=cosine,
                ),
                tasks,
                key=f"duplicates:{src.tag}:{other}:{across}:{threshold}:{mirror}:{embedding}:{cosine}",
                what="The duplicate search",
                fresh=clicked,
            )
        except jobs.Stopped:
            return
        state.set_duplicates_result(setting, result)
        state.reset_widget("dups:page")
    if result is None:
        st.info("Press **Find duplicates** to search.", icon=":material/content_copy:")
        return
    _show(sources, result)


def _show(sources: list[Source], result: DuplicatesResult) -> None:
    st.markdown(f"**{md_text(summary_text(result))}**")
    st.caption(f"Compared by {md_text(search_text(result))}.")
    left = result.left_out()
    for why, got in left.items():
        st.warning(f"{got['count']:,} left out: {md_text(why)}.", icon=":material/broken_image:")
    for path, why in result.unreadable:
        st.error(f"Not read: {md_text(path)}: {md_text(why)}", icon=":material/error:")
    views = group_views(result)
    if not views:
        return
    pages = max(1, -(-len(views) // GROUPS_PER_PAGE))
    page = st.pagination(pages, key=state.widget_key("dups:page")) if pages > 1 else 1
    start = (max(1, int(page)) - 1) * GROUPS_PER_PAGE
    dup_widget.groups(sources, views[start : start + GROUPS_PER_PAGE])


if __name__ == "__main__":
    render()
