"""Write the bundled sample dataset into assets/sample/ (deterministic: same bytes each run).

python scripts/make_sample.py [FOLDER]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from browser_app.sample_data import bundled_sample_dir, write_sample


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else bundled_sample_dir()
    files = write_sample(target)
    total = sum(f.stat().st_size for f in files)
    for f in files:
        print(f"{f.relative_to(target)}  {f.stat().st_size:,} bytes")
    print(f"{len(files)} files, {total:,} bytes in {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
