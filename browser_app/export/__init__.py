"""Exports (being moved here from browser_app.exporting)."""

from browser_app.exporting import *  # noqa: F403 - temporary, until the exporters move here
