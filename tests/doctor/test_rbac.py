"""doctor needs only the shipped read-only ClusterRole, and every refused read degrades to "not checked"."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.doctor.clusters import clone, container_status, find, healthy_state, pod

ROLE = Path(__file__).resolve().parents[2] / "deploy" / "doctor-clusterrole.yaml"


def granted() -> set[tuple[str, str, str]]:
    role = yaml.safe_load(ROLE.read_text())
    assert role["kind"] == "ClusterRole" and role["apiVersion"] == "rbac.authorization.k8s.io/v1"
    return {(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def request_info(method: str, path: str) -> tuple[str, str, str]:
    """(apiGroup, resource[/subresource], verb) the way the API server's RequestInfo names a GET."""
    assert method == "GET", (method, path)
    parts = path.strip("/").split("/")
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = parts[1], parts[3:]
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        rest = rest[2:]
    if len(rest) == 1:
        return group, rest[0], "list"
    if len(rest) == 2:
        return group, rest[0], "get"
    return group, f"{rest[0]}/{rest[2]}", "get"


def busy_state():
    """Every reader has something to read: a crashing plugin (pods/log), a mounted config, events."""
    state = clone(healthy_state())
    name = "nvidia-device-plugin-daemonset-1"
    find(state, name)["status"]["containerStatuses"] = [container_status("nvidia-device-plugin", "p:v0.17.0", waiting="CrashLoopBackOff", restarts=3)]
    state.pod_logs[("gpu-operator", name, "nvidia-device-plugin", True)] = "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND\n"
    state.configmaps[("video", "ds")] = {"cfg.txt": "gpu-id=0\n"}
    state.pods.append(pod("video", "ds-1", node="gpu-a-2", env={"NVIDIA_VISIBLE_DEVICES": "all"},
                          volumes=[{"name": "c", "configMap": {"name": "ds"}}], volumeMounts=[{"name": "c", "mountPath": "/c"}]))
    state.deviceclasses, state.resourceslices, state.resourceclaims = [], [], []
    state.clusterpolicies = []
    return state


def test_doctor_calls_only_what_the_shipped_role_grants(run_doctor):
    run = run_doctor(busy_state())
    assert run.exit_code == 1
    calls = {request_info(m, p) for m, p in run.kube.methods}
    # the run did exercise every kind of read the role is for
    assert {("", "pods/log", "get"), ("", "configmaps", "get"), ("resource.k8s.io", "resourceslices", "list")} <= calls
    assert calls <= granted(), calls - granted()
    run = run_doctor(busy_state(), "--namespace", "video", "--pod", "ds-1", kube=run.kube)
    assert {request_info(m, p) for m, p in run.kube.methods} <= granted()


@pytest.mark.parametrize(
    ("prefix", "expect"),
    [
        ("/api/v1/nodes", ["stage 1 not checked: RBAC forbids listing nodes", "partly checked: RBAC forbids listing nodes"]),
        ("/api/v1/pods", ["stage 4 not checked: RBAC forbids listing pods", "stage 6 not checked: RBAC forbids listing pods"]),
        ("/apis/apps/v1/daemonsets", ["stage 2 not checked: RBAC forbids listing daemonsets"]),
        ("/api/v1/events", ["partly checked: RBAC forbids listing events"]),
        ("/apis/node.k8s.io/v1/runtimeclasses", ["partly checked: RBAC forbids listing runtimeclasses"]),
        ("/apis/resource.k8s.io/v1/", ["partly checked: RBAC forbids listing resourceslices"]),
        ("/api/v1/namespaces/gpu-operator/pods/nvidia-device-plugin-daemonset-1/log", ["partly checked: RBAC forbids reading pods/log"]),
        ("/api/v1/namespaces/video/configmaps", ["partly checked: RBAC forbids reading configmaps"]),
    ],
)
def test_every_forbidden_read_degrades_to_not_checked(run_doctor, prefix, expect):
    run = run_doctor(busy_state(), "--verbose", forbidden=(prefix,))
    # a stage not checked is never "healthy": problems found (1) or "not all checked" (5)
    assert run.exit_code in ((1, 5) if " not checked: " in run.output else (0, 1)), run.output + run.stderr
    assert not run.lines[0].startswith("imagelint doctor: healthy") or " not checked: " not in run.output
    for text in expect:
        assert text in run.output, run.output
    assert any(p.startswith(prefix) for p in run.kube.requests)


def test_a_role_that_allows_nothing_is_unreadable_not_healthy(run_doctor):
    run = run_doctor(busy_state(), forbidden=("/api/v1/", "/apis/"))
    assert run.exit_code == 3
    assert run.lines[0].startswith("imagelint doctor: nothing could be checked: stage 1 not checked: RBAC forbids listing nodes")
