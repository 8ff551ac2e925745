"""Text from files, names and the URL reaches the app's Markdown escaped, on every page.

A dataset whose feature names, values, class texts, label-map names, file and folder names,
edits and review comments are Markdown/HTML payloads (``hostile_data``) is opened on every
page; every string the app hands to Streamlit as Markdown (bodies, labels, help texts,
captions) is checked for live markup. Widgets that show plain text (code, JSON, text,
dataframes, option lists) are left out: they never interpret it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_support import start_app
from hostile_data import RLO, unescaped, write_hostile_root
from streamlit.testing.v1 import AppTest

PAGES = (
    "records",
    "gallery",
    "overview",
    "schema",
    "statistics",
    "filter",
    "changes",
    "export",
)
# Protos whose strings Streamlit shows as plain text.
_PLAIN = {"Code", "Json", "Text", "Arrow", "DataFrame", "VegaLiteChart", "ArrowVegaLiteChart"}
# Fields of other protos that are plain text or not text at all.
_NOT_MARKDOWN = {
    "id",
    "form_id",
    "key",
    "options",
    "default",
    "value",
    "type",
    "url",
    "markup",
    "icon",
    "data",
    "spec",
    "file_name",
    "mime",
    "placeholder",
    "raw_value",
}
# Plain-text fields that are labels all the same: no bidirectional control may act in them.
_PLAIN_LABELS = {"options", "raw_value", "raw_values", "default"}


def _strings(msg: Any, where: str) -> Iterator[tuple[str, str]]:
    """``(where, text)`` for every string a proto hands to Markdown."""
    name = type(msg).__name__
    if name in _PLAIN:
        return
    for field, value in msg.ListFields():
        if field.name in _PLAIN_LABELS and field.type == field.TYPE_STRING:
            texts = [value] if isinstance(value, str) else list(value)
            yield from ((f"{where}.{name}.{field.name}:plain", t) for t in texts)
            continue
        if field.name in _NOT_MARKDOWN and name != "Markdown" and field.type != field.TYPE_MESSAGE:
            continue  # (messages are read: a pill's option has Markdown content)
        repeated = not isinstance(value, (str, bytes)) and hasattr(value, "__len__")
        if field.type == field.TYPE_STRING:
            values = value if repeated else [value]
            for v in values:
                yield f"{where}.{name}.{field.name}", v
        elif field.type == field.TYPE_MESSAGE:
            values = value if repeated else [value]
            for v in values:
                yield from _strings(v, f"{where}.{name}")


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


# The app's own HTML (its style sheet, the pager's line) holds no text from data at all.
_FROM_DATA = ("127.0.0.1:", "RED", "txet desrever", "x^2", "heading", "link", RLO)


def live_markup(at: AppTest) -> list[tuple[str, str, list[str]]]:
    out = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        for where, text in _strings(proto, type(node).__name__):
            if where.endswith(":plain"):
                found = [RLO] if RLO in text else []
            elif where.startswith("UnknownElement.BidiComponent"):
                # An element's data: the element sets every text of it as text, never as
                # Markdown or HTML (tests/test_e2e_gallery_grid.py shows an HTML label as
                # text in Chromium); no bidirectional control may reach it.
                # (its "grid" is an identifier, never shown; so are its other fields: ids)
                found = []
                if where.endswith(".json") and text.strip():
                    data = json.loads(text)
                    if isinstance(data, dict):
                        data = {k: v for k, v in data.items() if k != "grid"}
                    found = [RLO] if "\\u202e" in json.dumps(data) else []
            elif where.startswith("Html."):
                found = [m for m in _FROM_DATA if m in text]
            elif where.startswith("Dataframe."):
                # Plain text, but a column title is a label: no bidirectional control in it.
                found = []
                if where.endswith(".columns"):
                    titles = [str(c.get("label", "")) for c in json.loads(text).values()]
                    found = [RLO for t in titles if RLO in t]
            else:
                found = unescaped(text)
                if "\\\\" in text:  # escaped twice: the reader would see the backslashes
                    found.append("escaped twice")
            if found:
                out.append((where, text[:160], found))
    return out


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("hostile")
    return root, write_hostile_root(root, port=9, cache=root.parent / "hostile-cache")


def _app(monkeypatch: pytest.MonkeyPatch, root: Path, **params: str) -> AppTest:
    monkeypatch.setenv("TFRECORD_BROWSER_CACHE", str(root.parent / "hostile-cache"))
    return start_app(monkeypatch, root, params=params)


@pytest.mark.parametrize("page", PAGES)
def test_every_page_shows_file_text_as_text(monkeypatch, hostile, page) -> None:
    root, files = hostile
    at = _app(monkeypatch, root, file=files["main"], record="1")
    if page != "records":
        at.switch_page(f"ui/pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    if page == "statistics":
        box = at.selectbox(key="tfb:w:statistics:feature")
        for name in box.options[:12]:
            box.set_value(name).run()
            assert not live_markup(at), live_markup(at)
    if page == "filter":
        at.text_input(key="tfb:w:filter:expr").input('caption in "x" or has(`:red[no]`)').run()
    assert not at.exception, [e.value for e in at.exception]
    assert not live_markup(at), live_markup(at)


@pytest.mark.parametrize("record", ["0", "1", "2", "3", "4"])
def test_records_with_markup_in_every_field(monkeypatch, hostile, record) -> None:
    root, files = hostile
    at = _app(monkeypatch, root, file=files["main"], record=record)
    assert not at.exception, [e.value for e in at.exception]
    assert not live_markup(at), live_markup(at)
    shown = " ".join(m.value for m in at.main.markdown)
    if record == "2":  # the review comment is there, as text
        assert "txet desrever" in shown and "‹U+202E›" in shown
    if record == "0":  # and so is the edit
        status = at.main.dataframe[0].value["status"]
        assert status.iloc[0].startswith("✎ edited")
    # The editor shows the same record's names and values in its own widgets.
    at.get("button_group")[0].set_value("Edit").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Editing" in " ".join(m.value for m in at.main.markdown)
    assert not live_markup(at), live_markup(at)


def test_a_hostile_file_name_in_a_hostile_folder(monkeypatch, hostile) -> None:
    root, files = hostile
    at = _app(monkeypatch, root, file=files["named"])
    assert not at.exception
    assert at.main.dataframe  # it opened
    assert not live_markup(at), live_markup(at)
    for page in PAGES[1:]:
        at.switch_page(f"ui/pages/{page}.py").run()
        assert not live_markup(at), (page, live_markup(at))


@pytest.mark.parametrize(
    "spec",
    [
        "missing ![x](http://127.0.0.1:9/u.png)",
        "nothing :red[here] $x^2$ <img src=x>",
        f"{RLO}gpj.tfrecord",
        "a@10000000",
        "../" * 3 + "etc/passwd",
    ],
)
def test_the_url_is_never_markup(monkeypatch, hostile, spec) -> None:
    root, _ = hostile
    at = _app(monkeypatch, root, file=spec)
    assert not at.exception
    assert at.error or at.warning or at.info  # said, in words
    assert not live_markup(at), live_markup(at)
    # The message names what was asked, as text: Markdown's escapes and the word joiners
    # that keep a URL from becoming a link read away, a bidirectional control shown by name.
    said = [re.sub(r"\\(.)", r"\1", e.value).replace("\u2060", "") for e in at.main.error]
    assert any(spec.replace(RLO, "‹U+202E›") in text for text in said), said
