"""The code blocks of README.md and docs/*.md, and what kind of snippet each one is.

Every fenced block is classified; a block no rule recognises fails the snippet test, so a
new snippet gets a check (or an explicit reason why it is not a snippet) when it is written.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC_FILES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
_FENCE = re.compile(r"^```([\w+-]*)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Snippet:
    path: Path
    line: int
    lang: str
    body: str

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    @property
    def kind(self) -> str:
        """shell | workflow | gitlab-ci | pre-commit | config | target | matrix | package-order | api | tree | synopsis | output | unknown."""
        body, lang = self.body, self.lang
        if lang == "text" and body.startswith("$ imagelint "):
            return "output"  # a command and (an excerpt of) what it prints: checked against a real run
        if lang in ("sh", "bash", "shell", "console") or (not lang and _looks_like_shell(body)):
            return "shell"
        if not lang and re.search(r"^\$ imagelint\b", body, re.M):
            return "shell"  # a console transcript: the `$ ` lines are the commands
        if lang in ("yaml", "yml"):
            if re.search(r"^repos:", body, re.M):
                return "pre-commit"
            if re.search(r"^jobs:", body, re.M):
                return "workflow"
            if re.search(r"^  script:", body, re.M) and re.search(r"^  cache:", body, re.M):
                return "gitlab-ci"  # a GitLab CI job (docs/github-action.md, the layer cache across runs)
        if lang == "toml":
            if re.search(r"^\[meta\]|^\[\[(cuda_|driver_|gpus|toolkit_|device_plugin|ptx_|nvidia_names|ngc_|gpu_operator)", body, re.M):
                return "matrix"
            if re.search(r"^\[\[pool\]\]", body, re.M):
                return "target"
            return "config"
        if lang == "package-order":
            return "package-order"  # docs/architecture.md's layers: tests/test_import_graph.py enforces them
        if lang == "python":
            return "api"  # signatures of the Python API, not programs: docs/matrix.md, docs/target.md
        if not lang and body.lstrip().startswith("imagelint/"):
            return "tree"  # the package layout
        if not lang and re.match(r"^\s*imagelint \w+", body) and "[" in body:
            return "synopsis"  # usage grammar: `imagelint inspect REF [--platform P | ...]`
        return "unknown"


def _looks_like_shell(body: str) -> bool:
    lines = [ln for ln in body.splitlines() if ln.strip()]
    return bool(lines) and all(re.match(r"^\s*(\$ )?imagelint\b", ln) or ln.startswith((" ", "\t")) for ln in lines) \
        and not any("[--" in ln or " | " in ln.split("#")[0] for ln in lines)


def snippets() -> list[Snippet]:
    out = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            out.append(Snippet(path, text[: m.start()].count("\n") + 1, m.group(1).lower(), m.group(2)))
    return out


def shell_commands(snippet: Snippet) -> list[list[str]]:
    """Each simple command of a shell snippet as words: comments, prompts, redirections dropped;
    ``;``/``&&``/``|`` split. Output lines of a console transcript (no ``$``) are skipped."""
    lines = snippet.body.splitlines()
    has_prompt = any(ln.startswith("$ ") for ln in lines)
    commands: list[list[str]] = []
    for line in lines:
        if has_prompt:
            if not line.startswith("$ "):
                continue
            line = line[2:]
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
        lexer.commenters = "#"
        lexer.wordchars += "${}:,=@+%^~"
        words = list(lexer)
        current: list[str] = []
        skip_next = False
        for w in words + [";"]:
            if skip_next:
                skip_next = False
                continue
            if w in (";", "&&", "||", "|"):
                if current:
                    commands.append(current)
                current = []
            elif w in (">", ">>", "2>", "<"):
                skip_next = True
            elif re.match(r"^\d?>>?\S", w):
                continue
            else:
                current.append(w)
    return commands


def synopsis_lines(snippet: Snippet) -> list[tuple[list[str], list[str]]]:
    """(command words, --flags named) for each line of a usage synopsis:
    ``imagelint matrix show [VERSION|PATH] [--format text|toml|json]`` → (["matrix", "show"], ["--format"])."""
    out = []
    for line in snippet.body.splitlines():
        line = line.split("#", 1)[0].split(" | ", 1)[0] if " | kubectl" in line else line.split("#", 1)[0]
        words = line.split()
        if not words or words[0] != "imagelint":
            continue
        command = []
        for w in words[1:]:
            if not re.match(r"^[a-z][a-z-]*$", w):
                break
            command.append(w)
        out.append((command, re.findall(r"(--[a-z][a-z-]*)", line)))
    return out
