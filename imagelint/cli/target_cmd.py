"""``imagelint target show|snapshot``: print the resolved target, or freeze a live cluster into a target file."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from imagelint.cli.failure import fail
from imagelint.cli.help import epilog, examples, exit_codes
from imagelint.cli.target_options import resolve_target, with_target_options
from imagelint.deploytarget.options import TargetOptions
from imagelint.errors import ImagelintError, UsageError

EPILOG = epilog(
    examples(
        "imagelint target show --driver 535.104.05 --gpu T4",
        "imagelint target show --target-file pools.toml",
        "imagelint target snapshot --cluster > pools.toml    # then --target-file pools.toml in CI",
        "imagelint target snapshot --from cluster-dump/ > pools.toml    # from kubectl cluster-info dump",
    ),
    exit_codes((0, "done"), (2, "usage or configuration error (a bad flag or target file, named)"),
               (3, "the cluster could not be read, or the run reached --deadline")),
)

app = typer.Typer(
    name="target",
    epilog=EPILOG,
    help="Show the target (node pools: driver, GPUs, toolkit, device plugin) or snapshot a cluster into a target file.",
    no_args_is_help=True,
)

MatrixOpt = Annotated[
    Optional[str],
    typer.Option("--matrix", help="Matrix used to resolve GPU names and driver CUDA versions: VERSION, PATH or 'cluster'."),
]


def load_matrix_for(selector: str | None, options: TargetOptions) -> Any:
    """The matrix named by ``--matrix`` (``cluster`` = the imagelint-matrix ConfigMap)."""
    from imagelint.cli.run_options import load_matrix_selected

    return load_matrix_selected(selector, (), options)


@app.command("show", epilog=EPILOG)
@with_target_options
def show(target_options: TargetOptions, matrix: MatrixOpt = None) -> None:
    """Print the target the other commands would check against."""
    try:
        loaded = load_matrix_for(matrix, target_options)
    except ImagelintError as exc:
        raise fail(exc) from None
    from imagelint.deploytarget.describe import describe_target
    from imagelint.matrix.loader import is_cluster_matrix_selector

    target = resolve_target(_with_config(target_options), loaded, cluster_matrix=is_cluster_matrix_selector(matrix))
    typer.echo(describe_target(target))


def _with_config(options: TargetOptions) -> TargetOptions:
    """The flags over the config file's ``[target]``, as check/lint/audit combine them."""
    from imagelint.core.config import load_config

    try:
        config = load_config()
        return options.with_fallback(TargetOptions.from_config(dict(config.target), config.path))
    except ImagelintError as exc:
        raise fail(exc) from None


@app.command("snapshot", epilog=EPILOG)
@with_target_options
def snapshot(
    target_options: TargetOptions,
    matrix: MatrixOpt = None,
    dump: Annotated[Optional[str], typer.Option("--from", help="Build the pools from a dump instead (kubectl get -o yaml/json, a cluster-info dump or must-gather directory, - for stdin).")] = None,
) -> None:
    """Print the target as a target file (TOML), e.g. '--cluster' once with credentials,
    then '--target-file' in CI without them; '--from' builds it from a dump someone sent."""
    try:
        if dump is not None and target_options.given:
            raise UsageError("--from builds the target from a dump: it does not go with --cluster, --target-file or --driver")
        if dump is None and not target_options.given:
            raise UsageError("nothing to snapshot: give --cluster or --from PATH (or --target-file / --driver)")
        loaded = load_matrix_for(matrix, target_options)
        if dump is not None:
            from imagelint.cluster.read_target import target_from_dump

            target = target_from_dump(dump, loaded)
    except ImagelintError as exc:
        raise fail(exc) from None
    from imagelint.deploytarget.toml_writer import dump_target_toml
    from imagelint.escape import guard_line, printable
    from imagelint.matrix.loader import is_cluster_matrix_selector

    if dump is None:
        target = resolve_target(target_options, loaded, cluster_matrix=is_cluster_matrix_selector(matrix))
    for warning in target.warnings:
        typer.echo(guard_line(f"imagelint: warning: {printable(warning)}"), err=True)
    typer.echo(dump_target_toml(target), nl=False)
