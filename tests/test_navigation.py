"""Links between pages are per session: the router of one session registers its pages for
that session alone, so a session never links to (or is cleared by) another session's pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_support import no_crash, start_app

from browser_app.sample_data import write_sample


def _no_router() -> None:
    """A page drawn alone in its own session: what does it link to?"""
    import streamlit as st

    from browser_app.ui import navigation

    st.write(f"records page: {navigation.page('records') is not None}")


def test_a_session_without_a_router_sees_no_other_sessions_pages(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    write_sample(tmp_path)
    routed = start_app(monkeypatch, tmp_path)
    no_crash(routed)
    table = routed.session_state["tfb:pages"]
    assert {"records", "gallery", "overview", "schema", "export"} <= set(table)
    alone = start_app(monkeypatch, tmp_path, script=_no_router)
    assert [m.value for m in alone.markdown] == ["records page: False"]
    # ... and the routed session keeps its own pages after the other one ran.
    routed.run()
    assert set(routed.session_state["tfb:pages"]) == set(table)
