"""``tfrecord-browser view``: start the Streamlit server on the app and print its URL.

Safe defaults: listen on 127.0.0.1 only, headless, no usage statistics, no file watcher (the
data tree may be huge), a Host allow-list against DNS rebinding, tracebacks never shown in
the browser. ``--root`` limits which files the app may open (see :mod:`browser_app.paths`);
it may be a URL prefix (``s3://bucket/data``), and remote paths then must lie under it.
``--anon`` reaches the app (after ``--``), for public buckets.
Problems found before the server starts are raised (:mod:`browser_app.errors`); the command
line puts them into words.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from browser_app.cli.jobs import add_job_options, executor_of
from browser_app.errors import AppError, InputError, PathRefused, UsageError, os_error_message
from browser_app.paths import expand_inside, is_url_root, url_root_for
from codec.errors import ExecutorError
from codec.jobs.spec import ExecutorSpec, parse_executor
from codec.locations import shown

if TYPE_CHECKING:
    from browser_app.cli.inputs import Subcommands

__all__ = [
    "APP",
    "STREAMLIT",
    "allowed_executors",
    "allowed_hosts",
    "app_executor",
    "default_root",
    "launch",
    "pick_port",
    "port_is_free",
    "register",
    "server_command",
    "wait_healthy",
]

# The entry file Streamlit runs. The command line starts the app by this path (a new
# process), never by importing it, so cli/ does not depend on the Streamlit side.
APP = Path(__file__).resolve().parent.parent / "streamlit_app.py"
# How Python runs Streamlit's command line: `-m streamlit` through our wrapper, which turns
# TCP_NODELAY on for the server's connections (browser_app/cli/serve.py says why; back to
# ("-m", "streamlit") once a Streamlit release sets it itself).
STREAMLIT = ("-m", "browser_app.cli.serve", "streamlit")
LIGHT_ACCENT = "#2563eb"  # the accent colour on a light page
DARK_ACCENT = "#60a5fa"  # the same blue, lighter, on a dark page
_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}


def register(sub: Subcommands) -> None:
    """Add ``view`` to the command line."""
    p = sub.add_parser("view", help="start the browser app")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files, patterns or URLs to open")
    p.add_argument(
        "--root",
        help="the folder the app may open files from, or a URL prefix (s3://bucket/data)",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=port_number, default=8501)
    p.add_argument("--no-browser", action="store_true", help="do not open a web browser")
    add_job_options(p, progress=False)
    p.add_argument(
        "--allow-executor",
        action="append",
        default=[],
        metavar="SPEC",
        help="also offer SPEC (processes:N, dask:local:N, dask:tcp://HOST:PORT) in the app's"
        " sidebar (repeat for more); visitors choose only among what the launch names, never"
        " an address of their own",
    )
    p.set_defaults(handler=launch)


def app_executor(args: argparse.Namespace) -> ExecutorSpec:
    """Where the app's dataset-wide jobs run, as ``--executor`` / ``--dask`` / ``--workers``
    name it (by default a process per core). A spec that names no executor is a
    :class:`~browser_app.errors.UsageError`; a Dask cluster is reached only when a job runs,
    and the app says what is wrong."""
    return executor_of(args)


def allowed_executors(args: argparse.Namespace) -> list[ExecutorSpec]:
    """The executors ``--allow-executor`` offers besides the launch's own, parsed; a spec
    that names no executor is a :class:`~browser_app.errors.UsageError`."""
    out = []
    for text in getattr(args, "allow_executor", None) or []:
        try:
            out.append(parse_executor(text))
        except ExecutorError as exc:
            raise UsageError(f"--allow-executor: {exc}") from None
    return out


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535 (an argument type: anything else is a usage error)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port: ports are 1 to 65535")
    return port


def port_is_free(host: str, port: int) -> bool:
    """Whether ``port`` can be bound on ``host`` right now, as the app's server binds it:
    with ``SO_REUSEADDR``, so the port of a server stopped a moment ago (its connections
    still in TIME_WAIT) is free to start again on, as the server itself finds."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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
    host: str,
    port: int,
    root: str,
    paths: Sequence[str],
    python: str = sys.executable,
    *,
    anon: bool = False,
    executor: ExecutorSpec | None = None,
    dask_timeout: float | None = None,
    allowed: Sequence[ExecutorSpec] = (),
) -> list[str]:
    """The ``streamlit run`` command line for the app (``anon``: the app reads remote URLs
    without credentials; ``executor``: where its dataset-wide jobs run; ``allowed``: the
    other executors a visitor may choose; ``dask_timeout``: seconds to reach a Dask
    scheduler). Streamlit's command line runs through :mod:`browser_app.cli.serve`, with the
    same arguments, so that its server sends each response at once (``TCP_NODELAY``)."""
    cmd = [
        python,
        *STREAMLIT,
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
        # Set per light and dark theme (a plain theme.primaryColor would make one custom
        # light theme), so the app still follows the browser's light or dark preference.
        "--theme.light.primaryColor",
        LIGHT_ACCENT,
        "--theme.dark.primaryColor",
        DARK_ACCENT,
    ]
    for name in allowed_hosts(host):
        cmd += ["--server.allowedHosts", name]
    cmd += ["--", "--root", root, *(["--anon"] if anon else [])]
    if executor is not None and not executor.is_default:
        cmd += ["--executor", str(executor)]
    for spec in allowed:
        cmd += ["--allow-executor", str(spec)]
    cmd += [*(["--dask-timeout", f"{dask_timeout:g}"] if dask_timeout else []), *paths]
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


