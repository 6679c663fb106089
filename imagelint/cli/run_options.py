"""Flag handling shared by ``check`` and ``lint``, so the two commands cannot drift:
rule selection, fail-on, output pairing, the ``[target]`` config table, matrix
selection (including ``cluster``), and writing the reports and the step summary.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, List, Optional

import typer

from imagelint.errors import UsageError
from imagelint.target.options import TargetOptions

FAIL_ON = ("error", "warning", "info", "never")

# The run options check and lint share, declared once so their flags and help cannot drift.
MatrixOpt = Annotated[Optional[str], typer.Option(
    "--matrix", help="Matrix version, file, or 'cluster' (ConfigMap imagelint-matrix; 'cluster:NAMESPACE/NAME' for another).")]
MatrixOverlayOpt = Annotated[Optional[List[str]], typer.Option(
    "--matrix-overlay", help="Overlay file adding/overriding matrix rows (repeatable).")]
ConfigOpt = Annotated[Optional[str], typer.Option(
    "--config", help="Config file (default: .imagelint.toml, or the tool.imagelint table of pyproject.toml, found upwards).")]
SelectOpt = Annotated[Optional[List[str]], typer.Option(
    "--select", help="Rule IDs or prefixes to run (comma-separated, repeatable).")]
IgnoreOpt = Annotated[Optional[List[str]], typer.Option(
    "--ignore", help="Rule IDs or prefixes not to run (comma-separated, repeatable).")]
FailOnOpt = Annotated[Optional[str], typer.Option("--fail-on", help="error, warning, info or never (default error).")]
FormatOpt = Annotated[Optional[List[str]], typer.Option(
    "--format", help="text, json, sarif, github or junit (repeatable; FORMAT=FILE allowed).")]
OutputOpt = Annotated[Optional[List[str]], typer.Option(
    "--output", help="File for the --format given just before (default: stdout).")]
NoInlineIgnoresOpt = Annotated[bool, typer.Option(
    "--no-inline-ignores",
    help="Refuse inline ignores: io.imagelint.ignore image labels, '# imagelint ignore=' comments, imagelint.io/ignore annotations.")]


def split_codes(values: list[str] | None) -> tuple[str, ...] | None:
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


def config_target_options(target: dict) -> TargetOptions:
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


def load_matrix_selected(selector: str | None, overlays: tuple[str, ...], target_options: TargetOptions | None = None):
    from imagelint.matrix import load_matrix

    from imagelint.matrix.loader import is_cluster_matrix_selector

    if is_cluster_matrix_selector(selector):
        from imagelint.cluster import matrix_from_cluster

        context = target_options.context if target_options else None
        kubeconfig = target_options.kubeconfig if target_options else None
        return matrix_from_cluster(context, kubeconfig, overlays, selector)
    return load_matrix(selector, overlays)


def use_color(stream, environ) -> bool:
    """Colour only for people: a terminal, and never when NO_COLOR is set (no-color.org)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and "NO_COLOR" not in environ


def write_output(path: str, text: str) -> None:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class RunSetup:
    """What check and lint both need before they run: config, output plan, matrix and target."""

    config: Any
    plan: list[tuple[str, str | None]]
    matrix: Any
    target: Any


def prepare_run(
    *,
    config_path: str | None,
    select: list[str] | None,
    ignore: list[str] | None,
    fail_on: str | None,
    matrix: str | None,
    matrix_overlay: list[str] | None,
    no_inline_ignores: bool,
    formats: list[str] | None,
    outputs: list[str] | None,
    target_options: TargetOptions,
) -> RunSetup:
    """Flags + config file → RunSetup. Flags beat config. Raises ImagelintError (exit 2/3)."""
    from imagelint.core.config import load_config, validate_code_prefix
    from imagelint.target.options import build_target

    cfg = load_config(config_path)
    for code in (split_codes(select) or ()) + (split_codes(ignore) or ()):
        problem = validate_code_prefix(code)
        if problem:
            raise UsageError(f"--select/--ignore: {problem}")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
    cfg = cfg.with_overrides(
        select=split_codes(select),
        ignore=split_codes(ignore),
        fail_on=fail_on,
        matrix=matrix,
        matrix_overlays=tuple(matrix_overlay) if matrix_overlay else None,
        inline_ignores=False if no_inline_ignores else None,
    )
    plan = plan_outputs(list(formats or []), list(outputs or []))
    options = target_options.with_fallback(config_target_options(dict(cfg.target)))
    the_matrix = load_matrix_selected(cfg.matrix, cfg.matrix_overlays, options)
    from imagelint.matrix.loader import is_cluster_matrix_selector

    from_cluster = is_cluster_matrix_selector(cfg.matrix)
    return RunSetup(cfg, plan, the_matrix, build_target(options, the_matrix, cluster_matrix=from_cluster))


def emit_reports(run: Any, plan: list[tuple[str, str | None]]) -> None:
    """Render every planned format (stdout or file), then the GitHub step summary when asked for."""
    from imagelint.report import ReportOptions, render

    color = use_color(sys.stdout, os.environ)
    for fmt, out in plan:
        text = render(fmt, run, ReportOptions(color=color and out is None and fmt == "text"))
        if out is None:
            typer.echo(text, nl=False)
        else:
            write_output(out, text)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    in_actions = os.environ.get("GITHUB_ACTIONS") == "true"
    if summary_path and (in_actions or any(f == "github" for f, _ in plan)):
        from imagelint.report.github import step_summary

        try:
            with open(summary_path, "a", encoding="utf-8") as fh:
                fh.write(step_summary(run))
        except OSError as exc:
            raise UsageError(f"cannot write the step summary: {exc.strerror or exc}") from None


def report_unreadable(run: Any) -> None:
    """One line on stderr per image that could not be read."""
    for r in run.results:
        if r.error:
            # A file's error already starts with "path:line:"; an image's names no subject.
            where = "" if r.error.startswith(f"{r.subject}:") else f"{r.subject}: "
            typer.echo(f"imagelint: error: {where}{r.error}", err=True)
