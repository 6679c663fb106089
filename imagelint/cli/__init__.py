"""The typer CLI: flags in, an options object to the core, an exit code out.

Each command group lives in its own module and registers itself on ``app``.
Core modules never import typer. Heavy modules are imported inside commands so
that ``imagelint lint`` (the pre-commit path) starts fast.
"""

from __future__ import annotations

import sys

import typer

from imagelint import __version__
from imagelint.errors import EXIT_INTERNAL, EXIT_UNREADABLE, ImagelintError

app = typer.Typer(
    name="imagelint",
    help="Lint built GPU container images against the NVIDIA driver, toolkit and device plugin they will meet.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"imagelint {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """imagelint: fail the pipeline before a GPU image fails on the cluster."""


def _register() -> None:
    # Each module adds its commands to ``app``. Keep this list the one place commands are wired.
    for optional in ("inspect_cmd", "matrix_cmd", "target_cmd", "check_cmd", "lint_cmd", "rules_cmd", "cache_cmd"):
        try:
            __import__(f"imagelint.cli.{optional}")
        except ModuleNotFoundError as exc:
            if exc.name != f"imagelint.cli.{optional}":
                raise


def fail(exc: ImagelintError) -> "typer.Exit":
    """Print an imagelint error as one line on stderr and return the Exit to raise."""
    typer.echo(f"imagelint: error: {exc.message}", err=True)
    return typer.Exit(exc.exit_code)


def main() -> None:
    _register()
    try:
        app(standalone_mode=True)
    except ImagelintError as exc:  # commands normally convert these; this is the safety net
        typer.echo(f"imagelint: error: {exc.message}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("imagelint: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # never a traceback for users; say what broke in one line
        detail = " ".join(str(exc).split())[:200]  # one line, whatever the exception text holds
        typer.echo(f"imagelint: internal error: {exc.__class__.__name__}: {detail}", err=True)
        sys.exit(EXIT_UNREADABLE if isinstance(exc, OSError) else EXIT_INTERNAL)


__all__ = ["app", "main", "fail"]
