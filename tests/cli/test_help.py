"""``--help`` of every command: a few examples that parse as written, the exit codes, and the
image-reference grammar where a command takes images."""

from __future__ import annotations

import shlex

import click
import pytest
import typer
from typer.testing import CliRunner

from imagelint.cli import app

ROOT_COMMAND = typer.main.get_command(app)


def _paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += _paths(command, (*prefix, name))
    return found


COMMANDS = _paths(ROOT_COMMAND)
TAKES_IMAGES = {("check",), ("inspect",), ("lint",)}


def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_every_command_is_seen() -> None:
    assert {("check",), ("lint",), ("audit", "merge"), ("matrix", "show"), ("cache", "clean"), ("doctor",)} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_has_examples_and_exit_codes(path: tuple[str, ...]) -> None:
    text = _help(path)
    assert "\nExamples:\n" in text.replace("  Examples:", "Examples:"), text
    assert "Exit codes:" in text and "  0 " in text and "  130 " in text, text
    assert ("Image references:" in text) == (path in TAKES_IMAGES), text


def test_root_help_lists_the_exit_codes() -> None:
    text = _help(())
    for code in ("0", "1", "2", "3", "4", "130"):
        assert f"\n    {code} " in text, text


def _examples(text: str) -> list[list[str]]:
    lines = text.split("Examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    commands = []
    for line in lines:
        words = shlex.split(line.strip(), comments=True)
        for stop in ("|", ">"):
            words = words[: words.index(stop)] if stop in words else words
        if words and words[0] == "imagelint":
            commands.append(words[1:])
    return commands


def _parse(args: list[str]) -> None:
    """Parse ``imagelint ARGS`` with the real click command tree, running nothing."""
    command: click.Command = ROOT_COMMAND
    ctx = command.make_context("imagelint", list(args))
    words = list(args)
    while isinstance(command, click.Group):
        # The group's parser leaves its command and that command's words (ctx.protected_args, which
        # held the command, is deprecated in Click 8.2 and goes in Click 9).
        _, rest, _ = command.make_parser(ctx).parse_args(list(words))
        if not rest:
            return
        name, *words = rest
        command = command.get_command(ctx, name)
        assert command is not None, name
        ctx = command.make_context(name, list(words), parent=ctx)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_example_parses(path: tuple[str, ...]) -> None:
    examples = _examples(_help(path))
    assert examples, path
    for args in examples:
        _parse(args)


def test_doctor_help_names_the_not_all_checked_exit_code() -> None:
    text = _help(("doctor",))
    assert "  5 " in text and "not all checked" in text and "healthy: every stage was read" in text, text
