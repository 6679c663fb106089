"""The CLI's declarations, without typer: commands, groups, options, arguments, exit, echo.

A command module declares its flags once, here, in typer's own vocabulary::

    @root.command("check")
    def check_command(refs: Optional[List[str]] = Argument(None, help="..."),
                      quiet: Annotated[bool, Option("--quiet", "-q", help="...")] = False) -> None:
        ...
        raise Exit(run.exit_code)

``Option`` and ``Argument`` take exactly what ``typer.Option`` and ``typer.Argument`` take and
only record it; ``CommandGroup`` records what ``typer.Typer`` takes. Two readers use the
declarations:

* ``imagelint.cli.typer_app`` builds the typer application from them (help, shell completion,
  every error message about a command line), importing typer only then;
* ``imagelint.cli.argv`` parses an ordinary command line of a simple command itself, so that
  ``imagelint check`` and the pre-commit hook's ``imagelint lint`` start without importing typer
  and click (~14 % of a check whose layers come from the cache). Whatever it is not sure of
  goes to typer (``imagelint.cli.argv`` says what).
"""

from __future__ import annotations

import sys
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Option:
    """What ``typer.Option(...)`` was given: positional arguments and keywords, unchanged."""

    __slots__ = ("args", "kwargs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self.args!r}"


class Argument(Option):
    """What ``typer.Argument(...)`` was given."""

    __slots__ = ()


class Context:
    """Annotation for a callback's click context (typer passes ``typer.Context``); such a
    callback runs only through typer."""


class Exit(Exception):
    """End the command with this status (``typer.Exit`` when typer runs the command)."""

    def __init__(self, code: int = 0) -> None:
        super().__init__(code)
        self.exit_code = code


class Command:
    """A command: its name, the function, and the keywords for ``Typer.command``."""

    __slots__ = ("name", "func", "settings")

    def __init__(self, name: str, func: Callable[..., Any], settings: dict[str, Any]) -> None:
        self.name = name
        self.func = func
        self.settings = settings


class CommandGroup:
    """A group of commands (``typer.Typer``): subcommands, subgroups and an optional callback."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        self.commands: dict[str, Command] = {}
        self.groups: dict[str, CommandGroup] = {}
        self.callback_func: Callable[..., Any] | None = None
        self.callback_settings: dict[str, Any] = {}

    def command(self, name: str, **settings: Any) -> Callable[[F], F]:
        def register(func: F) -> F:
            self.commands[name] = Command(name, func, settings)
            return func

        return register

    def callback(self, **settings: Any) -> Callable[[F], F]:
        def register(func: F) -> F:
            self.callback_func = func
            self.callback_settings = settings
            return func

        return register

    def add_group(self, group: CommandGroup, name: str) -> None:
        self.groups[name] = group


# click.echo strips these (SGR and other CSI sequences) when colour is not asked for and the
# stream is not a terminal; so does echo.
_ANSI = None


def echo(message: Any = None, *, err: bool = False, nl: bool = True, color: bool | None = None) -> None:
    """``click.echo`` for text: a line to stdout (stderr with ``err``), flushed; ANSI sequences
    dropped unless ``color`` or a terminal; characters the stream cannot encode replaced."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    text = "" if message is None else message if isinstance(message, str) else str(message)
    if nl:
        text += "\n"
    if "\x1b" in text and not color and (color is False or not _isatty(stream)):
        global _ANSI
        if _ANSI is None:
            import re

            _ANSI = re.compile(r"\033\[[;?0-9]*[a-zA-Z]")
        text = _ANSI.sub("", text)
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "utf-8"
        stream.write(text.encode(encoding, "replace").decode(encoding, "replace"))
    stream.flush()


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


__all__ = ["Argument", "Command", "CommandGroup", "Context", "Exit", "Option", "echo"]
