"""``imagelint lint FILE...``: static checks of repository files, no network (the pre-commit hook).

Flags in, ``imagelint.static.lint.run_lint`` called, reports out, exit code back;
the same config, ``--format``/``--output``, ``--fail-on``, target and source flags
(the latter for ``--image``) and exit codes as ``check``. Heavy modules are imported inside the command so the hook starts fast.
"""

from __future__ import annotations

import os
from typing import List, Optional

import typer

from imagelint.cli import app, fail
from imagelint.cli.common import with_source_options
from imagelint.cli.target_options import with_target_options
from imagelint.errors import ImagelintError, UsageError
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
    # Reuse check's flag handling (output pairing, [target] from config, matrix loading) so the
    # two commands cannot drift; imported here, not at module level, to keep start-up fast.
    from imagelint.cli.check_cmd import FAIL_ON, _config_target_options, _load_matrix, _split_codes, plan_outputs
    from imagelint.config import load_config
    from imagelint.engine import validate_code_prefix
    from imagelint.static.lint import run_lint
    from imagelint.targets import build_target

    try:
        config = load_config(config_path)
        for code in (_split_codes(select) or ()) + (_split_codes(ignore) or ()):
            problem = validate_code_prefix(code)
            if problem:
                raise UsageError(f"--select/--ignore: {problem}")
        if fail_on is not None and fail_on not in FAIL_ON:
            raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        config = config.with_overrides(
            select=_split_codes(select),
            ignore=_split_codes(ignore),
            fail_on=fail_on,
            matrix=matrix_sel,
            matrix_overlays=tuple(matrix_overlay) if matrix_overlay else None,
            inline_ignores=False if no_inline_ignores else None,
        )
        plan = plan_outputs(list(fmt or []), list(output or []))
        options = target_options.with_fallback(_config_target_options(dict(config.target)))
        matrix = _load_matrix(config.matrix, config.matrix_overlays, options)
        target = build_target(options, matrix)
        run = run_lint(files, target, matrix, config, images=tuple(image or ()), source_options=source_options)
        _emit(run, plan)
    except ImagelintError as exc:
        raise fail(exc) from None
    for r in run.results:
        if r.error:
            typer.echo(f"imagelint: error: {r.subject}: {r.error}", err=True)
    raise typer.Exit(run.exit_code)


def _emit(run: object, plan: list[tuple[str, str | None]]) -> None:
    """Render every planned format (stdout or file) and, for ``github``, the step summary."""
    import sys

    from imagelint.cli.check_cmd import _write
    from imagelint.report import ReportOptions, render
    from imagelint.report.github import step_summary

    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    for fmt, path in plan:
        text = render(fmt, run, ReportOptions(color=color and path is None and fmt == "text"))  # type: ignore[arg-type]
        if path is None:
            typer.echo(text, nl=False)
        else:
            _write(path, text)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path and any(fmt == "github" for fmt, _ in plan):
        try:
            with open(summary_path, "a", encoding="utf-8") as fh:
                fh.write(step_summary(run))  # type: ignore[arg-type]
        except OSError as exc:
            raise UsageError(f"cannot write the step summary: {exc.strerror or exc}") from None
