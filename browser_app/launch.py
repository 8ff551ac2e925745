"""``tfrecord-browser view``: start the Streamlit server on the app and print its URL.

Safe defaults: listen on 127.0.0.1 only, headless, no usage statistics, no file watcher (the
data tree may be huge), a Host allow-list against DNS rebinding, tracebacks never shown in
the browser. ``--root`` limits which files the app may open (see :mod:`browser_app.paths`).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from browser_app.paths import PathRefused, expand_inside

APP = Path(__file__).resolve().parent / "streamlit_app.py"
_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}


def port_is_free(host: str, port: int) -> bool:
    """Whether ``port`` can be bound on ``host`` right now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def pick_port(host: str, wanted: int, tries: int = 20) -> int:
    """``wanted`` if it is free, else the next free one of the following ``tries`` ports,
    else any free port the system hands out."""
    if wanted == 0:
        wanted = 8501
    for port in range(wanted, min(wanted + tries, 65536)):
        if port_is_free(host, port):
            return port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def default_root(paths: Sequence[str]) -> str:
    """The current directory when every path is inside it (or none is given), else the
    deepest folder holding all the given paths."""
    cwd = os.path.realpath(os.getcwd())
    if not paths:
        return cwd
    folders = []
    for p in paths:
        real = os.path.realpath(os.path.expanduser(p))
        folders.append(real if os.path.isdir(real) else os.path.dirname(real))
    try:
        common = os.path.commonpath([*folders, cwd])
    except ValueError:
        common = ""
    if common == cwd:
        return cwd
    return os.path.commonpath(folders)


def allowed_hosts(host: str) -> list[str]:
    """Host names the server accepts in the Host header."""
    hosts = ["localhost", "127.0.0.1", "::1"]
    if host not in _WILDCARD_HOSTS and host not in hosts:
        hosts.append(host)
    if host in _WILDCARD_HOSTS:
        for name in (socket.gethostname(), socket.getfqdn()):
            if name and name not in hosts:
                hosts.append(name)
    return hosts


def server_command(
    host: str, port: int, root: str, paths: Sequence[str], python: str = sys.executable
) -> list[str]:
    """The ``streamlit run`` command line for the app."""
    cmd = [
        python,
        "-m",
        "streamlit",
        "run",
        str(APP),
        "--server.headless",
        "true",
        "--server.address",
        host,
        "--server.port",
        str(port),
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--client.toolbarMode",
        "minimal",
        "--client.showErrorDetails",
        "none",
        "--server.maxUploadSize",
        "200",
        # Blue accents: red is kept for damage, so a selected row never looks like an error.
        "--theme.primaryColor",
        "#2563eb",
    ]
    for name in allowed_hosts(host):
        cmd += ["--server.allowedHosts", name]
    cmd += ["--", "--root", root, *paths]
    return cmd


def _url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in _WILDCARD_HOSTS else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> bool:
    """Poll ``/_stcore/health`` until it answers ``ok``, the server dies or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as r:
                if r.read().strip() == b"ok":
                    return True
        except OSError:
            pass
        time.sleep(0.2)
    return False


def _can_open_browser() -> bool:
    # Without a display, webbrowser may pick a text-mode browser and take over the terminal.
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def launch(args: argparse.Namespace) -> int:
    """Run the app until interrupted; return the exit code (0, or 2 for a usage error)."""
    paths: list[str] = list(args.paths or [])
    if not paths:
        from browser_app.sample_data import sample_dir

        try:
            sample = sample_dir()
        except OSError as exc:
            sys.stderr.write(f"tfrecord-browser: cannot prepare the sample dataset: {exc}\n")
            return 2
        root = args.root or str(sample)
        paths = [str(sample / "detection.tfrecord")]
        sys.stdout.write(f"Opening the bundled sample dataset in {sample}\n")
    else:
        root = args.root or default_root(paths)
    root = os.path.realpath(os.path.expanduser(root))
    if not os.path.isdir(root):
        sys.stderr.write(f"tfrecord-browser: --root {root}: not a folder\n")
        return 2
    for p in paths:
        try:
            expand_inside(root, os.path.abspath(os.path.expanduser(p)))
        except PathRefused as exc:
            sys.stderr.write(f"tfrecord-browser: {exc} (use --root to widen it)\n")
            return 2
        except FileNotFoundError as exc:
            sys.stderr.write(f"tfrecord-browser: {str(exc).strip(chr(39) + chr(34))}\n")
            return 2
    host = args.host or "127.0.0.1"
    port = pick_port(host, int(args.port or 8501))
    if args.port and port != args.port:
        sys.stdout.write(f"Port {args.port} is in use; using port {port} instead.\n")
    if host in _WILDCARD_HOSTS:
        sys.stdout.write(
            "Warning: listening on every network interface; anyone who can reach this machine"
            " can browse the files under the root.\n"
        )
    abs_paths = [os.path.abspath(os.path.expanduser(p)) for p in paths]
    cmd = server_command(host, port, root, abs_paths)
    url = _url(host, port)
    env = dict(os.environ)
    env.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _forward_output(proc)
    try:
        if wait_healthy(url, proc):
            sys.stdout.write(f"\n  tfrecord-browser is running at {url}\n  root: {root}\n")
            sys.stdout.write("  Press Ctrl+C to stop.\n\n")
            sys.stdout.flush()
            if not getattr(args, "no_browser", False) and _can_open_browser():
                import webbrowser

                webbrowser.open(url)
        elif proc.poll() is not None:
            sys.stderr.write("tfrecord-browser: the server stopped during start-up (see above)\n")
            return 2
        return _wait(proc)
    except KeyboardInterrupt:
        _stop(proc)
        return 0


def _forward_output(proc: subprocess.Popen[bytes]) -> None:
    """Pass the server's log through, minus Streamlit's own URL banner (ours is printed)."""

    def pump() -> None:
        assert proc.stdout is not None
        banner = ("You can now view", "Local URL:", "Network URL:", "External URL:", "URL:")
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace")
            if line.strip().startswith(banner) or not line.strip():
                continue
            sys.stdout.write(line)
            sys.stdout.flush()

    threading.Thread(target=pump, daemon=True).start()


def _wait(proc: subprocess.Popen[bytes]) -> int:
    code = proc.wait()
    return 0 if code in (0, -2, 130) else 2


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
