"""``imagelint lint``'s core: repository files → facts → the same engine and results as ``check``.

No network: Dockerfiles, Kubernetes manifests, DeepStream configs and shell
scripts are read from disk, turned into ``ImageFacts`` (``imagelint.static``),
and run through ``imagelint.core.engine.run_rules`` with the same config, target
and matrix as ``check``; the result is a ``CheckRun`` so every report format
and the exit-code policy are shared.

Inline suppressions: ``# imagelint ignore=IL302 reason`` in every file kind that has comments
(``imagelint.core.inline_ignores``: the line before, or the end of the line; a reason is
required, like the image label), and the annotation
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
import re
from collections.abc import Callable, Container, Generator, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from imagelint.core.check import CheckRun, target_findings_once, target_only_rules
from imagelint.core.config import Config
from imagelint.core.engine import ImageResult, run_rules
from imagelint.core.inline_ignores import (
    apply_ignores,
    dockerfile_ignores,
    ignores_in_text,
)
from imagelint.deadline import check as deadline_check
from imagelint.deploytarget import Target
from imagelint.errors import ConfigError, SourceError, UsageError
from imagelint.facts.model import ImageFacts
from imagelint.lazyre import lazy_pattern
from imagelint.localfile import read_regular_file
from imagelint.static import detect

if TYPE_CHECKING:  # imported where a run needs it: the pre-commit hook's start-up
    from imagelint.matrix.model import Matrix
    from imagelint.static.kubernetes import PodShape
    from imagelint.static.scheduling import ReachedPools

MAX_FILE_BYTES = 8 * 1024 * 1024
_SNIFF_BYTES = 16 * 1024


@dataclass(frozen=True)
class StaticInput:
    """One file's facts and what the engine needs besides them."""

    path: str
    kind: str
    facts: tuple[ImageFacts, ...]
    line_ignores: tuple[Any, ...]  # inline_ignores.InlineIgnore: '# imagelint ignore=' comments
    notes: tuple[str, ...] = ()
    dra_objects: tuple[Any, ...] = ()  # ResourceClaims, templates, DeviceClasses, ComputeDomains
    unrelated: bool = False  # skipped because it is no kind lint reads (not a template, not unreadable)


def _read(path: str) -> bytes:
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            raise ConfigError(f"file is larger than {MAX_FILE_BYTES} bytes; not linted", path)
        return read_regular_file(path, MAX_FILE_BYTES)  # a FIFO or device named Dockerfile: refused, not waited on
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc.__class__.__name__}") from None


