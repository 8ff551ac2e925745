"""What a small hostile input costs: time, peak memory and disk, each in a fresh process.

Every case runs in its own Python process (so peak memory is that input's alone) with its
own cache folder (so disk is what it wrote), through the same entry points a person uses:
the command line, or the app's pages in Streamlit's AppTest. The inputs come from
``tests/hostile_inputs.py``, the generators the tests use.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from benchmarks.common import Row

REPO = Path(__file__).resolve().parent.parent
GROUP = "hostile"

# The child: runs the case, then prints its wall time, peak memory and outcome as JSON.
_CHILD = """
import json, sys, time
sys.path.insert(0, {tests!r})
t0 = time.perf_counter()
outcome = "ok"
try:
{body}
except BaseException as exc:  # the outcome is the point
    outcome = type(exc).__name__ + ": " + str(exc)[:160]
# VmHWM: this process's own peak (ru_maxrss would carry the parent's over exec).
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
print("@@" + json.dumps({{"seconds": time.perf_counter() - t0,
    "peak_mb": int(hwm.split()[1]) / 1024, "outcome": outcome}}))
"""

_APP = """
import streamlit
from streamlit.testing.v1 import AppTest
sys.argv = ["streamlit_app.py", "--root", {root!r}]
at = AppTest.from_file({app!r}, default_timeout=600)
at.query_params["file"] = {file!r}
at.query_params["record"] = "{record}"
at.run()
{then}
said = [e.value for e in [*at.error, *at.warning]]
outcome = ("EXCEPTION " + at.exception[0].value) if at.exception else (said[0] if said else "shown")
"""


def _du(path: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
            except OSError:
                pass
    return total


def _run(body: str, work: Path, timeout: float = 900) -> dict[str, object]:
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir()
    code = _CHILD.format(tests=str(REPO / "tests"), body=textwrap.indent(body.strip(), "    "))
    env = dict(os.environ, TFRECORD_BROWSER_CACHE=str(cache), PYTHONPATH=str(REPO))
    before = _du(work)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=work,
    )
    line = next((x for x in proc.stdout.splitlines() if x.startswith("@@")), None)
    if line is None:
        return {"seconds": 0.0, "peak_mb": 0.0, "outcome": proc.stderr[-300:], "disk_mb": 0.0}
    got: dict[str, object] = json.loads(line[2:])
    got["disk_mb"] = max(0, _du(work) - before) / 1e6
    return got


def _cli(*argv: str) -> str:
    return textwrap.dedent(
        f"""
        import contextlib, io
        from browser_app.cli import main
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main({list(argv)!r})
        said = err.getvalue().strip().splitlines()
        outcome = f"exit {{code}}" + (": " + said[-1][:160] if said else "")
        """
    )


def _app(root: Path, file: str, record: int = 0, then: str = "") -> str:
    return _APP.format(
        root=str(root),
        app=str(REPO / "browser_app" / "streamlit_app.py"),
        file=file,
        record=record,
        then=then,
    )


# What each case may cost: seconds, peak MB (None: the defaults below). A bomb inflates to
# its limit before it is refused (100× its compressed size), so it may take longer; a giant
# record must be held, decoded once and shown, so it may take a few times its size.
_LIMITS: dict[str, tuple[float, float]] = {}
_DEFAULT = (5.0, 600.0)


def _cases(work: Path, quick: bool) -> list[tuple[str, str, str]]:
    """``(input, its size in words, code)`` for every case."""
    sys.path.insert(0, str(REPO / "tests"))
    import hostile_inputs as h

    import codec

    root = work / "root"
    root.mkdir()
    cases: list[tuple[str, str, str]] = []
    cases.append(("deep link ?file=a@10000000", "18 bytes", _app(root, "a@10000000")))
    cases.append(("info a@10000000", "18 bytes", _cli("info", str(root / "a@10000000"))))
    for kind, level in (("gzip", 31), ("zlib", 15)):
        import zlib

        size = (2 if quick else 20) << 20
        comp = zlib.compressobj(9, zlib.DEFLATED, level)
        path = root / f"bomb.tfrecord.{'gz' if kind == 'gzip' else 'zz'}"
        with open(path, "wb") as f:
            chunk = bytes(1 << 20)
            while f.tell() < size:
                f.write(comp.compress(chunk))
            f.write(comp.flush())
        mib = path.stat().st_size / (1 << 20)
        for where, body in (("info", _cli("info", str(path))), ("app", _app(root, path.name))):
            name = f"{kind} of zeros, {where}"
            _LIMITS[name] = (30.0, 600.0)
            cases.append((name, f"{mib:.1f} MiB", body))
    # Empty records, as many as fit: a few MiB of gzip that would index tens of millions.
    empties = root / "empties.tfrecord.gz"
    one = codec.framing.encode_record(b"")
    with codec.TFRecordWriter(str(empties), compression="gzip") as w:
        w.write_framed(one * 65536, records=65536)
    import gzip

    with gzip.open(empties, "ab") as g:
        block = one * 65536
        for _ in range(16 if quick else 1024):
            g.write(block)
    mib = empties.stat().st_size / (1 << 20)
    n = (65536 * (17 if quick else 1025)) / 1e6
    cases.append(
        (f"{n:,.0f} M empty records, info", f"{mib:.1f} MiB gzip", _cli("info", str(empties)))
    )
    tensors = [h.tensor_record(t) for t in h.HUGE_TENSORS.values()]
    codec.write_records(str(root / "tensor.tfrecord"), tensors)
    cases.append(("tensor declaring 2^32 floats", "22 bytes", _app(root, "tensor.tfrecord", 0)))
    cases.append(("tensor declaring 2^62 floats", "26 bytes", _app(root, "tensor.tfrecord", 3)))
    codec.write_records(str(root / "features.tfrecord"), [h.many_features(20_000)])
    cases.append(("20,000 binary features", "0.4 MiB", _app(root, "features.tfrecord")))
    big = (64 if quick else 1024) << 20
    with codec.TFRecordWriter(str(root / "big.tfrecord")) as w:
        w.write(h.ex.encode_example({"blob": ("bytes", [bytes(big)])}))
    name = f"one {big >> 20} MiB record"
    _LIMITS[name] = (15.0, 600 + 3 * big / 1e6)
    cases.append((name, f"{big >> 20} MiB", _app(root, "big.tfrecord")))
    codec.write_records(
        str(root / "giants.tfrecord"),
        [h.ex.encode_example({"image/encoded": ("bytes", [d])}) for d in h.GIANT_PICTURES.values()],
    )
    gallery = 'at.switch_page("ui/pages/gallery.py").run()'
    cases.append(
        ("8 giant picture headers, records", "≤ 800 bytes each", _app(root, "giants.tfrecord"))
    )
    cases.append(
        (
            "8 giant picture headers, gallery",
            "≤ 800 bytes each",
            _app(root, "giants.tfrecord", then=gallery),
        )
    )
    fifo = root / "pipe.tfrecord"
    os.mkfifo(fifo)
    cases.append(("a FIFO named .tfrecord, info", "0 bytes", _cli("info", str(fifo))))
    cases.append(("a FIFO named .tfrecord, app", "0 bytes", _app(root, "pipe.tfrecord")))
    return cases


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="tfb-hostile-") as tmp:
        work = Path(tmp)
        for name, size, body in _cases(work, quick):
            got = _run(body, work)
            seconds, peak, disk = (float(got[k]) for k in ("seconds", "peak_mb", "disk_mb"))  # type: ignore[arg-type]
            label = f"{name} ({size})"
            most_s, most_mb = _LIMITS.get(name, _DEFAULT)
            rows.append(
                Row(GROUP, label + ": time", seconds, "s", f"< {most_s:g} s", seconds < most_s)
            )
            rows.append(
                Row(GROUP, "  peak memory", peak, "MB", f"< {most_mb:,.0f} MB", peak < most_mb)
            )
            rows.append(Row(GROUP, "  disk left afterwards", disk, "MB"))
            print(f"  {label}: {got['outcome']}", file=sys.stderr, flush=True)
    return rows
