"""The app's pages, one module each with a ``render()`` that Streamlit runs as the page's
script (see the page table in :mod:`browser_app.ui.app`). A page draws the frame
(:func:`browser_app.ui.frame.start`) and widgets; pages never import each other, they link
through :mod:`browser_app.ui.navigation`."""
