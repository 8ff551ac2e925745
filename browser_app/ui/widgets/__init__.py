"""The app's reusable pieces, one module each: the file picker, the source header, the pager,
the records table, the record detail, messages, the shared journal's status and choices, the
record editor, review marks, schema inference, statistics charts and the export form.

Widgets read and write session values only through :mod:`browser_app.ui.state` and get data
through :mod:`browser_app.ui.services` (caches) and :mod:`browser_app.view` (pure).
"""