def _text(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError("not UTF-8 text", path) from None


# Template syntax outside quoted scalars: a ``{{``/``{%`` that YAML sees as structure. A YAML file
# whose only braces sit inside quoted values (``value: "{{HUGGING_FACE_HUB_TOKEN}}"``, Argo's
# ``{{inputs.parameters.x}}``) parses and is linted; a template is what does not parse.
_QUOTED = lazy_pattern(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*'")
_TEMPLATE_MARK = lazy_pattern(r"\{\{|\{%")


def template_reason(text: str) -> str | None:
    """Why ``text`` (which did not parse as YAML) is an unrendered template, and how to render it;
    None when no template syntax stands outside quoted scalars."""
    if "{{" not in text and "{%" not in text:
        return None
    if not any(_TEMPLATE_MARK.search(_QUOTED.sub("", line.split(" #", 1)[0])) for line in text.splitlines()):
        return None
    if re.search(r"\.(?:Values|Release|Chart|Capabilities)\b", text):
        return "an unrendered Helm template; render it (helm template RELEASE CHART_DIR | imagelint lint -)"
    return ("an unrendered template ({{ }}); render it with the tool that owns it "
            "(helm template ... | imagelint lint -, or the operator's own rendering) and lint the output")


_HELM_VALUE = lazy_pattern(r"\{\{[^}]*\.(?:Values|Release|Chart)\b")


def _kustomization(text: str) -> bool:
    return bool(re.search(r"(?m)^kind:\s*Kustomization\s*$", text)) or bool(
        re.search(r"(?m)^(?:resources|bases|patches|patchesStrategicMerge):\s*$", text)) and "apiVersion" not in text


def _skip(path: str, why: str, unrelated: bool = False) -> StaticInput:
    return StaticInput(path, "skipped", (), (), (f"{path}: {why}; skipped",), unrelated=unrelated)


def read_static(path: str, matrix: Matrix | None = None, kind: str | None = None) -> StaticInput:
    """Detect and parse one file (``-`` is standard input, e.g. ``helm template ... | imagelint lint -``),
    every fact at once (``StaticStream`` gives them one at a time). ``kind`` forces the kind (else
    detected by name and content)."""
    stream = StaticStream(path, matrix, kind)
    facts = tuple(f for f in stream if isinstance(f, ImageFacts))  # no PodShape without shapes
    static = stream.finished
    return static if static.kind == "skipped" else replace(static, facts=facts)


class StaticStream:
    """One file read for ``lint``, its facts one at a time.

    Iterate once: a manifest is parsed document by document as the iteration goes, and nothing
    read is kept here. Then ``finished`` is the file's ``StaticInput`` without its facts: the kind,
    the ignore comments, the notes and DRA objects, or why the file was skipped. A file can turn
    out skipped after some of its facts were given (a template whose YAML fails past its first
    documents): the caller drops what it made of them when ``finished.kind`` is "skipped".
    ``shapes``: a manifest's pods come with their ``PodShape`` (``ManifestStream``).
    """

    def __init__(self, path: str, matrix: Matrix | None = None, kind: str | None = None,
                 shapes: Container[str] | None = None) -> None:
        self.path, self._matrix, self._kind, self._shapes = path, matrix, kind, shapes
        self._finished: StaticInput | None = None

    def __iter__(self) -> Iterator[ImageFacts | PodShape]:
        self._finished = yield from _static_facts(self.path, self._matrix, self._kind, self._shapes)

    @property
    def finished(self) -> StaticInput:
        if self._finished is None:
            raise RuntimeError(f"{self.path}: read before its facts were iterated to the end")
        return self._finished


def _static_facts(path: str, matrix: Matrix | None, kind: str | None,
                  shapes: Container[str] | None) -> Generator[ImageFacts | PodShape, None, StaticInput]:
    """``StaticStream``'s reading: yields the facts, returns the ``StaticInput`` without them."""
    from imagelint.static.gpuscan import language_for, scan_command, scan_file

    data = _read_stdin() if path == "-" else _read(path)
    kind = kind or (_stdin_kind(data[:_SNIFF_BYTES]) if path == "-" else detect.detect_kind(path, data[:_SNIFF_BYTES]))
    if kind is None:
        if detect.kind_by_name(path) == detect.MANIFEST and not path.lower().endswith(".json"):
            why = _must_parse(data, path)
            if why:
                return _skip(path, f"looks like {why}", unrelated=True)
        return _skip(path, detect.unread_reason(path, data[:_SNIFF_BYTES]), unrelated=True)
    text, head = _text(data, path), data[:128]
    del data  # the text is read from here on: an 8 MiB manifest is not held twice while it is judged
    # JSON has no comments: its findings are silenced by [[ignores]] in the config only.
    comments, malformed = ((), ()) if path.lower().endswith(".json") or kind == detect.DOCKERFILE \
        else ignores_in_text(text, path)
    if kind == detect.DOCKERFILE:
        from imagelint.static.dockerfile import parse_dockerfile
        from imagelint.static.dockerfile_facts import dockerfile_facts

        try:
            df = parse_dockerfile(text, path)
        except ConfigError:  # what docker build refuses: exit 2, unless it is a template yet to render
            why = template_reason(text)
            if why:
                return _skip(path, f"looks like {why}")
            raise
        facts = dockerfile_facts(df, matrix, scan_command)
        _, malformed = ignores_in_text(text, path, dockerfile=True)
        yield facts
        return StaticInput(path, kind, (), dockerfile_ignores(df.instructions), facts.warnings + malformed)
    if kind == detect.MANIFEST:
        from imagelint.static.kubernetes import ManifestStream

        if _kustomization(text):
            return _skip(path, "a kustomization; lint its output (kustomize build DIR | imagelint lint -)")
        manifest = ManifestStream(_json_as_yaml(text, path), path, scan_command, shapes)
        try:
            yield from manifest.items()
        except ConfigError:
            why = template_reason(text)
            if why:
                return _skip(path, f"looks like {why}")
            raise
        if not manifest.objects and not manifest.dra_objects and not manifest.notes:  # no object: no facts either
            return _skip(path, "YAML with no Kubernetes objects", unrelated=True)
        notes = manifest.notes
        if _HELM_VALUE.search(text):
            notes += (f"{path}: values written as Helm placeholders ({{{{ .Values... }}}}) were read as text; "
                      "lint the rendered chart for their values (helm template ... | imagelint lint -)",)
        return StaticInput(path, kind, (), comments, notes + malformed, tuple(manifest.dra_objects))
    if kind == detect.COMPOSE:
        from imagelint.static.compose import read_compose

        yield from read_compose(text, path, scan_command)
        return StaticInput(path, kind, (), comments, malformed)
    gpu = scan_file(text, path, language_for(path, kind, head))
    yield ImageFacts(subject=path, kind=kind, gpu=gpu, complete=False)
    return StaticInput(path, kind, (), comments, malformed)


def _stdin_kind(head: bytes) -> str:
    """Standard input is YAML: rendered Kubernetes objects (``helm template``, ``kustomize build``),
    or a rendered Compose file (``docker compose config | imagelint lint -``)."""
    from imagelint.static.compose import looks_like_compose
    from imagelint.static.kubernetes import looks_like_kubernetes

    text = head.decode("utf-8", "replace")
    if not looks_like_kubernetes(text) and looks_like_compose("-", text):
        return detect.COMPOSE
    return detect.MANIFEST


def _must_parse(data: bytes, path: str) -> str | None:
    """A YAML file that is no kind lint reads is skipped only when it parses: YAML that does not is
    a ``file:line`` error (exit 2), not a silent pass, unless it is a template (then: why)."""
    from imagelint.static.yamlsafe import load_documents

    text = _text(data, path)
    try:
        load_documents(text, path)
    except ConfigError:
        why = template_reason(text)
        if why is None:
            raise
        return why
    return None


def _json_as_yaml(text: str, path: str) -> str:
    """JSON is YAML, except that YAML refuses tabs where JSON allows them as white space. Valid JSON
    holds no raw tab inside a string, so every tab is white space and becomes a space."""
    if "\t" not in text or not text.lstrip().startswith(("{", "[")):
        return text
    from imagelint.untrusted import loads_json

    try:
        loads_json(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        raise ConfigError(f"invalid JSON: {getattr(exc, 'msg', exc)}", path, line) from None
    return text.replace("\t", " ")


def _read_stdin() -> bytes:
    import sys

    data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"standard input is larger than {MAX_FILE_BYTES} bytes; not linted", "-")
    return data


@dataclass
class _LintedFile:
    """One file's part of a run while the run goes on: its results in the file's order, where a pod
    whose claims wait for every file's DRA objects holds its facts until they are all read."""

    static: StaticInput  # without facts
    results: list[ImageResult | ImageFacts]
    reached: ReachedPools | None  # the pools its GPU workloads reach (``--image``)
    inherits_all: bool = False    # a Dockerfile whose NVIDIA_VISIBLE_DEVICES=all is its base image's
    gpu_related: bool = True      # a script: something GPU-related was found in it


def _judged(file: _LintedFile) -> list[ImageResult]:
    """The file's results once every waiting pod has been judged (``_Judge.waiting``)."""
    judged = [r for r in file.results if isinstance(r, ImageResult)]
    if len(judged) != len(file.results):
        raise RuntimeError(f"{file.static.path}: a pod's facts were left unjudged")  # imagelint's bug, not the input's
    return judged


# Shapes of pods a file's judge keeps (``_Judge.file``): a stream of generated pods holds a few.
MAX_SHAPES = 1024


def _about_the_shape(result: ImageResult, target_only: frozenset[str]) -> bool:
    """Nothing in the result depends on more than the pod's shape: no finding but the target's own
    (a finding of a rule that needs only the target, without a location: taken off every result
    by ``target_findings_once``), nothing suppressed (an ignore may name the subject), no notice."""
    return result.error is None and not (result.suppressed or result.notices or result.unread_files) and all(
        f.rule in target_only and f.location is None for f in result.findings)


# ImageResult's fields after ``subject``, in the order its __init__ takes them (every field is an
# init field taken by position: checked where the getter is built).
_FIELDS_AFTER_SUBJECT = tuple(f.name for f in fields(ImageResult))[1:]
assert fields(ImageResult)[0].name == "subject" and all(f.init and not f.kw_only for f in fields(ImageResult))
_after_subject = attrgetter(*_FIELDS_AFTER_SUBJECT)


def _for_subject(result: ImageResult, subject: str) -> ImageResult:
    """``replace(result, subject=subject)`` at half its cost: a pod that repeats a shape gets the
    shape's results this way, one per pod (60,000 pods: 0.2 s less)."""
    return ImageResult(subject, *_after_subject(result))


class _Judge:
    """One run's judging of facts: the image's CUDA from the base-image table, then the rules on the
    pools a GPU pod can land on (taints, selectors, claims)."""

    def __init__(self, target: Target, matrix: Matrix | None, config: Config, scheduling: bool) -> None:
        self.target, self.matrix, self.config, self.scheduling = target, matrix, config, scheduling
        self.target_only = target_only_rules()

    def file(self, path: str) -> _LintedFile:
        """Read ``path`` and judge each fact as it is read; only the results stay."""
        from imagelint.static.scheduling import ReachedPools

        reached = ReachedPools(self.target) if self.scheduling else None
        # PodShape.key -> the results of a pod of that shape, which said nothing about the pod itself
        # (``_about_the_shape``): a pod that repeats it gets them with its own subjects. Not with
        # --image (``reached`` needs every pod's facts). Per file: a result names its file.
        shapes: dict[str, tuple[ImageResult, ...]] | None = {} if reached is None else None
        stream = StaticStream(path, self.matrix, shapes=shapes)
        results: list[ImageResult | ImageFacts] = []
        first: ImageFacts | None = None
        pending: tuple[PodShape, list[ImageResult | ImageFacts]] | None = None  # a shape being judged
        for item in stream:
            if not isinstance(item, ImageFacts):  # a PodShape
                if item.repeat:
                    assert shapes is not None  # only they make a repeat
                    said = shapes[item.key]
                    if len(said) != len(item.subjects):
                        raise RuntimeError(f"{path}: a pod repeats a shape with another number of containers")
                    results.extend(_for_subject(r, subject) for r, subject in zip(said, item.subjects))
                elif item.subjects:
                    pending = (item, [])
                continue
            facts = item
            if first is None:
                first = facts
            waits = facts.workload is not None and facts.workload.pod_claims
            result = facts if waits else self.result(facts, path, reached)
            results.append(result)
            if pending is not None:
                shape, judged = pending
                judged.append(result)
                if len(judged) == len(shape.subjects):
                    pending = None
                    same = [r for r in judged if isinstance(r, ImageResult) and _about_the_shape(r, self.target_only)]
                    if shapes is not None and len(same) == len(judged) and len(shapes) < MAX_SHAPES:
                        shapes[shape.key] = tuple(same)
        static = stream.finished
        if static.kind == "skipped":  # a template found out past its first documents: what they gave goes
            return _LintedFile(static, [], None)
        return _LintedFile(
            static, results, reached,
            inherits_all=first is not None and static.kind == detect.DOCKERFILE and _inherits_all(first),
            gpu_related=static.kind != detect.SCRIPT or first is not None and bool(
                first.gpu.index_settings or first.gpu.needs_capabilities),
        )

    def result(self, facts: ImageFacts, path: str, reached: ReachedPools | None) -> ImageResult:
        from imagelint.static.scheduling import pod_target
        from imagelint.static.workload_images import with_image_cuda

        facts = with_image_cuda(facts, self.matrix)
        if reached is not None:
            reached.add(facts)
        return run_rules(facts, pod_target(facts, self.target), self.matrix, self.config, path=path)

    def waiting(self, files: Sequence[_LintedFile]) -> None:
        """Judge the pods that waited for the DRA objects, their claims resolved against every file's."""
        from imagelint.static.dra import resolve_claims

        waiting = [r for f in files for r in f.results if isinstance(r, ImageFacts)]
        if not waiting:
            return
        resolved = iter(resolve_claims(waiting, [o for f in files for o in f.static.dra_objects], self.matrix))
        for f in files:
            f.results = [self.result(next(resolved), f.static.path, f.reached) if isinstance(r, ImageFacts) else r
                         for r in f.results]


def run_lint(
    paths: Sequence[str],
    target: Target,
    matrix: Matrix | None,
    config: Config,
    *,
    images: Sequence[str] = (),
    source_options: Any = None,
    inspector: Callable[..., list[ImageFacts]] | None = None,
    quiet_unrelated: bool = False,
) -> CheckRun:
    """Lint files (and, with ``images``, check those images against the manifests' scheduling).

    A directory is walked (``imagelint.static.discover``). ``quiet_unrelated``: files that are no
    kind ``lint`` reads are dropped without a note (pre-commit's broad patterns); files found by a
    directory walk always are. Explicitly named files always get their note.

    Each fact is judged as it is read and only its result is kept (a stream of 60,000 pods holds
    one pod's facts at a time), except a pod with ResourceClaims: its claims are resolved against
    the DRA objects of every file, so it is judged once all are read."""
    from imagelint.core.check import matrix_notices
    from imagelint.errors import EXIT_USAGE

    unreadable: list[ImageResult] = []  # inputs that could not be linted: said first
    notices: list[str] = list(getattr(target, "warnings", ()) or ()) + list(matrix_notices(matrix))
    linted: list[_LintedFile] = []
    walked: set[str] = set()
    judge = _Judge(target, matrix, config, scheduling=bool(images))
    for p, explicit in _expand(paths, notices):
        deadline_check(f"reading {p}")  # --deadline bounds lint too, file by file
        if not explicit:
            walked.add(p)
        if explicit and p != "-" and os.path.isdir(p):  # an image layout named on the command line
            unreadable.append(ImageResult(
                subject=p, kind="file", complete=False, path=p, error_exit_code=EXIT_USAGE,
                error=f"{p}: an OCI image layout (a built image), not repository files; check it with: "
                      f"imagelint check oci-dir:{p}"))
            continue
        try:
            file = judge.file(p)
        except ConfigError as exc:  # a malformed file: reported, exit 2, and the other files still linted
            unreadable.append(ImageResult(subject=p, kind="file", error=str(exc), error_exit_code=EXIT_USAGE,
                                          complete=False, path=p))
            continue
        if file.static.kind == "skipped" and file.static.unrelated and (quiet_unrelated or not explicit):
            continue
        if quiet_unrelated and not file.gpu_related:
            continue  # a script with nothing GPU-related: no "no findings" line on every commit
        linted.append(file)
    judge.waiting(linted)
    inherited = [f.static.path for f in linted if f.inherits_all]
    if inherited:
        notices.append(
            f"{len(inherited)} Dockerfile(s) inherit NVIDIA_VISIBLE_DEVICES=all from official CUDA base images "
            f"({', '.join(inherited[:3])}{'...' if len(inherited) > 3 else ''}): a container of such an image that "
            "requests no GPU sees every GPU where the device plugin uses the envvar strategy and the toolkit "
            "accepts the variable from unprivileged containers (IL303; the convention is stated once)")
    results = unreadable
    for file in linted:
        static = file.static
        deadline_check(f"judging {static.path}")
        notices.extend(static.notes)
        file_results, ignore_notes = apply_ignores(_judged(file), static.path, static.line_ignores, config)
        if file_results and ignore_notes:  # said under the file they are about
            file_results[0] = replace(file_results[0], notices=file_results[0].notices + tuple(ignore_notes))
        else:
            notices.extend(ignore_notes)
        results.extend(file_results)
    results = target_findings_once(results, target)
    results, clean = _drop_clean_walked(results, walked)
    if images:
        from imagelint.static.scheduling import ReachedPools

        reached = ReachedPools(target)
        for file in linted:
            if file.reached is not None:
                reached.update(file.reached)
        image_target, note = reached.scheduled_target()
        if note:
            notices.append(note)
        results.extend(_check_images(images, image_target, matrix, config, source_options, inspector))
        results = target_findings_once(results, target)  # the images' target findings join the files'
    return CheckRun(
        results=tuple(results),
        target=target,
        config=config,
        matrix_version=getattr(matrix, "version", None),
        matrix_origin=getattr(matrix, "origin", None),
        notices=tuple(notices),
        command="lint",
        files_skipped=tuple(f.static.path for f in linted if f.static.kind == "skipped"),
        files_clean=clean,
    )


def _drop_clean_walked(results: list[ImageResult], walked: set[str]) -> tuple[list[ImageResult], tuple[str, ...]]:
    """A directory walk lists only the files that concern GPUs: files it found (not named) whose
    results hold no finding, suppression, note or error are counted in the summary, not listed."""
    if not walked:
        return results, ()
    noisy = {r.path for r in results if r.path not in walked or r.findings or r.suppressed or r.error or r.notices}
    clean = tuple(dict.fromkeys(r.path for r in results if r.path not in noisy and r.path is not None))
    return [r for r in results if r.path in noisy or r.path is None], clean


def _inherits_all(facts: ImageFacts) -> bool:
    from imagelint.rules.visible_devices_all_leak import inherited_from_base

    return inherited_from_base(facts)


def _expand(paths: Sequence[str], notices: list[str]) -> list[tuple[str, bool]]:
    """(path, named explicitly) for every file to read: directories walked."""
    from imagelint.static.discover import discover, is_image_layout

    out: list[tuple[str, bool]] = []
    for p in paths:
        if p != "-" and os.path.isdir(p) and is_image_layout(p):
            out.append((p, True))
        elif p != "-" and os.path.isdir(p):
            found = discover(p)
            for layout in found.image_layouts:
                notices.append(f"{layout}: an OCI image layout (a built image), not linted; check it with: "
                               f"imagelint check oci-dir:{layout}")
            if found.truncated:
                notices.append(f"{p}: more than {len(found.files)} candidate files; only the first were linted")
            out.extend((f, False) for f in found.files)
        else:
            out.append((p, True))
    return out


def enrich(statics: Sequence[StaticInput], matrix: Matrix | None) -> list[StaticInput]:
    """What one file cannot know alone: pods' ResourceClaims resolved against the DRA objects of
    every file linted, and the CUDA version of GPU containers' ``image:`` from the base-image table."""
    from imagelint.static.dra import resolve_claims
    from imagelint.static.workload_images import with_image_cuda

    objects = [o for s in statics for o in s.dra_objects]
    out = []
    for s in statics:
        if s.kind not in (detect.MANIFEST, detect.COMPOSE) or not s.facts:
            out.append(s)
            continue
        facts = resolve_claims(s.facts, objects, matrix)
        out.append(replace(s, facts=tuple(with_image_cuda(f, matrix) for f in facts)))
    return out


def _check_images(images: Sequence[str], target: Target, matrix: Matrix | None, config: Config, source_options: Any,
                  inspector: Callable[..., list[ImageFacts]] | None) -> list[ImageResult]:
    from imagelint.core.engine import needs_layers, selected_rules
    from imagelint.sources import SourceOptions

    options = source_options or SourceOptions()
    read = needs_layers(selected_rules(config))
    if inspector is None:
        from imagelint.core.inspect import inspect_reference

        inspector = inspect_reference
    out = []
    for ref in images:
        try:
            facts_list = inspector(ref, options, read_layers=read)
        except SourceError as exc:
            out.append(ImageResult(subject=ref, error=exc.message, error_exit_code=exc.exit_code))
            continue
        out.extend(run_rules(f, target, matrix, config) for f in facts_list)
    return out
