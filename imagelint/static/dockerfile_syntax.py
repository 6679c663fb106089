"""What ``docker build`` refuses before it runs anything: the same checks, no more.

BuildKit's Dockerfile frontend (``frontend/dockerfile/parser`` and ``instructions/parse.go``)
fails a build on these, each at its line; a file it refuses is a ``file:line`` error here (exit 2,
as for YAML that does not parse), not a file linted as if it built:

* an instruction it does not know ("unknown instruction: apt-get", often a missing ``\\``);
* an instruction other than ``ARG`` before the first ``FROM`` ("no build stage in current
  context"); a file with only ``ARG`` ("dockerfile contains no stages to build");
* ``FROM`` with other than one word, or three with ``AS`` ("FROM requires either one or three
  arguments"), a stage name that is not ``[a-z][a-z0-9-_.]*`` after lower-casing;
* ``ENV``/``LABEL`` of one word without ``=`` ("must have two arguments"), a later word without
  ``=`` ("can't find = in"), a blank name; ``ARG`` with a blank name;
* ``COPY``/``ADD`` with fewer than two arguments; ``WORKDIR``, ``USER``, ``STOPSIGNAL``,
  ``MAINTAINER``, ``EXPOSE``, ``VOLUME``, ``ARG``, ``ONBUILD``, ``HEALTHCHECK``, ``SHELL``
  without arguments; ``SHELL`` not in JSON form; ``HEALTHCHECK NONE`` with arguments, a type
  other than ``CMD``/``NONE``, ``CMD`` without a command; ``ONBUILD`` of ``ONBUILD``, ``FROM``
  or ``MAINTAINER``;
* a flag the instruction does not define (``FROM --platform`` only; ``RUN --mount/--network/
  --security/--device``; ``COPY --from/--chown/--chmod/--link/--exclude/--parents``; ``ADD
  --chown/--chmod/--link/--keep-git-dir/--checksum/--unpack/--exclude``; ``HEALTHCHECK
  --interval/--timeout/--start-period/--start-interval/--retries``), or a value-taking flag
  written without ``=value``.

The parser itself (``imagelint.static.dockerfile``) refuses an escape directive other than ``\\``
or a backtick, and a heredoc with no terminator. ``RUN``, ``CMD`` and ``ENTRYPOINT`` may be empty.
Flags of other instructions are not split off here, so not checked.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from types import MappingProxyType
from typing import Protocol

from imagelint.errors import ConfigError
from imagelint.lazyre import lazy_pattern
from imagelint.static.words import split_raw
from imagelint.untrusted import loads_json


class Instruction(Protocol):
    """What is checked of a parsed instruction (``imagelint.static.dockerfile.Instruction``; not
    imported, so that the parser can import this module)."""

    @property
    def keyword(self) -> str: ...
    @property
    def args(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def original(self) -> str: ...
    @property
    def flags(self) -> tuple[tuple[str, str | None], ...]: ...

_STAGE_NAME = lazy_pattern(r"^[a-z][a-z0-9-_.]*$")
_STRING, _BOOL = "string", "bool"
# Each instruction's flags and their kinds (instructions/parse.go and commands_run*.go).
FLAGS = MappingProxyType({
    "FROM": {"platform": _STRING},
    "RUN": {"mount": _STRING, "network": _STRING, "security": _STRING, "device": _STRING},
    "COPY": {"chown": _STRING, "from": _STRING, "chmod": _STRING, "link": _BOOL, "exclude": _STRING,
             "parents": _BOOL},
    "ADD": {"chown": _STRING, "chmod": _STRING, "link": _BOOL, "keep-git-dir": _BOOL, "checksum": _STRING,
            "unpack": _BOOL, "exclude": _STRING},
    "HEALTHCHECK": {"interval": _STRING, "timeout": _STRING, "start-period": _STRING, "start-interval": _STRING,
                    "retries": _STRING},
})
# What each instruction expects, said when it has nothing at all.
_EXPECTS = MappingProxyType({
    "ENV": "KEY=VALUE pairs", "LABEL": "KEY=VALUE pairs", "ARG": "a NAME[=DEFAULT]", "COPY": "sources and a destination",
    "ADD": "sources and a destination", "WORKDIR": "a directory", "USER": "a user", "ONBUILD": "an instruction",
    "SHELL": "a JSON array", "EXPOSE": "a port", "VOLUME": "a path", "HEALTHCHECK": "CMD or NONE",
    "STOPSIGNAL": "a signal", "MAINTAINER": "a name",
})
_EXACTLY_ONE = frozenset({"WORKDIR", "USER", "STOPSIGNAL", "MAINTAINER"})  # the whole rest is the one argument


def _words(text: str, escape: str) -> list[str]:
    try:
        return [w for w in split_raw(text, escape) if w]
    except ValueError:
        return text.split()


def _json_array(text: str) -> list[str] | None:
    stripped = text.strip()
    if not stripped.startswith("["):
        return None
    try:
        value = loads_json(stripped)
    except ValueError:
        return None
    return value if isinstance(value, list) and all(isinstance(v, str) for v in value) else None


def _check_flags(ins: Instruction) -> str | None:
    known = FLAGS.get(ins.keyword)
    if known is None:
        return None
    for name, value in ins.flags:
        if name == "":  # a bare "--" ends the flags
            return None
        kind = known.get(name)
        if kind is None:
            return f"unknown flag: --{name}"
        if kind == _STRING and value is None:
            return f"missing a value on flag: --{name}"
        if kind == _BOOL and value is not None and value.lower() not in ("true", "false"):
            return (f"missing a value on flag: --{name}" if value == "" else
                    f"expecting boolean value for flag --{name}, not: {value[:40]}")
    return None


def _name_values(keyword: str, args: str, escape: str) -> str | None:
    """ENV/LABEL: BuildKit's ``parseNameVal``."""
    words = _words(args, escape)
    if not words:
        return f"{keyword} requires at least one argument"
    if "=" not in words[0]:
        if len(re.split(r"\s+", args.strip(), maxsplit=1)) < 2:
            return f"{keyword} must have two arguments (KEY=VALUE, or the old form KEY VALUE)"
        return None
    for word in words:
        if "=" not in word:
            return f"Syntax error - can't find = in {word[:40]!r}. Must be of the form: name=value"
        if word.startswith("="):
            return f"{keyword} names can not be blank"
    return None


