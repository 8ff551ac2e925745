"""Moved to :mod:`browser_app.cli.launch`; this name stays until every user has moved."""

from browser_app.cli.launch import (
    APP,
    allowed_hosts,
    default_root,
    launch,
    pick_port,
    port_is_free,
    register,
    server_command,
    wait_healthy,
)

__all__ = [
    "APP",
    "allowed_hosts",
    "default_root",
    "launch",
    "pick_port",
    "port_is_free",
    "register",
    "server_command",
    "wait_healthy",
]
