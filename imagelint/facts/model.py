"""Facts about an image (or a Dockerfile, manifest or app config), each with provenance.

Rules read only these types. A fact never says whether something is *wrong*:
that needs the target and the matrix, and is the rules' job.

The same model serves every input: an image's facts come from its config and
layers; a Dockerfile's facts come from its instructions (with line numbers);
a Kubernetes manifest's from a container spec. ``Provenance`` says which.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from imagelint.image import Platform
from imagelint.redact import secret_env_values


@dataclass(frozen=True)
class Provenance:
    """Where a fact came from.

    kind:
      ``env``         image config env var ``key``
      ``config``      another config field (``key`` = Entrypoint, Cmd, WorkingDir, User)
      ``label``       config label ``key``
      ``annotation``  manifest/index annotation ``key``
      ``history``     config history entry (``line`` = its index)
      ``file``        a file in the image: ``path`` (resolved), ``via`` (the path as
                      reached, through symlinks), ``layer_digest``/``layer_index``
                      of the layer that last wrote it, ``line`` inside it
      ``dockerfile``  a Dockerfile instruction: ``source`` = the file, ``line``
      ``manifest``    a Kubernetes object: ``source`` = the file, ``line``,
                      ``key`` = a JSON-path-like locator (``spec.containers[0].env[1]``)
      ``appconfig``   a config file in the repository: ``source`` = the file, ``line``
    """

    kind: str
    key: str | None = None
    path: str | None = None
    via: str | None = None
    layer_digest: str | None = None
    layer_index: int | None = None
    line: int | None = None
    source: str | None = None

    def describe(self) -> str:
        """One human-readable location, e.g. ``/usr/local/cuda/version.json (layer 3 sha256:ab12…)``."""
        if self.kind == "env":
            return f"env {self.key}"
        if self.kind in ("config", "label", "annotation"):
            return f"{self.kind} {self.key}"
        if self.kind == "history":
            return f"history[{self.line}]"
        if self.kind == "file":
            where = "/" + (self.path or "")
            if self.via and self.via != self.path:
                where = f"/{self.via} -> {where}"
            if self.line:
                where += f":{self.line}"
            if self.layer_index is not None:
                where += f" (layer {self.layer_index}"
                if self.layer_digest:
                    where += f" {self.layer_digest[:19]}"
                where += ")"
            return where
        loc = self.source or ""
        if self.line:
            loc += f":{self.line}"
        if self.key:
            loc += f" {self.key}"
        return loc

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


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


# --- Kubernetes workloads (static manifests only) -------------------------------------


@dataclass(frozen=True)
class ResourceAmount:
    """One extended resource (``nvidia.com/*``) of one container: its request and limit as written."""

    name: str
    request: str | None
    limit: str | None
    provenance: Provenance


@dataclass(frozen=True)
class Toleration:
    """A pod toleration as written (``operator`` defaults to ``Equal``; no ``effect`` = every effect)."""

    key: str | None = None
    operator: str = "Equal"
    value: str | None = None
    effect: str | None = None


@dataclass(frozen=True)
class NodeSelectorRequirement:
    """One ``matchExpressions`` item of a required node-affinity term."""

    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist, Gt, Lt
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeviceRequest:
    """One request of a DRA ResourceClaim (``spec.devices.requests[]``), as written.

    ``device_class`` is the DeviceClass name (``gpu.nvidia.com``, ``mig.nvidia.com``...);
    ``count`` None means the API default (one device, ``ExactCount``); ``allocation_mode``
    ``All`` takes every matching device. ``selectors`` are the CEL expressions. ``alternatives``
    holds the device classes of ``firstAvailable`` sub-requests (any one of them may be used).
    """

    name: str
    device_class: str | None
    count: int | None = None
    allocation_mode: str | None = None
    selectors: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()


@dataclass(frozen=True)
class PodClaim:
    """A pod's ``spec.resourceClaims[]`` entry and, once resolved, what the claim asks for.

    ``template`` / ``claim`` name the ResourceClaimTemplate / ResourceClaim it comes from.
    ``device`` is what the claim's device classes give: ``gpu``, ``mig``, ``vfio`` (a GPU passed
    to a VM), ``imex`` (an IMEX channel: no GPU), ``other`` (another vendor's class), or
    ``unknown`` (the claim is not defined in the files linted); ``defined_in`` says where.
    """

    name: str
    template: str | None
    claim: str | None
    provenance: Provenance
    device: str = "unknown"
    requests: tuple[DeviceRequest, ...] = ()
    defined_in: str | None = None


@dataclass(frozen=True)
class WorkloadFacts:
    """The pod a container runs in, for facts of kind ``manifest``.

    One ``ImageFacts`` is made per container; pod-level rules read the one with
    ``primary`` True so a pod is reported once. ``resources`` are this
    container's ``nvidia.com/*`` resources; ``pod_resources`` the names any
    container of the pod asks for. ``affinity_terms`` are the required
    node-affinity terms (ORed; requirements inside a term ANDed).
    """

    kind: str
    name: str
    container: str
    provenance: Provenance
    namespace: str | None = None
    init_container: bool = False
    primary: bool = False
    resources: tuple[ResourceAmount, ...] = ()
    pod_resources: tuple[str, ...] = ()
    node_selector: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    affinity_terms: tuple[tuple[NodeSelectorRequirement, ...], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    runtime_class_name: str | None = None
    scheduling_provenance: Provenance | None = None  # where nodeSelector/affinity/tolerations are written
    # Where the pod spec sits and what shape it is ("RayCluster worker group 'gpu'", "Argo template
    # 'train'"...), for messages; ``pod_path`` is a locator such as ``spec.workerGroupSpecs[0].template.spec``.
    shape: str = ""
    pod_path: str = ""
    # Dynamic Resource Allocation: the pod's claims (resolved across the linted files) and the
    # names of the ones this container uses (``resources.claims[].name``).
    pod_claims: tuple[PodClaim, ...] = ()
    claims: tuple[str, ...] = ()
    # CDI device requests made through ``cdi.k8s.io/*`` annotations (``nvidia.com/gpu=all``...).
    cdi_devices: tuple[str, ...] = ()
    # ``securityContext.privileged`` or CAP_SYS_ADMIN: the container sees every device of the node.
    privileged: Provenance | None = None

    @property
    def gpu_claims(self) -> tuple[PodClaim, ...]:
        """Claims of this pod that give NVIDIA GPUs or MIG devices to its containers."""
        return tuple(c for c in self.pod_claims if c.device in ("gpu", "mig"))

    @property
    def container_gpu_claims(self) -> tuple[PodClaim, ...]:
        """The GPU claims this container itself uses."""
        return tuple(c for c in self.gpu_claims if c.name in self.claims)

    @property
    def requests_gpu(self) -> bool:
        """Whether the pod asks for NVIDIA GPUs: an ``nvidia.com/*`` resource, a GPU claim, or CDI."""
        return bool(self.pod_resources or self.gpu_claims or self.cdi_devices)

    @property
    def container_requests_gpu(self) -> bool:
        """Whether this container gets GPUs of its own (resources, claims it uses, CDI)."""
        return bool(self.resources or self.container_gpu_claims or self.cdi_devices)


@dataclass(frozen=True)
class GpuReservation:
    """One GPU device request of a Docker Compose service, as written.

    ``form``: ``deploy.resources.reservations.devices`` or ``gpus``. ``count`` is the raw value
    (``1``, ``all``, ``${N}``) or None; ``capabilities`` None when the key is absent.
    """

    form: str
    driver: str | None
    count: str | None
    device_ids: tuple[str, ...]
    capabilities: tuple[str, ...] | None
    provenance: Provenance


@dataclass(frozen=True)
class ComposeService:
    """A Docker Compose service's GPU access: device requests, ``runtime:``, ``privileged``.

    ``shared_ids`` maps a pinned host GPU id to the other services of the same file that pin it.
    """

    name: str
    provenance: Provenance
    gpu_requests: tuple[GpuReservation, ...] = ()
    runtime: str | None = None
    privileged: Provenance | None = None
    shared_ids: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def gets_gpus(self) -> bool:
        return bool(self.gpu_requests) or self.runtime == "nvidia"


@dataclass(frozen=True)
class RunStep:
    """One Dockerfile ``RUN`` instruction (heredoc bodies included) of a stage the build runs."""

    text: str
    provenance: Provenance
    final_stage: bool
    gpu_device: bool = False  # ``RUN --device=nvidia.com/gpu=...`` (BuildKit CDI): a GPU at build time
    # What the step executes (``imagelint.static.run_script``): ``text`` without the heredocs and
    # echo/printf text it only writes into files; None when not read apart (then ``text``).
    executed: str | None = None


@dataclass(frozen=True)
class BuildFacts:
    """How a Dockerfile builds its image: the ``RUN`` steps, and the final stage's base.

    ``final_base`` is the final stage's FROM after ARG expansion (through ``FROM <stage>`` chains to
    an image), ``stages`` how many stages the file has, ``final_from`` where the final FROM is.
    """

    run_steps: tuple[RunStep, ...] = ()
    final_base: str = ""
    final_from: Provenance | None = None
    stages: int = 1
    # CUDA toolkits the RUN steps of the final stage's chain install (``cuda-toolkit-12-4``): (X.Y, where)
    toolkit_installs: tuple[tuple[str, Provenance], ...] = ()
    # The forward-compat package the final chain's RUN steps take out (``apt-get purge cuda-compat-12-4``,
    # ``rm -rf /usr/local/cuda/compat``) and do not put back: (X.Y, or "" for every release; where)
    compat_removed: tuple[tuple[str, Provenance], ...] = ()


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
