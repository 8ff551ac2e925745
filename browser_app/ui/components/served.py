"""An element's own files served once a page load, by URL, instead of with every run.

Streamlit sends an element's inline JavaScript and CSS with every run that draws it: for an
element drawn at each key of a review, that is paid at each key. So the element's files are
served by the app's own server under names holding a hash of their content, and what is
inline is a loader of a few hundred bytes that imports the module and links the style sheet,
once a page load.

Where the server has the app's routes (``streamlit_app.py``'s ``st.App``, :func:`routes`),
the files are served at ``/tfb/element/<stem>.<hash>.<ext>`` as never changing
(``Cache-Control: immutable``): the browser fetches each once, and the gallery's worker,
which loads the element's own module again, finds it in the browser's cache instead of
waiting for a server busy sending the page's pictures. Elsewhere (a server started on the
bare script) they are media files of Streamlit's (registered on every run that draws the
element, like its pictures); outside a running app (no media file manager) they go inline.

Every element of the package is mounted through :func:`renderer`."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import streamlit as st
from streamlit import runtime

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

__all__ = ["ELEMENT_PATH", "LOADER", "asset", "element_file", "renderer", "routes"]

ELEMENT_PATH = "/tfb/element"
_MIMES = {"js": "text/javascript", "css": "text/css"}
_routed = False  # this process serves the element files itself (routes())

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


@cache
def _served_name(name: str) -> str:
    """Asset ``name`` (``gallery.js``) as the element route serves it: ``gallery.<hash>.js``,
    the hash of its content."""
    stem, _, ext = name.rpartition(".")
    digest = hashlib.sha256(asset(name).encode("utf-8")).hexdigest()[:20]
    return f"{stem}.{digest}.{ext}"


@cache
def _element_files() -> dict[str, tuple[bytes, str]]:
    """Every script and style sheet of the package's elements by its served name: its bytes
    and type."""
    out = {}
    for f in (resources.files(__package__) / "assets").iterdir():
        ext = f.name.rpartition(".")[2]
        if ext in _MIMES:
            out[_served_name(f.name)] = (asset(f.name).encode("utf-8"), _MIMES[ext])
    return out


def element_file(name: str) -> tuple[bytes, str] | None:
    """The bytes and type of the element file served as ``name``; None for any other name
    (one the package has not, or of an older content). Nothing named by a request is ever
    opened: it is looked up among the package's files."""
    return _element_files().get(name)


def routes() -> list[BaseRoute]:
    """The route of the elements' files, for the app's ``st.App``; from now on the elements
    of this process load their files from it."""
    from starlette.responses import Response
    from starlette.routing import Route

    global _routed

    async def endpoint(request: Request) -> Response:
        found = element_file(str(request.path_params.get("name", "")))
        if found is None:
            return Response("no such file", status_code=404, media_type="text/plain")
        data, mime = found
        return Response(
            data,
            media_type=mime,
            headers={"Cache-Control": "public, max-age=31536000, immutable"},
        )

    _routed = True
    return [Route(ELEMENT_PATH + "/{name}", endpoint, methods=["GET"])]


def _url(name: str, mime: str) -> str | None:
    """The URL the app's server serves asset ``name`` at for this session (registered for
    this run where it is a media file), or None outside a running app."""
    if _routed:
        return f"{ELEMENT_PATH}/{_served_name(name)}"
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
