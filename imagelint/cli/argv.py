"""Parse an ordinary command line without typer or click, or say it is not one.

``imagelint check`` and ``imagelint lint`` (the pre-commit hook) are run far more often than
they are asked for help, and importing typer and click costs more than a check whose layers
come from the cache spends on its image. So ``main`` asks ``resolve`` first: it reads the
command's declarations (``imagelint.cli.spec``) the way typer turns them into click parameters,
and returns the function and the keyword arguments typer would pass it. It returns None, and
typer runs the command line instead, whenever anything is not plain:

* help, ``--version``, shell completion (a ``_..._COMPLETE`` variable), no command;
* an option it does not know, ``--``, a short option that is not exactly ``-x``, a flag given a
  value, an option's value that starts with ``-``, a value that does not convert (click says
  why), a number outside its range, a missing or extra argument;
* a command whose declarations use anything beyond str, int, float, bool and lists of str
  options and arguments, or an option with a callback, or a group callback that needs click's
  context.

So every command line with something to complain about gets click's message and status;
``tests/cli/test_argv.py`` holds the keywords to typer's on every command, option by option.
"""

from __future__ import annotations

import inspect
import os
import typing
from typing import Any, Callable, Mapping, Sequence

from imagelint.cli.spec import Argument, CommandGroup, Option

# Keywords of typer.Option/Argument that only change help and completion, or that this parser
# implements (min, max; callback and is_eager for a group callback's options, which an ordinary
# command line never gives: click calls the callback with the default).
_KNOWN_SETTINGS = frozenset({"help", "rich_help_panel", "metavar", "show_default", "min", "max", "callback", "is_eager"})


class _Unsupported(Exception):
    """The declarations or the command line are for typer to handle."""


class _Param:
    __slots__ = ("name", "argument", "opts", "secondary", "flag", "multiple", "convert", "default", "required",
                 "low", "high", "callback")

    def __init__(self, name: str, argument: bool) -> None:
        self.name = name
        self.argument = argument
        self.opts: list[str] = []
        self.secondary: list[str] = []
        self.flag = False
        self.multiple = False
        self.convert: Callable[[str], Any] = str
        self.default: Any = None
        self.required = False
        self.low: Any = None
        self.high: Any = None
        self.callback: Callable[..., Any] | None = None


def resolve(root: CommandGroup, args: Sequence[str],
            environ: Mapping[str, str] = os.environ) -> tuple[Callable[..., Any], dict[str, Any]] | None:
    """(function, keyword arguments) for ``args`` (without the program name), or None for typer."""
    if any(key.startswith("_") and key.endswith("_COMPLETE") for key in environ):
        return None
    try:
        chain, command, rest = _find_command(root, args)
        params = _params(command)
        if any(p.callback is not None for p in params):
            raise _Unsupported  # click calls an option's callback with its value: typer's to do
        keywords = _keywords(params, rest)
        # Only now, with the command line known to be the parser's (otherwise typer runs them):
        # click runs each group's callback before the command, with the group's defaults.
        for group in chain:
            _run_callback(group)
        return command, keywords
    except _Unsupported:
        return None


def _find_command(root: CommandGroup, args: Sequence[str]) -> tuple[list[CommandGroup], Callable[..., Any], Sequence[str]]:
    chain, group, index = [root], root, 0
    while index < len(args) and args[index] in group.groups:
        group = group.groups[args[index]]
        chain.append(group)
        index += 1
    if index >= len(args) or args[index] not in group.commands:
        raise _Unsupported  # help, a root option, a typo, a group without its command
    return chain, group.commands[args[index]].func, args[index + 1:]


def _run_callback(group: CommandGroup) -> None:
    if group.callback_func is None:
        return
    keywords = {}
    for param in _params(group.callback_func):
        if param.argument:
            raise _Unsupported
        value = param.default
        if param.callback is not None:  # click calls an option's callback with the default too
            value = param.callback(value)
        keywords[param.name] = value
    group.callback_func(**keywords)


def _params(func: Callable[..., Any]) -> list[_Param]:
    return [_param(p) for p in inspect.signature(func, eval_str=True).parameters.values()]


