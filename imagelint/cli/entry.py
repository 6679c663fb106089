"""The typer application and ``main``: every command, one parser, one way to end a run.

Each command module declares its commands on a ``typer.Typer`` of its own (a group's module on
the group's); ``app`` adds them all. Command modules import what a command needs inside the
command, so that building the application stays cheap and ``imagelint lint`` pays only for lint.
A run of one command imports only that command's module (``_COMMAND_MODULES``): the other nine
and what they import at the top cost a fresh process as much as typer and click do; ``--help``,
a mistyped command and shell completion get every command.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import warnings
from typing import Any, Sequence

import typer
from typer.core import TyperGroup

from imagelint import __version__
from imagelint.cli.failure import error_line
from imagelint.cli.help import ALL_EXIT_CODES
from imagelint.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT,
    EXIT_UNREADABLE,
    ImagelintError,
)


class _Interrupted(Exception):
    """Ctrl-C during a command, carried past click (which would end it without a word)."""


class _ReaderGone(Exception):
    """stdout's reader went away during a command, carried past click (which would swap sys.stdout)."""


class _Commands(TyperGroup):
    """The root group: an interrupt and a closed pipe end the run in ``main``'s words."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted from None
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise _ReaderGone from None
            raise

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """An unknown command gets one suggestion sentence: typer's and click's each add one
        (``Did you mean 'check', 'cache'? (Did you mean one of: 'cache', 'check'?)``); click's
        alone is kept for the groups under this one."""
        import click

        try:
            name, command, rest = super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if args and args[0] not in self.commands and not args[0].startswith("-"):
                from difflib import get_close_matches

                close = get_close_matches(args[0], sorted(self.commands), n=2)
                exc.message = f"No such command {args[0]!r}." + (
                    f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else "")
                # click's own suggestion, said above (older click raises a plain UsageError, without one)
                exc.possibilities = None  # type: ignore[attr-defined]  # NoSuchCommand's, which click >= 8.2 raises
            raise
        if isinstance(command, TyperGroup):
            command.suggest_commands = False
        return name, command, rest


# The command modules in the order help lists their commands, and the commands each declares
# (tests/cli/test_lazy_commands.py keeps the two in step with the modules).
_MODULES = ("inspect_cmd", "check_cmd", "lint_cmd", "rules_cmd", "matrix_cmd", "target_cmd", "cache_cmd", "audit_cmd",
            "catalog_cmd", "doctor_cmd")
_COMMAND_MODULES = {
    "inspect": "inspect_cmd", "check": "check_cmd", "lint": "lint_cmd", "rules": "rules_cmd", "explain": "rules_cmd",
    "matrix": "matrix_cmd", "target": "target_cmd", "cache": "cache_cmd", "audit": "audit_cmd", "gpus": "catalog_cmd",
    "drivers": "catalog_cmd", "doctor": "doctor_cmd",
}


def _version(value: bool) -> None:
    if value:
        from imagelint.layers.tarwalk import NATIVE

        # Which tar walk this install has: the native scanner (built with a C compiler) or the
        # Python parser alone (same results, slower on images of many small files).
        typer.echo(f"imagelint {__version__} (tar scanner: {'native' if NATIVE else 'python'})")
        raise typer.Exit(0)


def _root(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """imagelint: fail the pipeline before a GPU image fails on the cluster."""


def build_app(modules: Sequence[str] = _MODULES) -> typer.Typer:
    """The typer application with the commands of ``modules`` (every command by default)."""
    application = typer.Typer(
        name="imagelint",
        cls=_Commands,
        help="Lint built GPU container images against the NVIDIA driver, toolkit and device plugin they will meet.",
        epilog=ALL_EXIT_CODES,
        no_args_is_help=True,
        # --install-completion / --show-completion (bash, zsh, fish, PowerShell), as typer offers them.
        add_completion=True,
        pretty_exceptions_enable=False,
        # click's plain help: no rich import for --help, and epilogs printed as written.
        rich_markup_mode=None,
        # -h as well as --help, for every command (click passes the setting down to subcommands).
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    application.callback()(_root)
    for name in modules:
        application.add_typer(importlib.import_module(f"imagelint.cli.{name}").app)
    return application


def _modules_for(argv: Sequence[str]) -> Sequence[str]:
    """The command modules a command line needs: the one of its command, when its first word names
    one; every module for anything else (root options such as --help, a typo, completion)."""
    if any(key.startswith("_IMAGELINT") and key.endswith("_COMPLETE") for key in os.environ):
        return _MODULES
    module = _COMMAND_MODULES.get(argv[0]) if argv else None
    return (module,) if module else _MODULES


def __getattr__(name: str) -> Any:
    # ``app``, every command (the tests' CliRunner, documentation tools): built on first use only.
    if name == "app":
        application = globals()["app"] = build_app()
        return application
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(args: Sequence[str] | None = None) -> None:
    """Run one command line (``sys.argv[1:]`` by default); always ends with SystemExit."""
    from imagelint import deadline

    # The program, not the HTTP layer, decides which warnings a user sees: a registry named
    # --insecure-registry is reached without TLS verification because the user asked, and urllib3
    # would warn about it on every request.
    warnings.filterwarnings("ignore", message="Unverified HTTPS request", module=r"urllib3\.")
    # A rule's over-long headline (rules.base.HeadlineTooLong) is the suite's to catch; reports split it.
    warnings.filterwarnings("ignore", module=r"imagelint\.core\.engine")
    try:
        deadline.start(deadline.parse_deadline(os.environ.get("IMAGELINT_DEADLINE")))
        try:
            argv = sys.argv[1:] if args is None else list(args)
            command = typer.main.get_command(build_app(_modules_for(argv)))
            command.main(args=None if args is None else argv, prog_name="imagelint")
        finally:
            sys.stdout.flush()  # a full disk shows here, not as a traceback at interpreter exit
    except _Interrupted:
        typer.echo("imagelint: interrupted", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
    except _ReaderGone:
        _quiet_stdout()
        raise SystemExit(EXIT_BROKEN_PIPE) from None
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # the last flush met a closed pipe
            _quiet_stdout()
            raise SystemExit(EXIT_BROKEN_PIPE) from None
        if exc.errno not in _OUTPUT_ERRNOS:
            raise _internal(exc) from None
        _output_failed(exc.strerror or str(exc))
    except ImagelintError as exc:  # commands normally convert these; this is the safety net
        typer.echo(error_line(exc.message), err=True)
        raise SystemExit(exc.exit_code) from None
    except Exception as exc:  # never a traceback for users; say what broke in one line
        raise _internal(exc) from None
    finally:
        deadline.stop()


# Writing the report failed: no space, an I/O error on the output device. (A reader that went
# away, EPIPE, is click's convention: a quiet EXIT_BROKEN_PIPE.)
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG})


def _output_failed(reason: str) -> None:
    """Exit EXIT_OUTPUT with one line on the real stderr; stdout is pointed at /dev/null so the
    interpreter's last flush cannot fail again."""
    _quiet_stdout()
    stderr = sys.__stderr__  # None when the interpreter started without one
    try:
        if stderr is not None:
            stderr.write(error_line(f"cannot write the output: {reason}") + "\n")
            stderr.flush()
    except (OSError, AttributeError, ValueError):
        pass
    raise SystemExit(EXIT_OUTPUT)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's flush of what is still buffered cannot fail again."""
    stdout = sys.__stdout__  # None when the interpreter started without one
    if stdout is None:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


def _internal(exc: BaseException) -> SystemExit:
    from imagelint.escape import printable

    detail = printable(" ".join(str(exc).split()))[:200]  # one line, whatever the exception text holds
    typer.echo(f"imagelint: internal error: {exc.__class__.__name__}: {detail}", err=True)
    # An OSError that escaped a source is an unreadable input (exit 3), anything else a bug.
    return SystemExit(EXIT_UNREADABLE if isinstance(exc, OSError) else EXIT_INTERNAL)


__all__ = ["app", "main"]  # noqa: F822 (``app`` is built on first use by the module's __getattr__)
