"""Facts about an image (or a Dockerfile, manifest or app config), each with provenance.

Rules read only these types. A fact never says whether something is *wrong*:
that needs the target and the matrix, and is the rules' job.

The same model serves every input: an image's facts come from its config and
layers; a Dockerfile's facts come from its instructions (with line numbers);
a Kubernetes manifest's from a container spec. ``Provenance`` says which. What only
files say (a container's pod spec, a Compose service, a Dockerfile's build) has its
types in ``imagelint.facts.static_model``, imported where such files are read (the
facts codec resolves a field's type only when the field holds a value).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from imagelint.facts.provenance import Provenance
from imagelint.image import Platform
from imagelint.redact import secret_env_values

if TYPE_CHECKING:  # facts only files have (facts.static_model): a check of an image never builds them
    from imagelint.facts.static_model import BuildFacts, ComposeService, WorkloadFacts


# --- CUDA -------------------------------------------------------------------------

# CudaVersionEvidence.source values, from most to least direct about the runtime in use.
CUDA_SOURCES = (
    "version.json",      # /usr/local/cuda*/version.json  (cuda_cudart.version, else top-level "cuda")
    "version.txt",       # /usr/local/cuda*/version.txt   ("CUDA Version X.Y.Z")
    "libcudart",         # libcudart.so.X.Y.Z file names in library directories
    "pip-wheel",         # nvidia-cuda-runtime-cu11/cu12 / nvidia-cuda-runtime dist-info (or a RUN pip install)
    "package",           # a CUDA package a Dockerfile RUN line installs (apt cuda-toolkit-12-4, conda)
    "torch",             # torch/version.py  cuda = 'X.Y'
    "env",               # CUDA_VERSION
    "ngc-env",           # NGC's CUDA_DRIVER_VERSION / product env (what it was built against)
    "label",             # labels that state a CUDA version
    "base-image",        # resolved from the image name through the matrix (Dockerfile FROM, manifest image:)
)


@dataclass(frozen=True)
class CudaVersionEvidence:
    """One piece of evidence for the CUDA runtime version in the image.

    ``version`` is as precise as the source allows (``12.4.1``, ``12.4``,
    ``12.4.127`` for a libcudart build). ``precision`` is ``patch`` when the
    version names an exact toolkit release (version.json, version.txt,
    CUDA_VERSION) and ``minor`` otherwise (a component build number such as
    libcudart's 12.4.127 only establishes 12.4), and ``major`` when only the
    major is known (``version`` "12", from a SONAME-only ``libcudart.so.12`` or
    ``libcudart.so.11.0``): judges must then assume the oldest minor of that
    major. ``component`` names what the version belongs to when not the toolkit
    (``cudart``, ``torch``...).
    """

    version: str
    source: str
    provenance: Provenance
    precision: str = "minor"
    component: str | None = None


@dataclass(frozen=True)
class EnvSetting:
    """An env var as the image (or Dockerfile/manifest) sets it."""

    name: str
    value: str
    provenance: Provenance


@dataclass(frozen=True)
class CudaFacts:
    """The CUDA runtime versions the image shows, and the env the NVIDIA runtime reads for its requirement
    check (NVIDIA_REQUIRE_*, CUDA_VERSION, NVIDIA_DISABLE_REQUIRE)."""

    versions: tuple[CudaVersionEvidence, ...] = ()
    # Every NVIDIA_REQUIRE_* (including NVIDIA_REQUIRE_JETPACK*, which the runtime ignores).
    requires: tuple[EnvSetting, ...] = ()
    cuda_version_env: EnvSetting | None = None        # CUDA_VERSION
    disable_require: EnvSetting | None = None         # NVIDIA_DISABLE_REQUIRE
    disable_requires_plural: EnvSetting | None = None  # NVIDIA_DISABLE_REQUIRES (read by nothing)

    @property
    def env(self) -> Mapping[str, str]:
        """The env subset the NVIDIA runtime reads for requirements."""
        out = {e.name: e.value for e in self.requires}
        for e in (self.cuda_version_env, self.disable_require, self.disable_requires_plural):
            if e is not None:
                out[e.name] = e.value
        return MappingProxyType(out)


# --- driver libraries and the loader ---------------------------------------------


@dataclass(frozen=True)
class ForwardCompatNote:
    """The ``.note.cuda.fwd_compatibility`` ELF note of a compat libcuda."""

    cuda_version: str | None
    driver_branches: tuple[int, ...]
    devices: tuple[int, ...]
    raw: str


@dataclass(frozen=True)
class DriverLibrary:
    """A driver-owned library file in the image.

    ``role``: ``real`` (would shadow the host driver), ``stub`` (link-time stub
    under a ``stubs`` directory), ``compat`` (forward-compat library under
    ``.../cuda*/compat``). ``version`` is the driver version from the file name
    (``libcuda.so.535.104.05`` → ``535.104.05``) when it has one.
    ``on_loader_path``: the directory is searched by the dynamic loader at run
    time (LD_LIBRARY_PATH, ld.so.conf, or the default directories).
    ``loader_path_dirs``: the searched directories that find it, as the loader
    path writes them (normalised, in search order), after following the image's
    symlinks both ways: ``LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs`` finds
    ``usr/local/cuda-12.4/targets/x86_64-linux/lib/stubs/libcuda.so`` when
    ``cuda -> cuda-12.4`` and ``lib64 -> targets/x86_64-linux/lib``. Rules match
    loader path entries against this, never against path text.
    """

    name: str
    path: str
    role: str
    version: str | None
    on_loader_path: bool
    provenance: Provenance
    fwd_compat: ForwardCompatNote | None = None
    is_symlink: bool = False
    loader_path_dirs: tuple[str, ...] = ()


@dataclass(frozen=True)
class LoaderPathEntry:
    """One directory the dynamic loader searches, and why.

    ``directory`` as written (normalised, no leading ``/``); ``resolved`` the
    directory it is in the image after following symlinks (None when layers were
    not read, or the image has no such directory).
    """

    directory: str
    origin: str  # "LD_LIBRARY_PATH", "ld.so.conf", "default"
    provenance: Provenance
    resolved: str | None = None


@dataclass(frozen=True)
class LoaderFacts:
    """The dynamic loader's search path. ``resolved_directories``: ``directories`` as they
    are in the image, symlinks followed (a directory the image lacks stays as written),
    in search order without repeats; empty when layers were not read."""

    ld_library_path: tuple[LoaderPathEntry, ...] = ()
    ld_so_conf: tuple[LoaderPathEntry, ...] = ()
    defaults: tuple[str, ...] = ()
    resolved_directories: tuple[str, ...] = ()

    @property
    def directories(self) -> tuple[str, ...]:
        """Search order: LD_LIBRARY_PATH, then the ld.so.cache directories, then the defaults."""
        seen: dict[str, None] = {}
        for d in [e.directory for e in self.ld_library_path] + [e.directory for e in self.ld_so_conf] + list(self.defaults):
            seen.setdefault(d, None)
        return tuple(seen)


# --- GPU visibility and indices --------------------------------------------------


@dataclass(frozen=True)
class GpuIndexSetting:
    """A GPU index (or device list) fixed somewhere the container will use it.

    ``kind``: ``cuda-visible-devices`` / ``nvidia-visible-devices`` (a value),
    ``gpu-id`` (DeepStream/nvinfer key), ``cli-flag`` (``--gpu-id 1``,
    ``--device cuda:1``, ``--gpus 1``...), ``code`` (``torch.cuda.set_device(1)``,
    ``cuda:1`` in Python). ``value`` is the raw value; ``indices`` the integer
    indices it names (empty for UUIDs/``all``/``none``). ``text`` is the
    matched source text. ``referenced``: reached from the entrypoint/cmd (or
    the container command), rather than merely present in the image.
    """

    kind: str
    value: str
    indices: tuple[int, ...]
    text: str
    provenance: Provenance
    referenced: bool = True


@dataclass(frozen=True)
class GpuFacts:
    """Which GPUs and driver capabilities the container asks for: its visibility env, and the GPU indices and
    capability needs found by following the entrypoint/cmd into its scripts and configs."""

    visible_devices: EnvSetting | None = None       # NVIDIA_VISIBLE_DEVICES
    cuda_visible_devices: EnvSetting | None = None  # CUDA_VISIBLE_DEVICES
    driver_capabilities: EnvSetting | None = None   # NVIDIA_DRIVER_CAPABILITIES
    index_settings: tuple[GpuIndexSetting, ...] = ()
    # Scripts and configs read while following the entrypoint/cmd, for reports.
    followed_files: tuple[Provenance, ...] = ()
    # What the image appears to do that needs a driver capability (e.g. "video" for DeepStream).
    needs_capabilities: tuple[tuple[str, Provenance], ...] = ()


# --- compiled GPU code -------------------------------------------------------------


@dataclass(frozen=True)
class GpuCodeObject:
    """The GPU architectures compiled into one library (from the fatbins the CUDA runtime
    loads: its ``.nv_fatbin`` section), or named by a build setting (``evidence``)."""

    path: str
    sass: tuple[str, ...]  # e.g. ("sm_80", "sm_90a")
    ptx: tuple[str, ...]   # e.g. ("compute_90",)
    provenance: Provenance
    # The PTX ISA version of each PTX target (the newest when several): (("compute_90", "9.0"),)
    ptx_isa: tuple[tuple[str, str], ...] = ()
    # "fatbin" (read from the library), or the setting that names the architectures:
    # "env TORCH_CUDA_ARCH_LIST", "Dockerfile RUN" ...
    evidence: str = "fatbin"
    # Code in fatbins the runtime does not load, as "section: target": ("__nv_relfatbin: compute_90",)
    not_loaded: tuple[str, ...] = ()
    # Containers counted as loaded though their ELF section could not be read (no section table)
    unplaced_containers: int = 0

    def isa_of(self, ptx_target: str) -> str | None:
        return dict(self.ptx_isa).get(ptx_target)


@dataclass(frozen=True)
class ArchListSetting:
    """A build setting that names GPU architectures (``imagelint.facts.archlist``), as written:
    secondary evidence of the GPU code an image has, where no fatbin says it."""

    setting: str  # TORCH_CUDA_ARCH_LIST, CUDA_ARCH_LIST, CMAKE_CUDA_ARCHITECTURES, CUDAARCHS, nvcc
    value: str  # "8.0 8.6+PTX", "80;86-real", "-gencode arch=compute_80,code=sm_80"
    provenance: Provenance


# --- base image ----------------------------------------------------------------------


@dataclass(frozen=True)
class BaseImageFacts:
    """The image this one is built on: stated by OCI base annotations/labels or recognised from the official
    CUDA images' env; for a Dockerfile its FROM, for a manifest or compose file the image it names."""

    name: str | None = None
    digest: str | None = None
    layer_count: int | None = None  # how many of the image's layers belong to the base
    provenance: tuple[Provenance, ...] = ()


# --- the whole --------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageFacts:
    """Everything rules may know about one image (or static input).

    ``subject`` is what the facts are about (an image reference, or a file path
    for Dockerfiles/manifests). ``platform``/``digest`` are None for static inputs.
    ``env`` is the effective env with provenance (last assignment wins).
    ``complete`` is False when layers were not read (config-only), so rules
    that need file facts can say they could not check.
    ``warnings`` are one-line notes from reading (skipped members, limits).
    """

    subject: str
    kind: str  # "image", "dockerfile", "manifest", "appconfig", "script"
    platform: Platform | None = None
    platforms: tuple[Platform, ...] = ()
    digest: str | None = None
    env: tuple[EnvSetting, ...] = ()
    entrypoint: tuple[str, ...] | None = None
    cmd: tuple[str, ...] | None = None
    working_dir: str = ""
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    cuda: CudaFacts = field(default_factory=CudaFacts)
    driver_libraries: tuple[DriverLibrary, ...] = ()
    loader: LoaderFacts = field(default_factory=LoaderFacts)
    gpu: GpuFacts = field(default_factory=GpuFacts)
    gpu_code: tuple[GpuCodeObject, ...] = ()
    base: BaseImageFacts = field(default_factory=BaseImageFacts)
    complete: bool = True
    warnings: tuple[str, ...] = ()
    # Files a fact needed but could not read to the end (note, file): e.g. a followed script's text
    # past 1 MiB, a version.json over its capture limit. What they hold past that point is unknown.
    unread_files: tuple[tuple[str, Provenance], ...] = ()
    workload: WorkloadFacts | None = None  # Kubernetes manifests only
    gpu_code_read: bool = True  # False when the fatbin scan was left out (no selected rule needed it)
    # Build settings naming GPU architectures (env, Dockerfile ENV/ARG/RUN, build history, scripts)
    arch_lists: tuple[ArchListSetting, ...] = ()
    compose: ComposeService | None = None  # Docker Compose files only
    build: BuildFacts | None = None  # Dockerfiles only

    def secret_values(self) -> tuple[str, ...]:
        """The secret values of the env, longest first (so a value inside another is not left
        half-shown): what every report of these facts redacts."""
        return secret_env_values((e.name, e.value) for e in self.env)

    def env_setting(self, name: str) -> EnvSetting | None:
        found = None
        for e in self.env:
            if e.name == name:
                found = e
        return found
