"""The command line imports only what the command it runs needs: the parser is built with
the commands of the one module registering it (every command for ``--help`` or a mistyped
one). What a command loads is in ``test_layers``."""

from __future__ import annotations

import pytest

from browser_app.cli.main import COMMANDS, build_parser, command_of, main


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
