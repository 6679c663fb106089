"""What a ``RUN`` step executes, as opposed to what it only writes.

``RUN nvidia-smi`` and ``RUN <<EOF`` (a heredoc that is the step's script) run their commands while
the image builds. ``RUN cat > /start.sh <<EOF``, ``RUN echo 'nvidia-smi' > /check.sh`` and
``printf '...' >> ~/.bashrc`` only write text into a file the container may run later: the
commands in that text do not run at build time.

Shell syntax, not NVIDIA facts. The reading is deliberately small: commands are split at ``;``,
``&&``, ``||``, ``|``, ``&`` and newlines outside quotes; a heredoc belongs to the command it is
written on, and that command decides (POSIX shell, "Here-Document"):

* no command (``<<EOF`` alone, BuildKit's script form), a shell, or an interpreter reading its
  standard input (``python3 <<EOF``, ``bash -s <<EOF``): executed;
* ``cat``/``tee``/``dd`` or any command with an output redirection: written, unless its output is
  piped into a shell (``cat <<EOF | bash``);
* the arguments of ``echo``/``printf`` are data; only their command substitutions (``$(...)``,
  backquotes) run.

Anything else stays in the executed text (a query the build does run is never hidden).
"""

from __future__ import annotations

import re

from imagelint.lazyre import lazy_pattern

_HEREDOC = lazy_pattern(r"<<(-?)\s*([\"']?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh", "busybox"})
_WRITERS = frozenset({"cat", "tee", "dd"})
_DATA_COMMANDS = frozenset({"echo", "printf"})
_SUBSTITUTION = lazy_pattern(r"\$\(([^()]*)\)|`([^`]*)`")
_ASSIGNMENT = lazy_pattern(r"^[A-Za-z_][A-Za-z0-9_]*=")
_REDIRECT_OUT = lazy_pattern(r"(?:^|\s)\d*>>?(?!&)")
_MAX_DEPTH = 3


def _segments(line: str) -> list[tuple[str, str]]:
    """``line`` split into (command text, the separator that follows it) outside quotes and
    ``$(...)``."""
    out: list[tuple[str, str]] = []
    start = i = depth = 0
    quote = ""
    n = len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "$" and line.startswith("$(", i):
            depth += 1
            i += 2
            continue
        elif c == ")" and depth:
            depth -= 1
        elif not depth and (c in ";\n" or c == "|" or (c == "&" and not line.startswith("&>", i)
                                                         and (i == 0 or line[i - 1] not in "<>"))):
            sep = line[i:i + 2] if line[i:i + 2] in ("&&", "||", ";;") else c
            out.append((line[start:i], sep))
            i += len(sep)
            start = i
            continue
        i += 1
    out.append((line[start:], ""))
    return out


def _command_word(segment: str) -> str:
    """The command a segment runs (``/usr/bin/python3`` -> ``python3``), past ``VAR=x`` words and
    redirections; "" when there is none (``<<EOF`` alone)."""
    words = segment.split()
    skip_next = False
    for word in words:
        if skip_next:
            skip_next = False
            continue
        if word.startswith("<<"):
            continue
        if re.match(r"^\d*(?:>>?|<|&>)(.*)$", word):
            skip_next = not re.match(r"^\d*(?:>>?|<|&>)(.+)$", word)
            continue
        if _ASSIGNMENT.match(word):
            continue
        return word.rsplit("/", 1)[-1]
    return ""


def _heredoc_executed(segment: str, sep: str, following: list[tuple[str, str]]) -> tuple[bool, bool]:
    """(executed, as shell) for a heredoc written on ``segment``."""
    command = _command_word(segment)
    if command == "":
        return True, True
    if command in _WRITERS or _REDIRECT_OUT.search(_HEREDOC.sub(" ", segment)):
        if sep == "|" and following and _command_word(following[0][0]) in _SHELLS:
            return True, True  # cat <<EOF | bash: the text is piped into a shell
        return False, False
    if command in _SHELLS:
        return True, True
    return True, False  # an interpreter or an unknown consumer: its input is kept, not read as shell


def _data_substitutions(segment: str) -> str:
    """What runs in an ``echo``/``printf`` command: its command substitutions only."""
    return " ; ".join(m.group(1) if m.group(1) is not None else m.group(2) for m in _SUBSTITUTION.finditer(segment))


def executed_text(command_line: str, heredoc_bodies: list[str], depth: int = 0) -> str:
    """The text a RUN step (or a script it runs) executes: ``command_line`` with its heredocs'
    bodies (in order of their markers), written text left out."""
    kept: list[str] = []
    bodies = list(heredoc_bodies)
    segments = _segments(command_line)
    for index, (segment, sep) in enumerate(segments):
        markers = list(_HEREDOC.finditer(segment))
        command = _command_word(segment)
        if command in _DATA_COMMANDS and not markers:
            substitution = _data_substitutions(segment)
            if substitution:
                kept.append(substitution)
            continue
        kept.append(segment + ("\n" if sep == "\n" else f" {sep} " if sep else ""))
        if not markers:
            continue
        executed, as_shell = _heredoc_executed(segment, sep, segments[index + 1:])
        for _ in markers:
            body = bodies.pop(0) if bodies else ""
            if not executed:
                continue
            kept.append("\n" + (script_text(body, depth + 1) if as_shell else body) + "\n")
    return "".join(kept)


def script_text(script: str, depth: int = 0) -> str:
    """What a shell script executes, its own heredocs (``cat > x <<EOF ... EOF``) read as a RUN's."""
    if depth > _MAX_DEPTH:
        return script
    lines = script.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        # A line ending in a backslash continues on the next (the command is the joined text).
        while line.endswith("\\") and i < len(lines):
            line = line[:-1] + " " + lines[i]
            i += 1
        bodies: list[str] = []
        for m in _HEREDOC.finditer(line):
            strip_tabs, name = m.group(1) == "-", m.group(3)
            body: list[str] = []
            while i < len(lines):
                candidate = lines[i].lstrip("\t") if strip_tabs else lines[i]
                i += 1
                if candidate == name:
                    break
                body.append(candidate)
            bodies.append("\n".join(body))
        out.append(executed_text(line, bodies, depth) if bodies or _may_write(line) else line)
    return "\n".join(out)


def _may_write(line: str) -> bool:
    return "echo" in line or "printf" in line


__all__ = ["executed_text", "script_text"]
