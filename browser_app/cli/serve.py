"""``python -m browser_app.cli.serve streamlit ARGS``: ``python -m streamlit ARGS``, with
Nagle's algorithm off on the server's connections. The launcher starts the app's server this
way (a wrapper's form, like ``nice streamlit ...``: the program it runs, then its arguments,
so the server's command line still names Streamlit).

Streamlit 1.67 binds its listening socket itself (``_bind_socket`` in
``streamlit/web/server/starlette/starlette_server.py``: ``socket.socket(family)``, the
protocol left at 0) and hands it to uvicorn (``uvicorn.Server.startup(sockets=[...])``).
Accepted connections inherit the protocol number, and asyncio turns ``TCP_NODELAY`` on only
for sockets that report ``IPPROTO_TCP``: so every connection keeps Nagle's algorithm, and on
a kept-alive connection each response after the first waits for the browser's delayed ACK,
~40 ms (a gallery page's pictures, one after another). Turning ``TCP_NODELAY`` on on the
listening socket before uvicorn serves it fixes that: accepted connections inherit the
option (on Linux, as checked; tests/test_launch_nodelay.py measures it).

Remove this module (the launcher runs ``-m streamlit`` again) when a Streamlit release sets
``TCP_NODELAY`` itself or binds its socket with ``IPPROTO_TCP``. None does as of 1.67.0, and
a search of streamlit/streamlit's issues and pull requests finds none about ``TCP_NODELAY``
or Nagle. uvicorn has the same cause in its own pre-bound socket path (``--workers N``:
Kludex/uvicorn#3149, open), and its fix would not reach the socket Streamlit binds.

The hook is taken only where uvicorn still looks as it does today (``Server.startup`` a
coroutine function with a ``sockets`` parameter); otherwise nothing is changed and Streamlit
runs as it would alone. It touches no Streamlit module: Streamlit's own command line runs
as ``python -m streamlit`` runs it, with the same arguments.
"""

from __future__ import annotations

import functools
import inspect
import runpy
import socket
import sys
from collections.abc import Iterable
from typing import Any

__all__ = ["PROGRAM", "main", "no_delay", "send_without_delay"]


def no_delay(sock: socket.socket) -> bool:
    """Turn ``TCP_NODELAY`` on for a TCP socket (connections a listening socket accepts
    inherit it); whether it is on now. Anything else (a Unix socket) is left alone."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        return False
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return bool(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    except OSError:
        return False


def send_without_delay(server_class: Any = None) -> bool:
    """Have ``server_class`` (uvicorn's ``Server`` when not given) turn ``TCP_NODELAY`` on
    for the sockets it is given to serve. Whether the hook is in place: False, changing
    nothing, when uvicorn is missing or its ``Server.startup`` is not the coroutine function
    with a ``sockets`` parameter that Streamlit 1.67 calls."""
    if server_class is None:
        try:
            from uvicorn.server import Server
        except ImportError:
            return False
        server_class = Server
    original = getattr(server_class, "startup", None)
    if getattr(original, "_tfb_no_delay", False):
        return True  # already in place
    if not inspect.iscoroutinefunction(original):
        return False
    try:
        params = inspect.signature(original).parameters
    except (TypeError, ValueError):
        return False
    if "sockets" not in params:
        return False

    @functools.wraps(original)
    async def startup(self: Any, *args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(original).bind(self, *args, **kwargs)
        sockets: Iterable[socket.socket] | None = bound.arguments.get("sockets")
        for sock in sockets or ():
            if isinstance(sock, socket.socket):
                no_delay(sock)
        return await original(self, *args, **kwargs)

    startup._tfb_no_delay = True  # type: ignore[attr-defined]
    server_class.startup = startup
    return True


PROGRAM = "streamlit"  # the one program this runs, named first on the command line


def main(argv: list[str] | None = None) -> int:
    """Run Streamlit's command line on the arguments after ``streamlit``, as ``python -m
    streamlit`` does (``sys.argv`` as it would see it), with the hook in place when it can
    be. Without ``streamlit`` first: a usage message and 2."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != PROGRAM:
        sys.stderr.write(
            "usage: python -m browser_app.cli.serve streamlit ARGS"
            " (python -m streamlit ARGS, its server sending without delay)\n"
        )
        return 2
    send_without_delay()
    sys.argv = [sys.argv[0], *args[1:]]  # runpy puts streamlit's __main__ in argv[0]
    runpy.run_module(PROGRAM, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
