"""The kinds of Kubernetes object imagelint reads, and how the typed client lists / gets each.

A :class:`Resource` names an API (group, version, plural) and whether it is
namespaced. Objects of a named API group (``apps``, ``node.k8s.io``, ``nvidia.com``,
``resource.k8s.io``...) are read through ``CustomObjectsApi``, which serves any group
by path, so adding a kind is one line here; the core API (``""``: nodes, pods, events,
ConfigMaps) goes through ``CoreV1Api``'s ``list_<name>`` / ``list_namespaced_<name>`` /
``list_<name>_for_all_namespaces`` / ``read_[namespaced_]<name>`` methods, named by
``core_name``. The ``kubernetes`` package is imported only when a call is made.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Resource:
    """A kind of Kubernetes object imagelint reads: its API group, version, plural, and message names."""

    group: str  # "" = the core API
    version: str
    plural: str  # the URL path segment: "nodes", "daemonsets"
    kind: str  # for messages, one object: "ConfigMap", "node"
    kinds: str  # for messages, many: "ConfigMaps", "nodes"
    namespaced: bool = False
    core_name: str = ""  # CoreV1Api method stem for core kinds: "node", "config_map", "pod"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def list_call(self, api_client: Any, namespace: str | None) -> Callable[..., Any]:
        """``call(**query)`` listing this kind (in ``namespace``, or everywhere when None)."""
        from kubernetes import client

        if not self.group:
            core = client.CoreV1Api(api_client)
            if not self.namespaced:
                return getattr(core, f"list_{self.core_name}")
            if namespace:
                return functools.partial(getattr(core, f"list_namespaced_{self.core_name}"), namespace)
            return getattr(core, f"list_{self.core_name}_for_all_namespaces")
        custom = client.CustomObjectsApi(api_client)
        if self.namespaced and namespace:
            return functools.partial(custom.list_namespaced_custom_object, self.group, self.version, namespace, self.plural)
        # Cluster-scoped, or a namespaced kind in all namespaces: both are /apis/GROUP/VERSION/PLURAL.
        return functools.partial(custom.list_cluster_custom_object, self.group, self.version, self.plural)

    def get_call(self, api_client: Any, name: str, namespace: str | None) -> Callable[..., Any]:
        """``call()`` reading one object by name (of a namespaced kind: in ``namespace``)."""
        from kubernetes import client

        if not self.namespaced:
            if not self.group:
                return functools.partial(getattr(client.CoreV1Api(api_client), f"read_{self.core_name}"), name)
            return functools.partial(client.CustomObjectsApi(api_client).get_cluster_custom_object, self.group,
                                     self.version, self.plural, name)
        if namespace is None:  # the caller's mistake: Connection.get_object fills in its context's namespace
            raise TypeError(f"get_call: reading {self.kind} {name} needs a namespace")
        if not self.group:
            return functools.partial(getattr(client.CoreV1Api(api_client), f"read_namespaced_{self.core_name}"), name, namespace)
        return functools.partial(client.CustomObjectsApi(api_client).get_namespaced_custom_object, self.group,
                                 self.version, namespace, self.plural, name)


# What reading a malformed object the way the API documents it raises. Cluster objects are
# untrusted: a reader catches these per object, leaves the object out with a warning, and goes on.
MALFORMED = (AttributeError, TypeError, ValueError, KeyError)

NODES = Resource("", "v1", "nodes", "node", "nodes", core_name="node")
CONFIG_MAPS = Resource("", "v1", "configmaps", "ConfigMap", "ConfigMaps", namespaced=True, core_name="config_map")
PODS = Resource("", "v1", "pods", "pod", "pods", namespaced=True, core_name="pod")
EVENTS = Resource("", "v1", "events", "event", "events", namespaced=True, core_name="event")
DAEMON_SETS = Resource("apps", "v1", "daemonsets", "DaemonSet", "DaemonSets", namespaced=True)
RUNTIME_CLASSES = Resource("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", "RuntimeClasses")
# The GPU Operator's CRD (nvidia.com/v1, cluster-scoped).
CLUSTER_POLICIES = Resource("nvidia.com", "v1", "clusterpolicies", "ClusterPolicy", "ClusterPolicies")
# Dynamic Resource Allocation (resource.k8s.io/v1, served by default from Kubernetes 1.34).
DEVICE_CLASSES = Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", "DeviceClasses")
RESOURCE_SLICES = Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", "ResourceSlices")
RESOURCE_CLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", "ResourceClaims", namespaced=True)
RESOURCE_CLAIM_TEMPLATES = Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate",
                                    "ResourceClaimTemplates", namespaced=True)

# Workload controllers whose pod templates ``imagelint audit`` reads (imagelint.cluster.workloads).
DEPLOYMENTS = Resource("apps", "v1", "deployments", "Deployment", "Deployments", namespaced=True)
REPLICA_SETS = Resource("apps", "v1", "replicasets", "ReplicaSet", "ReplicaSets", namespaced=True)
STATEFUL_SETS = Resource("apps", "v1", "statefulsets", "StatefulSet", "StatefulSets", namespaced=True)
JOBS = Resource("batch", "v1", "jobs", "Job", "Jobs", namespaced=True)
CRON_JOBS = Resource("batch", "v1", "cronjobs", "CronJob", "CronJobs", namespaced=True)
# The GPU workload kinds ``lint`` understands (their CRDs may not be installed: 404 = none here).
GPU_WORKLOAD_KINDS = (
    Resource("ray.io", "v1", "rayclusters", "RayCluster", "RayClusters", namespaced=True),
    Resource("ray.io", "v1", "rayjobs", "RayJob", "RayJobs", namespaced=True),
    Resource("ray.io", "v1", "rayservices", "RayService", "RayServices", namespaced=True),
    Resource("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", "PyTorchJobs", namespaced=True),
    Resource("kubeflow.org", "v1", "tfjobs", "TFJob", "TFJobs", namespaced=True),
    Resource("kubeflow.org", "v2beta1", "mpijobs", "MPIJob", "MPIJobs", namespaced=True),
    Resource("kubeflow.org", "v1", "xgboostjobs", "XGBoostJob", "XGBoostJobs", namespaced=True),
    Resource("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", "JobSets", namespaced=True),
    Resource("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet", "LeaderWorkerSets", namespaced=True),
    Resource("batch.volcano.sh", "v1alpha1", "jobs", "Job", "Volcano Jobs", namespaced=True),
    Resource("serving.kserve.io", "v1beta1", "inferenceservices", "InferenceService", "InferenceServices", namespaced=True),
)
# Image pull secrets (``audit --use-pull-secrets`` only; read one by name, never listed).
SECRETS = Resource("", "v1", "secrets", "Secret", "Secrets", namespaced=True, core_name="secret")
# Policy reports (wgpolicyk8s.io/v1alpha2): ``audit --write-reports`` creates or replaces them.
POLICY_REPORTS = Resource("wgpolicyk8s.io", "v1alpha2", "policyreports", "PolicyReport", "PolicyReports", namespaced=True)
CLUSTER_POLICY_REPORTS = Resource(
    "wgpolicyk8s.io", "v1alpha2", "clusterpolicyreports", "ClusterPolicyReport", "ClusterPolicyReports"
)

__all__ = [
    "CLUSTER_POLICIES",
    "CLUSTER_POLICY_REPORTS",
    "CONFIG_MAPS",
    "CRON_JOBS",
    "DAEMON_SETS",
    "DEPLOYMENTS",
    "DEVICE_CLASSES",
    "EVENTS",
    "GPU_WORKLOAD_KINDS",
    "JOBS",
    "MALFORMED",
    "NODES",
    "PODS",
    "POLICY_REPORTS",
    "RESOURCE_CLAIMS",
    "RESOURCE_CLAIM_TEMPLATES",
    "RESOURCE_SLICES",
    "RUNTIME_CLASSES",
    "SECRETS",
    "STATEFUL_SETS",
    "Resource",
]
