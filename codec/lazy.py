"""Names of a package imported from its modules when first asked for (PEP 562), so that
importing the package loads only what its caller uses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: a name of ``where`` (name → the package's
    module it comes from) is imported on first use and kept in the package; any other name
    that is a submodule of the package is that submodule."""

    def __getattr__(name: str) -> Any:
        module_name = where.get(name)
        if module_name is None:
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module = importlib.import_module(f"{package}.{module_name}")
        value = getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
