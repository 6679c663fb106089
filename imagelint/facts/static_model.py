"""Facts only files say: a Kubernetes container's pod spec (``WorkloadFacts``), a Docker Compose
service (``ComposeService``), a Dockerfile's build (``BuildFacts``).

``ImageFacts`` (``imagelint.facts.model``) holds them in ``workload``, ``compose`` and ``build``;
they live apart so that a check of an image, which never has them, does not define their types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from imagelint.facts.provenance import Provenance

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