def launch(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the app until interrupted and return the exit code (0, or 2 when the server
    failed). Raises :class:`~browser_app.errors.AppError` for a root that is not a folder, a
    path outside it, or a server that stops while starting; ``FileNotFoundError`` for a path
    that names nothing."""
    out = out or sys.stdout
    paths: list[str] = list(args.paths or [])
    anon = bool(getattr(args, "anon", False))
    executor = app_executor(args)
    allowed = allowed_executors(args)
    if not paths and args.root:
        root = args.root  # browse the root: the picker lists its files
    elif not paths:
        # Imported here: it needs Pillow, which no other command has to load.
        from browser_app.sample_data import sample_dir

        try:
            sample = sample_dir()
        except OSError as exc:
            raise InputError(
                f"cannot prepare the sample dataset: {os_error_message(exc)}", path=exc.filename
            ) from exc
        root = args.root or str(sample)
        paths = [str(sample / "detection.tfrecord")]
        out.write(f"Opening the bundled sample dataset in {sample}\n")
    elif not args.root and any(is_url_root(p) for p in paths):
        root = url_root_for(paths)  # the URLs' folder, as the local default is the paths'
    else:
        root = args.root or default_root(paths)
    if is_url_root(root):
        root = root.rstrip("/")
    else:
        root = os.path.realpath(os.path.expanduser(root))
        if not os.path.isdir(root):
            raise UsageError(f"--root {root}: not a folder")
    # URLs (and paths under a URL root) are passed on as given; local paths made absolute.
    given = [
        p if is_url_root(p) or is_url_root(root) else os.path.abspath(os.path.expanduser(p))
        for p in paths
    ]
    for p, full in zip(paths, given):
        try:
            expand_inside(
                root,
                full,
                on_skip=lambda note: sys.stderr.write(f"tfrecord-browser: {note}\n"),
                anon=anon,
            )
        except PathRefused as exc:
            raise PathRefused(f"{exc} (use --root to widen it)", path=p) from exc
    host = args.host or "127.0.0.1"
    port = pick_port(host, int(args.port or 8501))
    if args.port and port != args.port:
        out.write(f"Port {args.port} is in use; using port {port} instead.\n")
    if host in _WILDCARD_HOSTS:
        out.write(
            "Warning: listening on every network interface; anyone who can reach this machine"
            " can browse the files under the root.\n"
        )
    timeout = getattr(args, "dask_timeout", None)
    cmd = server_command(
        host,
        port,
        root,
        given,
        anon=anon,
        executor=executor,
        dask_timeout=timeout,
        allowed=allowed,
    )
    url = _url(host, port)
    env = dict(os.environ)
    env.setdefault("STREAMLIT_BROWSER_GATHER_USAGE_STATS", "false")
    # The signals that stop the server are handled before it starts: a signal that comes
    # while it starts stops it too, never leaving the launcher half-way.
    previous = _stop_on_signals()
    proc: subprocess.Popen[bytes] | None = None
    try:
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        _forward_output(proc, out)
        if wait_healthy(url, proc):
            out.write(f"\n  tfrecord-browser is running at {url}\n  root: {shown(root)}\n")
            out.write("  Press Ctrl+C to stop.\n\n")
            out.flush()
            if not getattr(args, "no_browser", False) and _can_open_browser():
                import webbrowser

                webbrowser.open(url)
        elif proc.poll() is not None:
            raise AppError("the server stopped during start-up (see above)")
        return _wait(proc)
    except KeyboardInterrupt:
        if proc is not None:
            _stop(proc)
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Stop(KeyboardInterrupt):
    """A termination signal, handled like Ctrl+C: the server is stopped first."""


def _raise_stop(signum: int, _frame: object) -> None:
    raise _Stop(signal.Signals(signum).name)


def _stop_on_signals() -> dict[int, Any]:
    """Turn SIGTERM and SIGHUP into a clean stop of the server (a service manager, a closed
    terminal, a test harness), so it never outlives this process. Returns the old handlers."""
    previous: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous  # signals can only be handled on the main thread
    for sig in (signal.SIGTERM, signal.SIGHUP):
        previous[sig] = signal.signal(sig, _raise_stop)
    return previous


def _die_with_parent() -> None:
    """In the server process, before it starts: be killed if this launcher dies without
    stopping it (SIGKILL, a crash), so no server is left behind (Linux)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGKILL)


def _forward_output(proc: subprocess.Popen[bytes], out: TextIO) -> None:
    """Pass the server's log through, minus Streamlit's own URL banner (ours is printed)."""

    def pump() -> None:
        assert proc.stdout is not None
        banner = ("You can now view", "Local URL:", "Network URL:", "External URL:", "URL:")
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace")
            if line.strip().startswith(banner) or not line.strip():
                continue
            out.write(line)
            out.flush()

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
