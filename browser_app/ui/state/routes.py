"""What this session hands to the app's own HTTP routes (:mod:`browser_app.ui.routes`): the
Streamlit session it is (a route's grant ends with it) and, per source, the unguessable
token its elements show the marks route."""

from __future__ import annotations

import secrets

from browser_app.ui.state.store import read, write

__all__ = ["mark_token", "streamlit_session"]


def streamlit_session() -> str | None:
    """The id Streamlit's runtime knows this session by (which the runtime says is active
    or not), or None outside a script run (a bare call, a test without a run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def mark_token(scope: str) -> str:
    """This session's token for marking records of the source ``scope`` (made on first
    use, ``secrets.token_urlsafe``: 256 bits; never the same for two sessions or sources)."""
    name = f"routes:mark-token:{scope}"
    token = read(name, str)
    if token is None:
        token = secrets.token_urlsafe(32)
        write(name, token)
    return token
