"""``imagelint check REF...``: flags → (SourceOptions, Target, Matrix, Config) → run_check → reports → exit code.

Reports: ``--format`` is repeatable; each ``--output FILE`` belongs to the
``--format`` given just before it (``--format sarif=FILE`` says the same in one
flag). Formats without a file go to stdout (at most one may). With no
``--format``: ``github`` when ``GITHUB_ACTIONS=true``, else ``text``. SARIF and
JSON files are written even when an image could not be read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from imagelint.cli import app, fail
from imagelint.cli.common import with_source_options
from imagelint.cli.target_options import TargetOptions, with_target_options
from imagelint.errors import ImagelintError, UsageError
from imagelint.sources import SourceOptions

FAIL_ON = ("error", "warning", "info", "never")


def _split_codes(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())


def _argv_pairs(argv: list[str]) -> list[tuple[str, str | None]] | None:
    """--format/--output in command-line order: each --output binds to the --format before it."""
    pairs: list[list[str | None]] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, value = token.partition("=")
        if name in ("--format", "--output"):
            if not eq:
                if i + 1 >= len(argv):
                    return None
                value = argv[i + 1]
                i += 1
            if name == "--format":
                pairs.append([value, None])
            else:
                if not pairs or pairs[-1][1] is not None:
                    return None
                pairs[-1][1] = value
        i += 1
    return [(str(f), o) for f, o in pairs]


def plan_outputs(formats: list[str], outputs: list[str], argv: list[str] | None = None) -> list[tuple[str, str | None]]:
    """Pair formats with output files (None = stdout)."""
    from imagelint.report import FORMAT_NAMES

    plan: list[tuple[str, str | None]]
    if not formats:
        if outputs:
            raise UsageError("--output needs a --format before it")
        default = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
        plan = [(default, None)]
    else:
        from_argv = _argv_pairs(argv if argv is not None else sys.argv[1:])
        if from_argv is not None and [f for f, _ in from_argv] == formats and [o for _, o in from_argv if o] == outputs:
            plan = from_argv
        elif len(outputs) > len(formats):
            raise UsageError("more --output than --format flags")
        else:
            plan = [(f, outputs[i] if i < len(outputs) else None) for i, f in enumerate(formats)]
    resolved = []
    for fmt, out in plan:
        if "=" in fmt and out is None:
            fmt, out = fmt.split("=", 1)
        if fmt not in FORMAT_NAMES:
            raise UsageError(f"unknown --format {fmt!r} (expected one of: {', '.join(FORMAT_NAMES)})")
        resolved.append((fmt, out or None))
    if sum(1 for _, o in resolved if o is None) > 1:
        raise UsageError("only one --format can go to stdout; give the others an --output FILE")
    return resolved


def _config_target_options(target: dict) -> TargetOptions:
    return TargetOptions(
        drivers=tuple(target.get("driver", ())),
        gpus=tuple(target.get("gpu", ())),
        compute_capability=target.get("compute-capability"),
        brand=target.get("brand"),
        arch=target.get("arch"),
        toolkit=target.get("toolkit"),
        device_plugin=target.get("device-plugin"),
        runtime_mode=target.get("runtime-mode"),
        target_file=target.get("file"),
    )


def _load_matrix(selector: str | None, overlays: tuple[str, ...], target_options: TargetOptions):
    from imagelint.matrix import load_matrix

    if selector == "cluster":
        from imagelint import cluster

        reader = getattr(cluster, "matrix_from_cluster", None)
        if reader is None:
            raise UsageError("--matrix cluster is not available in this build; give a matrix version or file")
        return reader(target_options.context, target_options.kubeconfig, overlays)
    return load_matrix(selector, overlays)


def use_color(stream, environ) -> bool:
    """Colour only for people: a terminal, and never when NO_COLOR is set (no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and "NO_COLOR" not in environ


def _write(path: str, text: str) -> None:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


@app.command("check")
@with_target_options
@with_source_options
def check_command(
    references: List[str] = typer.Argument(..., help="Images: registry:, docker:, docker-archive:, oci-dir:, oci-archive: or a name."),
    matrix: Optional[str] = typer.Option(None, "--matrix", help="Matrix version, file, or 'cluster'."),
    matrix_overlay: Optional[List[str]] = typer.Option(None, "--matrix-overlay", help="Overlay file adding/overriding matrix rows."),
    config: Optional[str] = typer.Option(None, "--config", help="Config file (default: .imagelint.toml, or the tool.imagelint table of pyproject.toml)."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Rule IDs or prefixes to run (comma-separated, repeatable)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Rule IDs or prefixes not to run."),
    fail_on: Optional[str] = typer.Option(None, "--fail-on", help="error, warning, info or never (default error)."),
    format: Optional[List[str]] = typer.Option(None, "--format", help="text, json, sarif, github or junit (repeatable; FORMAT=FILE allowed)."),
    output: Optional[List[str]] = typer.Option(None, "--output", help="File for the --format given just before."),
    no_inline_ignores: bool = typer.Option(False, "--no-inline-ignores", help="Refuse io.imagelint.ignore labels in images."),
    config_only: bool = typer.Option(False, "--config-only", help="Do not read layers (config-based rules only)."),
    *,
    source_options: SourceOptions,
    target_options: TargetOptions,
) -> None:
    """Check images against the node pools they will run on; exit 1 on findings at/above --fail-on."""
    from imagelint.check import run_check
    from imagelint.config import load_config
    from imagelint.engine import validate_code_prefix
    from imagelint.report import ReportOptions, render
    from imagelint.report.github import step_summary
    from imagelint.targets import build_target

    try:
        cfg = load_config(config)
        for code in (_split_codes(select) or ()) + (_split_codes(ignore) or ()):
            problem = validate_code_prefix(code)
            if problem:
                raise UsageError(f"--select/--ignore: {problem}")
        if fail_on is not None and fail_on not in FAIL_ON:
            raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        cfg = cfg.with_overrides(
            select=_split_codes(select),
            ignore=_split_codes(ignore),
            fail_on=fail_on,
            matrix=matrix,
            matrix_overlays=tuple(matrix_overlay) if matrix_overlay else None,
            inline_ignores=False if no_inline_ignores else None,
        )
        plan = plan_outputs(list(format or []), list(output or []))
        options = target_options.with_fallback(_config_target_options(dict(cfg.target)))
        the_matrix = _load_matrix(cfg.matrix, cfg.matrix_overlays, options)
        target = build_target(options, the_matrix)
        run = run_check(references, source_options, target, the_matrix, cfg, read_layers=not config_only)
    except ImagelintError as exc:
        raise fail(exc) from None

    color = use_color(sys.stdout, os.environ)
    try:
        for fmt, out in plan:
            text = render(fmt, run, ReportOptions(color=color and out is None and fmt == "text"))
            if out is None:
                typer.echo(text, nl=False)
            else:
                _write(out, text)
        summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
        in_actions = os.environ.get("GITHUB_ACTIONS") == "true"
        if summary_path and (in_actions or any(f == "github" for f, _ in plan)):
            with open(summary_path, "a", encoding="utf-8") as fh:
                fh.write(step_summary(run))
    except ImagelintError as exc:
        raise fail(exc) from None
    except OSError as exc:
        raise fail(UsageError(f"cannot write the step summary: {exc.strerror or exc}")) from None
    for r in run.results:
        if r.error:
            typer.echo(f"imagelint: error: {r.subject}: {r.error}", err=True)
    raise typer.Exit(run.exit_code)
