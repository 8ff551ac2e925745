"""No page sets a widget's value through Session State while also giving it a default.

Streamlit then logs "was created with a default value but also had its value set via the
Session State API" with a stack trace, once per server. AppTest runs without a runtime, which
skips that check; these tests turn it back on and record what it would log."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from app_support import page_script, start_app
from conftest import DATA
from streamlit.elements.lib import policies
from streamlit.testing.v1 import AppTest


@pytest.fixture
def policy_warnings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What Streamlit's widget checks log, as they do in a real server (every time, not once)."""
    logged: list[str] = []

    class _Log:
        def warning(self, msg: str, *args: object, **_kw: object) -> None:
            logged.append(msg % args)

    monkeypatch.setattr(policies, "runtime", SimpleNamespace(exists=lambda: True))
    monkeypatch.setattr(policies, "_LOGGER", _Log())
    monkeypatch.setattr(policies, "_shown_default_value_warning", False, raising=False)
    return logged


def _page(monkeypatch: pytest.MonkeyPatch, root: Path, name: str, path: str) -> AppTest:
    script = page_script(name)
    return start_app(monkeypatch, root, str(root / path), timeout=30, script=script)


def test_paging_filter_results_logs_no_session_state_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, policy_warnings: list[str]
) -> None:
    shutil.copy(DATA / "basic.tfrecord", tmp_path / "basic.tfrecord")
    at = _page(monkeypatch, tmp_path, "filter", "basic.tfrecord")
    at.text_input(key="tfb:w:filter:expr").input("feature1 >= 0").run()
    assert not at.exception, [e.value for e in at.exception]
    at.pagination(key="tfb:w:filter:page").select(2).run()
    assert at.main.dataframe[0].value["#"].iloc[0] == 25
    # A new filter starts again on its first page.
    at.text_input(key="tfb:w:filter:expr").input("feature1 >= 1").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.pagination(key="tfb:w:filter:page").value == 1
    at.pagination(key="tfb:w:filter:page").select(2).run()
    assert not policy_warnings, policy_warnings
