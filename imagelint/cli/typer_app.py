"""The typer application, built from the declarations in ``imagelint.cli.spec``.

It runs every command line ``imagelint.cli.argv`` does not take itself: ``--help``, shell
completion, ``--version``, groups with a callback, and every command line with something
wrong in it (click's messages and exit status 2). Tests use it through ``imagelint.cli.app``
with typer's ``CliRunner``.
"""

from __future__ import annotations

import functools
import inspect
import typing
from typing import Any, Callable

import typer

from imagelint.cli import spec


def build(root: spec.CommandGroup) -> typer.Typer:
    """A typer application with every command and group registered on ``root``."""
    app = typer.Typer(**root.settings)
    _fill(app, root)
    return app


def _fill(app: typer.Typer, group: spec.CommandGroup) -> None:
    if group.callback_func is not None:
        app.callback(**group.callback_settings)(typer_function(group.callback_func))
    for command in group.commands.values():
        app.command(command.name, **command.settings)(typer_function(command.func))
    for name, sub in group.groups.items():
        sub_app = typer.Typer(**sub.settings)
        _fill(sub_app, sub)
        app.add_typer(sub_app, name=name)


def typer_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with typer's parameter objects in its signature; ``spec.Exit`` becomes ``typer.Exit``."""
    signature = inspect.signature(func, eval_str=True)
    parameters = [p.replace(annotation=_typer_annotation(p.annotation), default=_typer_default(p.default))
                  for p in signature.parameters.values()]
    wrapper = _exits_as_typer(func)
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    # typer reads typing.get_type_hints(): resolved objects, not the strings of __future__ annotations.
    wrapper.__annotations__ = {p.name: p.annotation for p in parameters if p.annotation is not p.empty}
    return wrapper


def _exits_as_typer(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except spec.Exit as exc:
            raise typer.Exit(exc.exit_code) from None

    return wrapper


def _typer_annotation(annotation: Any) -> Any:
    if annotation is spec.Context:
        return typer.Context
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        return typing.Annotated[(base, *(_typer_default(m) for m in metadata))]  # type: ignore[misc]
    return annotation


def _typer_default(value: Any) -> Any:
    if not isinstance(value, spec.Option):
        return value
    kwargs = dict(value.kwargs)
    if kwargs.get("callback") is not None:  # an option's callback (--version) may end the run too
        kwargs["callback"] = _exits_as_typer(kwargs["callback"])
    return (typer.Argument if isinstance(value, spec.Argument) else typer.Option)(*value.args, **kwargs)


__all__ = ["build", "typer_function"]
