"""Class names bound to features by the person, per source: a names file uploaded for a feature
(``label`` ← ``classes.txt``) in this session; a feature whose names found beside the data the
person turned off; and the uploads that were read and refused, so a bad file is not read again
on every run while it stays in the uploader.

Import this module directly (``from browser_app.ui.state import names``); the names found
beside the data are not session state (:mod:`browser_app.ui.services.names`)."""

from __future__ import annotations

from typing import cast

from browser_app.ui.state.store import read, write
from codec.names import ClassNames

__all__ = [
    "bind",
    "bound",
    "refused",
    "set_refused",
    "set_unbound",
    "unbound",
]


def bound(spec: str) -> dict[str, ClassNames]:
    """The names files bound by the person to features of the source ``spec``, by feature."""
    value = read(f"names:{spec}", dict)
    if not value:
        return {}
    return {str(k): cast(ClassNames, v) for k, v in value.items() if isinstance(v, ClassNames)}


def bind(spec: str, feature: str, names: ClassNames | None) -> None:
    """Bind ``names`` to ``feature`` of the source ``spec`` (None: unbind it); binding it
    again turns the names found beside the data back on for it."""
    now = bound(spec)
    if names is None:
        now.pop(feature, None)
    else:
        now[feature] = names
        set_unbound(spec, feature, False)
    write(f"names:{spec}", now or None)


def unbound(spec: str) -> frozenset[str]:
    """The features of ``spec`` whose names found beside the data the person turned off."""
    return read(f"names_off:{spec}", frozenset) or frozenset()


def set_unbound(spec: str, feature: str, off: bool) -> None:
    """Turn the names found beside the data for ``feature`` of ``spec`` off (or on again)."""
    now = unbound(spec)
    after = now | {feature} if off else now - {feature}
    write(f"names_off:{spec}", after or None)


def refused(upload: str) -> str | None:
    """Why the names upload ``upload`` (its file id) could not be used, once read."""
    return read(f"names_refused:{upload}", str)


def set_refused(upload: str, why: str) -> None:
    write(f"names_refused:{upload}", why)
