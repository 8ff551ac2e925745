"""The command line's start: a command on a small file in a fresh process (interpreter start,
imports, the command, exit), against the bare interpreter. The command imports only the
module that registers it, and the packages it uses import their names on first use."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import Row

GROUP = "cli"
FILE = Path(__file__).resolve().parents[1] / "tests" / "data" / "basic.tfrecord"


def _times(argv: list[str], runs: int) -> list[float]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled modules are kept
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *argv], env=env, check=True, stdout=subprocess.DEVNULL)
        out.append(time.perf_counter() - t0)
    return out


def run(quick: bool) -> list[Row]:
    runs = 5 if quick else 11
    rows = []
    _times(["-m", "browser_app", "info", str(FILE)], 1)  # compile once
    bare = _times(["-c", "pass"], runs)
    rows.append(Row(GROUP, "python -c pass, fresh process (best)", min(bare), "s"))
    for command in ("verify", "info", "dump", "schema"):
        ts = _times(["-m", "browser_app", command, str(FILE)], runs)
        name = f"tfrecord-browser {command} (64 records), fresh process"
        rows.append(Row(GROUP, f"{name}, best", min(ts), "s"))
        rows.append(Row(GROUP, f"{name}, median of {runs}", statistics.median(ts), "s"))
    return rows
