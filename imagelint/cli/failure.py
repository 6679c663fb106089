"""How a command ends on an imagelint error: one line on stderr, the error's exit code."""

from __future__ import annotations

import typer

from imagelint.errors import ImagelintError


def fail(exc: ImagelintError) -> typer.Exit:
    """Print an imagelint error as one line on stderr and return the Exit to raise."""
    typer.echo(error_line(exc.message), err=True)
    return typer.Exit(exc.exit_code)


def error_line(message: str) -> str:
    """``imagelint: error: MESSAGE`` as one printable line (a message may quote an image or a registry)."""
    from imagelint.escape import guard_line, printable

    return guard_line(f"imagelint: error: {printable(' '.join(message.splitlines()))}")


__all__ = ["error_line", "fail"]