def _param(parameter: inspect.Parameter) -> _Param:
    annotation, default = parameter.annotation, parameter.default
    info: Option | None = None
    if typing.get_origin(annotation) is typing.Annotated:
        annotation, *metadata = typing.get_args(annotation)
        infos = [m for m in metadata if isinstance(m, Option)]
        if len(infos) != 1:
            raise _Unsupported
        info, declarations = infos[0], list(infos[0].args)
        if "default" in info.kwargs:
            raise _Unsupported
    elif isinstance(default, Option):
        info, declarations = default, list(default.args[1:])
        default = default.kwargs["default"] if "default" in default.kwargs else (default.args[0] if default.args else ...)
    if info is None or set(info.kwargs) - _KNOWN_SETTINGS - {"default"}:
        raise _Unsupported
    param = _Param(parameter.name, isinstance(info, Argument))
    param.required = default is ... or default is parameter.empty
    param.default = None if param.required else default
    param.low, param.high = info.kwargs.get("min"), info.kwargs.get("max")
    param.callback = info.kwargs.get("callback")
    if param.callback is not None and not info.kwargs.get("is_eager"):
        raise _Unsupported
    _set_type(param, annotation)
    if param.argument:
        if declarations:
            raise _Unsupported
    else:
        _set_names(param, declarations)
    return param


def _set_type(param: _Param, annotation: Any) -> None:
    if typing.get_origin(annotation) is typing.Union:
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            raise _Unsupported
        annotation = members[0]
    if typing.get_origin(annotation) is list and typing.get_args(annotation) == (str,):
        if param.default is not None:
            raise _Unsupported
        param.multiple = True
    elif annotation is bool and not param.argument:
        param.flag = True
    elif annotation in (str, int, float):
        param.convert = annotation
    else:
        raise _Unsupported
    if (param.low is not None or param.high is not None) and annotation is not int:
        raise _Unsupported


def _set_names(param: _Param, declarations: list[Any]) -> None:
    if not declarations:  # typer's names: --name-with-dashes, and --no-name for a bool
        long_name = "--" + param.name.lower().replace("_", "-")
        declarations = [f"{long_name}/--no-{long_name[2:]}" if param.flag else long_name]
    for declaration in declarations:
        if not isinstance(declaration, str):
            raise _Unsupported
        primary, slash, secondary = declaration.partition("/")
        if slash and not param.flag:
            raise _Unsupported
        for name, into in ((primary.strip(), param.opts), (secondary.strip(), param.secondary)):
            if not name:
                continue
            if not (name.startswith("--") and len(name) > 2) and not (len(name) == 2 and name[0] == "-" and name[1] != "-"):
                raise _Unsupported
            into.append(name)


def _keywords(params: list[_Param], args: Sequence[str]) -> dict[str, Any]:
    by_name: dict[str, _Param] = {}
    for param in params:
        for name in (*param.opts, *param.secondary):
            by_name[name] = param
    values: dict[str, Any] = {}
    positional: list[str] = []
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if token == "--":
            raise _Unsupported
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        param = by_name.get(name)
        if param is None:
            raise _Unsupported
        if param.flag:
            if equals:
                raise _Unsupported
            values[param.name] = name not in param.secondary
            continue
        if not equals:
            if index >= len(args) or (args[index].startswith("-") and args[index] != "-"):
                raise _Unsupported
            value = args[index]
            index += 1
        converted = _convert(param, value)
        if param.multiple:
            values.setdefault(param.name, []).append(converted)
        else:
            values[param.name] = converted
    _assign_arguments([p for p in params if p.argument], positional, values)
    return {p.name: values[p.name] if p.name in values else p.default for p in params}


def _convert(param: _Param, value: str) -> Any:
    try:
        converted = param.convert(value)
    except ValueError:
        raise _Unsupported from None
    if (param.low is not None and converted < param.low) or (param.high is not None and converted > param.high):
        raise _Unsupported
    return converted


def _assign_arguments(arguments: list[_Param], positional: list[str], values: dict[str, Any]) -> None:
    if len(arguments) == 1 and arguments[0].multiple:
        if positional:
            values[arguments[0].name] = list(positional)
        elif arguments[0].required:
            raise _Unsupported
        return
    if any(a.multiple for a in arguments) or len(positional) > len(arguments):
        raise _Unsupported
    for argument, token in zip(arguments, positional):
        values[argument.name] = _convert(argument, token)
    if any(a.required for a in arguments[len(positional):]):
        raise _Unsupported


__all__ = ["resolve"]
