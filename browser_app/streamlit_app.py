"""The file Streamlit runs for tfrecord-browser (``tfrecord-browser view`` starts
``streamlit run streamlit_app.py -- --root ROOT [PATH...]``; see :mod:`browser_app.cli.launch`).

Streamlit executes it as ``__main__``; the app itself is :func:`browser_app.ui.app.main`.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # `streamlit run browser_app/streamlit_app.py` from a checkout without an install.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from browser_app.ui.app import main

main()
