"""Scenario clusters served by fakekube, diagnosed by the real CLI: the right stage, evidence and fix first."""

from __future__ import annotations

from tests.doctor.clusters import (
    GPU_NODES,
    add_deepstream,
    clone,
    container_status,
    event,
    find,
    healthy_state,
    pod,
)
from tests.support.fakekube import runtimeclass


def _stage_block(lines: list[str], number: int) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith(f"stage {number} "))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("stage ")), len(lines))
    return lines[start:end]


def test_healthy_cluster_exits_0(run_doctor):
    run = run_doctor(healthy_state())
    assert run.exit_code == 0, run.output
    assert run.lines[0].startswith("imagelint doctor: healthy: 2 GPU node(s), 1 GPU pod(s)")
    for number in range(1, 7):
        assert _stage_block(run.lines, number)[0].endswith(": ok"), run.output


def test_device_plugin_crashloop_with_nvml_failure_is_stage_2(run_doctor):
    state = clone(healthy_state())
    name = "nvidia-device-plugin-daemonset-1"
    find(state, name)["status"]["containerStatuses"] = [container_status(
        "nvidia-device-plugin", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", waiting="CrashLoopBackOff", restarts=12, last="Error")]
    state.pod_logs[("gpu-operator", name, "nvidia-device-plugin", True)] = (
        "I1201 08:00:01 main.go:279] Retrieving plugins.\n"
        "E1201 08:00:01 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\n"
        "E1201 08:00:01 factory.go:69] If this is a GPU node, did you set the docker default runtime to `nvidia`?\n"
    )
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 2 (device plugin registered)" in run.lines[0] and "node pool t4-pool" in run.lines[0]
    block = _stage_block(run.lines, 2)
    assert block[0].endswith("FAILED")
    assert "CrashLoopBackOff" in block[1] and "gpu-a-1" in block[1]
    assert any("log: E1201 08:00:01 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND." in l for l in block)
    assert any(l.strip().startswith("fix: Run the device plugin with the NVIDIA runtime") for l in block)
    # the pod's node is not judged again at stage 3; the other node is fine
    assert _stage_block(run.lines, 3)[0].endswith(": ok")
    data = run_doctor(state, "--format", "json", kube=run.kube).json
    f = data["stages"][1]["findings"][0]
    assert f["signature"] == "nvml-init-failed" and f["subject"]["nodes"] == ["gpu-a-1"]
    assert any("Failed to initialize NVML" in e.get("log_line", "") for e in f["evidence"])


def test_gpu_node_without_allocatable_gpus_is_stage_3(run_doctor):
    state = clone(healthy_state())
    node = find(state, "gpu-a-2")
    del node["status"]["allocatable"]["nvidia.com/gpu"]
    del node["status"]["capacity"]["nvidia.com/gpu"]
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 3 (node advertises the GPUs)" in run.lines[0]
    block = _stage_block(run.lines, 3)
    assert "gpu-a-2" in block[1] and "advertises no nvidia.com/* GPUs" in block[1]
    assert "evidence: Node gpu-a-2 status.allocatable: no nvidia.com/* resource" in block[2]
    assert _stage_block(run.lines, 2)[0].endswith(": ok")


def test_pending_pod_with_untolerated_gpu_taint_is_stage_4(run_doctor):
    state = clone(healthy_state())
    for name in GPU_NODES:
        find(state, name)["spec"]["taints"] = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}]
    message = ("0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint {nvidia.com/gpu: true}. "
               "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    state.pods.append(pod("ml", "llm-finetune-0", node=None, phase="Pending", gpus=1, unschedulable=message))
    state.events.append(event("ml", "Pod", "llm-finetune-0", "FailedScheduling", message))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 4 (scheduler can place the pod)" in run.lines[0] and "pod ml/llm-finetune-0" in run.lines[0]
    block = _stage_block(run.lines, 4)
    assert "tainted nvidia.com/gpu=true:NoSchedule" in block[1]
    text = "\n".join(block)
    assert "evidence: Node gpu-a-1 spec.taints: nvidia.com/gpu=true:NoSchedule" in text
    assert "event FailedScheduling: 0/3 nodes are available" in text
    assert "fix: Add a toleration" in text
    assert "Insufficient" not in block[1]  # the taint is the cause, not the CPU node's lack of GPUs


def test_node_selector_typo_names_the_nearest_label(run_doctor):
    state = clone(healthy_state())
    state.pods.append(pod("ml", "resnet-0", node=None, phase="Pending", nodeSelector={"hardware-type": "ai-trainng"},
                          unschedulable="0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 4" in run.lines[0] and "did you mean hardware-type=ai-training?" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert "evidence: Pod ml/resnet-0 spec.nodeSelector: hardware-type=ai-trainng (no node has it; nearest hardware-type=ai-training)" in block
    assert "didn't match Pod's node affinity/selector" in block


def test_requests_not_equal_limits_is_stage_4(run_doctor):
    """A Deployment with such a template is refused at its own create (422): the text reaches events
    through an operator that creates pods itself (here Kubeflow's training operator)."""
    state = clone(healthy_state())
    failed = event(
        "ml", "PyTorchJob", "trainer", "FailedCreate",
        'Error creating: Pod "trainer-worker-0" is invalid: spec.containers[0].resources.requests[nvidia.com/gpu]: '
        'Invalid value: "2": must be equal to nvidia.com/gpu limit of 1')
    failed["involvedObject"]["apiVersion"] = "kubeflow.org/v1"
    state.events.append(failed)
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 4" in run.lines[0] and "workload ml/trainer: PyTorchJob trainer cannot create its pods" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert "event FailedCreate: Error creating" in block and "must be equal to nvidia.com/gpu limit of 1" in block
    assert "fix: Set the GPU only under resources.limits" in block


def test_runtime_class_handler_no_node_configures_is_stage_5(run_doctor):
    state = clone(healthy_state())
    state.runtimeclasses.append(runtimeclass("nvidia-cdi", "nvidia-cdi"))
    message = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: '
               'no runtime for "nvidia-cdi" is configured')
    state.pods.append(pod("ml", "infer-0", node="gpu-a-2", phase="Pending", runtimeClassName="nvidia-cdi",
                          statuses=[container_status("main", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", waiting="ContainerCreating")]))
    state.events.append(event("ml", "Pod", "infer-0", "FailedCreatePodSandBox", message))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 5 (runtime hands the GPU to the container)" in run.lines[0] and "pod ml/infer-0" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 5))
    assert 'event FailedCreatePodSandBox: ' + message in block
    assert "evidence: Node gpu-a-2 status.runtimeHandlers: runc, nvidia (no nvidia-cdi)" in block
    assert "fix: Configure the handler on the node's runtime" in block


def test_deepstream_pods_pinning_gpu_0_share_it(run_doctor):
    state = clone(healthy_state())
    for index in (1, 2):
        add_deepstream(state, index, {"NVIDIA_VISIBLE_DEVICES": "all"})
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 6 (isolation" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 6))
    assert "pods video/deepstream-1, video/deepstream-2 all use GPU 0 of node gpu-a-2" in block
    assert "evidence: ConfigMap video/ds-config-1 data[config_infer_primary.txt] line 2: gpu-id=0" in block
    assert "NVIDIA_VISIBLE_DEVICES=all" in block
    assert "fix: Do not hard-code GPU indices" in block


def test_gpu_env_accepted_only_where_toolkit_accepts_it(run_doctor):
    """With accept-...-when-unprivileged=false (and no privilege) the pod's env is ignored: no finding."""
    state = clone(healthy_state())
    state.daemonsets[1]["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", "value": "false"}]
    state.pods.append(pod("video", "ds-1", node="gpu-a-2", env={"NVIDIA_VISIBLE_DEVICES": "all"}))
    run = run_doctor(state)
    assert run.exit_code == 0, run.output
    state.pods[-1]["spec"]["containers"][0]["securityContext"] = {"capabilities": {"add": ["SYS_ADMIN"]}}
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 6" in run.lines[0]


def test_cpu_only_pod_with_visible_devices_env_under_default_nvidia_runtime(run_doctor):
    state = clone(healthy_state())
    state.pods.append(pod("tools", "busybox-debug", node="gpu-a-1", gpus=None, image="busybox:1.36",
                          env={"NVIDIA_VISIBLE_DEVICES": "all"}))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 6" in run.lines[0] and "requests no GPU but sees GPUs all of node gpu-a-1" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 6))
    assert "default runtime: nvidia=true" in block
    # CDI on under the GPU Operator: nvidia is not the default runtime, the env does nothing
    state.daemonsets[1]["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "NVIDIA_RUNTIME_SET_AS_DEFAULT", "value": "false"}]
    assert run_doctor(state).exit_code == 0
