"""Class names in the app: which names files name which features of the open source, and the
sidebar's "Class names" section where the person binds a names file to a feature.

The names of a source (:func:`for_source`), latest first to win:

1. found with the data (:func:`browser_app.ui.services.names.beside`): a TFDS dataset's
   ClassLabel names, ``<feature>.labels.txt``, ``label_map.pbtxt`` (the box class lists),
   YouTube-8M's ``vocabulary.csv`` and AudioSet's ``class_labels_indices.csv`` (``labels``);
   each may be turned off;
2. the label map chosen for the source (the Schema page's "Label map", as before): the names
   of the box class lists (``<prefix>class/label``);
3. a names file the person uploaded for a feature in this session.

Binding a file to a box class list sets the label map too, so the boxes on the pictures, the
label checks of the schema and the class facets all read the same names.
"""

from __future__ import annotations

import streamlit as st

from browser_app.selection import is_class_feature
from browser_app.ui import services, state
from browser_app.ui.services import names as name_service
from browser_app.ui.source import Source
from browser_app.ui.state import names as names_state
from browser_app.view import label_text, md_text, plural
from codec.errors import DecodeError
from codec.filters import FilterSyntaxError, spell_names
from codec.kinds import INT64
from codec.labelmap import LabelMap
from codec.names import LABEL_MAP, MAX_NAMES_BYTES, ClassNames, parse_names

__all__ = ["Names", "for_source", "sidebar", "spelled"]

Names = dict[str, ClassNames]
"""Class names by record key."""

_BOX_LABELS = "class/label"  # the end of a box class list's key: what a label map names


def _label_map_names(src: Source) -> dict[str, ClassNames]:
    """The label map chosen for ``src`` as the names of its box class lists."""
    chosen = state.label_map(src.spec)
    if chosen is None:
        return {}
    feats, _lists = services.usual_types(src)
    keys = [k for k in feats if k.endswith(_BOX_LABELS)] or ["image/object/class/label"]
    names = ClassNames(dict(chosen[1].names), chosen[0], LABEL_MAP)
    return dict.fromkeys(keys, names)


def for_source(src: Source) -> dict[str, ClassNames]:
    """The class names of the features of ``src`` in this session, by record key: found
    with the data (unless turned off), the label map chosen for it, then the names files the
    person bound (which win)."""
    found, _problems = name_service.beside(src)
    off = names_state.unbound(src.spec)
    out = {k: v for k, v in found.items() if k not in off}
    out.update(_label_map_names(src))
    out.update(names_state.bound(src.spec))
    return out


def for_evaluation(src: Source) -> dict[str, ClassNames]:
    """The class names an evaluation of ``src`` reads its classes with: those of
    :func:`for_source`, and every names file found with the data whatever features the first
    records have (a label map turns ground truth that names classes by text into the labels
    predictions number them with, although the records hold no label list)."""
    return {**name_service.every_beside(src), **for_source(src)}


def spelled(src: Source, expression: str) -> str:
    """``expression`` as a selection keeps it: the class names it compares with features
    whose names are bound in this session only (not found with the data, which every session
    and every link finds) written as their labels, so the same records are selected where
    those names are not bound. Unchanged when it uses none, or cannot be read."""
    found = name_service.beside(src)[0]
    mine = {
        k: v
        for k, v in for_source(src).items()
        if k not in found or name_service.names_key({k: v}) != name_service.names_key({k: found[k]})
    }
    if not mine:
        return expression
    try:
        return spell_names(expression, mine)
    except FilterSyntaxError:
        return expression


# -- the sidebar's section ---------------------------------------------------------------------


def _feature_name(src: Source) -> str:
    return f"names:feature:{src.tag}"


def _upload_name(src: Source) -> str:
    return f"names:upload:{src.tag}"


def _on_upload(src: Source) -> None:
    """A names file was uploaded: read it (its size checked first) and bind it to the feature
    chosen; a file that cannot be used is remembered with why, and nothing changes."""
    up = state.widget_value(_upload_name(src))
    feature = state.widget_value(_feature_name(src))
    if up is None or not feature:
        return
    if names_state.refused(up.file_id) is not None:
        return
    try:
        if up.size > MAX_NAMES_BYTES:
            raise DecodeError(
                f"{up.size:,} bytes is too large for a names file (at most {MAX_NAMES_BYTES:,})"
            )
        names = parse_names(up.getvalue(), source=up.name)
    except DecodeError as exc:
        text = str(exc)
        prefix = f"{up.name}: "
        names_state.set_refused(up.file_id, text.removeprefix(prefix))
        return
    names_state.bind(src.spec, str(feature), names)
    if str(feature).endswith(_BOX_LABELS):
        # The label map of the boxes: drawn captions, label checks and facets read it.
        state.set_label_map(src.spec, up.name, LabelMap(dict(names.names)))
    state.flash(f"{feature}: {names.describe()}", "success")


