"""``imagelint.cli.argv`` against typer and click, on every command.

The fast parser returns the keyword arguments typer would pass a command, or None. These tests
build command lines from each command's own declarations (every option in every spelling,
flags both ways, lists repeated, arguments interleaved) and compare the fast parser's keywords
with what typer passes a recording copy of the same command; and they hold the parser to giving
typer every command line click complains about or answers with help.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from typing import Any, Callable

import pytest
from typer.testing import CliRunner

import imagelint.cli as cli
from imagelint.cli import argv, spec
from imagelint.cli.typer_app import build
from tests.cli.test_check import imagelint
from tests.support.cli_probe import probe

cli._register()

# The commands that run without typer on an ordinary command line; every other command is
# typer's. A command that falls out of this list (a declaration the parser does not read) is
# caught here rather than by a slower start-up nobody measures.
FAST = {
    "check", "lint", "inspect", "rules", "explain", "gpus", "drivers", "doctor",
    "matrix list", "matrix show", "matrix validate", "matrix diff", "matrix export", "matrix publish",
    "target show", "target snapshot", "cache info", "cache clean",
}
TYPER_ONLY = {"audit enumerate", "audit merge"}  # the audit group's callback takes click's context


def _commands(group: spec.CommandGroup, path: tuple[str, ...] = ()) -> dict[str, tuple[tuple[str, ...], spec.Command]]:
    found = {" ".join((*path, name)): ((*path, name), command) for name, command in group.commands.items()}
    for name, sub in group.groups.items():
        found.update(_commands(sub, (*path, name)))
    return found


COMMANDS = _commands(cli.root)


def _recording_tree(group: spec.CommandGroup, calls: list[dict[str, Any]]) -> spec.CommandGroup:
    """The same groups and commands, each command replaced by one that records its keywords."""
    copy = spec.CommandGroup(**group.settings)
    copy.callback_func, copy.callback_settings = group.callback_func, group.callback_settings
    for name, command in group.commands.items():
        copy.commands[name] = spec.Command(name, _recorder(command.func, calls), command.settings)
    for name, sub in group.groups.items():
        copy.groups[name] = _recording_tree(sub, calls)
    return copy


def _recorder(func: Callable[..., Any], calls: list[dict[str, Any]]) -> Callable[..., Any]:
    def record(**kwargs: Any) -> None:
        calls.append(kwargs)

    record.__signature__ = inspect.signature(func, eval_str=True)  # type: ignore[attr-defined]
    record.__name__ = func.__name__
    record.__doc__ = func.__doc__
    return record


CALLS: list[dict[str, Any]] = []
RECORDING_APP = build(_recording_tree(cli.root, CALLS))


def typer_keywords(args: list[str]) -> dict[str, Any]:
    CALLS.clear()
    result = CliRunner().invoke(RECORDING_APP, args)
    assert result.exit_code == 0, (args, result.output, result.exception)
    assert len(CALLS) == 1, args
    return CALLS[0]


def fast_keywords(args: list[str]) -> dict[str, Any] | None:
    parsed = argv.resolve(cli.root, args, environ={})
    return None if parsed is None else parsed[1]


def _sample(param: Any, n: int) -> str:
    if param.convert is int:
        low = param.low if param.low is not None else 0
        return str(low + n + 1)
    if param.convert is float:
        return f"{n + 1}.5"
    return f"value-{n}"


def _cases(path: tuple[str, ...], func: Callable[..., Any]) -> list[list[str]]:
    try:
        params = argv._params(func)
    except argv._Unsupported:
        return [[*path]]
    arguments = [p for p in params if p.argument]
    options = [p for p in params if not p.argument]
    positional: list[str] = []
    for i, a in enumerate(arguments):
        positional += ["ref-a", "ref-b"] if a.multiple else [_sample(a, i)]
    cases = [[*path, *positional]]
    everything: list[str] = []
    for i, option in enumerate(options):
        for name in option.opts + option.secondary:
            if option.flag:
                cases.append([*path, *positional, name])
                continue
            value = _sample(option, i)
            cases.append([*path, name, value, *positional])
            if name.startswith("--"):
                cases.append([*path, *positional, f"{name}={value}"])
                cases.append([*path, f"{name}=", *positional]) if option.convert is str else None
            if option.multiple:
                cases.append([*path, name, value, *positional, name, value + "-2"])
        first = option.opts[0]
        everything += [first] if option.flag else [first, _sample(option, i)]
    # every option at once, the arguments split around them; a scalar given twice (the last wins)
    half = len(positional) // 2
    cases.append([*path, *positional[:half], *everything, *positional[half:]])
    scalars = [o for o in options if not o.flag and not o.multiple]
    if scalars:
        cases.append([*path, *positional, scalars[0].opts[0], _sample(scalars[0], 0), scalars[0].opts[0], _sample(scalars[0], 5)])
    return cases


def test_the_fast_commands_are_the_ones_listed() -> None:
    fast = set()
    for name, (path, command) in COMMANDS.items():
        if fast_keywords(_cases(path, command.func)[0]) is not None:
            fast.add(name)
    assert fast == FAST
    assert set(COMMANDS) == FAST | TYPER_ONLY


@pytest.mark.parametrize("name", sorted(FAST))
def test_keywords_are_typers_for_every_option(name: str) -> None:
    path, command = COMMANDS[name]
    cases = _cases(path, command.func)
    assert len(cases) >= 2
    for args in cases:
        fast = fast_keywords(args)
        assert fast is not None, args
        assert fast == typer_keywords(args), args
        assert [type(v) for v in fast.values()] == [type(v) for v in typer_keywords(args).values()], args


def test_option_names_are_clicks() -> None:
    """Every name click accepts for a fast command's options, and no other, is the parser's."""
    import typer

    group = typer.main.get_command(RECORDING_APP)
    for name in sorted(FAST):
        path, command = COMMANDS[name]
        click_command = group
        for part in path:
            click_command = click_command.commands[part]  # type: ignore[attr-defined]
        ours = {n for p in argv._params(command.func) if not p.argument for n in (*p.opts, *p.secondary)}
        theirs = {n for p in click_command.params if p.param_type_name == "option" for n in (*p.opts, *p.secondary_opts)}
        assert ours == theirs, name
        flags = {n for p in argv._params(command.func) if p.flag for n in (*p.opts, *p.secondary)}
        assert flags == {n for p in click_command.params if getattr(p, "is_flag", False) for n in (*p.opts, *p.secondary_opts)}


CHECK = ["check", "oci-dir:/x"]
COMPLAINTS = [
    [], ["--help"], ["-h"], ["--version"], ["-V"], ["check", "--help"], ["check", "-h", "x"], ["chekc", "x"],
    [*CHECK, "--bogus"], [*CHECK, "--driver"], [*CHECK, "--quiet=yes"], [*CHECK, "--driver", "--gpu"],
    [*CHECK, "--timeout", "soon"], [*CHECK, "--retries", "1.5"], [*CHECK, "--", "--driver"], [*CHECK, "-qo", "x"],
    [*CHECK, "-ox"], [*CHECK, "--no-quiet"], ["explain"], ["explain", "IL101", "IL102"], ["matrix"], ["matrix", "nope"],
    ["lint"], ["matrix", "diff", "a"], ["audit"], ["audit", "merge", "x.json"], ["audit", "--cluster"],
    ["--verbose", "check", "x"], ["check", "-1"],
]


@pytest.mark.parametrize("args", COMPLAINTS, ids=" ".join)
def test_typer_gets_every_command_line_it_must_answer(args: list[str]) -> None:
    assert fast_keywords(args) is None


def test_a_shell_completion_request_is_typers() -> None:
    assert argv.resolve(cli.root, ["check", "x"], environ={}) is not None
    assert argv.resolve(cli.root, ["check", "x"], environ={"_IMAGELINT_COMPLETE": "bash_complete"}) is None


def test_a_value_may_be_a_lone_dash_and_an_argument_too() -> None:
    assert fast_keywords(["lint", "-", "--config", "-"]) == typer_keywords(["lint", "-", "--config", "-"])


def test_the_parser_reads_what_it_does_not_support_as_typers() -> None:
    """A declaration beyond the parser's grammar makes the command typer's, not a guess."""
    group = spec.CommandGroup()

    @group.command("envvar")
    def with_envvar(x: str = spec.Option("a", "--x", envvar="X")) -> None: ...

    @group.command("path")
    def with_path(x: Any = spec.Option(None, "--x")) -> None: ...

    @group.command("plain")
    def plain(x: int = spec.Option(1, "--x", min=0, max=3)) -> None: ...

    @group.command("eager")
    def with_callback(x: bool = spec.Option(False, "--x", callback=lambda value: value, is_eager=True)) -> None: ...

    assert argv.resolve(group, ["envvar"], environ={}) is None
    assert argv.resolve(group, ["eager"], environ={}) is None  # click would call the callback
    assert argv.resolve(group, ["path"], environ={}) is None
    assert argv.resolve(group, ["plain", "--x", "2"], environ={})[1] == {"x": 2}
    assert argv.resolve(group, ["plain", "--x", "4"], environ={}) is None  # out of range: click's message


def _run_fresh(args: list[str], cwd: str) -> tuple[int, list[str], str]:
    code, modules, out = probe(args, {"GITHUB_ACTIONS": None, "GITHUB_STEP_SUMMARY": None, "IMAGELINT_NO_CACHE": "1"}, cwd)
    return code, sorted({"typer", "click"} & modules), out


def test_check_and_lint_run_without_typer_and_say_what_typer_says(tmp_path) -> None:
    """Same exit status and report through either parser; only help and mistakes load typer."""
    from tests.support.imagebuilder import File, ImageSpec, write_oci_layout

    image = ImageSpec(layers=[[File("usr/local/cuda-12.4/version.json", json.dumps(
        {"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}).encode())]],
        env={"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4"}).build()
    write_oci_layout(tmp_path / "img", {"latest": image})
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n")
    runs = [["check", f"oci-dir:{tmp_path / 'img'}", "--driver", "470.57.02", "--format", "json"],
            ["lint", "Dockerfile", "--format=json", "-q", "--fail-on", "info"]]
    for args in runs:
        code, frameworks, out = _run_fresh(args, str(tmp_path))
        assert frameworks == [], args
        assert code == 1 and json.loads(out), (args, out)
        through_typer = imagelint(*args, cwd=tmp_path)  # typer's CliRunner, in this process
        assert (through_typer.returncode, through_typer.stdout) == (code, out), args
    code, frameworks, out = _run_fresh(["check", "--help"], str(tmp_path))
    assert code == 0 and "--driver" in out and frameworks == ["click", "typer"]
    code, frameworks, _ = _run_fresh(["check", "x", "--bogus"], str(tmp_path))
    assert code == 2 and frameworks == ["click", "typer"]


def test_names_typer_makes_up_and_slashed_flags_read_as_typer_reads_them() -> None:
    """Declarations no command uses today, held to typer the same way: a bool without names
    (``--name/--no-name``), ``--a/--b`` flags, an option named after its parameter."""
    calls: list[dict[str, Any]] = []

    def synthetic(dry_run: bool = spec.Option(False), loud: bool = spec.Option(True, "--loud/--soft", "-L"),
                  some_name: str = spec.Option("d"), count: int = spec.Option(2, "--count", "-c", min=1, max=9),
                  ratio: float = spec.Option(0.5, "--ratio"),
                  tags: Any = None, *, rest: Any = None) -> None: ...

    def plain(dry_run: bool = spec.Option(False), loud: bool = spec.Option(True, "--loud/--soft", "-L"),
              some_name: str = spec.Option("d"), count: int = spec.Option(2, "--count", "-c", min=1, max=9),
              ratio: float = spec.Option(0.5, "--ratio")) -> None:
        calls.append(dict(dry_run=dry_run, loud=loud, some_name=some_name, count=count, ratio=ratio))

    assert argv.resolve(_one(synthetic), ["cmd"], environ={}) is None  # plain parameters: typer's
    group = _one(plain)
    app = build(group)
    for args in (["cmd"], ["cmd", "--dry-run"], ["cmd", "--no-dry-run"], ["cmd", "--soft"], ["cmd", "--soft", "--loud"],
                 ["cmd", "-L"], ["cmd", "--some-name", "x"], ["cmd", "--some-name=", "-c", "9"], ["cmd", "--ratio", "1e-3"],
                 ["cmd", "--count", "01"], ["cmd", "--ratio", "inf"]):
        calls.clear()
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        assert argv.resolve(group, args, environ={})[1] == calls[0], args
    for args in (["cmd", "--count", "0"], ["cmd", "--count", "x"], ["cmd", "--ratio", "1,5"], ["cmd", "--dry-run=1"],
                 ["cmd", "--no-loud"], ["cmd", "--some_name", "x"]):
        assert argv.resolve(group, args, environ={}) is None, args
        assert CliRunner().invoke(app, args).exit_code == 2, args


def _one(func: Callable[..., Any]) -> spec.CommandGroup:
    group = spec.CommandGroup()
    group.command("cmd")(func)
    group.command("other")(lambda: None)  # two commands: typer keeps "cmd" a subcommand
    return group


def test_ctrl_c_ends_a_check_with_130_and_one_line(tmp_path) -> None:
    """Through the fast path a KeyboardInterrupt reaches main's own handler (click turned it
    into "Aborted!" and status 1): 130, as shells report a SIGINT, and no traceback."""
    import signal
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    host = f"127.0.0.1:{listener.getsockname()[1]}"
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    process = subprocess.Popen([sys.executable, "-m", "imagelint", "check", f"registry:{host}/app:1", "--insecure-registry",
                                host, "--driver", "550.54.15", "--timeout", "60", "--no-cache"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        listener.settimeout(30)
        connection, _ = listener.accept()  # the registry answers nothing: the check waits in a read
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
        listener.close()
    connection.close()
    assert process.returncode == 130, err
    assert err == "imagelint: interrupted\n" and out == ""


def test_group_callbacks_run_once_and_only_for_a_command_line_the_parser_takes() -> None:
    """A command line that goes to typer has run no callback yet (typer runs them itself)."""
    ran: list[bool] = []
    group = spec.CommandGroup()

    @group.callback()
    def main_callback(verbose: bool = spec.Option(False, "--verbose", callback=lambda v: ran.append(v) or v,
                                                  is_eager=True)) -> None: ...

    @group.command("cmd")
    def cmd(n: int = spec.Option(1, "--n")) -> None: ...

    group.command("other")(lambda: None)
    assert argv.resolve(group, ["cmd", "--n", "x"], environ={}) is None and ran == []
    assert argv.resolve(group, ["cmd", "--n", "2"], environ={})[1] == {"n": 2} and ran == [False]
