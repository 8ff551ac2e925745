"""An element's own files served once a page load, by URL, instead of with every run.

Streamlit sends an element's inline JavaScript and CSS with every run that draws it: for an
element drawn at each key of a review, that is paid at each key. So the element's files are
content-addressed media files of the app's own server (registered on every run that draws
the element, like its pictures), and what is inline is a loader of a few hundred bytes that
imports the module and links the style sheet, once a page load. Outside a running app (no
media file manager) the files go inline.

Every element of the package is mounted through :func:`renderer`."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import streamlit as st
from streamlit import runtime

__all__ = ["LOADER", "asset", "renderer"]

LOADER = """
const moduleUrl = new URL(%(js)s, location.href).href;
const styleUrl = new URL(%(css)s, location.href).href;
let loading = null;
function loaded() {
  if (!loading) {
    let link = document.querySelector(`link[data-tfb-style="${styleUrl}"]`);
    const style = link ? Promise.resolve() : new Promise((done) => {
      link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = styleUrl;
      link.dataset.tfbStyle = styleUrl;
      link.onload = link.onerror = () => done();
      document.head.appendChild(link);
    });
    loading = Promise.all([import(moduleUrl), style]).then(([module]) => module);
  }
  return loading;
}
export default async function (component) {
  return (await loaded()).default(component);
}
"""


@cache
def asset(name: str) -> str:
    """The text of ``assets/<name>`` of this package."""
    return (resources.files(__package__) / "assets" / name).read_text(encoding="utf-8")


def _url(name: str, mime: str) -> str | None:
    """The URL the app's server serves asset ``name`` at for this session (registered for
    this run), or None outside a running app."""
    if not runtime.exists():
        return None
    files = runtime.get_instance().media_file_mgr
    return files.add(asset(name).encode("utf-8"), mime, f"tfb-element-asset.{name}")


@cache
def _registered(name: str, stem: str, js_url: str | None, css_url: str | None) -> Any:
    if js_url is None or css_url is None:
        js, css = asset(f"{stem}.js"), asset(f"{stem}.css")
    else:
        js, css = LOADER % {"js": json.dumps(js_url), "css": json.dumps(css_url)}, None
    return st.components.v2.component(
        name, html=asset(f"{stem}.html"), css=css, js=js, isolate_styles=False
    )


def renderer(name: str, stem: str) -> Any:
    """The mounting command of element ``name`` whose files are ``assets/<stem>.html``,
    ``.js`` and ``.css``; call it on every run that draws the element (it registers the
    files for that run)."""
    js_url = _url(f"{stem}.js", "text/javascript")
    css_url = _url(f"{stem}.css", "text/css")
    return _registered(name, stem, js_url, css_url)