def _forget(src: Source, feature: str) -> None:
    was = names_state.bound(src.spec).get(feature)
    names_state.bind(src.spec, feature, None)
    chosen = state.label_map(src.spec)
    if was is not None and chosen is not None and chosen[0] == was.source:
        state.set_label_map(src.spec, None, None)


def _turn_off(src: Source, feature: str) -> None:
    names_state.set_unbound(src.spec, feature, True)


def _turn_on(src: Source, feature: str) -> None:
    names_state.set_unbound(src.spec, feature, False)


def _candidates(src: Source) -> list[str]:
    """The features a names file may be bound to: whole numbers, class labels first."""
    feats, lists = services.usual_types(src)
    ints = [k for k, t in {**feats, **lists}.items() if t == INT64]
    return sorted(ints, key=lambda k: (not is_class_feature(k), k))


def sidebar(src: Source | None) -> None:
    """The sidebar's "Class names" section: the names each feature has and where they come
    from (each may be turned off or forgotten), the names files beside the data that could
    not be used, and an uploader that binds a names file to a feature."""
    if src is None:
        return
    features = _candidates(src)
    found, problems = name_service.beside(src)
    bound = names_state.bound(src.spec)
    off = names_state.unbound(src.spec)
    now = for_source(src)
    if not features and not now and not problems:
        return
    # One title whatever it holds: a new title would be a new expander, closed again just
    # after the person bound a file in it.
    with st.sidebar.expander("Class names", expanded=False, icon=":material/label:"):
        for feature, names in now.items():
            where = "uploaded" if feature in bound else "beside the data"
            if feature not in bound and feature not in found:
                where = "the label map"
            c = st.columns([5, 1], vertical_alignment="center")
            c[0].caption(f"**{md_text(feature)}** · {md_text(names.describe())} · {where}")
            if feature in bound:
                c[1].button(
                    "",
                    icon=":material/close:",
                    key=state.widget_key(f"names:forget:{src.tag}:{feature}"),
                    on_click=_forget,
                    args=(src, feature),
                    help="Forget these names",
                )
            elif feature in found:
                c[1].button(
                    "",
                    icon=":material/visibility_off:",
                    key=state.widget_key(f"names:off:{src.tag}:{feature}"),
                    on_click=_turn_off,
                    args=(src, feature),
                    help="Do not use the names found beside the data",
                )
        for feature in sorted(off & set(found)):
            st.button(
                f"Use the names of {label_text(feature)} again",
                key=state.widget_key(f"names:on:{src.tag}:{feature}"),
                on_click=_turn_on,
                args=(src, feature),
            )
        for problem in problems:
            st.caption(f"⚠ Left out: {md_text(problem)}")
        if not features:
            st.caption("No feature of whole numbers to name.")
            return
        name = _feature_name(src)
        if state.widget_value(name) not in features:
            unnamed = [f for f in features if f not in now]
            state.set_widget_value(name, (unnamed or features)[0])
        st.selectbox(
            "Feature",
            features,
            key=state.widget_key(name),
            format_func=label_text,
            help="The feature whose labels the file names",
        )
        up = st.file_uploader(
            "Names file",
            type=["txt", "csv", "tsv", "pbtxt"],
            key=state.widget_key(_upload_name(src)),
            on_change=_on_upload,
            args=(src,),
            help="A TFDS labels file, a label_map.pbtxt, YouTube-8M's vocabulary.csv, AudioSet's"
            " class_labels_indices.csv, a CSV with index and name columns, or one name per"
            " line (the first line is label 0)",
        )
        if up is not None:
            why = names_state.refused(up.file_id)
            if why is not None:
                st.error(
                    f"{md_text(up.name)} cannot be used: {md_text(why)}", icon=":material/error:"
                )
        if now:
            st.caption(
                f"{plural(len(now), 'feature')} named: labels show by name in the gallery,"
                ' the tables, the facets and the schema; filters take label == "cat".'
            )
