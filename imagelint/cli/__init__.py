"""The CLI: flags in, an options object to the core, an exit code out.

Each command group lives in its own module and registers itself on ``root``, declared in
typer's vocabulary through ``imagelint.cli.spec``. ``main`` parses an ordinary command line
itself (``imagelint.cli.argv``) and hands everything else (help, completion, a command line
with a mistake in it) to the typer application built from the same declarations
(``imagelint.cli.typer_app``; ``imagelint.cli.app`` is that application, for tests). Core
modules never import typer. Heavy modules are imported inside commands so that ``imagelint
lint`` (the pre-commit path) starts fast.
"""

from __future__ import annotations

import errno
import sys
from typing import Any

from imagelint import __version__
from imagelint.cli.spec import CommandGroup, Exit, Option, echo
from imagelint.errors import EXIT_BROKEN_PIPE, EXIT_INTERNAL, EXIT_OUTPUT, EXIT_UNREADABLE, ImagelintError

root = CommandGroup(
    name="imagelint",
    help="Lint built GPU container images against the NVIDIA driver, toolkit and device plugin they will meet.",
    no_args_is_help=True,
    # --install-completion / --show-completion (bash, zsh, fish, PowerShell), as typer offers them.
    add_completion=True,
    pretty_exceptions_enable=False,
    # -h as well as --help, for every command (click passes the setting down to subcommands).
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from imagelint.layers.tarwalk import NATIVE

        # Which tar walk this install has: the native scanner (built with a C compiler) or the
        # Python parser alone (same results, slower on images of many small files).
        echo(f"imagelint {__version__} (tar scanner: {'native' if NATIVE else 'python'})")
        raise Exit(0)


@root.callback()
def _root(
    version: bool = Option(False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """imagelint: fail the pipeline before a GPU image fails on the cluster."""


# Command name -> the module that defines it. The one place commands are wired.
COMMANDS = {
    "inspect": "inspect_cmd",
    "check": "check_cmd",
    "lint": "lint_cmd",
    "rules": "rules_cmd",
    "explain": "rules_cmd",
    "matrix": "matrix_cmd",
    "target": "target_cmd",
    "cache": "cache_cmd",
    "audit": "audit_cmd",
    "gpus": "catalog_cmd",
    "drivers": "catalog_cmd",
    "doctor": "doctor_cmd",
}


def _register(command: str | None = None) -> None:
    """Import the module of ``command`` only (start-up matters for the pre-commit hook),
    or every command module when it is unknown (``--help``, a typo: typer lists them)."""
    modules = [COMMANDS[command]] if command in COMMANDS else list(dict.fromkeys(COMMANDS.values()))
    for module in modules:
        __import__(f"imagelint.cli.{module}")


def fail(exc: ImagelintError) -> Exit:
    """Print an imagelint error as one line on stderr and return the Exit to raise."""
    echo(error_line(exc.message), err=True)
    return Exit(exc.exit_code)


def error_line(message: str) -> str:
    """``imagelint: error: MESSAGE`` as one printable line (a message may quote an image or a registry)."""
    from imagelint.escape import guard_line, printable

    return guard_line(f"imagelint: error: {printable(' '.join(message.splitlines()))}")


def main() -> None:
    import os

    from imagelint import deadline
    from imagelint.cli.argv import resolve

    _register(next((a for a in sys.argv[1:] if not a.startswith("-")), None))
    try:
        deadline.start(deadline.parse_deadline(os.environ.get("IMAGELINT_DEADLINE")))
        try:
            parsed = resolve(root, sys.argv[1:])
            if parsed is None:  # help, completion, a mistake: typer and click, with their messages
                _typer_app()(standalone_mode=True)
            else:
                command, keywords = parsed
                try:
                    command(**keywords)
                except Exit as exc:
                    sys.exit(exc.exit_code)
        finally:
            sys.stdout.flush()  # a full disk shows here, not as a traceback at interpreter exit
    except OSError as exc:
        if exc.errno == errno.EPIPE:  # the reader went away: click's quiet status 1, as typer runs end
            _quiet_stdout()
            raise SystemExit(EXIT_BROKEN_PIPE) from None
        if exc.errno not in _OUTPUT_ERRNOS:
            raise _internal(exc) from None
        _output_failed(exc.strerror or str(exc))
    except ImagelintError as exc:  # commands normally convert these; this is the safety net
        echo(error_line(exc.message), err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        echo("imagelint: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # never a traceback for users; say what broke in one line
        raise _internal(exc) from None
    finally:
        deadline.stop()


def _typer_app() -> Any:
    from imagelint.cli.typer_app import build

    return build(root)


def __getattr__(name: str) -> Any:
    """``imagelint.cli.app``: the typer application of every command (typer's CliRunner takes it)."""
    if name == "app":
        _register()
        return _typer_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Writing the report failed: no space, an I/O error on the output device. (A reader that went
# away, EPIPE, keeps click's convention: a quiet EXIT_BROKEN_PIPE, in main and in __main__.py.)
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG})


def _output_failed(reason: str) -> None:
    """Exit EXIT_OUTPUT with one line on the real stderr; stdout is pointed at /dev/null so the
    interpreter's last flush cannot fail again."""
    import os

    _quiet_stdout()
    try:
        sys.__stderr__.write(error_line(f"cannot write the output: {reason}") + "\n")
        sys.__stderr__.flush()
    except (OSError, AttributeError, ValueError):
        pass
    raise SystemExit(EXIT_OUTPUT)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so that no later flush of what is buffered fails again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


def _internal(exc: BaseException) -> SystemExit:
    from imagelint.escape import printable

    detail = printable(" ".join(str(exc).split()))[:200]  # one line, whatever the exception text holds
    echo(f"imagelint: internal error: {exc.__class__.__name__}: {detail}", err=True)
    # An OSError that escaped a source is an unreadable input (exit 3), anything else a bug.
    return SystemExit(EXIT_UNREADABLE if isinstance(exc, OSError) else EXIT_INTERNAL)


__all__ = ["root", "main", "fail", "error_line"]
