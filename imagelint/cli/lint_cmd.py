"""``imagelint lint FILE...``: static checks of repository files, no network (the pre-commit hook).

Flags in, ``imagelint.static.lint.run_lint`` called, reports out, exit code back;
the same config, ``--format``/``--output``, ``--fail-on``, target and source flags
(the latter for ``--image``) and exit codes as ``check``. Heavy modules are imported inside the command so the hook starts fast.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from imagelint.cli import app, fail
from imagelint.cli.common import with_source_options
from imagelint.cli.run_options import emit_reports, prepare_run, report_unreadable
from imagelint.cli.target_options import with_target_options
from imagelint.errors import ImagelintError
from imagelint.sources import SourceOptions
from imagelint.targets import TargetOptions


@app.command("lint")
@with_target_options
@with_source_options
def lint_command(
    files: List[str] = typer.Argument(..., help="Dockerfiles, Kubernetes manifests, DeepStream configs, shell scripts."),
    image: Optional[List[str]] = typer.Option(
        None, "--image", help="Also check this image against the pools the manifests' scheduling reaches (repeatable)."
    ),
    config_path: Optional[str] = typer.Option(None, "--config", help="Config file (default: .imagelint.toml or pyproject.toml found upwards)."),
    matrix_sel: Optional[str] = typer.Option(None, "--matrix", help="Matrix version or file (default: newest shipped)."),
    matrix_overlay: Optional[List[str]] = typer.Option(None, "--matrix-overlay", help="Matrix overlay file (repeatable)."),
    select: Optional[List[str]] = typer.Option(None, "--select", help="Rule IDs or prefixes to run (repeatable, comma-separated)."),
    ignore: Optional[List[str]] = typer.Option(None, "--ignore", help="Rule IDs or prefixes to skip (repeatable, comma-separated)."),
    fail_on: Optional[str] = typer.Option(None, "--fail-on", help="error, warning, info or never (default: error)."),
    fmt: Optional[List[str]] = typer.Option(None, "--format", help="text, json, sarif, github or junit (repeatable; FORMAT=FILE allowed)."),
    output: Optional[List[str]] = typer.Option(None, "--output", help="File for the --format given just before (default: stdout)."),
    no_inline_ignores: bool = typer.Option(False, "--no-inline-ignores", help="Refuse '# imagelint ignore=' comments and imagelint.io/ignore annotations."),
    *,
    source_options: SourceOptions,
    target_options: TargetOptions,
) -> None:
    """Lint repository files statically (no network): the same rules, config and exit codes as check."""
    from imagelint.static.lint import run_lint

    try:
        setup = prepare_run(
            config_path=config_path, select=select, ignore=ignore, fail_on=fail_on, matrix=matrix_sel,
            matrix_overlay=matrix_overlay, no_inline_ignores=no_inline_ignores, formats=fmt, outputs=output,
            target_options=target_options,
        )
        run = run_lint(files, setup.target, setup.matrix, setup.config, images=tuple(image or ()), source_options=source_options)
        emit_reports(run, setup.plan)
    except ImagelintError as exc:
        raise fail(exc) from None
    report_unreadable(run)
    raise typer.Exit(run.exit_code)
