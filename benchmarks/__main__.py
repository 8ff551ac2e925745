"""Run every benchmark module and print one table.

python -m benchmarks            # full sizes (generates files under benchmarks/data/)
python -m benchmarks --quick    # small sizes, for a quick look
python -m benchmarks --only records,messages
python -m benchmarks --only ui       # the app in headless Chromium (needs Debian's chromium),
                                     # beside the app at an earlier commit (--before REV|none)
python -m benchmarks --only scale    # jobs on every core and on Dask, and a cluster estimate
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from benchmarks.common import Row, table

MODULES = [
    "records",
    "messages",
    "cli",
    "app",
    "schema",
    "export",
    "hostile",
    "ui",
    "remote",
    "scale",
    "layers",
    "evaluate",
    "duplicates",
    "diff",
    "sql",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="smaller data, faster")
    parser.add_argument("--only", help="comma-separated modules: " + ",".join(MODULES))
    parser.add_argument(
        "--before",
        metavar="REV",
        help="ui: the app at this git revision is measured beside the working tree's (default:"
        " the commit before the gallery element landed; 'none': not measured)",
    )
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else MODULES
    rows: list[Row] = []
    for name in names:
        try:
            module = importlib.import_module(f"benchmarks.bench_{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"benchmarks.bench_{name}":
                print(f"(no benchmarks.bench_{name})", file=sys.stderr)
                continue
            raise
        t0 = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        extra = {"before": args.before} if name == "ui" else {}
        rows.extend(module.run(args.quick, **extra))
        print(f"  {name} took {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    print(table(rows))
    missed = [r for r in rows if r.ok is False]
    if missed:
        print(f"\n{len(missed)} target(s) not met", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
