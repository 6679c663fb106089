"""Pods whose GPU comes through DRA ResourceClaims: the claim chain, stage by stage, live and from a dump.

Each scenario is served by fakekube with resource.k8s.io/v1 objects in the real API's shapes and
the scheduler's message as the v1.36 scheduler composes it (dynamicresources.go: PreFilter's
``request R: device class C does not exist`` / ``resourceclaim in use``, Filter's ``cannot
allocate all claims`` / ``resourceclaim not available on the node``, PostFilter's ``no new claims
to deallocate`` / ``still not schedulable``). The run_doctor fixture runs every scenario again
from a dump of the same objects and asserts the same findings.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tests.doctor.clusters import clone, healthy_state, pod
from tests.doctor.test_scenarios import _stage_block
from tests.support.fakekube import (
    GPU_CLASS_SELECTOR,
    FakeKube,
    claim_spec,
    device_class,
    gpu_device,
    resource_claim,
    resource_claim_template,
    resource_slice,
    scheduler_event,
)

PREEMPTION = "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."


def dra_state(*, classes: bool = True, slices: bool = True):
    """The healthy cluster plus NVIDIA's DRA driver: DeviceClass gpu.nvidia.com, one A100 slice per GPU node."""
    state = clone(healthy_state())
    state.deviceclasses = [device_class("gpu.nvidia.com", [GPU_CLASS_SELECTOR])] if classes else []
    state.resourceslices = [resource_slice(n, [gpu_device(0), gpu_device(1)]) for n in ("gpu-a-1", "gpu-a-2")] if slices else []
    state.resourceclaims, state.resourceclaimtemplates = [], []
    return state


def dra_pod(state, name: str, message: str, *, claim: str | None = None, template: str | None = None, **spec):
    entry = {"name": "gpu", **({"resourceClaimName": claim} if claim else {"resourceClaimTemplateName": template})}
    p = pod("ml", name, node=None, phase="Pending", gpus=None, unschedulable=message, resourceClaims=[entry], **spec)
    p["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    state.pods.append(p)
    state.events.append(scheduler_event("ml", name, message))
    return p


def test_no_device_class_is_stage_4_with_the_claim_and_the_classes_there_are(run_doctor):
    state = dra_state(classes=False)
    state.deviceclasses = [device_class("mig.nvidia.com", ["device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"])]
    state.resourceclaimtemplates = [resource_claim_template("ml", "one-gpu", claim_spec("gpu.nvidia.com"))]
    dra_pod(state, "trainer-0", "0/3 nodes are available: request gpu: device class gpu.nvidia.com does not exist. "
            f"no new claims to deallocate, {PREEMPTION}", template="one-gpu")
    run = run_doctor(state)
    assert run.exit_code == 1, run.output
    assert "stage 4 (scheduler can place the pod) fails for pod ml/trainer-0: request gpu asks for DeviceClass gpu.nvidia.com, which does not exist" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert "evidence: ResourceClaimTemplate ml/one-gpu spec.spec.devices.requests[0].exactly.deviceClassName: gpu.nvidia.com" in block
    assert "evidence: DeviceClass gpu.nvidia.com: not found (DeviceClasses: mig.nvidia.com)" in block
    assert "event FailedScheduling: 0/3 nodes are available: request gpu: device class gpu.nvidia.com does not exist" in block
    assert "fix: Install or enable the NVIDIA DRA driver's GPU resources" in block


def test_no_resourceslices_from_the_driver_is_stage_3_with_its_kubelet_plugin(run_doctor):
    state = dra_state(slices=False)
    plugin = {"metadata": {"name": "dra-driver-nvidia-gpu-kubelet-plugin", "namespace": "nvidia-dra-driver"},
              "spec": {"selector": {"matchLabels": {"app": "kubelet-plugin"}}, "template": {"metadata": {"labels": {"app": "kubelet-plugin"}},
                       "spec": {"containers": [{"name": "gpus", "image": "registry.k8s.io/dra-driver-nvidia/dra-driver-nvidia-gpu:v0.5.0"}]}}},
              "status": {"desiredNumberScheduled": 2, "numberReady": 0, "numberUnavailable": 2}}
    state.daemonsets.append(plugin)
    state.resourceclaimtemplates = [resource_claim_template("ml", "one-gpu", claim_spec())]
    dra_pod(state, "trainer-0", f"0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, {PREEMPTION}", template="one-gpu")
    run = run_doctor(state)
    assert run.exit_code == 1, run.output
    assert "stage 3 (node advertises the GPUs) fails for pod ml/trainer-0: no node publishes a device of gpu.nvidia.com" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 3))
    assert "evidence: ResourceSlice * spec.driver: no ResourceSlice of gpu.nvidia.com" in block
    assert "evidence: DaemonSet nvidia-dra-driver/dra-driver-nvidia-gpu-kubelet-plugin status: 0/2 pods Ready" in block
    assert "fix: Make the DRA driver's kubelet plugin run on the GPU nodes" in block


