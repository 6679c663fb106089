"""Flag handling shared by ``check`` and ``lint``, so the two commands cannot drift:
rule selection, fail-on, output pairing, the ``[target]`` config table, matrix
selection (including ``cluster``), and writing the reports and the step summary.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, List, Optional

import click
import typer
from typer.core import TyperCommand

from imagelint.cli import completion
from imagelint.cli.choices import choose
from imagelint.deploytarget.options import TargetOptions
from imagelint.errors import UsageError

if TYPE_CHECKING:  # annotations only: the matrix and config modules load when a run needs them
    from imagelint.core.config import Config
    from imagelint.deploytarget import Target
    from imagelint.matrix import Matrix

FAIL_ON = ("error", "warning", "info", "never")
COLOR_MODES = ("auto", "always", "never")
# --output FILE without --format: the format its extension names (anything else: text).
FORMAT_BY_EXTENSION = {".sarif": "sarif", ".json": "json", ".xml": "junit", ".txt": "text", ".log": "text"}

# The run options check and lint share, declared once so their flags and help cannot drift.
MatrixOpt = Annotated[Optional[str], typer.Option(
    "--matrix", help="Matrix version, file, or 'cluster' (ConfigMap imagelint-matrix; 'cluster:NAMESPACE/NAME' for another).")]
MatrixOverlayOpt = Annotated[Optional[List[str]], typer.Option(
    "--matrix-overlay", help="Overlay file adding/overriding matrix rows (repeatable).")]
ConfigOpt = Annotated[Optional[str], typer.Option(
    "--config", help="Config file (default: .imagelint.toml, or the tool.imagelint table of pyproject.toml, found upwards).")]
SelectOpt = Annotated[Optional[List[str]], typer.Option(
    "--select", help="Rule IDs or prefixes to run (comma-separated, repeatable).", autocompletion=completion.rule_ids)]
IgnoreOpt = Annotated[Optional[List[str]], typer.Option(
    "--ignore", help="Rule IDs or prefixes not to run (comma-separated, repeatable).", autocompletion=completion.rule_ids)]
FailOnOpt = Annotated[Optional[str], typer.Option("--fail-on", help="error, warning, info or never (default error; any case).")]
FormatOpt = Annotated[Optional[List[str]], typer.Option(
    "--format", help="text, json, sarif, github or junit (repeatable; FORMAT=FILE allowed).", autocompletion=completion.formats)]
OutputOpt = Annotated[Optional[List[str]], typer.Option(
    "--output", "-o",
    help="File for the --format given just before (default: stdout); alone, the format follows the extension "
         "(.sarif, .json, .xml = junit, else text).")]
ColorOpt = Annotated[str, typer.Option(
    "--color", metavar="auto|always|never",
    help="Colour the text report: auto (a terminal, and NO_COLOR unset), always or never.")]
QuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Text report: findings only (no clean images, notes or summary line).")]
DockerfileOpt = Annotated[Optional[List[str]], typer.Option(
    "--dockerfile", metavar="[REF=]PATH",
    help="The Dockerfile an image was built from: SARIF, GitHub annotations and JUnit show the image's findings there "
         "(repeatable; REF= for one image).")]
SarifArtifactOpt = Annotated[Optional[str], typer.Option(
    "--sarif-artifact", metavar="PATH",
    help="Repository file SARIF points image findings at when their Dockerfile is not known (default: the config file).")]
NoInlineIgnoresOpt = Annotated[bool, typer.Option(
    "--no-inline-ignores",
    help="Refuse inline ignores: io.imagelint.ignore image labels, '# imagelint ignore=' comments, imagelint.io/ignore annotations.")]


def split_codes(values: list[str] | None) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())


# check's and lint's --help sections (title, the flags in it), in the order a user needs them.
HELP_SECTIONS: tuple[tuple[str, frozenset[str]], ...] = (
    ("Target (the node pools to judge against)", frozenset({
        "--driver", "--gpu", "--pool", "--target-file", "--cluster", "--context", "--kubeconfig", "--compute-capability",
        "--brand", "--arch", "--toolkit", "--device-plugin", "--runtime-mode", "--matrix", "--matrix-overlay"})),
    ("Rules and config", frozenset({"--config", "--select", "--ignore", "--fail-on", "--no-inline-ignores", "--pre-commit"})),
    ("Reports", frozenset({"--format", "--output", "--color", "--quiet", "--dockerfile", "--sarif-artifact"})),
    ("Reading images (check, lint --image: registries, the daemon, limits)", frozenset({
        "--image", "--platform", "--all-platforms", "--ca-cert", "--insecure-registry", "--docker-config", "--timeout",
        "--retries", "--cache-dir", "--no-cache", "--max-image-size", "--max-layer-size", "--no-layers"})),
)


class ReportsInOrder(TyperCommand):
    """A command with ``--format``/``--output``: each ``--output`` belongs to the ``--format`` given
    just before it (``--format text --format sarif --output f.sarif`` writes the SARIF to the file).

    click gathers a repeated option's values per option, which loses how the two interleave; this
    asks click's own parser for the order of the options on the command line and hands the command
    each such pair in the one-flag spelling ``FORMAT=FILE``, which ``plan_outputs`` reads.
    """

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The options in sections, as ruff's and trivy's help groups theirs: what to judge against,
        which rules, which reports, then how images are reached (registries, limits); a flag no
        section names lands in "Other options", so none is ever left out of the help."""
        sections: dict[str, list[tuple[str, str]]] = {title: [] for title, _ in HELP_SECTIONS}
        sections["Other options"] = []
        arguments = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                arguments.append(record)
                continue
            title = next((t for t, flags in HELP_SECTIONS if set(param.opts) & flags), "Other options")
            sections[title].append(record)
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        for title, records in sections.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        pairs = self._report_pairs(ctx, args)
        rest = super().parse_args(ctx, args)
        if pairs is not None:
            ctx.params[self._param("--format").name or ""] = pairs
            ctx.params[self._param("--output").name or ""] = None
        return rest

    def _param(self, flag: str) -> click.Parameter:
        return next(p for p in self.params if flag in p.opts)

    def _report_pairs(self, ctx: click.Context, args: list[str]) -> list[str] | None:
        """``FORMAT`` or ``FORMAT=FILE`` per ``--format`` in order, or None when an ``--output``
        follows no ``--format`` of its own (``plan_outputs`` then pairs them by position)."""
        fmt, out = self._param("--format"), self._param("--output")
        try:
            opts, _, order = self.make_parser(ctx).parse_args(args=list(args))
        except click.ClickException:
            return None  # super().parse_args says what is wrong with the command line
        formats, outputs = iter(opts.get(fmt.name) or ()), iter(opts.get(out.name) or ())
        pairs: list[list[str]] = []
        for param in order:
            if param is fmt:
                pairs.append([next(formats)])
            elif param is out:
                if not pairs or len(pairs[-1]) == 2 or "=" in pairs[-1][0]:
                    return None
                pairs[-1].append(next(outputs))
        return ["=".join(pair) for pair in pairs] if pairs else None


