"""Render the rule reference (``docs/rules.md``) from the registry: one source of truth.

``python -m imagelint.rules.docs > docs/rules.md`` regenerates it; a test fails when it drifts.
"""

from __future__ import annotations

import re

from imagelint.rules import RULES
from imagelint.rules.base import RuleInfo


def plain(text: str) -> str:
    """reStructuredText-ish docstring markup as plain text for a terminal:
    ````code````, ``**strong**`` and ``*emphasis*`` lose their marks, ``Example::`` ends in one
    colon, and a bulleted list (``* item`` at the margin, continued two spaces in) becomes
    indented paragraphs. Indented examples are left as written."""
    text = re.sub(r"``(.+?)``", r"\1", text, flags=re.S)
    text = re.sub(r"\*\*(?!\s)([^*\n]+?)(?<!\s)\*\*", r"\1", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = re.sub(r"::$", ":", text, flags=re.M)
    lines, in_item = [], False
    for line in text.split("\n"):
        if line.startswith("* "):
            line, in_item = "  " + line[2:], True
        elif in_item and line.startswith("  ") and line.strip():
            line = "  " + line
        else:
            in_item = False
        lines.append(line)
    return "\n".join(lines)


def rule_text(rule: RuleInfo) -> str:
    """One rule's documentation for a terminal (``imagelint explain``)."""
    lines = [
        f"{rule.id} {rule.name}: {rule.title}",
        f"default severity {rule.severity}; needs {', '.join(rule.needs)}",
        "",
        plain(rule.doc),
        "",
    ]
    if rule.references:
        lines.append("References:")
        lines.extend(f"  {ref}" for ref in rule.references)
        lines.append("")
    return "\n".join(lines)


def rule_markdown(rule: RuleInfo) -> str:
    lines = [
        f"## {rule.id} {rule.name}",
        "",
        f"**{rule.title}** — default severity `{rule.severity}`; needs: {', '.join(f'`{n}`' for n in rule.needs)}.",
        "",
        rule.doc,
        "",
    ]
    if rule.references:
        lines.append("References:")
        lines.append("")
        lines.extend(f"- <{ref}>" for ref in rule.references)
        lines.append("")
    return "\n".join(lines)


def render_markdown() -> str:
    out = [
        "# imagelint rules",
        "",
        "<!-- Generated from the rule docstrings by `python -m imagelint.rules.docs`; do not edit. -->",
        "",
        "| ID | Name | Severity | Needs | Title |",
        "|---|---|---|---|---|",
    ]
    for rule in RULES.values():
        out.append(f"| [{rule.id}](#{rule.id.lower()}-{rule.name}) | {rule.name} | {rule.severity} | {', '.join(rule.needs)} | {rule.title} |")
    out.append("")
    for rule in RULES.values():
        out.append(rule_markdown(rule))
    return "\n".join(out).rstrip("\n") + "\n"


if __name__ == "__main__":  # pragma: no cover - a maintenance entry point
    import sys

    sys.stdout.write(render_markdown())