def instruction_error(ins: Instruction, escape: str) -> str | None:
    """Why BuildKit refuses this instruction, or None."""
    kw, args = ins.keyword, ins.args.strip()
    # HEALTHCHECK NONE: BuildKit parses no flags at all (``HEALTHCHECK --interval=5s NONE`` builds).
    healthcheck_none = kw == "HEALTHCHECK" and bool(args) and args.split(None, 1)[0].upper() == "NONE"
    flag_error = None if healthcheck_none else _check_flags(ins)
    if flag_error:
        return flag_error
    if kw == "FROM":
        words = args.split()
        if len(words) == 3 and words[1].lower() == "as":
            if not _STAGE_NAME.match(words[2].lower()):
                return (f"invalid name for build stage: {words[2][:40]!r}, name can't start with a number or "
                        "contain symbols")
            return None
        if not words:
            return "FROM needs an image: FROM requires either one or three arguments (FROM IMAGE [AS NAME])"
        if len(words) != 1:
            return "FROM requires either one or three arguments (FROM IMAGE [AS NAME])"
        return None
    if not args and kw in _EXPECTS:
        least = "exactly one argument" if kw in _EXACTLY_ONE else (
            "at least two arguments" if kw in ("COPY", "ADD") else "at least one argument")
        return f"{kw} needs {_EXPECTS[kw]} ({kw} requires {least})"
    if kw in ("ENV", "LABEL"):
        return _name_values(kw, args, escape)
    if kw == "ARG":
        if any(w.startswith("=") for w in _words(args, escape)):
            return "ARG names can not be blank"
    elif kw in ("COPY", "ADD"):
        items = _json_array(args)
        if items is None:
            items = args.split()
        if len(items) < 2:
            return f"{kw} requires at least two arguments (sources and a destination)"
    elif kw == "SHELL":
        items = _json_array(args)
        if items is None:
            return "SHELL requires the arguments to be in JSON form"
        if not items:
            return "SHELL requires at least one argument"
    elif kw == "HEALTHCHECK":
        kind, _, rest = args.partition(" ")
        kind = kind.upper()
        if kind == "NONE":
            return "HEALTHCHECK NONE takes no arguments" if rest.strip() else None
        if kind != "CMD":
            return f"Unknown type {kind[:20]!r} in HEALTHCHECK (try CMD)"
        items = _json_array(rest)
        if not rest.strip() or items == []:
            return "Missing command after HEALTHCHECK CMD"
    elif kw == "ONBUILD":
        trigger = args.split(None, 1)[0].upper()
        if trigger == "ONBUILD":
            return "Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed"
        if trigger in ("MAINTAINER", "FROM"):
            return f"{trigger} isn't allowed as an ONBUILD trigger"
    return None


def check_instructions(instructions: tuple[Instruction, ...], escape: str, path: str,
                       known_keywords: Collection[str]) -> None:
    """Raise ConfigError (file, line, BuildKit's reason) for the first instruction ``docker build``
    refuses, in file order, as BuildKit reports the first."""
    if not instructions:
        raise ConfigError("file with no instructions (docker build refuses it)", path, 1)
    stage_seen = False
    for ins in instructions:
        if ins.keyword not in known_keywords:
            raise ConfigError(f"unknown instruction: {_shown(ins.original)} (docker build refuses it; "
                              "a line continuation '\\' missing on the line before?)", path, ins.line)
        why = instruction_error(ins, escape)
        if why:
            raise ConfigError(f"{why} (docker build refuses it)", path, ins.line)
        if ins.keyword == "FROM":
            stage_seen = True
        elif not stage_seen and ins.keyword != "ARG":
            raise ConfigError(f"{ins.keyword} before the first FROM: no build stage in current context "
                              "(docker build refuses it)", path, ins.line)
    if not stage_seen:
        raise ConfigError("no FROM: dockerfile contains no stages to build (docker build refuses it)", path,
                          instructions[-1].line)


def _shown(original: str) -> str:
    """The unknown keyword as written, escaped and clipped (the file is untrusted)."""
    word = original.strip().split(None, 1)[0] if original.strip() else ""
    return repr(word[:40])


__all__ = ["FLAGS", "check_instructions", "instruction_error"]
