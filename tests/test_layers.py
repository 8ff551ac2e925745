"""The layers of the code, checked by reading every module's imports (``ast``, nothing is
imported or run).

Lowest first: ``codec`` < ``browser_app.errors`` / ``selection`` / ``paths`` /
``sample_data`` < ``edits`` < ``export`` < ``view`` < ``cli`` | ``ui``. A module imports only
from its own layer or lower ones; ``cli`` and ``ui`` do not import each other (the command
line starts the app by its file path); pages never import pages; ``codec`` knows nothing of
the front end, Streamlit or pandas; below ``ui`` nothing imports Streamlit, and ``view`` does
not import pandas. Inside ``ui``, every ``st.cache_*`` is in the ``services`` package and
only the ``state`` package touches ``st.session_state`` and ``st.query_params``.

Each test fails with the list of offending lines (``path:line: what``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("codec", "browser_app")

# Layers, lowest first; cli and ui share the top rank (and must not import each other).
RANK = {"codec": 0, "base": 1, "edits": 2, "export": 3, "view": 4, "cli": 5, "ui": 5}
BASE = {"errors", "selection", "paths", "sample_data", "generators"}
NO_STREAMLIT = {"codec", "base", "edits", "export", "view", "cli"}
PAGES = "browser_app.ui.pages"
CACHE_HOME = "browser_app.ui.services"  # a package, with its modules
STATE_HOME = "browser_app.ui.state"  # a package, with its modules


@dataclass(frozen=True)
class Module:
    name: str  # dotted, a package by its own name
    path: Path
    tree: ast.Module

    @property
    def package(self) -> str:
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]

    def where(self, node: ast.AST) -> str:
        return f"{self.path.relative_to(REPO)}:{getattr(node, 'lineno', 0)}"


@cache
def modules() -> tuple[Module, ...]:
    found = []
    for pkg in PACKAGES:
        for path in sorted((REPO / pkg).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            found.append(Module(".".join(parts), path, tree))
    return tuple(found)


def _ours() -> set[str]:
    return {m.name for m in modules()}


def imports(mod: Module) -> Iterator[tuple[ast.AST, str]]:
    """``(node, module name)`` for every import in ``mod``, relative ones resolved; ``from a
    import b`` names ``a`` and, when ``a.b`` is one of ours, ``a.b`` too."""
    ours = _ours()
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield node, target
            for alias in node.names:
                if f"{target}.{alias.name}" in ours:
                    yield node, f"{target}.{alias.name}"


def layer(name: str) -> str | None:
    """The layer of one of our modules, None for anything else."""
    parts = name.split(".")
    if parts[0] == "codec":
        return "codec"
    if parts[0] != "browser_app":
        return None
    if len(parts) == 1 or parts[1] in BASE:
        return "base"
    if parts[1] == "streamlit_app":
        return "ui"
    if parts[1] == "__main__":
        return "cli"
    return parts[1] if parts[1] in RANK else "unknown"


def _top(name: str) -> str:
    return name.split(".")[0]


def _report(bad: list[str]) -> str:
    return f"{len(bad)} offending line(s):\n" + "\n".join(sorted(set(bad)))


def test_every_module_has_a_layer():
    unknown = [
        f"{m.path.relative_to(REPO)}: {m.name}"
        for m in modules()
        if layer(m.name) in (None, "unknown")
    ]
    assert not unknown, _report(unknown)
    # The walk is not vacuous: every layer has modules.
    assert {layer(m.name) for m in modules()} == set(RANK)


def test_codec_knows_nothing_of_the_front_end():
    bad = [
        f"{m.where(node)}: {m.name} imports {target}"
        for m in modules()
        if layer(m.name) == "codec"
        for node, target in imports(m)
        if _top(target) in ("browser_app", "streamlit", "pandas")
    ]
    assert not bad, _report(bad)


def test_only_ui_imports_streamlit_and_view_has_no_pandas():
    bad = []
    for m in modules():
        for node, target in imports(m):
            if layer(m.name) in NO_STREAMLIT and _top(target) == "streamlit":
                bad.append(f"{m.where(node)}: {m.name} ({layer(m.name)}) imports {target}")
            if layer(m.name) == "view" and _top(target) == "pandas":
                bad.append(f"{m.where(node)}: {m.name} (view) imports {target}")
    assert not bad, _report(bad)


def test_no_module_imports_a_higher_layer():
    bad = []
    for m in modules():
        own = layer(m.name)
        for node, target in imports(m):
            other = layer(target)
            if own not in RANK or other not in RANK:
                continue
            if RANK[other] > RANK[own] or {own, other} == {"cli", "ui"}:
                bad.append(f"{m.where(node)}: {m.name} ({own}) imports {target} ({other})")
    assert not bad, _report(bad)


def test_pages_never_import_pages():
    def is_page(name: str) -> bool:
        return name.startswith(PAGES + ".")

    bad = [
        f"{m.where(node)}: page {m.name} imports page {target}"
        for m in modules()
        if is_page(m.name)
        for node, target in imports(m)
        if is_page(target) and target != m.name
    ]
    assert not bad, _report(bad)


def _module_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements run when a module is imported: its body and what ``if`` (``if
    TYPE_CHECKING:`` too), ``try`` and ``with`` blocks at that level hold; not functions."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)
        elif isinstance(node, ast.With):
            yield from _module_level(node.body)


def import_graph() -> dict[str, set[str]]:
    """Our modules and the ones of ours each imports at module level (``TYPE_CHECKING``
    imports included: a checker reads them, and a cycle among them is a cycle of ideas)."""
    ours = _ours()
    graph: dict[str, set[str]] = {m.name: set() for m in modules()}
    for m in modules():
        graph[m.name] = _targets(m, ours)
    return graph


def _targets(m: Module, ours: set[str]) -> set[str]:
    """The modules of ``ours`` that ``m`` imports at module level. ``from pkg import sub``
    names the submodule alone when every name it takes is a submodule (the package's own
    ``__init__`` runs for any of its modules: that is no import of its names)."""
    top = {id(node) for node in _module_level(m.tree.body)}
    by_node: dict[int, list[str]] = {}
    nodes: dict[int, ast.AST] = {}
    for node, target in imports(m):
        if id(node) in top:
            by_node.setdefault(id(node), []).append(target)
            nodes[id(node)] = node
    found = set()
    for key, targets in by_node.items():
        node = nodes[key]
        if isinstance(node, ast.ImportFrom) and len(targets) == len(node.names) + 1:
            targets = targets[1:]  # every name is a submodule
        found |= {t for t in targets if t in ours and t != m.name}
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_cycles():
    """No module of ours reaches itself through module-level imports. A cycle is listed
    with the imports that close it."""
    graph = import_graph()
    bad = []
    for group in cycles(graph):
        members = set(group)
        edges = [f"{a} -> {b}" for a in group for b in sorted(graph[a] & members)]
        bad.append(f"cycle of {len(group)}: " + "; ".join(edges))
    assert not bad, _report(bad)


def test_the_cycle_check_sees_a_cycle():
    """The same walk finds a cycle made of a plain import and a TYPE_CHECKING one, and
    leaves out an import inside a function."""
    a = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    b = ast.parse("from .a import A\ndef f():\n    from .c import C\n")
    c = ast.parse("from .b import B\n")
    fakes = {
        name: Module(f"codec.{name}", REPO / f"codec/{name}.py", tree)
        for name, tree in (("a", a), ("b", b), ("c", c))
    }
    names = {m.name for m in fakes.values()}
    graph = {m.name: _targets(m, names) for m in fakes.values()}
    assert cycles(graph) == [["codec.a", "codec.b"]]


def _streamlit_uses(mod: Module, attrs: tuple[str, ...]) -> Iterator[tuple[ast.AST, str]]:
    """Uses of ``streamlit.<attr>`` (any alias of streamlit, or imported by name) in ``mod``,
    for attributes starting with one of ``attrs``."""
    aliases = set()
    for node in ast.walk(mod.tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname or a.name for a in node.names if a.name == "streamlit"}
        elif isinstance(node, ast.ImportFrom) and node.module == "streamlit" and not node.level:
            for a in node.names:
                if a.name.startswith(attrs):
                    yield node, f"from streamlit import {a.name}"
    for node in ast.walk(mod.tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith(attrs)
        ):
            yield node, f"{node.value.id}.{node.attr}"


@pytest.mark.parametrize(
    ("attrs", "home"),
    [
        (("cache_",), CACHE_HOME),
        (("session_state", "query_params"), STATE_HOME),
    ],
    ids=["st.cache_* only in services", "session state and query params only in state"],
)
def test_streamlit_state_and_caches_have_one_home(attrs, home):
    def at_home(name: str) -> bool:
        return name == home or name.startswith(home + ".")

    uses = {m.name: list(_streamlit_uses(m, attrs)) for m in modules()}
    bad = [
        f"{m.where(node)}: {m.name} uses {what}"
        for m in modules()
        if not at_home(m.name)
        for node, what in uses[m.name]
    ]
    assert not bad, _report(bad)
    homes = [m.name for m in modules() if at_home(m.name)]
    assert any(uses[name] for name in homes), f"the walk found no use of {attrs} in {home}"


def test_the_checks_see_a_violation():
    """The walker resolves relative imports and finds a higher layer's import."""
    tree = ast.parse(
        "from ..ui import state\nfrom browser_app import view\nimport streamlit as st\n"
        "x = st.session_state\n"
    )
    fake = Module("browser_app.edits.fake", REPO / "browser_app/edits/fake.py", tree)
    targets = [t for _, t in imports(fake)]
    assert {"browser_app.ui", "browser_app.ui.state", "browser_app.view"} <= set(targets)
    assert [layer(t) for t in targets if t.startswith("browser_app.")] == ["ui", "ui", "view"]
    assert [w for _, w in _streamlit_uses(fake, ("session_state",))] == ["st.session_state"]


