"""What doctor reports: findings with evidence and a fix, grouped by stage, and the verdict.

Frozen values that cross from the stages to the renderers (text, JSON). A ``Diagnosis`` is about
a node pool (stages 1-3) or a pod (4-5, isolation); its ``evidence`` names the object and the
field, event or log line that shows the failure, so a reader can check it with kubectl.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from imagelint.errors import EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_OK, EXIT_UNREADABLE

STAGES: tuple[tuple[int, str, str], ...] = (
    (1, "driver", "driver ready on the node"),
    (2, "device-plugin", "device plugin registered"),
    (3, "advertised", "node advertises the GPUs"),
    (4, "scheduling", "scheduler can place the pod"),
    (5, "runtime", "runtime hands the GPU to the container"),
    (6, "isolation", "isolation (no stage reports it)"),
)
OK, FAILED, NOT_CHECKED, BLOCKED = "ok", "failed", "not checked", "blocked"  # blocked: every subject failed an earlier stage


@dataclass(frozen=True)
class ObjectRef:
    """The Kubernetes object a piece of evidence is about, printed as ``Kind namespace/name``."""

    kind: str  # Node, Pod, DaemonSet, Event, ConfigMap, RuntimeClass, ReplicaSet...
    name: str
    namespace: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


@dataclass(frozen=True)
class Evidence:
    """What shows a failure on one object: a field's value, an event or a log line, to check with kubectl."""

    object: ObjectRef
    field: str = ""  # status.allocatable, spec.nodeSelector, containers[0].env...
    value: str = ""  # what the field holds (or lacks)
    event_reason: str = ""
    event_message: str = ""
    log_line: str = ""

    def describe(self) -> str:
        where = str(self.object)
        if self.log_line:
            return f"{where} log: {self.log_line}"
        if self.event_reason:
            return f"{where} event {self.event_reason}: {self.event_message}"
        if self.field:
            return f"{where} {self.field}: {self.value}" if self.value else f"{where} {self.field}"
        return f"{where}: {self.value}" if self.value else where


@dataclass(frozen=True)
class Diagnosis:
    """One problem doctor found, for a node pool or a pod; ``meaning``, ``fix`` and ``source`` come from the
    ``doctor-signatures.toml`` row it matched."""

    stage: int
    signature: str  # the doctor-signatures.toml row id
    subject_kind: str  # "node pool" | "pod" | "node" | "workload"
    subject: str  # pool name, or namespace/name
    message: str  # what is wrong, one line
    evidence: tuple[Evidence, ...]
    meaning: str
    fix: str
    source: str
    nodes: tuple[str, ...] = ()
    workload: str = ""  # a pod's Deployment ("Deployment infer"), where its ReplicaSet names one


@dataclass(frozen=True)
class StageResult:
    """How one of doctor's stages came out: its findings, and notes on what it could not read."""

    number: int
    id: str
    title: str
    status: str  # ok | failed | not checked | blocked
    findings: tuple[Diagnosis, ...] = ()
    notes: tuple[str, ...] = ()  # "not checked: RBAC forbids listing pods", "2 GPU nodes checked"...


@dataclass(frozen=True)
class DoctorReport:
    """What one doctor run found in the cluster, stage by stage; it decides the verdict and the exit code."""

    server: str
    context: str
    stages: tuple[StageResult, ...]
    gpu_nodes: int
    gpu_pods: int
    warnings: tuple[str, ...] = field(default=())
    nodes_read: bool = True
    pods_read: bool = True

    @property
    def findings(self) -> tuple[Diagnosis, ...]:
        return tuple(f for s in self.stages for f in s.findings)

    @property
    def nothing_checked(self) -> bool:
        return all(s.status == NOT_CHECKED for s in self.stages)

    @property
    def healthy(self) -> bool:
        """Only when every stage that decides it was read and found nothing: a stage RBAC kept
        doctor from reading is no evidence of health."""
        return not self.findings and not any(s.status == NOT_CHECKED for s in self.stages)

    @property
    def exit_code(self) -> int:
        if self.findings:
            return EXIT_FINDINGS
        if self.nothing_checked:  # nothing readable is "the cluster could not be read", never a pass
            return EXIT_UNREADABLE
        return EXIT_OK if self.healthy else EXIT_INCOMPLETE

    @property
    def verdict(self) -> str:
        findings = self.findings
        unchecked = [s for s in self.stages if s.status == NOT_CHECKED]
        tail = f"; {len(unchecked)} stage(s) not checked" if unchecked else ""
        if not findings and self.nothing_checked:
            return "nothing could be checked: " + "; ".join(dict.fromkeys(n for s in self.stages for n in s.notes if "not checked" in n))
        if not findings and unchecked:
            seen = [f"{self.gpu_nodes} GPU node(s)"] if self.nodes_read else []
            seen += [f"{self.gpu_pods} GPU pod(s)"] if self.pods_read else []
            why = "; ".join(dict.fromkeys(n for s in unchecked for n in s.notes if "not checked" in n))
            return f"not all checked: no problem seen in {' and '.join(seen) or 'what could be read'}; {why}"
        if not findings:
            return f"healthy: {self.gpu_nodes} GPU node(s), {self.gpu_pods} GPU pod(s), every stage ok"
        first = findings[0]
        title = next(t for n, _, t in STAGES if n == first.stage)
        return (
            f"{len(findings)} problem(s); first: stage {first.stage} ({title}) fails for "
            f"{first.subject_kind} {first.subject}{f' ({first.workload})' if first.workload else ''}: {first.message}{tail}"
        )


@dataclass(frozen=True)
class ImageVerdict:
    """An error ``check`` reports for an image on the pool of a node its pods run on (``doctor --images``)."""

    rule: str
    severity: str
    message: str
    pool: str | None


@dataclass
class ImageSide:
    """What ``doctor --images`` read of the images GPU-node pods run, for the runtime and isolation stages."""

    envs: dict[str, dict[str, str]] = field(default_factory=dict)  # image (as the pod names it) → config env
    verdicts: dict[tuple[str, str], list[ImageVerdict]] = field(default_factory=dict)  # (image, node) → errors
    unread: dict[str, str] = field(default_factory=dict)  # image → why it could not be read


__all__ = ["BLOCKED", "ImageSide", "ImageVerdict", "FAILED", "NOT_CHECKED", "OK", "STAGES", "DoctorReport", "Evidence", "Diagnosis", "ObjectRef", "StageResult"]
