"""``imagelint lint``'s core: repository files → facts → the same engine and results as ``check``.

No network: Dockerfiles, Kubernetes manifests, DeepStream configs and shell
scripts are read from disk, turned into ``ImageFacts`` (``imagelint.static``),
and run through ``imagelint.core.engine.run_rules`` with the same config, target
and matrix as ``check``; the result is a ``CheckRun`` so every report format
and the exit-code policy are shared.

Inline suppressions: ``# imagelint ignore=IL302 reason`` before a Dockerfile
instruction (a reason is required, like the image label), and the annotation
``imagelint.io/ignore: "IL602: reason"`` on a Kubernetes object or its pod
template (mapped to the engine's ``io.imagelint.ignore`` label). Both are
refused with ``inline_ignores = false``.

Files that are not a kind ``lint`` reads are skipped with a notice (pre-commit
hands over every file that matches the hook's regex). YAML that is a template
(``{{ ... }}``, Helm) is skipped with a notice rather than failing to parse.
A file that cannot be read, or is malformed (bad YAML), is a ``ConfigError``
(exit 2) naming the file and line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from imagelint.core.check import CheckRun
from imagelint.core.config import Config
from imagelint.core.engine import ImageResult, SuppressedFinding, run_rules
from imagelint.errors import ConfigError, SourceError, UsageError
from imagelint.facts.model import ImageFacts
from imagelint.localfile import read_regular_file
from imagelint.static import detect
from imagelint.target import Target

MAX_FILE_BYTES = 8 * 1024 * 1024
_SNIFF_BYTES = 16 * 1024


@dataclass(frozen=True)
class StaticInput:
    """One file's facts and what the engine needs besides them."""

    path: str
    kind: str
    facts: tuple[ImageFacts, ...]
    line_ignores: dict[int, Any]  # Dockerfile: physical line → {rule: reason}
    notes: tuple[str, ...] = ()


def _read(path: str) -> bytes:
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise ConfigError(f"file is larger than {MAX_FILE_BYTES} bytes; not linted", path)
        return read_regular_file(path, MAX_FILE_BYTES)  # a FIFO or device named Dockerfile: refused, not waited on
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory (pass files; pre-commit does)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc.__class__.__name__}") from None


def _text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", path) from None


def read_static(path: str, matrix: Any = None, kind: str | None = None) -> StaticInput:
    """Detect and parse one file. ``kind`` forces the kind (else detected by name and content)."""
    from imagelint.static.gpuscan import language_for, scan_command, scan_file

    data = _read(path)
    kind = kind or detect.detect_kind(path, data[:_SNIFF_BYTES])
    if kind is None:
        return StaticInput(path, "skipped", (), {}, (f"{path}: not a Dockerfile, Kubernetes manifest, app config or script; skipped",))
    text = _text(data, path)
    if kind == detect.DOCKERFILE:
        from imagelint.static.dockerfile import parse_dockerfile
        from imagelint.static.dockerfile_facts import dockerfile_facts, suppressed_lines

        df = parse_dockerfile(text, path)
        facts = dockerfile_facts(df, matrix, scan_command)
        return StaticInput(path, kind, (facts,), suppressed_lines(df), facts.warnings)
    if kind == detect.MANIFEST:
        from imagelint.static.kubernetes import manifest_facts

        if "{{" in text and "}}" in text:
            return StaticInput(path, "skipped", (), {}, (f"{path}: looks like a template ({{{{ }}}}); render it first "
                                                         "(e.g. helm template) and lint the output; skipped",))
        return StaticInput(path, kind, tuple(manifest_facts(text, path, scan_command)), {})
    gpu = scan_file(text, path, language_for(path, kind, data[:128]))
    facts = ImageFacts(subject=path, kind=kind, gpu=gpu, complete=False)
    return StaticInput(path, kind, (facts,), {})


def _apply_line_ignores(result: ImageResult, static: StaticInput, config: Config) -> ImageResult:
    """Move findings on a Dockerfile instruction with ``# imagelint ignore=`` to suppressed."""
    if not static.line_ignores:
        return result
    if not config.inline_ignores:
        return replace(result, notices=result.notices + (
            f"{static.path}: '# imagelint ignore=' comments not honoured (inline ignores are disabled)",))
    kept, suppressed, notices = [], list(result.suppressed), list(result.notices)
    for f in result.findings:
        loc = f.location
        ignores = static.line_ignores.get(loc.line) if loc is not None and loc.source == static.path and loc.line else None
        reason = ignores.get(f.rule) if ignores else None
        if reason:
            suppressed.append(SuppressedFinding(f, reason, f"comment {static.path}:{loc.line}"))
            continue
        if ignores is not None and f.rule in ignores:
            notices.append(f"{static.path}:{loc.line}: ignore of {f.rule} has no reason and is not honoured "
                           f"(write '# imagelint ignore={f.rule} why')")
        kept.append(f)
    return replace(result, findings=tuple(kept), suppressed=tuple(suppressed), notices=tuple(notices))


def run_lint(
    paths: Sequence[str],
    target: Target,
    matrix: Any,
    config: Config,
    *,
    images: Sequence[str] = (),
    source_options: Any = None,
    inspector: Callable[..., list[ImageFacts]] | None = None,
) -> CheckRun:
    """Lint files (and, with ``images``, check those images against the manifests' scheduling)."""
    results: list[ImageResult] = []
    from imagelint.core.check import matrix_notices

    notices: list[str] = list(getattr(target, "warnings", ()) or ()) + list(matrix_notices(matrix))
    statics = [read_static(p, matrix) for p in paths]
    for static in statics:
        notices.extend(static.notes)
        for facts in static.facts:
            result = replace(run_rules(facts, target, matrix, config), path=static.path)
            results.append(_apply_line_ignores(result, static, config))
    if images:
        from imagelint.static.scheduling import scheduled_target

        manifests = [f for s in statics for f in s.facts if f.workload is not None]
        image_target, note = scheduled_target(manifests, target)
        if note:
            notices.append(note)
        results.extend(_check_images(images, image_target, matrix, config, source_options, inspector))
    return CheckRun(
        results=tuple(results),
        target=target,
        config=config,
        matrix_version=getattr(matrix, "version", None),
        matrix_origin=getattr(matrix, "origin", None),
        notices=tuple(notices),
        command="lint",
        files_skipped=tuple(s.path for s in statics if s.kind == "skipped"),
    )


def _check_images(images: Sequence[str], target: Target, matrix: Any, config: Config, source_options: Any,
                  inspector: Callable[..., list[ImageFacts]] | None) -> list[ImageResult]:
    from imagelint.core.engine import needs_layers, selected_rules
    from imagelint.sources import SourceOptions

    options = source_options or SourceOptions()
    read = needs_layers(selected_rules(config))
    if inspector is None:
        from imagelint.core.inspect import inspect_reference as inspector  # type: ignore[no-redef]
    out = []
    for ref in images:
        try:
            facts_list = inspector(ref, options, read_layers=read)
        except SourceError as exc:
            out.append(ImageResult(subject=ref, error=exc.message, error_exit_code=exc.exit_code))
            continue
        out.extend(run_rules(f, target, matrix, config) for f in facts_list)
    return out
