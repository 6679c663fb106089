"""``imagelint matrix list|show|validate|diff|export|publish``: look at and ship the compatibility matrix."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from imagelint.cli.failure import fail
from imagelint.cli.help import epilog, examples, exit_codes
from imagelint.errors import ImagelintError, UsageError

EPILOG = epilog(
    examples(
        "imagelint matrix list",
        "imagelint matrix show --section driver_branches",
        "imagelint matrix validate overlay.toml",
        "imagelint matrix diff 2026-11-29 my-matrix.toml",
        "imagelint matrix publish --namespace imagelint | kubectl apply -f -",
    ),
    exit_codes((0, "done (validate: the file is valid)"), (2, "usage error, or a matrix or overlay file that is wrong (file:row named)")),
)

app = typer.Typer(
    name="matrix",
    epilog=EPILOG,
    help="The versioned NVIDIA compatibility matrix: list, show, validate, diff, export, publish.",
    no_args_is_help=True,
)

OverlayOpt = Annotated[
    Optional[list[str]],
    typer.Option("--matrix-overlay", help="Overlay file whose rows add to / override the matrix (repeatable)."),
]
# The old spelling, still read, with a note (hidden from --help).
OldOverlayOpt = Annotated[Optional[list[str]], typer.Option("--overlay", hidden=True)]
MatrixOpt = Annotated[
    Optional[str], typer.Option("--matrix", help="Matrix VERSION or PATH (default: newest shipped).")
]


def _overlays(overlay: list[str] | None, old_spelling: list[str] | None) -> tuple[str, ...]:
    """The overlay files, in the order of each spelling; a note when the old spelling ``--overlay`` was used."""
    if old_spelling:
        typer.echo("imagelint: note: --overlay is deprecated; write --matrix-overlay (as check and lint do)", err=True)
    return tuple(overlay or ()) + tuple(old_spelling or ())


def _format(value: str, allowed: tuple[str, ...]) -> str:
    from imagelint.cli.choices import choose

    return choose(value, allowed, "--format")


@app.command("list", epilog=EPILOG)
def list_cmd() -> None:
    """List the matrix versions shipped with imagelint (the newest is the default)."""
    from imagelint.matrix import shipped_versions

    versions = shipped_versions()
    if not versions:
        raise fail(UsageError("no shipped matrix found"))
    for version in versions:
        typer.echo(f"{version}  (newest, default)" if version == versions[-1] else version)


@app.command("show", epilog=EPILOG)
def show_cmd(
    selector: Annotated[Optional[str], typer.Argument(metavar="[VERSION|PATH]", help="Version or file; default newest.")] = None,
    format: Annotated[str, typer.Option("--format", help="text | toml | json")] = "text",
    section: Annotated[Optional[str], typer.Option("--section", help="Only this section (e.g. cuda_releases).")] = None,
    overlay: OverlayOpt = None,
    old_overlay: OldOverlayOpt = None,
) -> None:
    """Show a matrix as readable tables (or TOML / JSON)."""
    from imagelint.matrix import load_matrix
    from imagelint.matrix.render import check_section, render_json, render_text

    try:
        fmt = _format(format, ("text", "toml", "json"))
        check_section(section)
        matrix = load_matrix(selector, _overlays(overlay, old_overlay))
        if fmt == "toml":
            typer.echo(matrix.to_toml(section), nl=False)
        elif fmt == "json":
            typer.echo(render_json(matrix, section))
        else:
            typer.echo(render_text(matrix, section))
    except ImagelintError as exc:
        raise fail(exc) from None


@app.command("validate", epilog=EPILOG)
def validate_cmd(
    file: Annotated[str, typer.Argument(metavar="FILE", help="A matrix or overlay TOML file.")],
) -> None:
    """Check a matrix or overlay file; exit 2 with file:row details when it is wrong."""
    from imagelint.matrix.loader import validate_file

    try:
        summary = validate_file(file)
    except ImagelintError as exc:
        raise fail(exc) from None
    typer.echo(f"{file}: ok ({summary})")


@app.command("diff", epilog=EPILOG)
def diff_cmd(
    a: Annotated[str, typer.Argument(metavar="A", help="Version or path.")],
    b: Annotated[str, typer.Argument(metavar="B", help="Version or path.")],
) -> None:
    """Rows added, removed or changed from matrix A to matrix B."""
    from imagelint.matrix import load_matrix
    from imagelint.matrix.render import diff_matrices

    try:
        lines = diff_matrices(load_matrix(a), load_matrix(b))
    except ImagelintError as exc:
        raise fail(exc) from None
    typer.echo("\n".join(lines) if lines else "no differences")


@app.command("export", epilog=EPILOG)
def export_cmd(
    format: Annotated[str, typer.Option("--format", help="toml | json")] = "toml",
    matrix: MatrixOpt = None,
    overlay: OverlayOpt = None,
    old_overlay: OldOverlayOpt = None,
) -> None:
    """Print the (overlaid) matrix as one TOML or JSON document."""
    from imagelint.matrix import load_matrix
    from imagelint.matrix.render import render_json

    try:
        fmt = _format(format, ("toml", "json"))
        loaded = load_matrix(matrix, _overlays(overlay, old_overlay))
    except ImagelintError as exc:
        raise fail(exc) from None
    typer.echo(loaded.to_toml() if fmt == "toml" else render_json(loaded), nl=fmt != "toml")


@app.command("publish", epilog=EPILOG)
def publish_cmd(
    name: Annotated[str, typer.Option("--name", help="ConfigMap name.")] = "imagelint-matrix",
    namespace: Annotated[Optional[str], typer.Option("--namespace", help="ConfigMap namespace.")] = None,
    matrix: MatrixOpt = None,
    overlay: OverlayOpt = None,
    old_overlay: OldOverlayOpt = None,
) -> None:
    """Print a ConfigMap holding the matrix (key matrix.toml), for ``kubectl apply -f -``."""
    from imagelint.matrix import load_matrix
    from imagelint.matrix.render import configmap_yaml

    try:
        loaded = load_matrix(matrix, _overlays(overlay, old_overlay))
        typer.echo(configmap_yaml(loaded, name, namespace), nl=False)
    except ImagelintError as exc:
        raise fail(exc) from None
