"""``imagelint rules`` (list the rules) and ``imagelint explain ID`` (one rule's documentation)."""

from __future__ import annotations

import json

import typer

from imagelint.cli.failure import fail
from imagelint.cli.help import INFO_EXIT_CODES, epilog, examples
from imagelint.errors import UsageError

app = typer.Typer()


@app.command("rules", epilog=epilog(examples("imagelint rules", "imagelint rules --format json"), INFO_EXIT_CODES))
def rules_command(
    format: str = typer.Option("text", "--format", help="text, json or markdown."),
) -> None:
    """List every rule with its ID, name, default severity and what it needs."""
    from imagelint.cli.choices import choose
    from imagelint.rules import RULES
    from imagelint.rules.docs import render_markdown

    try:
        format = choose(format, ("text", "json", "markdown"), "--format")
    except UsageError as exc:
        raise fail(exc) from None
    if format == "markdown":
        typer.echo(render_markdown(), nl=False)
    elif format == "json":
        typer.echo(json.dumps([
            {"id": r.id, "name": r.name, "severity": r.severity, "title": r.title, "needs": list(r.needs),
             "references": list(r.references)} for r in RULES.values()
        ], indent=2))
    elif format == "text":
        width = max(len(r.name) for r in RULES.values())
        for r in RULES.values():
            typer.echo(f"{r.id}  {r.name:<{width}} {r.severity:<8} {r.title}  [needs {', '.join(r.needs)}]")


@app.command("explain", epilog=epilog(
    examples("imagelint explain IL101", "imagelint explain cuda-driver-too-old --format markdown"), INFO_EXIT_CODES))
def explain_command(
    rule: str = typer.Argument(..., help="Rule ID (IL101) or name (cuda-driver-too-old)."),
    format: str = typer.Option("text", "--format", help="text (for terminals) or markdown."),
) -> None:
    """Print one rule's documentation: rationale, remediation, examples."""
    from imagelint.cli.choices import choose
    from imagelint.rules import RULES, get_rule
    from imagelint.rules.docs import rule_markdown, rule_text

    try:
        format = choose(format, ("text", "markdown"), "--format")
    except UsageError as exc:
        raise fail(exc) from None
    info = get_rule(rule)
    if info is None:
        raise fail(UsageError(f"unknown rule {rule!r} (known: {', '.join(RULES)})"))
    typer.echo(rule_markdown(info) if format == "markdown" else rule_text(info), nl=False)
