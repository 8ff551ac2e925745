"""``python -m browser_app``: the same as the ``tfrecord-browser`` command."""

import sys

from browser_app.cli import main

if __name__ == "__main__":
    sys.exit(main())
