"""Moved to :mod:`browser_app.cli.export`; this name stays until every user has moved."""

from browser_app.cli.export import cmd_export, cmd_import, register

__all__ = ["cmd_export", "cmd_import", "register"]