def plan_outputs(formats: list[str], outputs: list[str]) -> list[tuple[str, str | None]]:
    """Pair formats with output files (None = stdout): ``FORMAT=FILE``, else the Nth ``--output``
    with the Nth ``--format`` (``ReportsInOrder`` has paired them as given on the command line)."""
    from imagelint.report import FORMAT_NAMES

    plan: list[tuple[str, str | None]]
    if not formats and outputs:
        plan = [(format_for_output(out), out) for out in outputs]
    elif not formats:
        default = "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"
        plan = [(default, None)]
    elif len(outputs) > len(formats):
        raise UsageError("more --output than --format flags")
    else:
        plan = [(f, outputs[i] if i < len(outputs) else None) for i, f in enumerate(formats)]
    resolved = []
    for fmt, out in plan:
        if "=" in fmt and out is None:
            fmt, out = fmt.split("=", 1)
        fmt = choose(fmt, FORMAT_NAMES, "--format")
        resolved.append((fmt, out or None))
    if sum(1 for _, o in resolved if o is None) > 1:
        raise UsageError("only one --format can go to stdout; give the others an --output FILE")
    return resolved


def format_for_output(path: str) -> str:
    """The report format an output file's name asks for (``report.sarif`` → sarif …; else text)."""
    name = path.lower()
    if name.endswith(".sarif.json"):
        return "sarif"
    return FORMAT_BY_EXTENSION.get(os.path.splitext(name)[1], "text")


def config_target_options(target: dict, origin: str | None = None) -> TargetOptions:
    return TargetOptions.from_config(target, origin)


def load_matrix_selected(selector: str | None, overlays: tuple[str, ...], target_options: TargetOptions | None = None):
    from imagelint.matrix import load_matrix
    from imagelint.matrix.loader import is_cluster_matrix_selector

    if is_cluster_matrix_selector(selector):
        from imagelint.cluster import matrix_from_cluster

        context = target_options.context if target_options else None
        kubeconfig = target_options.kubeconfig if target_options else None
        return matrix_from_cluster(context, kubeconfig, overlays, selector)
    return load_matrix(selector, overlays)


