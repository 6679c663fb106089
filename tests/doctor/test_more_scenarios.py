"""More of each stage's common failures, and the cases where doctor must stay quiet."""

from __future__ import annotations

from tests.doctor.clusters import clone, container_status, event, find, healthy_state, pod
from tests.doctor.test_scenarios import _stage_block
from tests.support.fakekube import claim_spec, resource_claim_template


def test_driver_library_mismatch_in_the_plugin_log_is_stage_1_not_2(run_doctor):
    state = clone(healthy_state())
    name = "nvidia-device-plugin-daemonset-2"
    find(state, name)["status"]["containerStatuses"] = [container_status(
        "nvidia-device-plugin", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", waiting="CrashLoopBackOff", restarts=4)]
    state.pod_logs[("gpu-operator", name, "nvidia-device-plugin", True)] = (
        "Loading NVML\nFailed to initialize NVML: Driver/library version mismatch\n")
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 1 (driver ready on the node)" in run.lines[0] and "node pool t4-pool" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 1))
    assert "log: Failed to initialize NVML: Driver/library version mismatch" in block and "fix: Reboot the node" in block
    # the same node is not reported again at stage 2 (the plugin's failure is the driver's echo)
    assert _stage_block(run.lines, 2)[0].endswith(": ok")


def test_all_gpus_taken_is_insufficient_with_the_scheduler_words(run_doctor):
    state = clone(healthy_state())
    for i, node in enumerate(("gpu-a-1", "gpu-a-2")):
        state.pods.append(pod("ml", f"hog-{i}", node=node, gpus=2))
    find(state, "train-0")["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "0"
    message = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 3 No preemption victims found."
    state.pods.append(pod("ml", "waiting-1", node=None, phase="Pending", gpus=1, unschedulable=message))
    state.events.append(event("ml", "Pod", "waiting-1", "FailedScheduling", message))
    run = run_doctor(state)
    assert run.exit_code == 1
    block = "\n".join(_stage_block(run.lines, 4))
    assert "pod ml/waiting-1: no node it can use has 1 free nvidia.com/gpu" in block
    assert "status.allocatable minus GPUs of pods on it: 0 free" in block
    assert "event FailedScheduling: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu" in block


def test_host_users_false_on_a_gpu_pod_is_stage_5(run_doctor):
    state = clone(healthy_state())
    find(state, "train-0")["spec"]["hostUsers"] = False
    run = run_doctor(state)
    assert run.exit_code == 1
    block = "\n".join(_stage_block(run.lines, 5))
    assert "pod ml/train-0: a GPU pod with hostUsers: false" in block
    assert "evidence: Pod ml/train-0 spec.hostUsers: false" in block


def test_missing_runtime_class_rejected_at_admission_is_stage_5(run_doctor):
    state = clone(healthy_state())
    state.events.append(event("ml", "ReplicaSet", "infer-6d4", "FailedCreate",
                              'Error creating: pods "infer-6d4-" is forbidden: pod rejected: RuntimeClass "nvidia-legacy" not found'))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 5" in run.lines[0] and "workload ml/infer-6d4" in run.lines[0]
    assert "fix: Create the RuntimeClass" in "\n".join(_stage_block(run.lines, 5))


def test_unrelated_warnings_and_a_restarting_cpu_pod_keep_the_cluster_healthy(run_doctor):
    state = clone(healthy_state())
    state.events.append(event("web", "Pod", "frontend-1", "BackOff", "Back-off restarting failed container nginx"))
    state.events.append(event("web", "Pod", "frontend-1", "FailedScheduling", "0/3 nodes are available: 3 node(s) had volume node affinity conflict."))
    find(state, "frontend-1")["status"]["containerStatuses"] = [container_status("main", "nginx:1.27", waiting="CrashLoopBackOff", restarts=9)]
    run = run_doctor(state)
    assert run.exit_code == 0, run.output


def test_gpu_pod_pinned_alone_is_reported_once_as_env_not_as_collision(run_doctor):
    state = clone(healthy_state())
    state.configmaps[("video", "one")] = {"app.yaml": "gpu_id: 0\n"}
    state.pods.append(pod("video", "solo", node="gpu-a-1", env={"NVIDIA_VISIBLE_DEVICES": "0"},
                          volumes=[{"name": "c", "configMap": {"name": "one"}}], volumeMounts=[{"name": "c", "mountPath": "/c"}]))
    run = run_doctor(state)
    assert run.exit_code == 1
    block = "\n".join(_stage_block(run.lines, 6))
    assert "container main sets NVIDIA_VISIBLE_DEVICES and the toolkit honours it" in block
    assert "all use GPU" not in block


def test_a_gpu_shortage_caused_by_a_broken_plugin_points_at_stage_2(run_doctor):
    state = clone(healthy_state())
    for name in ("nvidia-device-plugin-daemonset-1", "nvidia-device-plugin-daemonset-2"):
        find(state, name)["status"]["containerStatuses"] = [container_status(
            "nvidia-device-plugin", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", waiting="CrashLoopBackOff", restarts=7)]
    for node in ("gpu-a-1", "gpu-a-2"):
        del find(state, node)["status"]["allocatable"]["nvidia.com/gpu"]
    state.pods.append(pod("ml", "stuck", node=None, phase="Pending", gpus=1))
    run = run_doctor(state)
    assert "stage 2 (device plugin registered)" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert "no node advertises nvidia.com/gpu (while 2 GPU node(s) fail stage 2: fix that first)" in block
    # blocked nodes are not judged again, and the stage says so rather than "ok"
    assert _stage_block(run.lines, 3)[0] == "stage 3 node advertises the GPUs: blocked (what it judges fails an earlier stage)"


def test_a_gpu_monitoring_daemonset_that_sees_all_gpus_is_not_an_isolation_problem(run_doctor):
    state = clone(healthy_state())
    for n in ("gpu-a-1", "gpu-a-2"):
        state.pods.append(pod("gpu-operator", f"nvidia-dcgm-exporter-{n[-1]}", node=n, gpus=None, owner=("DaemonSet", "nvidia-dcgm-exporter"),
                              image="nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04", runtimeClassName="nvidia",
                              env={"NVIDIA_VISIBLE_DEVICES": "all"}))
    assert run_doctor(state).exit_code == 0
    # ... also when DaemonSets cannot be listed (stage 2 not checked, isolation still quiet)
    run = run_doctor(state, forbidden=("/apis/apps/v1/daemonsets",))
    assert "stage 2 not checked" in run.output and "stage 6 isolation (no stage reports it): ok" in run.output


def test_a_daemonset_that_asks_for_gpus_is_still_scheduled_and_judged(run_doctor):
    state = clone(healthy_state())
    state.pods.append(pod("edge", "infer-agent-x", node=None, phase="Pending", gpus=1, owner=("DaemonSet", "infer-agent"),
                          nodeSelector={"hardware-type": "ai-trainng"}))
    run = run_doctor(state)
    assert run.exit_code == 1 and "pod edge/infer-agent-x" in run.lines[0]


def test_a_failing_plugin_too_old_for_the_driver_names_that_too(run_doctor, tmp_path):
    from imagelint.matrix import load_matrix

    floor = load_matrix().device_plugin_requirement("min_driver")
    if not floor:
        import pytest

        pytest.skip("the shipped matrix states no device plugin driver floor")
    state = clone(healthy_state())
    node = find(state, "gpu-a-1")
    major = int(str(floor).split(".")[0]) - 10
    node["metadata"]["labels"]["nvidia.com/cuda.driver-version.full"] = f"{major}.60.13"
    for key, value in (("major", str(major)), ("minor", "60"), ("revision", "13")):
        node["metadata"]["labels"][f"nvidia.com/cuda.driver-version.{key}"] = value
    find(state, "nvidia-device-plugin-daemonset-1")["status"]["containerStatuses"] = [container_status(
        "nvidia-device-plugin", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", waiting="CrashLoopBackOff", restarts=2)]
    run = run_doctor(state)
    block = "\n".join(_stage_block(run.lines, 2))
    assert f"needs driver >= {floor}, pool has {major}.60.13" in block, run.output


def test_a_dra_pod_whose_device_class_does_not_exist(run_doctor):
    state = clone(healthy_state())
    message = ('0/3 nodes are available: resourceclaim "gpu-claim-x7": device class gpu.nvidia.com does not exist. '
               "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    p = pod("ml", "dra-train", node=None, phase="Pending", gpus=None, unschedulable=message,
            resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    p["spec"]["containers"][0]["resources"] = {"claims": [{"name": "gpu"}]}
    state.pods.append(p)
    state.deviceclasses, state.resourceslices, state.resourceclaims = [], [], []
    state.resourceclaimtemplates = [resource_claim_template("ml", "one-gpu", claim_spec("gpu.nvidia.com"))]
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 4" in run.lines[0] and "pod ml/dra-train" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert "device class gpu.nvidia.com does not exist" in block and "fix: Install or enable the NVIDIA DRA driver" in block


def test_gpus_advertised_by_another_device_plugin_are_not_a_missing_plugin(run_doctor):
    state = clone(healthy_state())
    node = find(state, "gpu-a-2")
    node["metadata"]["labels"]["nvidia.com/gpu.deploy.device-plugin"] = "false"
    node["metadata"]["labels"]["nvidia.com/gpu.present"] = "false"  # the plugin's affinity no longer selects it
    del node["status"]["allocatable"]["nvidia.com/gpu"]
    node["status"]["allocatable"]["nvidia.com/GA100_A100_PCIE_40GB"] = "1"  # KubeVirt's sandbox plugin
    state.pods = [p for p in state.pods if p["metadata"]["name"] != "nvidia-device-plugin-daemonset-2"]
    run = run_doctor(state)
    assert run.exit_code == 0, run.output
    # without any advertised GPU, the same node is a missing plugin
    del node["status"]["allocatable"]["nvidia.com/GA100_A100_PCIE_40GB"]
    run = run_doctor(state, kube=run.kube)
    assert "stage 2 (device plugin registered)" in run.lines[0] and "no device plugin runs on the node" in run.lines[0]


def test_a_driver_event_on_the_node_itself_is_stage_1(run_doctor):
    state = clone(healthy_state())
    e = event("default", "Node", "gpu-a-1", "DriverNotLoaded", "nvml error: driver not loaded on gpu-a-1")
    e["involvedObject"].pop("namespace")  # as the API server files node events: metadata.namespace default only
    state.events.append(e)
    run = run_doctor(state)
    assert run.exit_code == 1 and "stage 1 (driver ready on the node)" in run.lines[0]
    assert "Node gpu-a-1 event DriverNotLoaded: nvml error: driver not loaded" in run.output
