"""``imagelint target show|snapshot``: print the resolved target, or freeze a live cluster into a target file."""

from __future__ import annotations

from typing import Annotated, Any, Optional

from imagelint.cli import fail, root
from imagelint.cli.spec import CommandGroup, Option, echo
from imagelint.cli.target_options import resolve_target, with_target_options
from imagelint.errors import ImagelintError, UsageError
from imagelint.escape import guard_line, printable
from imagelint.target.describe import describe_target
from imagelint.target.options import TargetOptions
from imagelint.target.toml_writer import dump_target_toml

target_app = CommandGroup(
    name="target",
    help="Show the target (node pools: driver, GPUs, toolkit, device plugin) or snapshot a cluster into a target file.",
    no_args_is_help=True,
)
root.add_group(target_app, name="target")

MatrixOpt = Annotated[
    Optional[str],
    Option("--matrix", help="Matrix used to resolve GPU names and driver CUDA versions: VERSION, PATH or 'cluster'."),
]


def load_matrix_for(selector: str | None, options: TargetOptions) -> Any:
    """The matrix named by ``--matrix`` (``cluster`` = the imagelint-matrix ConfigMap)."""
    from imagelint.cli.run_options import load_matrix_selected

    return load_matrix_selected(selector, (), options)


@target_app.command("show")
@with_target_options
def show(target_options: TargetOptions, matrix: MatrixOpt = None) -> None:
    """Print the target the other commands would check against."""
    try:
        loaded = load_matrix_for(matrix, target_options)
    except ImagelintError as exc:
        raise fail(exc) from None
    from imagelint.matrix.loader import is_cluster_matrix_selector

    target = resolve_target(_with_config(target_options), loaded, cluster_matrix=is_cluster_matrix_selector(matrix))
    echo(describe_target(target))


def _with_config(options: TargetOptions) -> TargetOptions:
    """The flags over the config file's ``[target]``, as check/lint/audit combine them."""
    from imagelint.core.config import load_config

    try:
        return options.with_fallback(TargetOptions.from_config(dict(load_config().target)))
    except ImagelintError as exc:
        raise fail(exc) from None


@target_app.command("snapshot")
@with_target_options
def snapshot(target_options: TargetOptions, matrix: MatrixOpt = None) -> None:
    """Print the target as a target file (TOML), e.g. ``--cluster`` once with credentials,
    then ``--target-file`` in CI without them."""
    try:
        if not target_options.given:
            raise UsageError("nothing to snapshot: give --cluster (or --target-file / --driver)")
        loaded = load_matrix_for(matrix, target_options)
    except ImagelintError as exc:
        raise fail(exc) from None
    from imagelint.matrix.loader import is_cluster_matrix_selector

    target = resolve_target(target_options, loaded, cluster_matrix=is_cluster_matrix_selector(matrix))
    for warning in target.warnings:
        echo(guard_line(f"imagelint: warning: {printable(warning)}"), err=True)
    echo(dump_target_toml(target), nl=False)
