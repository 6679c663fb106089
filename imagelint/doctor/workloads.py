"""What a live pod's spec asks for, read by the static manifest reader (one home for that logic).

``imagelint.static`` already decides, for a pod spec in a YAML file, which containers ask for
``nvidia.com/*`` resources (with requests and limits as written), the tolerations, nodeSelector
and required affinity, the RuntimeClass, the env and GPU indices on command lines. A served
pod is the same spec as JSON: :func:`pod_workload` wraps it in the static reader's line-aware
containers and asks ``imagelint.static.kubernetes`` — doctor does not re-implement it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from imagelint.cluster.pods import PodInfo
from imagelint.facts.model import ImageFacts
from imagelint.facts.static_model import WorkloadFacts

MAX_DEPTH = 40


@dataclass(frozen=True)
class PodWorkload:
    """A served pod with its spec read by the static manifest reader: one ``ImageFacts`` per container."""

    pod: PodInfo
    containers: tuple[ImageFacts, ...]  # one per container, init containers included

    @property
    def workload(self) -> WorkloadFacts | None:
        primary = next((c.workload for c in self.containers if c.workload and c.workload.primary), None)
        return primary or next((c.workload for c in self.containers if c.workload), None)

    @property
    def requests_gpu(self) -> bool:
        w = self.workload
        if w is None:
            return False
        # requests_gpu (resources, DRA claims, CDI annotations) where the static reader has it.
        asks = getattr(w, "requests_gpu", None)
        return bool(asks) if asks is not None else bool(w.pod_resources)

    def env(self, container: str) -> dict[str, str]:
        for facts in self.containers:
            if facts.workload and facts.workload.container == container:
                return {e.name: e.value for e in facts.env}
        return {}


def _line_tree(value: Any, depth: int = 0) -> Any:
    from imagelint.static.yamlsafe import LineDict, LineList

    if depth > MAX_DEPTH:
        return None
    if isinstance(value, dict):  # served JSON: dicts and lists (exact types: the ABC checks cost)
        return LineDict({k: _line_tree(v, depth + 1) for k, v in value.items() if isinstance(k, str)})
    if isinstance(value, list):
        return LineList(_line_tree(v, depth + 1) for v in value)
    return value


def pod_workload(pod: PodInfo) -> PodWorkload:
    from imagelint.static.gpuscan import scan_command
    from imagelint.static.kubernetes import find_pod_specs, pod_facts

    doc = _line_tree({  # a Mapping spec (not a dict) is copied into one first
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod.name, "namespace": pod.namespace}, "spec": dict(pod.spec),
    })
    containers: list[ImageFacts] = []
    for spec in find_pod_specs(doc):
        containers.extend(pod_facts(spec, f"pod {pod.where}", scan_command))
    return PodWorkload(pod=pod, containers=tuple(containers))


__all__ = ["PodWorkload", "pod_workload"]
