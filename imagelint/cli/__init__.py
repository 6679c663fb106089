"""The CLI: flags in, an options object to the core, an exit code out.

typer parses every command line (``imagelint.cli.entry``); each command module declares its
commands with typer and imports the core inside the command. Core modules never import typer.
"""

from __future__ import annotations

from typing import Any

from imagelint.cli.entry import main


def __getattr__(name: str) -> Any:
    # ``app`` (every command) is built on first use: a run builds only its own command's.
    if name == "app":
        from imagelint.cli import entry

        return entry.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]