def use_color(stream, environ, mode: str = "auto") -> bool:
    """``--color``: always, never, or auto = colour only for people: a terminal, and not when
    NO_COLOR is set to a non-empty value (no-color.org; an explicit ``--color always`` wins)."""
    mode = choose(mode, COLOR_MODES, "--color")
    if mode != "auto":
        return mode == "always"
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not environ.get("NO_COLOR")


def write_output(path: str, text: str | Iterable[str]) -> None:
    from imagelint.report.output import write_report

    write_report(path, text)


@dataclass(frozen=True)
class RunSetup:
    """What check and lint both need before they run: config, output plan, matrix and target."""

    config: Config
    plan: list[tuple[str, str | None]]
    matrix: Matrix
    target: Target
    sarif_artifacts: Any = None  # imagelint.report.sarif.SarifArtifacts when a SARIF report is planned


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
    dockerfiles: list[str] | None = None,
    sarif_artifact: str | None = None,
    images: list[str] | None = None,
) -> RunSetup:
    """Flags + config file → RunSetup. Flags beat config. Raises ImagelintError (exit 2/3)."""
    from imagelint.cli.target_options import read_cluster_target
    from imagelint.core.config import load_config, validate_code_prefix
    from imagelint.deploytarget.options import build_target

    cfg = load_config(config_path)
    for note in cfg.notices:
        typer.echo(f"imagelint: note: {note}", err=True)
    for code in (split_codes(select) or ()) + (split_codes(ignore) or ()):
        problem = validate_code_prefix(code)
        if problem:
            raise UsageError(f"--select/--ignore: {problem}")
    if fail_on is not None:
        fail_on = choose(fail_on, FAIL_ON, "--fail-on")
    cfg = cfg.with_overrides(
        select=split_codes(select),
        ignore=split_codes(ignore),
        fail_on=fail_on,
        matrix=matrix,
        matrix_overlays=tuple(matrix_overlay) if matrix_overlay else None,
        inline_ignores=False if no_inline_ignores else None,
    )
    plan = plan_outputs(list(formats or []), list(outputs or []))
    from imagelint.report.output import check_report_path

    for _, out in plan:  # a FIFO or device named as a report: refused now, not after the run
        if out is not None:
            check_report_path(out)
    artifacts = None
    if any(fmt in ANCHORED_FORMATS for fmt, _ in plan):
        artifacts = sarif_artifacts_from(cfg, dockerfiles or [], sarif_artifact, images)
    elif dockerfiles or sarif_artifact:
        raise UsageError("--dockerfile and --sarif-artifact only apply to --format sarif, github or junit")
    options = target_options.with_fallback(config_target_options(dict(cfg.target), cfg.path))
    the_matrix = load_matrix_selected(cfg.matrix, cfg.matrix_overlays, options)
    from imagelint.matrix.loader import is_cluster_matrix_selector

    from_cluster = is_cluster_matrix_selector(cfg.matrix)
    return RunSetup(cfg, plan, the_matrix, build_target(options, the_matrix, read_cluster_target, cluster_matrix=from_cluster), artifacts)


# The formats that point image findings at a repository file (the Dockerfile that built the image).
ANCHORED_FORMATS = ("sarif", "github", "junit")


def workflow_file(root: str, environ: Any) -> str | None:
    """Under GitHub Actions, the workflow file that runs imagelint (from ``GITHUB_WORKFLOW_REF``,
    ``OWNER/REPO/.github/workflows/ci.yml@refs/heads/main``): a repository file that always exists there."""
    from imagelint.report.artifacts import repository_path

    ref = environ.get("GITHUB_WORKFLOW_REF", "")
    repo = environ.get("GITHUB_REPOSITORY", "")
    path = ref.rsplit("@", 1)[0]
    if not repo or not path.startswith(repo + "/"):
        return None
    candidate = os.path.join(root, path[len(repo) + 1:])
    return candidate if os.path.isfile(candidate) and repository_path(candidate, root) else None


