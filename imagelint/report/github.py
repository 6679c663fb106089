"""GitHub Actions workflow commands (``::error file=…,line=…,title=…::message``) and the
step-summary Markdown table.

Escaping follows the runner's rules (actions/toolkit ``command.ts``): in data,
``%`` ``\\r`` ``\\n``; in properties also ``:`` and ``,`` (``imagelint.escape``, where every
format's escaping lives; step-summary cells are escaped Markdown). Only files of the
repository (Dockerfiles, manifests, configs) are given as ``file=``: paths
inside an image do not exist in the checkout, so they go into the message, and an image's
findings are shown on the Dockerfile that built it when that is known (``--dockerfile``).
Each annotation carries the finding's fix: the log is often all a CI user reads.
"""

from __future__ import annotations

from imagelint.core.check import CheckRun
from imagelint.core.engine import ImageResult
from imagelint.escape import github_data as escape_data
from imagelint.escape import github_property as escape_property
from imagelint.escape import markdown_cell
from imagelint.report import ReportOptions
from imagelint.report.artifacts import SarifArtifacts
from imagelint.report.fragments import (
    ANNOTATION_WIDTH,
    annotation_text,
    counts_line,
    image_label,
    subjects_line,
)
from imagelint.rules.base import Finding

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def image_file(result: ImageResult, finding: Finding, artifacts: SarifArtifacts | None,
               cache: dict[str, list[str] | None]) -> tuple[str, int] | None:
    """The repository file and line an image finding is shown on: the Dockerfile that built the
    image (``--dockerfile``, the config's ``images`` entry, the source label), at the instruction
    that set what the finding is about, else its last ``FROM``; None without a Dockerfile."""
    if artifacts is None or result.kind != "image":
        return None
    from imagelint.report.artifacts import repository_path
    from imagelint.report.sarif import dockerfile_line, image_dockerfile

    path, how = image_dockerfile(result, artifacts)
    if path is None or not how.startswith("dockerfile"):
        return None
    rel = repository_path(path, artifacts.root)
    if rel is None:
        return None
    return rel, dockerfile_line(path, finding.location, cache)


def render(run: CheckRun, options: ReportOptions) -> str:
    lines: list[str] = []
    cache: dict[str, list[str] | None] = {}
    for r in run.results:
        lines.append(f"::group::{escape_data('imagelint ' + image_label(r))}")
        if r.error:
            lines.append(f"::error title={escape_property('imagelint: image unreadable')}::{escape_data(r.subject + ': ' + r.error)}")
        for f in r.findings:
            props = []
            loc = f.location
            anchored = image_file(r, f, options.sarif_artifacts, cache)
            if loc is not None and loc.source and loc.kind in ("dockerfile", "manifest", "appconfig"):
                props.append(f"file={escape_property(loc.source)}")
                if loc.line:
                    props.append(f"line={int(loc.line)}")
            elif anchored is not None:
                props += [f"file={escape_property(anchored[0])}", f"line={anchored[1]}"]
            props.append(f"title={escape_property(f'{f.rule} {f.name}')}")
            where = f" (at {loc.describe()})" if loc is not None else ""
            pool = f" [pool {f.pool}]" if f.pool else ""
            prefix = f"{r.subject}{pool}: "
            # Headline, the details that fit (ANNOTATION_WIDTH), and always the fix.
            body = annotation_text(f, max(ANNOTATION_WIDTH - len(prefix) - len(where), 120))
            message = f"{prefix}{body}{where}"
            lines.append(f"::{_COMMAND[f.severity]} {','.join(props)}::{escape_data(message)}")
        for n in r.notices:
            lines.append(f"::notice title={escape_property('imagelint note')}::{escape_data(r.subject + ': ' + n)}")
        lines.append("::endgroup::")
    # Run notes: files or objects read as nothing (and why), target warnings... never silent.
    for n in run.notices:
        lines.append(f"::notice title={escape_property('imagelint note')}::{escape_data(n)}")
    counts = f"{subjects_line(run)}: {counts_line(run)}"
    lines.append(f"::notice title=imagelint::{escape_data(counts)}")
    return "\n".join(lines) + "\n"


_cell = markdown_cell


def step_summary(run: CheckRun) -> str:
    """A Markdown section for ``$GITHUB_STEP_SUMMARY``."""
    out = [
        "## imagelint",
        "",
        f"{subjects_line(run)}: {counts_line(run)}",
        "",
        "| Image | Severity | Rule | Pool | Message | Location |",
        "|---|---|---|---|---|---|",
    ]
    for r in run.results:
        if r.error:
            out.append(f"| {_cell(r.subject)} | error | unreadable | | {_cell(r.error)} | |")
        for f in r.findings:
            out.append(
                f"| {_cell(r.subject)} | {f.severity} | {f.rule} {f.name} | {_cell(f.pool or '')} | "
                f"{_cell(f.message)} | {_cell(f.location.describe() if f.location else '')} |"
            )
    return "\n".join(out) + "\n\n"
