"""Page scripts are run by Streamlit with "magic" on: a bare expression at the top level of a
page's module, such as a docstring under a constant, is drawn on the page. Only the module's
own docstring (which Streamlit leaves out) may stand there."""

from __future__ import annotations

import ast
from pathlib import Path

PAGES = Path(__file__).resolve().parent.parent / "browser_app" / "ui" / "pages"


def test_no_page_draws_a_stray_expression() -> None:
    found = []
    scripts = sorted(PAGES.glob("*.py"))
    assert len(scripts) > 10
    for path in scripts:
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for i, node in enumerate(body):
            if isinstance(node, ast.Expr) and not (i == 0 and isinstance(node.value, ast.Constant)):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, found
