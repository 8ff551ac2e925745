"""The session's key space: every key of ``st.session_state`` the app uses is made here.

Keys start with ``tfb:``: ``tfb:w:<name>`` for a widget's own value (:func:`widget_key`),
``tfb:x:<name>`` for a value a module keeps between runs (:func:`read` and :func:`write`, used
by the typed accessors of this package only), and a few fixed ones for the URL's state."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import streamlit as st

__all__ = [
    "FlashKind",
    "flash",
    "pop_flashes",
    "read",
    "reset_widget",
    "set_widget_value",
    "widget_key",
    "widget_value",
    "write",
]

T = TypeVar("T")

_FLASH = "tfb:flash"


def _value_key(name: str) -> str:
    return f"tfb:x:{name}"


def read(name: str, kind: type[T]) -> T | None:
    """The session value ``name`` when it is a ``kind``, else None (never set, or set by an
    older version of the app to something else)."""
    value = st.session_state.get(_value_key(name))
    return value if isinstance(value, kind) else None


def write(name: str, value: object) -> None:
    """Keep ``value`` as the session value ``name`` (None forgets it, as far as :func:`read`
    is concerned)."""
    st.session_state[_value_key(name)] = value


def widget_key(name: str) -> str:
    """The session key for a widget called ``name`` (``tfb:w:<name>``)."""
    return f"tfb:w:{name}"


def widget_value(name: str, default: Any = None) -> Any:
    """The current value of the widget made with ``key=widget_key(name)``."""
    return st.session_state.get(widget_key(name), default)


def set_widget_value(name: str, value: Any) -> None:
    """Set a widget's value before it is drawn (or from a callback)."""
    st.session_state[widget_key(name)] = value


def reset_widget(name: str) -> None:
    """Forget a widget's value, so it starts again from its default when next drawn. Use this,
    not :func:`set_widget_value`, for a widget that always has a default (``st.pagination``):
    Streamlit logs a warning with a stack trace when such a widget's value is also set."""
    st.session_state.pop(widget_key(name), None)


FlashKind = Literal["error", "warning", "info", "success"]


def flash(message: str, kind: FlashKind = "warning") -> None:
    """Queue a message to show on the next run (``kind``: error, warning, info, success).
    It is plain text (shown escaped): pass file names and values as they are."""
    st.session_state.setdefault(_FLASH, []).append((kind, message))


def pop_flashes() -> list[tuple[FlashKind, str]]:
    """The queued messages, oldest first; the queue is emptied."""
    return list(st.session_state.pop(_FLASH, []))
