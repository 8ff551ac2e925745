"""The file Streamlit runs for tfrecord-browser (``tfrecord-browser view`` starts
``streamlit run streamlit_app.py -- --root ROOT [PATH...]``; see :mod:`browser_app.cli.launch`).

It is two things. Imported as a module (``streamlit run`` finds the ``st.App`` assigned to
``app`` below and has uvicorn import this file), it is the server: Streamlit's routes and
the app's own (:mod:`browser_app.ui.routes`: ``POST /tfb/mark``, a review mark saved without
a run of the script; :mod:`browser_app.ui.components.served`: the elements' files), and
what it does once at start-up (:mod:`browser_app.ui.server`). Executed as ``__main__``
(Streamlit runs it so at every run of a session, as does an ``AppTest``), it is the app
itself, :func:`browser_app.ui.app.main`.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # `streamlit run browser_app/streamlit_app.py` from a checkout without an install.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if __name__ == "__main__":
    from browser_app.ui.app import main

    main()
else:
    from streamlit import App

    from browser_app.ui.components import served
    from browser_app.ui.routes import app_routes
    from browser_app.ui.server import lifespan

    app = App(Path(__file__).resolve(), routes=[*app_routes(), *served.routes()], lifespan=lifespan)
