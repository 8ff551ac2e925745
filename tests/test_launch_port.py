"""The launcher's port: a number that is no port is refused (never moved elsewhere
silently), and the port of an app stopped a moment ago is taken again, as its server can."""

from __future__ import annotations

import socket

import pytest

from browser_app.cli.launch import pick_port, port_is_free
from browser_app.cli.main import main


@pytest.mark.parametrize("port", ["99999", "0", "-1", "http"])
def test_a_port_that_is_no_port_is_a_usage_error(port: str, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["view", "--root", str(tmp_path), "--port", port, "--no-browser"])
    assert code == 2
    assert "port" in capsys.readouterr().err


def test_a_port_just_stopped_is_taken_again() -> None:
    """A server that closed its connections first leaves them in TIME_WAIT for a minute:
    its port is free for a server that binds as servers do (SO_REUSEADDR)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    conn, _ = listener.accept()
    conn.close()  # the server closes first: its side waits in TIME_WAIT
    client.recv(1)
    client.close()
    listener.close()
    assert port_is_free("127.0.0.1", port)
    assert pick_port("127.0.0.1", port) == port
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        taken = busy.getsockname()[1]
        assert not port_is_free("127.0.0.1", taken)
        assert pick_port("127.0.0.1", taken) != taken