def test_a_selector_no_published_device_matches_is_stage_4(run_doctor):
    state = dra_state()
    want = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"
    state.resourceclaimtemplates = [resource_claim_template("ml", "h100", claim_spec(selectors=[want]))]
    dra_pod(state, "trainer-0", f"0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 cannot allocate all claims. "
            f"still not schedulable, {PREEMPTION}", template="h100")
    run = run_doctor(state)
    assert run.exit_code == 1, run.output
    assert "fails for pod ml/trainer-0: request gpu: no published device matches DeviceClass gpu.nvidia.com and its selectors" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert f"evidence: ResourceClaimTemplate ml/h100 spec.spec.devices.requests[0].exactly.selectors: {want}" in block
    assert "evidence: ResourceSlice * spec.devices: 4 device(s) of gpu.nvidia.com: NVIDIA A100-SXM4-80GB" in block
    # a selector the published devices do satisfy is no finding: the same pod asking for an A100 only waits on the scheduler
    state.resourceclaimtemplates = [resource_claim_template("ml", "h100", claim_spec(selectors=[want.replace("H100 80GB HBM3", "A100-SXM4-80GB")]))]
    run = run_doctor(state, kube=run.kube)
    assert "no published device matches" not in run.output
    assert "the scheduler says: 2 cannot allocate all claims" in run.output


def test_a_claim_already_reserved_by_another_pod_is_stage_4(run_doctor):
    state = dra_state()
    state.resourceclaims = [resource_claim("ml", "shared-a100", claim_spec(), allocated_on="gpu-a-1", reserved_for=["trainer-a"])]
    # the claim binds every pod that shares it to gpu-a-1, which this pod's selector leaves out
    dra_pod(state, "trainer-b", "0/3 nodes are available: 1 resourceclaim not available on the node, 2 node(s) didn't match Pod's node affinity/selector. "
            f"still not schedulable, {PREEMPTION}", claim="shared-a100", nodeSelector={"kubernetes.io/hostname": "gpu-a-2"})
    run = run_doctor(state)
    assert run.exit_code == 1, run.output
    assert "fails for pod ml/trainer-b: its ResourceClaim shared-a100 is allocated on node gpu-a-1 and reserved for pod trainer-a" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert "evidence: ResourceClaim ml/shared-a100 status.reservedFor: pods/trainer-a" in block
    assert "evidence: ResourceClaim ml/shared-a100 status.allocation.devices.results: gpu.nvidia.com/gpu-a-1/gpu-0 on node gpu-a-1" in block
    assert "fix: Give each pod its own claim" in block


def test_a_claim_that_does_not_exist_is_stage_4(run_doctor):
    state = dra_state()
    dra_pod(state, "trainer-0", f'0/3 nodes are available: resourceclaim.resource.k8s.io "shared-a10" not found. no new claims to deallocate, {PREEMPTION}',
            claim="shared-a10")
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "fails for pod ml/trainer-0: its ResourceClaim shared-a10 does not exist" in run.lines[0]
    assert "evidence: Pod ml/trainer-0 spec.resourceClaims[0].resourceClaimName: shared-a10" in run.output


def test_a_dump_without_dra_objects_says_so_and_judges_no_claim(tmp_path):
    """kubectl get without the resource.k8s.io kinds: the chain is 'not in the dump', never a pass or a guess."""
    from imagelint.cli import app
    from tests.support.dumps import kubectl_list

    state = dra_state(classes=False)
    state.deviceclasses = None
    dra_pod(state, "trainer-0", f"0/3 nodes are available: 3 cannot allocate all claims. still not schedulable, {PREEMPTION}", template="one-gpu")
    (tmp_path / "all.json").write_text(json.dumps(kubectl_list(state)))
    result = CliRunner().invoke(app, ["doctor", "--from", str(tmp_path / "all.json")])
    assert "partly checked: resourceclaimtemplates not in the dump: the DRA claim chain is not judged" in result.stdout
    assert "does not exist" not in result.stdout and "no node publishes" not in result.stdout
    assert "the scheduler says: 3 cannot allocate all claims" in result.stdout


def test_the_loopback_server_serves_resource_k8s_io_v1_as_the_real_one(tmp_path):
    """Discovery, typed list kinds and one object by name, read by the official client."""
    from kubernetes import client, config

    state = dra_state()
    state.resourceclaims = [resource_claim("ml", "c", claim_spec())]
    kube = FakeKube(state, tmp_path, "tok-0123456789abcdef0123456789").start()
    try:
        api = config.new_client_from_config(str(kube.write_kubeconfig(tmp_path / "kc")))
        dra = client.ResourceV1Api(api)
        listing = json.loads(dra.get_api_resources(_preload_content=False).data)
        assert listing["kind"] == "APIResourceList" and listing["groupVersion"] == "resource.k8s.io/v1"
        kinds = {r["name"]: (r["kind"], r["namespaced"]) for r in listing["resources"]}
        assert kinds["deviceclasses"] == ("DeviceClass", False) and kinds["resourceslices"] == ("ResourceSlice", False)
        assert kinds["resourceclaims"] == ("ResourceClaim", True) and kinds["resourceclaimtemplates"] == ("ResourceClaimTemplate", True)
        # the official client's typed models read every kind (a shape it does not know would not deserialize)
        slices = dra.list_resource_slice()
        assert slices.kind == "ResourceSliceList" and slices.items[0].kind == "ResourceSlice"
        assert slices.items[0].spec.devices[0].attributes["cudaComputeCapability"].version == "8.0.0"
        assert slices.items[0].spec.pool.name == "gpu-a-1" and slices.items[0].spec.node_name == "gpu-a-1"
        assert dra.list_device_class().items[0].spec.selectors[0].cel.expression == GPU_CLASS_SELECTOR
        claim = dra.read_namespaced_resource_claim("c", "ml")
        assert claim.spec.devices.requests[0].exactly.device_class_name == "gpu.nvidia.com"
        assert dra.list_namespaced_resource_claim_template("ml").kind == "ResourceClaimTemplateList"
    finally:
        kube.stop()
