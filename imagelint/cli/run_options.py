"""Flag handling shared by ``check`` and ``lint``, so the two commands cannot drift:
rule selection, fail-on, output pairing, the ``[target]`` config table, matrix
selection (including ``cluster``), and writing the reports and the step summary.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any, List, Optional

from imagelint.cli.choices import choose
from imagelint.cli.spec import Option, echo
from imagelint.errors import UsageError
from dataclasses import dataclass
from imagelint.target.options import TargetOptions

FAIL_ON = ("error", "warning", "info", "never")
COLOR_MODES = ("auto", "always", "never")
# --output FILE without --format: the format its extension names (anything else: text).
FORMAT_BY_EXTENSION = {".sarif": "sarif", ".json": "json", ".xml": "junit", ".txt": "text", ".log": "text"}

# The run options check and lint share, declared once so their flags and help cannot drift.
MatrixOpt = Annotated[Optional[str], Option(
    "--matrix", help="Matrix version, file, or 'cluster' (ConfigMap imagelint-matrix; 'cluster:NAMESPACE/NAME' for another).")]
MatrixOverlayOpt = Annotated[Optional[List[str]], Option(
    "--matrix-overlay", help="Overlay file adding/overriding matrix rows (repeatable).")]
ConfigOpt = Annotated[Optional[str], Option(
    "--config", help="Config file (default: .imagelint.toml, or the tool.imagelint table of pyproject.toml, found upwards).")]
SelectOpt = Annotated[Optional[List[str]], Option(
    "--select", help="Rule IDs or prefixes to run (comma-separated, repeatable).")]
IgnoreOpt = Annotated[Optional[List[str]], Option(
    "--ignore", help="Rule IDs or prefixes not to run (comma-separated, repeatable).")]
FailOnOpt = Annotated[Optional[str], Option("--fail-on", help="error, warning, info or never (default error; any case).")]
FormatOpt = Annotated[Optional[List[str]], Option(
    "--format", help="text, json, sarif, github or junit (repeatable; FORMAT=FILE allowed).")]
OutputOpt = Annotated[Optional[List[str]], Option(
    "--output", "-o",
    help="File for the --format given just before (default: stdout); alone, the format follows the extension "
         "(.sarif, .json, .xml = junit, else text).")]
ColorOpt = Annotated[str, Option(
    "--color", metavar="auto|always|never",
    help="Colour the text report: auto (a terminal, and NO_COLOR unset), always or never.")]
QuietOpt = Annotated[bool, Option(
    "--quiet", "-q", help="Text report: findings only (no clean images, notes or summary line).")]
DockerfileOpt = Annotated[Optional[List[str]], Option(
    "--dockerfile", metavar="[REF=]PATH",
    help="The Dockerfile an image was built from: SARIF points the image's findings there (repeatable; REF= for one image).")]
SarifArtifactOpt = Annotated[Optional[str], Option(
    "--sarif-artifact", metavar="PATH",
    help="Repository file SARIF points image findings at when their Dockerfile is not known (default: the config file).")]
NoInlineIgnoresOpt = Annotated[bool, Option(
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
    if not formats and outputs:
        plan = [(format_for_output(out), out) for out in outputs]
    elif not formats:
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


def config_target_options(target: dict) -> TargetOptions:
    return TargetOptions.from_config(target)


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


def write_output(path: str, text: str) -> None:
    from imagelint.report.output import write_report

    write_report(path, text)


@dataclass(frozen=True)
class RunSetup:
    """What check and lint both need before they run: config, output plan, matrix and target."""

    config: Any
    plan: list[tuple[str, str | None]]
    matrix: Any
    target: Any
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
    from imagelint.core.config import load_config, validate_code_prefix
    from imagelint.target.options import build_target

    cfg = load_config(config_path)
    for note in cfg.notices:
        echo(f"imagelint: note: {note}", err=True)
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
    if any(fmt == "sarif" for fmt, _ in plan):
        artifacts = sarif_artifacts_from(cfg, dockerfiles or [], sarif_artifact, images)
    elif dockerfiles or sarif_artifact:
        raise UsageError("--dockerfile and --sarif-artifact only apply to --format sarif")
    options = target_options.with_fallback(config_target_options(dict(cfg.target)))
    the_matrix = load_matrix_selected(cfg.matrix, cfg.matrix_overlays, options)
    from imagelint.matrix.loader import is_cluster_matrix_selector

    from_cluster = is_cluster_matrix_selector(cfg.matrix)
    return RunSetup(cfg, plan, the_matrix, build_target(options, the_matrix, cluster_matrix=from_cluster), artifacts)


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

    ``images``: the references to be read (None: the config's ``images``). Every file must
    exist inside the repository; every image must have its Dockerfile or an anchor
    (``--sarif-artifact``, else the config file, else under GitHub Actions the workflow file),
    checked before any image is read.
    """
    from imagelint.report.artifacts import SarifArtifacts, repository_path, repository_root

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
    if anchor is None and every is None:
        missing = [ref for ref in (cfg.images if images is None else images) if ref not in per_image]
        if missing:
            raise UsageError(
                f"--format sarif: code scanning needs a repository file for every finding, and {missing[0]} has none: "
                "give --dockerfile PATH (the Dockerfile it was built from) or --sarif-artifact PATH, or add .imagelint.toml")
    return SarifArtifacts(root=root, anchor=anchor, dockerfiles=per_image, dockerfile=every)


def emit_reports(run: Any, plan: list[tuple[str, str | None]], sarif_artifacts: Any = None, *,
                 color: str = "auto", quiet: bool = False) -> None:
    """Render every planned format (stdout or file), then the GitHub step summary when asked for."""
    from imagelint.report import ReportOptions, render

    colored = use_color(sys.stdout, os.environ, color)
    on_stderr = unreadable_on_stderr(plan)
    for fmt, out in plan:
        text = render(fmt, run, ReportOptions(color=colored and out is None and fmt == "text", sarif_artifacts=sarif_artifacts,
                                              errors_on_stderr=on_stderr and out is None, quiet=quiet))
        if out is None:
            echo(text, nl=False, color=True if colored and fmt == "text" else None)
        else:
            write_output(out, text)
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    in_actions = os.environ.get("GITHUB_ACTIONS") == "true"
    if summary_path and (in_actions or any(f == "github" for f, _ in plan)):
        from imagelint.report.github import step_summary

        from imagelint.report.output import write_report

        write_report(summary_path, step_summary(run), append=True)


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
            from imagelint.cli import error_line

            detail = r.error if r.error.startswith(r.subject) else f"{r.subject}: {r.error}"
            echo(error_line(detail), err=True)