def _fresh(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (nothing imported yet)."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    return out.stdout + out.stderr


def test_a_verify_loads_no_message_picture_or_schema_code():
    """codec and codec.jobs import their names on first use: a fresh process that verifies a
    file (its tasks as a worker runs them) loads neither protobuf nor Pillow, nor the
    Example, picture, schema or filter code; and every name the package exports is there."""
    code = (
        "import sys, codec, codec.jobs\n"
        "from codec.jobs import VerifyJob, plan, run\n"
        f"run(VerifyJob(), plan([{str(Path(__file__).parent / 'data' / 'basic.tfrecord')!r}]),"
        " 'inline')\n"
        "heavy = ('google.protobuf', 'PIL', 'codec.example', 'codec.images', 'codec.schema',"
        " 'codec.filters', 'codec.jobs.schema', 'codec.jobs.filter')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "for name in codec.__all__ + codec.jobs.__all__:\n"
        "    getattr(codec if name in codec.__all__ else codec.jobs, name)\n"
        "print('google.protobuf' in sys.modules)\n"
    )
    out = _fresh(code)
    assert out.split("\n")[:2] == ["[]", "True"], out


def test_a_command_loads_only_what_it_needs():
    """A fresh `verify` loads neither the other commands nor the export, the edit journal,
    the selection, the filter language, pandas or Streamlit; and every name the lazily
    imported packages export is there when asked for."""
    heavy = (
        "browser_app.cli.export",
        "browser_app.cli.filter",
        "browser_app.cli.launch",
        "browser_app.cli.schema",
        "browser_app.export.exporter",
        "browser_app.edits",
        "browser_app.selection",
        "codec.filters",
        "pandas",
        "streamlit",
    )
    code = (
        "import sys\n"
        "from browser_app.cli import main\n"
        f"code = main(['verify', {str(REPO / 'tests' / 'data' / 'basic.tfrecord')!r}])\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "import browser_app.view as view, browser_app.export as export\n"
        "for package in (view, export):\n"
        "    for name in package.__all__:\n"
        "        getattr(package, name)\n"
        "print('browser_app.export.exporter' in sys.modules)\n"
    )
    out = _fresh(code)
    assert out.splitlines()[-2:] == ["0 []", "True"], out
