"""``imagelint lint FILE...``: static checks of repository files, no network (the pre-commit hook).

Flags in, ``imagelint.core.lint.run_lint`` called, reports out, exit code back;
the same config, ``--format``/``--output``, ``--fail-on``, target and source flags
(the latter for ``--image``) and exit codes as ``check``. The core is imported inside the command:
the pre-commit hook runs it on every commit, and it needs none of the image side.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from imagelint.cli.choices import choose
from imagelint.cli.failure import fail
from imagelint.cli.help import EXIT_CODES, REFERENCES, epilog, examples
from imagelint.cli.run_options import (
    COLOR_MODES,
    ColorOpt,
    ConfigOpt,
    DockerfileOpt,
    FailOnOpt,
    FormatOpt,
    IgnoreOpt,
    MatrixOpt,
    MatrixOverlayOpt,
    NoInlineIgnoresOpt,
    OutputOpt,
    QuietOpt,
    ReportsInOrder,
    SarifArtifactOpt,
    SelectOpt,
    emit_reports,
    prepare_run,
    report_unreadable,
)
from imagelint.cli.source_options import (
    DeferredSourceOptions,
    with_deferred_source_options,
)
from imagelint.cli.target_options import with_target_options
from imagelint.deploytarget.options import TargetOptions
from imagelint.errors import ImagelintError

app = typer.Typer()

EPILOG = epilog(
    examples(
        "imagelint lint Dockerfile k8s/                  # Dockerfiles, manifests, configs, scripts; no network",
        "imagelint lint k8s/deploy.yaml --driver 535.104.05 --gpu T4",
        "helm template chart | imagelint lint -           # stdin",
        "imagelint lint k8s/ --image registry:ghcr.io/acme/trainer:1.4 --target-file pools.toml",
    ),
    REFERENCES,
    EXIT_CODES,
)


@app.command("lint", cls=ReportsInOrder, epilog=EPILOG)
@with_target_options
@with_deferred_source_options  # only --image reaches an image: the hook never imports imagelint.sources
def lint_command(
    files: List[str] = typer.Argument(
        ..., help="Dockerfiles, Kubernetes manifests, DeepStream configs, shell/Python scripts, directories, or - (stdin)."
    ),
    image: Optional[List[str]] = typer.Option(
        None, "--image", help="Also check this image against the pools the manifests' scheduling reaches (repeatable)."
    ),
    config_path: ConfigOpt = None,
    matrix_sel: MatrixOpt = None,
    matrix_overlay: MatrixOverlayOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    fail_on: FailOnOpt = None,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    no_inline_ignores: NoInlineIgnoresOpt = False,
    pre_commit: bool = typer.Option(
        False, "--pre-commit", help="Files come from pre-commit's patterns: no note for files that are no kind lint reads."
    ),
    dockerfile: DockerfileOpt = None,
    sarif_artifact: SarifArtifactOpt = None,
    color: ColorOpt = "auto",
    quiet: QuietOpt = False,
    *,
    source_options: DeferredSourceOptions,
    target_options: TargetOptions,
) -> None:
    """Lint repository files statically (no network): the same rules, config and exit codes as check."""
    from imagelint.core.lint import run_lint

    try:
        color = choose(color, COLOR_MODES, "--color")
        setup = prepare_run(
            config_path=config_path, select=select, ignore=ignore, fail_on=fail_on, matrix=matrix_sel,
            matrix_overlay=matrix_overlay, no_inline_ignores=no_inline_ignores, formats=fmt, outputs=output,
            target_options=target_options, dockerfiles=dockerfile, sarif_artifact=sarif_artifact,
            images=list(image or ()),
        )
        images = tuple(image or ())
        from imagelint.cli.progress import progress_line

        with progress_line(quiet=quiet or not images):  # only --image reads images
            run = run_lint(files, setup.target, setup.matrix, setup.config, images=images,
                           source_options=source_options() if images else None, quiet_unrelated=pre_commit)
        emit_reports(run, setup.plan, setup.sarif_artifacts, color=color, quiet=quiet)
    except ImagelintError as exc:
        raise fail(exc) from None
    report_unreadable(run, setup.plan)
    raise typer.Exit(run.exit_code)
