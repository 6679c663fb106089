"""A run imports only its own command's module (imagelint/cli/entry.py, issue 40): the table that
says which module declares which command is checked against the modules themselves, and a run of
one command is probed for the command modules it imported."""

from __future__ import annotations

import typer

from imagelint.cli import entry
from tests.support.cli_probe import probe


def _commands_of(modules: tuple[str, ...]) -> set[str]:
    return set(typer.main.get_command(entry.build_app(modules)).commands)  # type: ignore[attr-defined]


def test_every_command_is_found_in_the_module_that_declares_it() -> None:
    for module in entry._MODULES:
        declared = _commands_of((module,))
        assert declared == {c for c, m in entry._COMMAND_MODULES.items() if m == module}, module
    assert set(entry._COMMAND_MODULES.values()) == set(entry._MODULES)
    assert _commands_of(entry._MODULES) == set(entry._COMMAND_MODULES) == set(typer.main.get_command(entry.app).commands)


def _command_modules_imported(args: list[str]) -> set[str]:
    _, modules, _ = probe(args)
    return {m.rsplit(".", 1)[1] for m in modules if m.startswith("imagelint.cli.") and m.endswith("_cmd")}


def test_a_run_of_one_command_imports_only_its_module(tmp_path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text('FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nCMD ["python3"]\n')
    assert _command_modules_imported(["lint", str(dockerfile)]) == {"lint_cmd"}
    assert _command_modules_imported(["explain", "IL101"]) == {"rules_cmd"}


def test_help_and_a_mistyped_command_see_every_command() -> None:
    code, _, out = probe(["--help"])
    assert code == 0 and all(c in out for c in entry._COMMAND_MODULES)
    assert _command_modules_imported(["--help"]) == set(entry._MODULES)
    assert _command_modules_imported(["lnt"]) == set(entry._MODULES)  # click's "did you mean" needs them all
