"""``imagelint check REF...``: flags → (SourceOptions, Target, Matrix, Config) → run_check → reports → exit code.

Reports: ``--format`` is repeatable; each ``--output FILE`` belongs to the
``--format`` given just before it (``--format sarif=FILE`` says the same in one
flag). Formats without a file go to stdout (at most one may). With no
``--format``: ``github`` when ``GITHUB_ACTIONS=true``, else ``text``. SARIF and
JSON files are written even when an image could not be read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Optional

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
from imagelint.cli.source_options import with_source_options
from imagelint.cli.target_options import TargetOptions, with_target_options
from imagelint.errors import ImagelintError, UsageError

if TYPE_CHECKING:
    from imagelint.sources import SourceOptions

app = typer.Typer()

EPILOG = epilog(
    examples(
        "imagelint check registry:ghcr.io/acme/trainer:1.4 --driver 535.104.05 --gpu T4",
        "imagelint check oci-dir:build/layout --target-file pools.toml --fail-on warning",
        "imagelint check app.tar --target-file pools.toml --format sarif --output imagelint.sarif",
        "imagelint check --cluster                       # the images in .imagelint.toml, on the live pools",
    ),
    REFERENCES,
    EXIT_CODES,
)


@app.command("check", cls=ReportsInOrder, epilog=EPILOG)
@with_target_options
@with_source_options
def check_command(
    references: Optional[List[str]] = typer.Argument(
        None, help="Images: registry:, docker:, docker-archive:, oci-dir:, oci-archive: or a name (default: `images` in the config)."
    ),
    matrix: MatrixOpt = None,
    matrix_overlay: MatrixOverlayOpt = None,
    config: ConfigOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    fail_on: FailOnOpt = None,
    format: FormatOpt = None,
    output: OutputOpt = None,
    no_inline_ignores: NoInlineIgnoresOpt = False,
    dockerfile: DockerfileOpt = None,
    sarif_artifact: SarifArtifactOpt = None,
    color: ColorOpt = "auto",
    quiet: QuietOpt = False,
    config_only: bool = typer.Option(False, "--config-only", help="Do not read layers (config-based rules only)."),
    *,
    source_options: SourceOptions,
    target_options: TargetOptions,
) -> None:
    """Check images against the node pools they will run on; exit 1 on findings at/above --fail-on."""
    from imagelint.core.check import run_check

    try:
        color = choose(color, COLOR_MODES, "--color")
        setup = prepare_run(
            config_path=config, select=select, ignore=ignore, fail_on=fail_on, matrix=matrix,
            matrix_overlay=matrix_overlay, no_inline_ignores=no_inline_ignores, formats=format, outputs=output,
            target_options=target_options, dockerfiles=dockerfile, sarif_artifact=sarif_artifact,
            images=list(references) if references else None,
        )
        references = list(references or setup.config.images)
        if not references:
            raise UsageError("no image to check: give a reference, or list `images` in .imagelint.toml")
        from imagelint.cli.progress import progress_line

        with progress_line(quiet=quiet):
            run = run_check(references, source_options, setup.target, setup.matrix, setup.config, read_layers=not config_only)
        emit_reports(run, setup.plan, setup.sarif_artifacts, color=color, quiet=quiet)
    except ImagelintError as exc:
        raise fail(exc) from None
    report_unreadable(run, setup.plan)
    raise typer.Exit(run.exit_code)
