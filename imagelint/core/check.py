"""``imagelint check``'s core: inspect → (matrix, target) → engine → results.

The CLI builds the inputs (SourceOptions, Target, Matrix, Config) and renders
the ``CheckRun``; nothing here prints or imports typer.

Platform choice: without ``--platform``/``--all-platforms``, when the target's
pools run another CPU architecture than the default platform, every platform of
an index is read and the ones the pools run are checked (a pool pulls the image
of its own architecture); if none matches, the default one is, and IL402 says so.

Exit code policy (``CheckRun.exit_code``): **3 when any image could not be
read**, even if other images have findings — a partial answer must not pass a
pipeline, and "could not look" is a different failure from "found problems".
Otherwise 1 when a finding is at or above ``fail_on``, else 0. Unreadable
images still get a result (with ``error``) so SARIF/JSON are always written.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from imagelint import __version__
from imagelint.core.config import Config
from imagelint.core.engine import (
    ImageResult,
    exit_code_for,
    interned,
    needs_layers,
    run_rules,
    selected_rules,
    summary_counts,
)
from imagelint.deploytarget import Target
from imagelint.errors import SourceError
from imagelint.facts.model import ImageFacts
from imagelint.image import normalize_arch
from imagelint.layers.captures import CAPTURE_STANDARD, CAPTURE_WITHOUT_GPU_CODE

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

if TYPE_CHECKING:  # lint shares CheckRun and never reaches an image: it does not import the sources
    from imagelint.sources import SourceOptions

Inspector = Callable[[str, "SourceOptions", bool], list[ImageFacts]]


@dataclass(frozen=True)
class CheckRun:
    """Everything one ``check`` produced, in reference order (one result per image platform)."""

    results: tuple[ImageResult, ...]
    target: Target
    config: Config
    matrix_version: str | None = None
    matrix_origin: str | None = None
    tool_version: str = __version__
    notices: tuple[str, ...] = ()
    command: str = "check"                 # "check" or "lint": what the summary line counts
    files_skipped: tuple[str, ...] = ()    # lint: inputs that are no kind lint reads
    files_clean: tuple[str, ...] = ()      # lint: files a directory walk read that have no findings (not listed)
    started: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.results, self.config.fail_on)

    @property
    def summary(self) -> dict[str, int]:
        return summary_counts(self.results)

    @property
    def rule_ids(self) -> tuple[str, ...]:
        return tuple(r.id for r in selected_rules(self.config))

    @property
    def execution_successful(self) -> bool:
        return all(r.ok for r in self.results)


def _default_inspector(reference: str, options: SourceOptions, read_layers: bool,
                       capture: str = CAPTURE_STANDARD) -> list[ImageFacts]:
    from imagelint.core.inspect import inspect_reference

    return inspect_reference(reference, options, read_layers=read_layers, capture=capture)


def capture_for(config: Config, target: Target, matrix: Matrix | None) -> str:
    """The capture reading the layers makes (a ``layers.captures`` name), from what the
    selected rules declare they need: the fatbin scan of every library (``gpu-code``, the
    costliest capture) only when a selected rule needs it and a pool GPU's compute capability is
    known to judge the code against."""
    from imagelint.rules.base import NEEDS_GPU_CODE
    from imagelint.rules.pools import pool_gpus

    if any(NEEDS_GPU_CODE in r.needs for r in selected_rules(config)) and any(
            g.arch for pool in target.pools for g in pool_gpus(pool, matrix)):
        return CAPTURE_STANDARD
    return CAPTURE_WITHOUT_GPU_CODE


def _platforms_for_pools(facts_list: list[ImageFacts], archs: set[str], options: SourceOptions) -> list[ImageFacts]:
    """The platforms the pools will pull; else the default one (so IL402 can report the mismatch)."""
    matching = [f for f in facts_list if f.platform and normalize_arch(f.platform.architecture) in archs]
    if matching:
        return matching
    default = [f for f in facts_list if f.platform and options.platform.matches(f.platform)]
    return default or facts_list[:1]


def run_check(
    references: Sequence[str],
    source_options: SourceOptions,
    target: Target,
    matrix: Matrix | None,
    config: Config,
    read_layers: bool = True,
    *,
    inspector: Inspector | None = None,
    today: _dt.date | None = None,
) -> CheckRun:
    """Check every reference (every platform with ``all_platforms``) against the target.

    Layers are read only when a selected rule needs file facts (the config-only
    fast path). An image that cannot be read (SourceError) becomes an error
    result; a bad reference or option (UsageError) propagates (exit 2).
    """
    read = read_layers and needs_layers(selected_rules(config))
    if inspector is not None:
        inspect = inspector
    else:
        capture = capture_for(config, target, matrix)

        def inspect(ref: str, opts: SourceOptions, read_layers: bool) -> list[ImageFacts]:
            return _default_inspector(ref, opts, read_layers, capture)
    pool_archs = {normalize_arch(p.arch) for p in target.pools if p.arch}
    widen = (
        bool(pool_archs)
        and not source_options.all_platforms
        and not source_options.platform_explicit
        and pool_archs != {source_options.platform.architecture}
    )
    options = replace(source_options, all_platforms=True) if widen else source_options
    results: list[ImageResult] = []
    for ref in references:
        try:
            facts_list = inspect(ref, options, read)
        except SourceError as exc:
            results.append(ImageResult(subject=ref, error=exc.message, error_exit_code=exc.exit_code))
            continue
        if widen:
            facts_list = _platforms_for_pools(facts_list, pool_archs, source_options)
        for facts in facts_list:
            results.append(run_rules(facts, target, matrix, config, today=today))
    return CheckRun(
        results=tuple(target_findings_once(results, target)),
        target=target,
        config=config,
        matrix_version=getattr(matrix, "version", None),
        matrix_origin=getattr(matrix, "origin", None),
        notices=(tuple(target.warnings) if hasattr(target, "warnings") else ()) + matrix_notices(matrix, today),
    )


TARGET_SUBJECT = "target"  # the subject of the target's own findings when no file states the target


def target_findings_once(results: Sequence[ImageResult], target: Target) -> list[ImageResult]:
    """A finding about the target alone (a rule that needs only the target, with no location in an
    image or file: a pool's driver branch past end of life) is the same for every image and file:
    it is taken off each of them and reported once, on a result of its own about the target —
    the target file when one states the pools (``kind`` "target", ``path`` the file), else
    ``target``."""
    target_only = target_only_rules()
    found: dict[tuple[str, str | None, str], Any] = {}
    out = []
    for r in results:
        if r.kind == "target":  # a target result from an earlier pass (lint, then its --image checks): one
            for f in r.findings:
                found.setdefault((f.rule, f.pool, f.message), f)
            continue
        kept = []
        for f in r.findings:
            if f.rule in target_only and f.location is None:
                found.setdefault((f.rule, f.pool, f.message), f)
            else:
                kept.append(f)
        out.append(replace(r, findings=tuple(kept)) if len(kept) != len(r.findings) else r)
    if not found:
        return out
    path = target_file(target)
    from imagelint.rules.base import SEVERITY_RANK

    # The target-only rules ran for the target, not for each image (JUnit lists a test case per rule run).
    ran = tuple(sorted({rid for r in results for rid in r.rules_run if rid in target_only}))
    out = [replace(r, rules_run=interned(tuple(rid for rid in r.rules_run if rid not in target_only))) if r.rules_run
           else r for r in out]
    findings = sorted(found.values(), key=lambda f: (-SEVERITY_RANK[f.severity], f.rule, f.pool or ""))
    out.append(ImageResult(subject=path or TARGET_SUBJECT, kind="target", findings=tuple(findings), path=path,
                           rules_run=ran))
    return out


def target_only_rules() -> frozenset[str]:
    """The rules that need only the target: what they say without a location is the same for
    every image and file (``target_findings_once``)."""
    from imagelint.rules import RULES

    return frozenset(rid for rid, r in RULES.items() if tuple(r.needs) == ("target",))


def target_file(target: Target) -> str | None:
    """The file that states the target's pools (``--target-file``, ``.imagelint.toml``), if any."""
    for part in str(getattr(target, "source", "") or "").split("+"):
        if part.startswith("file:") and len(part) > len("file:"):
            return part[len("file:"):].split(" (", 1)[0]  # "file:PATH (snapshot of ...)"
    return None


def matrix_notices(matrix: Matrix | None, today: _dt.date | None = None) -> tuple[str, ...]:
    """Run-level notices about the matrix itself (its age), shown in every report format."""
    notice = matrix.age_notice(today) if matrix is not None else None
    return (notice,) if notice else ()
