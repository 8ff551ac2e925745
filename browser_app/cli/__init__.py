"""The ``tfrecord-browser`` command: view | info | verify | dump | index | export | import |
schema.

:func:`main` parses the command line and runs one command; every error a command raises
becomes a message on stderr and an exit code in one place (:func:`browser_app.cli.main.run`):
0 when everything read is intact, 1 when damage was found, 2 for a usage error or an input or
output that cannot be opened. One module per command group registers its commands
(:mod:`.records`, :mod:`.schema`, :mod:`.export`, :mod:`.launch`); :mod:`.inputs` holds what
the reading commands share.
"""

from __future__ import annotations

from browser_app.cli.main import build_parser, main, run

__all__ = ["build_parser", "main", "run"]
