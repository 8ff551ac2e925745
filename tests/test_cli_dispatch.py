"""The command line imports only what the command it runs needs: the parser is built with
the commands of the one module registering it (every command for ``--help`` or a mistyped
one), and the packages behind the commands import their names on first use."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

from browser_app.cli.main import COMMANDS, build_parser, command_of, main

REPO = Path(__file__).resolve().parents[1]


def _choices(parser) -> list[str]:
    [sub] = [a for a in parser._actions if a.dest == "command"]
    return list(sub.choices)


def test_the_table_names_every_command_and_the_module_that_registers_it():
    assert _choices(build_parser()) == list(COMMANDS)
    for command, module in COMMANDS.items():
        siblings = [c for c, m in COMMANDS.items() if m == module]
        assert _choices(build_parser([command])) == siblings, command


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["verify", "x.tfrecord"], "verify"),
        (["--max-inflate", "8M", "dump", "x"], "dump"),
        (["--max-inflate=8M", "--anon", "info", "x"], "info"),
        (["--anon", "export", "a", "b"], "export"),
        (["--help"], None),
        (["verfy", "x"], None),  # a mistyped command: the full parser says which exist
        (["--", "verify"], None),
        ([], None),
    ],
)
def test_the_command_a_line_names(argv, command):
    assert command_of(argv) == command


def test_a_mistyped_command_lists_every_command(capsys):
    assert main(["verfy", "x"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'verfy'" in err
    assert all(c in err for c in COMMANDS)


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
        f"code = main(['verify', {str(DATA / 'basic.tfrecord')!r}])\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))\n"
        "import browser_app.view as view, browser_app.export as export\n"
        "for package in (view, export):\n"
        "    for name in package.__all__:\n"
        "        getattr(package, name)\n"
        "print('browser_app.export.exporter' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert out.stdout.splitlines()[-2:] == ["0 []", "True"], out.stdout + out.stderr
