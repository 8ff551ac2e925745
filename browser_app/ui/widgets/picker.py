"""The sidebar's "Open data" section: search the root folder, pick a file or a shard set, type
a path or pattern, reopen a recent one, or upload a small file. Under a URL root
(``--root s3://bucket/prefix``) the search lists the bucket, the path box takes URLs inside the
root as well, and a switch reads public buckets without credentials."""

from __future__ import annotations

import hashlib
import os

import streamlit as st

from browser_app.errors import InputError
from browser_app.paths import RootEntry, is_pattern, is_url_root, relative_inside
from browser_app.ui import opening, services, state
from browser_app.view import file_options, md_code, md_text, plural
from codec.errors import RemoteError
from codec.locations import is_url
from codec.values import format_bytes

__all__ = ["file_picker"]


def _open(spec: str, record: int = 0) -> None:
    spec = spec.strip()
    if not spec:
        return
    root = state.app_args().root
    try:
        opening.open_source(spec, root)
    except (InputError, RemoteError) as exc:
        state.flash(str(exc), "error")
        return
    opening.dismiss_inflate_offer()
    opening.try_again()  # trouble met by the source open before is not this one's
    state.set_source(spec, record)


def _on_pick() -> None:
    spec = state.widget_value("pick")
    if spec:
        _open(spec)


def _on_path() -> None:
    text = (state.widget_value("path") or "").strip()
    if not text:
        return
    # Absolute paths (and URLs) inside the root are shown and linked relative to it.
    root = state.app_args().root
    expanded = os.path.expanduser(text)
    if is_url(text):
        text = relative_inside(root, text) or text
    elif os.path.isabs(expanded) and not is_pattern(text) and not is_url_root(root):
        text = relative_inside(root, expanded) or text
    _open(text)


def _on_anon() -> None:
    state.set_anon(bool(state.widget_value("anon")))
    opening.try_again()  # the source opens again, the other way


def _listing(root: str, query: str) -> tuple[list[RootEntry], bool]:
    """The files under the root matching ``query``; a root that cannot be listed is said
    in the sidebar (the path box still opens what is typed)."""
    try:
        return services.list_files(root, query, state.anon())
    except (RemoteError, OSError) as exc:
        msg = str(exc) if isinstance(exc, RemoteError) else (exc.strerror or str(exc))
        st.sidebar.caption(f":red[The root cannot be listed:] {md_text(msg)}")
        return [], False


def _recent_key(spec: str) -> str:
    """The widget key of a recent spec's button (keys reach the page: a signed URL's is a
    digest)."""
    if state.link_spec(spec) == spec:
        return f"recent:{spec}"
    return "recent:" + hashlib.sha256(spec.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def _on_upload() -> None:
    up = state.widget_value("upload")
    if up is None:
        return
    spec = state.uploaded_specs().get(up.file_id)
    if spec is None or not state.upload_path(spec):
        try:
            spec = opening.store_upload(up.name, up)
        except InputError as exc:
            state.flash(str(exc), "error")
            return
        state.set_uploaded_spec(up.file_id, spec)
    _open(spec)


def _inflate_offer() -> None:
    """The higher inflate limit offered for a source refused by it, with a button."""
    offer = opening.inflate_offer()
    if offer is None:
        return
    sb = st.sidebar
    with sb.container(border=True):
        st.warning(
            f"**{md_text(offer.name)}** inflates to more than {format_bytes(offer.limit)}."
            + (
                f" Allow up to {format_bytes(offer.raise_to)} for it in this session?"
                if offer.raise_to is not None
                else " The cache disk has no room to allow more."
            ),
            icon=":material/compress:",
        )
        left, right = st.columns(2)
        if offer.raise_to is not None:
            left.button(
                f"Allow {format_bytes(offer.raise_to)}",
                key=state.widget_key("inflate:allow"),
                type="primary",
                on_click=opening.accept_inflate_offer,
            )
        right.button(
            "Dismiss",
            key=state.widget_key("inflate:dismiss"),
            on_click=opening.dismiss_inflate_offer,
        )


def file_picker() -> None:
    """The sidebar's "Open data" section: search the root, pick a file or shard set, type a
    path or pattern, reopen a recent one, or upload a small file."""
    root = state.app_args().root
    remote = is_url_root(root)
    sb = st.sidebar
    sb.caption(f"Root: {md_code(state.link_spec(root))}")
    if remote:
        state.set_widget_value("anon", state.anon())
        sb.toggle(
            "Anonymous access (public bucket)",
            key=state.widget_key("anon"),
            on_change=_on_anon,
            help="Read the bucket without credentials, as anyone may read a public one. Off:"
            " the credentials the server finds (environment, config files, metadata server).",
        )
    _inflate_offer()
    query = sb.text_input(
        "Search files",
        key=state.widget_key("search"),
        placeholder="name, *.tfrecord, train-*…",
        help="Filters the TFRecord files under the root by name (substring or glob).",
    )
    entries, truncated = _listing(root, query or "")
    options = file_options(entries)
    labels = dict(options)
    current = state.source_spec()
    # The box shows what is open, or nothing when that is not one of its entries (a folder,
    # a pattern, an upload): never a file opened before.
    state.set_widget_value("pick", current if current in labels else None)
    sb.selectbox(
        "Files under the root",
        [spec for spec, _ in options],
        format_func=lambda s: labels.get(s, s),
        key=state.widget_key("pick"),
        index=None,
        placeholder=(
            "No TFRecord files found" if not options else f"{plural(len(entries), 'file')}…"
        ),
        on_change=_on_pick,
    )
    if truncated:
        sb.caption("Showing the first matches only; refine the search.")
    sb.text_input(
        "TFRecord path",
        key=state.widget_key("path"),
        placeholder=("path or URL, " if remote else "path, ") + "folder, glob or name@N",
        help=(
            "Relative to the root, or a URL inside it. Globs (data/*.tfrecord), shard"
            " patterns (train-*-of-00010), name@N and folder prefixes open several objects"
            " as one. A signed https:// URL opens too; its signature is never put in links."
            if remote
            else "Relative to the root, or absolute inside it. Globs (data/*.tfrecord),"
            " shard patterns (train-*-of-00010) and name@N open several files as one."
            " Remote data (s3://, gs://, https://…) opens when the app is started with"
            " --root at a URL prefix."
        ),
        on_change=_on_path,
    )
    recent = [r for r in state.recent() if r != current][:5]
    if recent:
        sb.caption("Recent")
        for spec in recent:
            label = (
                spec[len(state.UPLOAD_PREFIX) :] + " (upload)"
                if state.is_upload(spec)
                else state.link_spec(spec)
            )
            sb.button(
                md_text(label),
                key=state.widget_key(_recent_key(spec)),
                type="tertiary",
                icon=":material/history:",
                on_click=_open,
                args=(spec,),
            )
    with sb.expander("Upload a file", icon=":material/upload:"):
        st.file_uploader(
            "TFRecord file (GZIP/ZLIB detected)",
            key=state.widget_key("upload"),
            on_change=_on_upload,
            max_upload_size=opening.UPLOAD_LIMIT_MB,
            help="For small files: the upload is stored in a private folder of the cache,"
            " read from there, and removed when the session ends (or after a day unused)."
            " Files on this machine are better opened by path.",
        )
