"""The command line run as a person runs it: a fresh process, from the checkout, with a
cache folder of the test's own when given. The tests import this module as
``cli_support``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_cli(
    *args: str, cache: Path | None = None, stdin: str | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``tfrecord-browser ARGS`` in a fresh process (``python -m browser_app``), its output
    captured as text; ``cache``: the cache folder it keeps what it reads in."""
    env = dict(os.environ)
    if cache is not None:
        env["TFRECORD_BROWSER_CACHE"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "browser_app", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        input=stdin,
        timeout=timeout,
    )
