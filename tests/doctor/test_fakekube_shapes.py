"""The suite's loopback API server answers in the real control plane's shapes
(``shared/reference/k8s-real-api.md``): what doctor and audit are tested against must be what a
cluster says, or the tests pin a fake's habits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import urllib3

from tests.doctor.clusters import container_status, find, healthy_state, pod
from tests.support.fakekube import FakeKube, not_ready, scheduler_event

TOKEN = "shapes-token-0123456789abcdef"
DEPLOYMENTS = "apis/apps/v1/deployments"


@pytest.fixture
def kube(tmp_path: Path):
    state = healthy_state()
    for i in range(25):
        state.pods.append(pod("bulk", f"p-{i:02d}", node="cpu-1", gpus=None, labels={"app": "bulk"}))
    state.objects[DEPLOYMENTS] = [{"apiVersion": "apps/v1", "kind": "Deployment",
                                   "metadata": {"name": "infer", "namespace": "ml", "resourceVersion": "4"}, "spec": {}}]
    state.writable.add(DEPLOYMENTS)
    state.events.append(scheduler_event("ml", "x", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."))
    running = FakeKube(state, tmp_path, TOKEN).start()
    yield running
    running.stop()


def _call(kube: FakeKube, method: str, path: str, body: dict | None = None) -> tuple[int, dict | str]:
    ca = kube.workdir / "ca.pem"
    ca.write_bytes(kube.ca.cert_pem)
    with urllib3.PoolManager(ca_certs=str(ca)) as http:
        answer = http.request(method, kube.url + path, headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
                              body=json.dumps(body) if body is not None else None, retries=False)
    try:
        return answer.status, json.loads(answer.data)
    except ValueError:
        return answer.status, answer.data.decode()


def test_pages_count_what_is_left_only_without_selectors(kube):
    status, page = _call(kube, "GET", "/api/v1/namespaces/bulk/pods?limit=10")
    assert status == 200 and len(page["items"]) == 10 and page["metadata"]["remainingItemCount"] == 15
    status, page = _call(kube, "GET", "/api/v1/namespaces/bulk/pods?limit=10&labelSelector=app%3Dbulk")
    assert page["metadata"]["continue"] and "remainingItemCount" not in page["metadata"]
    status, body = _call(kube, "GET", "/api/v1/namespaces/bulk/pods?limit=10&continue=bogus")
    assert status == 400 and body["message"].startswith("invalid continue token")
    status, body = _call(kube, "GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx")
    assert status == 400 and body["message"] == "field label not supported: spec.bogus"


def test_rbac_refusals_name_user_verb_resource_and_namespace(kube):
    kube.role_namespace = "default"
    status, body = _call(kube, "GET", "/api/v1/namespaces/ml/pods")
    assert status == 403 and body["reason"] == "Forbidden" and body["details"]["kind"] == "pods"
    assert body["message"] == 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "ml"'
    assert _call(kube, "GET", "/api/v1/namespaces/default/pods")[0] == 200


def test_logs_fail_the_way_the_kubelet_proxy_fails(kube):
    state = kube.state
    not_ready(find(state, "gpu-a-2"))
    path = "/api/v1/namespaces/gpu-operator/pods/nvidia-device-plugin-daemonset-2/log?container=nvidia-device-plugin"
    status, body = _call(kube, "GET", path)
    assert status == 500 and body["message"].startswith('Get "https://gpu-a-2:10250/containerLogs/gpu-operator/')
    assert body["message"].endswith("connect: connection refused")
    status, body = _call(kube, "GET", "/api/v1/namespaces/gpu-operator/pods/nvidia-device-plugin-daemonset-1/log"
                                      "?container=nvidia-device-plugin&previous=true")
    assert status == 400
    assert body["message"] == 'previous terminated container "nvidia-device-plugin" in pod "nvidia-device-plugin-daemonset-1" not found'
    find(state, "train-0")["status"]["containerStatuses"] = [container_status("main", "cuda", waiting="ContainerCreating")]
    status, body = _call(kube, "GET", "/api/v1/namespaces/ml/pods/train-0/log")
    assert status == 400 and body["message"] == 'container "main" in pod "train-0" is waiting to start: ContainerCreating'


def test_scheduler_events_carry_event_time_and_null_counts(kube):
    status, body = _call(kube, "GET", "/api/v1/namespaces/ml/events")
    event = body["items"][0]
    assert event["count"] is None and event["lastTimestamp"] is None and event["firstTimestamp"] is None
    assert event["source"].get("component") is None and event["reportingComponent"] == "default-scheduler" and event["eventTime"]


def test_writes_validate_like_the_api_server(kube):
    path = f"/{DEPLOYMENTS.replace('deployments', 'namespaces/ml/deployments')}"
    template = {"spec": {"containers": [{"name": "main", "image": "cuda",
                                          "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "2"}}}]}}
    status, body = _call(kube, "POST", path, {"kind": "Deployment", "metadata": {"name": "bad"}, "spec": {"template": template}})
    assert status == 422 and ('spec.template.spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "1": '
                              "must be equal to nvidia.com/gpu limit of 2") in body["message"]
    status, body = _call(kube, "PUT", f"{path}/infer", {"kind": "Deployment", "metadata": {"name": "infer"}, "spec": {}})
    assert status == 422 and "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update" in body["message"]
    status, body = _call(kube, "PUT", f"{path}/infer", {"kind": "Deployment", "metadata": {"name": "infer", "resourceVersion": "3"}})
    assert status == 409 and body["reason"] == "Conflict"
    assert _call(kube, "PUT", f"{path}/infer", {"kind": "Deployment", "metadata": {"name": "infer", "resourceVersion": "4"}})[0] == 200
