"""A parsed Dockerfile's final stage → ``ImageFacts`` (kind ``dockerfile``), with line numbers.

What the image built from the file will carry at run time: the ENV inherited
through ``FROM stage`` chains, labels, ENTRYPOINT/CMD, and what the base image
implies. The base image is resolved through the matrix, never through code:
``nvidia/cuda:X.Y.Z-…`` → a CUDA release (evidence source ``base-image``) and,
when the matrix has the official images' env, their ``NVIDIA_REQUIRE_CUDA`` and
friends; ``nvcr.io/nvidia/<framework>:YY.MM-…`` → the NGC table.

ARGs are evaluated as a build without ``--build-arg`` would: declared defaults,
else empty. Build-platform ARGs default to linux/amd64. All expansion for one file draws on
one ``ExpansionBudget``; a file past it is refused at the line that went past (exit 2).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from imagelint.errors import ConfigError, UsageError
from imagelint.facts.model import (
    ArchListSetting,
    BaseImageFacts,
    CudaFacts,
    CudaVersionEvidence,
    DriverLibrary,
    EnvSetting,
    GpuFacts,
    GpuIndexSetting,
    ImageFacts,
    LoaderFacts,
    LoaderPathEntry,
    Provenance,
)
from imagelint.facts.static_model import BuildFacts, RunStep
from imagelint.image import Platform
from imagelint.lazyre import lazy_pattern
from imagelint.static.dockerfile import Dockerfile, Instruction
from imagelint.static.words import (
    ExpansionBudget,
    ExpansionLimit,
    parse_arg_declarations,
    parse_key_values,
    process_word,
    process_words,
)

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

# Predefined platform ARGs BuildKit provides in the global scope (a plain build on amd64).
_PLATFORM_ARGS = MappingProxyType({
    "BUILDPLATFORM": "linux/amd64", "BUILDOS": "linux", "BUILDARCH": "amd64", "BUILDVARIANT": "",
    "TARGETPLATFORM": "linux/amd64", "TARGETOS": "linux", "TARGETARCH": "amd64", "TARGETVARIANT": "",
})
# The dynamic loader's default directories (glibc, amd64 and arm64 multiarch).
_DEFAULT_LIB_DIRS = (
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
    "/lib64", "/usr/lib64", "/lib", "/usr/lib",
)
# nvidia/cuda tags: VERSION-FLAVOR-OS, e.g. 12.4.1-cudnn-devel-ubuntu22.04 -> "cudnn-devel".
_CUDA_FLAVOR_RE = lazy_pattern(r"^\d+\.\d+(?:\.\d+)?-(base|runtime|devel|cudnn\d*-runtime|cudnn\d*-devel)(?:-|$)")


@dataclass(frozen=True)
class Stage:
    """One build stage of a Dockerfile: its FROM (ARGs expanded) and the instructions up to the next FROM."""

    index: int
    name: str | None
    base: str                  # the FROM image after ARG expansion
    from_line: Instruction
    instructions: tuple[Instruction, ...]
    parent: int | None = None  # index of the stage this one builds on (FROM <stage>)


@dataclass
class _StageState:
    """The image as built so far, while the final stage's ``FROM <stage>`` chain is applied in order."""

    env: dict[str, tuple[str, Provenance]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    entrypoint: tuple[tuple[str, ...], Provenance] | None = None
    cmd: tuple[tuple[str, ...], Provenance] | None = None
    shell: tuple[str, ...] = ("/bin/sh", "-c")
    workdir: str = "/"
    copies: list[tuple[str, str, Provenance]] = field(default_factory=list)  # (source, destination, where)
    installs: list[tuple[Any, Provenance]] = field(default_factory=list)  # (RunInstall, where) from RUN lines


@contextmanager
def _expanding(df: Dockerfile, ins: Instruction) -> Iterator[None]:
    """An expansion past its bound, as the one-line error at the instruction that went past."""
    try:
        yield
    except ExpansionLimit as exc:
        raise ConfigError(str(exc), df.path, ins.line) from None


def split_stages(df: Dockerfile, budget: ExpansionBudget | None = None) -> tuple[dict[str, str], tuple[Stage, ...]]:
    """Global ARG values (for FROM lines) and the stages with their resolved bases."""
    budget = budget if budget is not None else ExpansionBudget()
    global_args: dict[str, str] = dict(_PLATFORM_ARGS)
    stages: list[Stage] = []
    current: list[Instruction] | None = None
    pending: tuple[str | None, str, Instruction, int | None] | None = None
    by_name: dict[str, int] = {}

    def close() -> None:
        if pending is not None:
            name, base, line, parent = pending
            stages.append(Stage(len(stages), name, base, line, tuple(current or ()), parent))

    for ins in df.instructions:
        with _expanding(df, ins):
            if ins.keyword == "FROM":
                close()
                words = process_words(ins.args, global_args, df.escape, budget)
                base = words[0] if words else ""
                name = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
                parent = by_name.get(base.lower())
                pending = (name, base, ins, parent)
                if name:
                    by_name[name] = len(stages)
                current = []
            elif current is None:
                if ins.keyword == "ARG":  # global scope: usable in FROM lines
                    for key, value in parse_arg_declarations(ins.args, global_args, df.escape, budget):
                        global_args[key] = value if value is not None else global_args.get(key, "")
            else:
                current.append(ins)
    close()
    return global_args, tuple(stages)


def _dprov(df: Dockerfile, ins: Instruction, key: str | None = None) -> Provenance:
    return Provenance(kind="dockerfile", source=df.path, line=ins.line, key=key)


def _command(ins: Instruction, df: Dockerfile, shell: tuple[str, ...]) -> tuple[str, ...]:
    exec_form = ins.exec_form
    if exec_form is not None:
        return exec_form
    return (*shell, ins.args.strip())


def _run_stage(stage: Stage, df: Dockerfile, global_args: Mapping[str, str], state: _StageState,
               budget: ExpansionBudget) -> None:
    """Apply one stage's instructions to ``state`` (already holding what it inherits)."""
    args: dict[str, str] = {}
    scope = {k: v for k, (v, _) in state.env.items()}  # ARGs, with ENV winning; kept as they change
    for ins in stage.instructions:
        with _expanding(df, ins):
            _apply(ins, stage, df, global_args, state, args, scope, budget)


def _apply(ins: Instruction, stage: Stage, df: Dockerfile, global_args: Mapping[str, str], state: _StageState,
           args: dict[str, str], scope: dict[str, str], budget: ExpansionBudget) -> None:
    kw = ins.keyword
    if kw == "ARG":
        for key, value in parse_arg_declarations(ins.args, scope, df.escape, budget):
            args[key] = value if value is not None else global_args.get(key, _PLATFORM_ARGS.get(key, ""))
            if key not in state.env:
                scope[key] = args[key]
    elif kw == "ENV":
        for key, value in parse_key_values(ins.args, scope, df.escape, budget=budget):
            if key:
                state.env[key] = (value, _dprov(df, ins, f"ENV {key}"))
                scope[key] = value
    elif kw == "LABEL":
        for key, value in parse_key_values(ins.args, scope, df.escape, legacy_ok=True, budget=budget):
            if key:
                state.labels[key] = value
    elif kw == "ENTRYPOINT":
        state.entrypoint = (_command(ins, df, state.shell), _dprov(df, ins, "ENTRYPOINT"))
        # Docker: setting ENTRYPOINT resets a CMD inherited from an earlier stage/base (a CMD of
        # this stage comes after its FROM line).
        if state.cmd is not None and state.cmd[1].line is not None and state.cmd[1].line < stage.from_line.line:
            state.cmd = None
    elif kw == "CMD":
        state.cmd = (_command(ins, df, state.shell), _dprov(df, ins, "CMD"))
    elif kw == "SHELL":
        form = ins.exec_form
        if form:
            state.shell = form
    elif kw == "WORKDIR":
        target = process_word(ins.args.strip(), scope, df.escape, budget)
        state.workdir = posixpath.normpath(posixpath.join(state.workdir, target)) if target else state.workdir
    elif kw == "RUN":
        from imagelint.static.run_installs import scan_run
        from imagelint.static.run_script import executed_text

        body = " ".join([ins.args, *(h.content for h in ins.heredocs)]) if ins.heredocs else ins.args
        runs = executed_text(ins.args, [h.content for h in ins.heredocs]) if "compat" in body else None
        for item in scan_run(process_word(body, scope, df.escape, budget) if "$" in body else body, runs):
            state.installs.append((item, _dprov(df, ins, f"RUN {item.text}")))
    elif kw in ("COPY", "ADD"):
        if ins.heredocs:
            return  # inline content: no library file comes from outside
        exec_form = ins.exec_form
        items = list(exec_form) if exec_form is not None else process_words(ins.args, scope, df.escape, budget)
        if len(items) < 2:
            return
        sources, dest = items[:-1], items[-1]
        dest_abs = posixpath.join(state.workdir, dest)
        into_dir = dest.endswith("/") or len(sources) > 1
        for src in sources:
            base = posixpath.basename(src.rstrip("/"))
            final = posixpath.join(dest_abs, base) if into_dir else dest_abs
            state.copies.append((src, posixpath.normpath(final), _dprov(df, ins, kw)))


_VAR_REF = lazy_pattern(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def _arch_lists(df: Dockerfile, global_args: Mapping[str, str], stages: tuple[Stage, ...],
                budget: ExpansionBudget) -> tuple[ArchListSetting, ...]:
    """Arch lists anywhere in the file, every stage included: a builder stage compiles what the
    final one copies. ENV and ARG values that name one, and RUN lines (with the ARG/ENV values
    known at that point substituted, as the shell would) that set one or call nvcc."""
    from imagelint.facts import archlist

    out: list[ArchListSetting] = []
    for stage in stages:
        scope: dict[str, str] = {}
        for ins in stage.instructions:
            with _expanding(df, ins):
                out += _arch_lists_of(ins, df, global_args, scope, budget)
    return archlist.unique_settings(out)


def _arch_lists_of(ins: Instruction, df: Dockerfile, global_args: Mapping[str, str], scope: dict[str, str],
                   budget: ExpansionBudget) -> list[ArchListSetting]:
    from imagelint.facts import archlist

    out: list[ArchListSetting] = []
    kw = ins.keyword
    if kw == "ARG":
        for key, value in parse_arg_declarations(ins.args, scope, df.escape, budget):
            scope[key] = value if value is not None else global_args.get(key, "")
            if key in archlist.ENV_SETTINGS and scope[key]:
                out += archlist.settings_in_env([EnvSetting(key, scope[key], _dprov(df, ins, f"ARG {key}"))])
    elif kw == "ENV":
        for key, value in parse_key_values(ins.args, scope, df.escape, budget=budget):
            if key:
                scope[key] = value
                if key in archlist.ENV_SETTINGS:
                    out += archlist.settings_in_env([EnvSetting(key, value, _dprov(df, ins, f"ENV {key}"))])
    elif kw == "RUN":
        def value_of(m: re.Match[str]) -> str:
            value = scope.get(m.group(1) or m.group(2))
            if value is None:
                return m.group(0)
            budget.charge(len(value))
            return value

        out += archlist.settings_in_text(_VAR_REF.sub(value_of, ins.args), _dprov(df, ins, "RUN"))
    return out


def _base_implied(base: str, from_ins: Instruction, df: Dockerfile, matrix: Matrix | None, arch: str = "amd64") -> tuple[
    list[CudaVersionEvidence], dict[str, tuple[str, Provenance]], list[str]
]:
    """CUDA evidence and env the base image implies, from the matrix (``imagelint.facts.known_images``)."""
    from imagelint.facts.known_images import image_cuda, is_ngc_release_tag, parse_image

    evidence: list[CudaVersionEvidence] = []
    env: dict[str, tuple[str, Provenance]] = {}
    notes: list[str] = []
    parsed = parse_image(base)
    if parsed is None:  # a base like "scratch" or an unexpanded ${X}: nothing implied
        return evidence, env, notes
    tag = parsed[1]
    found = image_cuda(base, matrix)
    if found is None:
        if is_ngc_release_tag(parsed[0], tag):
            version = getattr(matrix, "version", "in use")
            notes.append(f"{df.path}:{from_ins.line}: {base} is an NGC release the matrix {version} does not know: "
                         "its CUDA is not checked here (imagelint check on the built image reads it)")
        return evidence, env, notes
    # A CUDA read from an uncertain matrix row says so wherever the evidence is shown.
    doubt = f" ({found.basis}, uncertain matrix row)" if found.uncertain else ""
    prov = Provenance(kind="dockerfile", source=df.path, line=from_ins.line, key=f"FROM {base}{doubt}")
    version = found.version
    evidence.append(CudaVersionEvidence(version, "base-image", prov, "patch" if version.count(".") >= 2 else "minor"))
    if found.official_cuda:
        flavor = _CUDA_FLAVOR_RE.match(tag)
        implied = _official_image_env(matrix, version, arch, re.sub(r"cudnn\d*", "cudnn", flavor.group(1)) if flavor else None)
        if implied is None:
            notes.append(f"{df.path}:{from_ins.line}: the matrix has no env for official CUDA image {version}; "
                         "NVIDIA_REQUIRE_CUDA of the base image not checked")
        for key, value in (implied or {}).items():
            env[key] = (value, Provenance(kind="dockerfile", source=df.path, line=from_ins.line,
                                          key=f"{key} (from base image {base})"))
    return evidence, env, notes


def _call(obj: Any, method: str, *args: Any) -> Any:
    fn = getattr(obj, method, None)
    if fn is None:
        return None
    try:
        return fn(*args)
    except (LookupError, ValueError):
        return None


def _compat_package(cuda: str, prov: Provenance, matrix: Matrix | None, loader_dirs: set[str]) -> DriverLibrary | None:
    """``apt-get install cuda-compat-X-Y``: the forward-compat libcuda the package puts in
    ``/usr/local/cuda-X.Y/compat``. Its exact driver version is not in the Dockerfile; the floor of
    CUDA X.Y (the oldest driver that release ships) stands for it, and the matrix's
    forward-compatibility row gives the host branches it supports."""
    from imagelint.facts.model import ForwardCompatNote
    from imagelint.static import driverlibs

    floor = _call(matrix, "driver_floor", cuda)
    fc = _call(matrix, "forward_compat", cuda)
    if floor is None or fc is None:
        return None
    lib = driverlibs.library_at(f"/usr/local/cuda-{cuda}/compat/libcuda.so.{floor.min_driver}", prov, loader_dirs)
    note = ForwardCompatNote(cuda, tuple(fc.host_branches), (), f"{fc.package} (Dockerfile RUN; matrix row)")
    return replace(lib, fwd_compat=note)


def _official_image_env(matrix: Matrix | None, version: str, arch: str, flavor: str | None) -> Mapping[str, str] | None:
    """The env an official nvidia/cuda image of ``version``/``flavor`` sets on ``arch``, from the matrix."""
    if matrix is None:
        return None
    found = _call(matrix, "cuda_image_env", version, arch, flavor)
    if found is None:
        return None
    return dict(getattr(found, "env", found))


def _loader_dirs(value: str, prov: Provenance) -> tuple[LoaderPathEntry, ...]:
    return tuple(LoaderPathEntry(d, "LD_LIBRARY_PATH", prov) for d in value.split(":") if d)


def dockerfile_facts(df: Dockerfile, matrix: Matrix | None = None, scan_command: Any = None) -> ImageFacts:
    """The facts of the image the Dockerfile's final stage builds."""
    from imagelint.static import driverlibs

    budget = ExpansionBudget()
    global_args, stages = split_stages(df, budget)
    notes = list(df.warnings)
    if not stages:
        return ImageFacts(subject=df.path, kind="dockerfile", complete=False,
                          warnings=tuple(notes + [f"{df.path}: no FROM instruction"]))
    chain: list[Stage] = []
    stage: Stage | None = stages[-1]
    seen: set[int] = set()
    while stage is not None and stage.index not in seen:
        seen.add(stage.index)
        chain.append(stage)
        stage = stages[stage.parent] if stage.parent is not None and stage.parent < stage.index else None
    chain.reverse()
    root = chain[0]
    root_platform = _stage_platform(root, df, global_args) or _base_platform(root.base, matrix)
    arch = root_platform.architecture if root_platform else "amd64"
    evidence, implied_env, base_notes = _base_implied(root.base, root.from_line, df, matrix, arch)
    notes.extend(base_notes)
    state = _StageState(env=dict(implied_env))
    for st in chain:
        _run_stage(st, df, global_args, state, budget)
    build = _build_facts(df, stages, chain, state)

    env = tuple(EnvSetting(k, v, p) for k, (v, p) in state.env.items())
    by_name = {e.name: e for e in env}
    stub_confs: list[LoaderPathEntry] = []
    for item, prov in state.installs:
        if item.what == "cuda":
            evidence.append(CudaVersionEvidence(item.value, item.source, prov, "minor"))
        elif item.what == "stubs-conf":
            stub_confs.append(LoaderPathEntry(item.value, "ld.so.conf", prov))
    if "CUDA_VERSION" in by_name:
        e = by_name["CUDA_VERSION"]
        evidence.append(CudaVersionEvidence(e.value, "env", e.provenance, "patch"))
    cuda = CudaFacts(
        versions=tuple(evidence),
        requires=tuple(e for e in env if e.name.startswith("NVIDIA_REQUIRE_")),
        cuda_version_env=by_name.get("CUDA_VERSION"),
        disable_require=by_name.get("NVIDIA_DISABLE_REQUIRE"),
        disable_requires_plural=by_name.get("NVIDIA_DISABLE_REQUIRES"),
    )
    ld = by_name.get("LD_LIBRARY_PATH")
    loader = LoaderFacts(ld_library_path=_loader_dirs(ld.value, ld.provenance) if ld else (),
                         ld_so_conf=tuple(stub_confs), defaults=_DEFAULT_LIB_DIRS)
    loader_dirs = set(loader.directories)
    libs: list[DriverLibrary] = []
    for src, dest, prov in state.copies:
        name = posixpath.basename(dest)
        if not driverlibs.is_driver_library(name) and not driverlibs.is_driver_library(posixpath.basename(src)):
            continue
        libs.append(driverlibs.library_at(dest if driverlibs.is_driver_library(name) else
                                          posixpath.join(posixpath.dirname(dest), posixpath.basename(src)),
                                          prov, loader_dirs))
    removed: list[tuple[str, Provenance]] = []
    for item, prov in state.installs:  # in build order: a removal undoes the installs before it
        if item.what == "driver-package":  # the package ships libcuda.so.<branch>.*: IL201's anti-pattern
            libs.append(driverlibs.library_at(f"/usr/lib/x86_64-linux-gnu/libcuda.so.{item.value}", prov, loader_dirs))
        elif item.what == "compat":
            removed = [(v, p) for v, p in removed if v not in ("", item.value)]
            lib = _compat_package(item.value, prov, matrix, loader_dirs) if matrix is not None else None
            if lib is not None:
                libs.append(lib)
        elif item.what == "compat-removed":
            libs = [lib for lib in libs if not (lib.role == "compat" and f"/cuda-{item.value}/" in f"/{lib.path}"
                                                 or lib.role == "compat" and not item.value)]
            removed.append((item.value, prov))
    entrypoint = state.entrypoint[0] if state.entrypoint else None
    cmd = state.cmd[0] if state.cmd else None
    index_settings: list[GpuIndexSetting] = []
    needs: list[tuple[str, Provenance]] = []
    capabilities = by_name.get("NVIDIA_DRIVER_CAPABILITIES")
    for part in (state.entrypoint, state.cmd):
        if part is None:
            continue
        if scan_command is not None:
            index_settings.extend(scan_command(part[0], part[1]))
        # What the command needs is only comparable when the file itself fixes the capabilities:
        # an unset value here may be set by the base image, which a Dockerfile does not show.
        if capabilities is not None:
            from imagelint.static.gpuscan import command_needs

            needs.extend(command_needs(part[0], part[1]))
    gpu = GpuFacts(
        visible_devices=by_name.get("NVIDIA_VISIBLE_DEVICES"),
        cuda_visible_devices=by_name.get("CUDA_VISIBLE_DEVICES"),
        driver_capabilities=capabilities,
        index_settings=tuple(index_settings),
        needs_capabilities=tuple(needs),
    )
    base = BaseImageFacts(name=root.base, provenance=(Provenance(kind="dockerfile", source=df.path,
                                                                  line=root.from_line.line, key="FROM"),))
    return ImageFacts(
        subject=df.path,
        kind="dockerfile",
        platform=_stage_platform(chain[-1], df, global_args) or _base_platform(root.base, matrix),
        env=env,
        entrypoint=entrypoint,
        cmd=cmd,
        working_dir=state.workdir if state.workdir != "/" else "",
        labels=MappingProxyType(dict(state.labels)),
        cuda=cuda,
        driver_libraries=tuple(libs),
        loader=loader,
        gpu=gpu,
        base=base,
        complete=False,
        warnings=tuple(notes),
        arch_lists=_arch_lists(df, global_args, stages, budget),
        build=replace(build, compat_removed=tuple(removed)) if removed else build,
    )


def _build_facts(df: Dockerfile, stages: tuple[Stage, ...], chain: list[Stage], state: _StageState) -> BuildFacts:
    """The RUN steps of every stage (each a build step that runs without the GPUs the image will
    get), the final stage's base, and the CUDA toolkits the final chain installs."""
    from imagelint.static.run_script import executed_text

    in_chain = {st.index for st in chain}
    steps = []
    for st in stages:
        for ins in st.instructions:
            if ins.keyword != "RUN":
                continue
            body = "\n".join([ins.args, *(h.content for h in ins.heredocs)]) if ins.heredocs else ins.args
            device = ins.flag("device") or ""
            steps.append(RunStep(body, _dprov(df, ins, "RUN"), st.index in in_chain, "gpu" in device.lower(),
                                 executed_text(ins.args, [h.content for h in ins.heredocs])))
    toolkits = tuple((item.value, prov) for item, prov in state.installs
                     if item.what == "cuda" and item.text.startswith("cuda-toolkit"))
    root = chain[0]
    return BuildFacts(run_steps=tuple(steps), final_base=root.base,
                      final_from=Provenance(kind="dockerfile", source=df.path, line=root.from_line.line, key="FROM"),
                      stages=len(stages), toolkit_installs=toolkits)


def _stage_platform(stage: Stage, df: Dockerfile, global_args: Mapping[str, str]) -> Platform | None:
    """The platform a ``FROM --platform=...`` pins (the final stage's, else its chain's root), if concrete."""
    value = stage.from_line.flag("platform")
    if not value or "$" in value:
        return None  # $BUILDPLATFORM/$TARGETPLATFORM depend on where and for what it is built
    expanded = process_word(value, global_args, df.escape)
    try:
        return Platform.parse(expanded) if expanded else None
    except UsageError:
        return None


def _base_platform(base: str, matrix: Matrix | None) -> Platform | None:
    """The platform a base image is only built for (Jetson's L4T images: linux/arm64), per the
    base-image table; None when the table does not pin one."""
    from imagelint.facts.known_images import image_platform

    text = image_platform(base, matrix)
    return Platform.parse(text) if text else None


def suppressed_lines(df: Dockerfile) -> dict[int, Mapping[str, str]]:
    """Every physical line of an instruction with inline ignores → {rule id: reason}."""
    out: dict[int, Mapping[str, str]] = {}
    for ins in df.instructions:
        if ins.ignores:
            for line in range(ins.line, ins.end_line + 1):
                out[line] = ins.ignores
    return out


__all__ = ["Stage", "dockerfile_facts", "split_stages", "suppressed_lines"]
