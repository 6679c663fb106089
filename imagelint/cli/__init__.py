"""The CLI: flags in, an options object to the core, an exit code out.

typer parses every command line (``imagelint.cli.entry``); each command module declares its
commands with typer and imports the core inside the command. Core modules never import typer.
"""

from __future__ import annotations

from imagelint.cli.entry import app, main

__all__ = ["app", "main"]
