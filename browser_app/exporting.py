"""Moved to :mod:`browser_app.export`; this name re-exports it until every user has moved."""

from __future__ import annotations

from browser_app.export import *  # noqa: F403
from browser_app.export import __all__ as __all__
