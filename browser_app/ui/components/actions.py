"""Numbered actions, the one way an element of this package tells Python what the person did.

An element sends a trigger value ``act`` = ``{"client": <the element's name for itself>,
"actions": [{"seq": n, "kind": ..., ...}, ...]}``: every action not yet acknowledged, each
with a number, sent again until Python acknowledges the last one it applied. What each kind
carries is the element's own (its module parses one action); the envelope is read here,
never trusting it: a message may be forged or come from an older version of the element."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

__all__ = ["MAX_ACTIONS", "count", "read_numbered"]

MAX_ACTIONS = 1_000  # actions read from one trigger value (the rest wait for the next)
MAX_CLIENT = 100  # characters of an element's name for itself


class _Numbered(Protocol):
    @property
    def seq(self) -> int: ...


A = TypeVar("A", bound=_Numbered)


def count(value: object) -> int | None:
    """``value`` when it is a whole number at least 0 (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def read_numbered(
    value: object, parse: Callable[[object], A | None]
) -> tuple[str, tuple[A, ...]] | None:
    """The element's name and its actions (``parse`` reads one, None when it is not one),
    one per number, in number order, from a trigger value ``act``; None when the value is
    not one."""
    if not isinstance(value, Mapping):
        return None
    client, raw = value.get("client"), value.get("actions")
    if not isinstance(client, str) or not 0 < len(client) <= MAX_CLIENT:
        return None
    if not isinstance(raw, list):
        return None
    found = (parse(r) for r in raw[:MAX_ACTIONS])
    actions = sorted({a.seq: a for a in found if a is not None}.values(), key=lambda a: a.seq)
    return client, tuple(actions)