def sarif_artifacts_from(cfg: Any, dockerfiles: list[str], sarif_artifact: str | None, images: list[str] | None) -> Any:
    """--dockerfile/--sarif-artifact + config → where SARIF points image findings.

    ``images``: the references to be read (None: the config's ``images``). Every file named must
    exist inside the repository, checked before any image is read. The anchor for images without
    a Dockerfile: ``--sarif-artifact``, else the config file, else under GitHub Actions the
    workflow file, else none (SARIF then names the image itself).
    """
    from imagelint.report.artifacts import (
        SarifArtifacts,
        repository_path,
        repository_root,
    )

    root = repository_root()

    def repo_file(flag: str, path: str) -> str:
        if not os.path.isfile(path):
            raise UsageError(f"{flag} {path}: no such file")
        if repository_path(path, root) is None:
            raise UsageError(f"{flag} {path}: not inside the repository ({root}); code scanning shows repository files only")
        return os.path.abspath(path)

    per_image: dict[str, str] = {}
    for ref, path in dict(cfg.dockerfiles).items():
        if not os.path.isfile(path):
            raise UsageError(f"{cfg.path}: images: dockerfile {path} of {ref}: no such file")
        per_image[ref] = path
    every: str | None = None
    for value in dockerfiles:
        ref, eq, path = value.rpartition("=")
        if eq and ref:
            per_image[ref] = repo_file("--dockerfile", path)
        else:
            every = repo_file("--dockerfile", path)
    anchor = repo_file("--sarif-artifact", sarif_artifact) if sarif_artifact else None
    if anchor is None and cfg.path and repository_path(cfg.path, root) is not None:
        anchor = os.path.abspath(cfg.path)
    if anchor is None:
        anchor = workflow_file(root, os.environ)
    # With none of these, SARIF points an image's findings at its name as a pseudo-path (as trivy
    # does) and says so in the run; the other formats need no file at all.
    return SarifArtifacts(root=root, anchor=anchor, dockerfiles=per_image, dockerfile=every)


def emit_reports(run: Any, plan: list[tuple[str, str | None]], sarif_artifacts: Any = None, *,
                 color: str = "auto", quiet: bool = False) -> None:
    """Render every planned format (stdout or file), then the GitHub step summary when asked for.

    When every report goes to a file, the text report's summary line goes to stderr (stdout stays
    empty, as with any report written to a file; stderr is where imagelint talks to the person),
    naming the files, unless ``quiet``."""
    from imagelint.report import ReportOptions, render_pieces
    from imagelint.report.output import batched

    colored = use_color(sys.stdout, os.environ, color)
    on_stderr = unreadable_on_stderr(plan)
    from imagelint.errors import ImagelintError

    failed: list[ImagelintError] = []
    written: list[str] = []
    for fmt, out in plan:
        # One format's limit (SARIF's 20 runs or 10 MB, a file that cannot be written) never stops
        # the others: each is written, then the first failure is raised (its exit code).
        try:
            pieces = render_pieces(fmt, run, ReportOptions(
                color=colored and out is None and fmt == "text", sarif_artifacts=sarif_artifacts,
                errors_on_stderr=on_stderr and out is None and _terminal(sys.stdout), quiet=quiet))
            if out is None:
                for text in batched(pieces):
                    typer.echo(text, nl=False, color=True if colored and fmt == "text" else None)
            else:
                write_output(out, pieces)
                written.append(out)
        except ImagelintError as exc:
            if len(plan) > 1:
                exc.message = f"--format {fmt}: {exc.message} (the other reports are written)"
            failed.append(exc)
    if not quiet and all(out is not None for _, out in plan) and written:
        from imagelint.escape import guard_line, printable
        from imagelint.report.fragments import summary_line

        files = ", ".join(written) or "none written"
        typer.echo(guard_line(printable(f"imagelint: {summary_line(run)}; report: {files}")), err=True)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    in_actions = os.environ.get("GITHUB_ACTIONS") == "true"
    if summary_path and (in_actions or any(f == "github" for f, _ in plan)):
        from imagelint.report.github import step_summary
        from imagelint.report.output import write_report

        write_report(summary_path, step_summary(run), append=True)
    for later in failed[1:]:
        from imagelint.cli.failure import error_line

        typer.echo(error_line(later.message), err=True)
    if failed:
        raise failed[0]


def _terminal(stream: Any) -> bool:
    """A report on stdout leaves an unreadable image's reason to stderr only when both are the
    same terminal: ``> report.txt`` keeps the reason in the file."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def unreadable_on_stderr(plan: list[tuple[str, str | None]]) -> bool:
    """Unreadable images get their one-line error on stderr, except under ``--format github`` on
    stdout: its ``::error`` annotation is that line (an unreadable image is printed once)."""
    return not any(fmt == "github" and out is None for fmt, out in plan)


def report_unreadable(run: Any, plan: list[tuple[str, str | None]]) -> None:
    """One line on stderr per image that could not be read (see ``unreadable_on_stderr``)."""
    if not unreadable_on_stderr(plan):
        return
    for r in run.results:
        if r.error:
            from imagelint.cli.failure import error_line

            detail = r.error if r.error.startswith(r.subject) else f"{r.subject}: {r.error}"
            typer.echo(error_line(detail), err=True)
