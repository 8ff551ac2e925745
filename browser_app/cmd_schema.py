"""Moved to :mod:`browser_app.cli.schema` (the text report to :mod:`browser_app.view.text`);
this name stays until every user has moved."""

from browser_app.cli.schema import cmd_schema, register
from browser_app.view.text import format_schema

__all__ = ["cmd_schema", "format_schema", "register"]
