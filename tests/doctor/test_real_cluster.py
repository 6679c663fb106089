"""Doctor against what a real control plane answers (``shared/reference/k8s-real-api.md``, v1.36):
logs proxied to kubelets that fail, scheduler events with null counts, lifecycle taints, CPU
nodes beside GPU nodes, a namespace-scoped role. Each test names the headline a user reads."""

from __future__ import annotations

from tests.doctor.clusters import GPU_NODES, add_deepstream, clone, container_status, event, find, healthy_state, pod
from tests.doctor.test_scenarios import _stage_block
from tests.support.fakekube import not_ready, scheduler_event

PLUGIN = "nvidia-device-plugin-daemonset-1"
PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
NVML = "E1202 06:00:01.000000 1 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND."
PREEMPTION = " no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."


def _crashing_plugin(state, *, last_words: str | None = None, last: str | None = "Error") -> dict:
    status = container_status("nvidia-device-plugin", PLUGIN_IMAGE, waiting="CrashLoopBackOff", restarts=6, last=last)
    if last_words is not None:
        status["lastState"]["terminated"]["message"] = last_words
    find(state, PLUGIN)["status"]["containerStatuses"] = [status]
    return status


# --- 1. a log that cannot be read is a note; the diagnosis goes on --------------------------


def test_a_plugin_on_a_node_whose_kubelet_is_unreachable_is_diagnosed_from_its_last_words(run_doctor):
    """Before: exit 3, "reading the log ...: 500 Internal Server Error", no report."""
    state = clone(healthy_state())
    not_ready(find(state, "gpu-a-1"))
    _crashing_plugin(state, last_words=f"I1202 06:00:00 main.go:279] Retrieving plugins.\n{NVML}\n")
    run = run_doctor(state)
    assert run.exit_code == 1, run.output + run.stderr
    assert "stage 2 (device plugin registered)" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 2))
    assert (f"evidence: Pod gpu-operator/{PLUGIN} status.containerStatuses[nvidia-device-plugin].lastState.terminated.message: "
            f"{NVML}") in block
    assert "fix: Run the device plugin with the NVIDIA runtime" in block
    assert (f"log of pod gpu-operator/{PLUGIN} container nvidia-device-plugin (previous instance) not read: "
            '500 Internal Server Error: Get "https://gpu-a-1:10250/containerLogs/gpu-operator/') in run.output
    assert "connect: connection refused" in run.output


def test_a_crash_looping_plugin_without_a_previous_instance_is_still_diagnosed(run_doctor):
    """The kubelet answers 400 for previous=true when it kept no earlier container. Before: exit 3."""
    state = clone(healthy_state())
    _crashing_plugin(state, last=None)
    run = run_doctor(state)
    assert run.exit_code == 1, run.output + run.stderr
    block = "\n".join(_stage_block(run.lines, 2))
    assert "device plugin pod is not Ready (nvidia-device-plugin CrashLoopBackOff)" in block
    assert (f'not read: 400 Bad Request: previous terminated container "nvidia-device-plugin" in pod "{PLUGIN}" not found') in run.output


def test_a_log_far_larger_than_asked_for_is_read_to_the_byte_limit(run_doctor):
    """A server that ignores limitBytes and sends 80 MiB. Before: exit 3, "larger than 64 MiB"."""
    state = clone(healthy_state())
    _crashing_plugin(state)
    state.pod_logs[("gpu-operator", PLUGIN, "nvidia-device-plugin", True)] = f"I1202 main.go:279] Retrieving plugins.\n{NVML}\n"
    run = run_doctor(state, oversize_logs=80 * 2**20)
    assert run.exit_code == 1, run.output + run.stderr
    block = "\n".join(_stage_block(run.lines, 2))
    assert f"log: {NVML}" in block
    assert "(previous instance) truncated: the server sent more than asked for" in run.output


def test_a_log_request_that_never_answers_is_a_note_not_the_end(run_doctor):
    """Before: exit 3, "reading the log ...: no answer within 2s (read timeout)"."""
    state = clone(healthy_state())
    _crashing_plugin(state, last_words=NVML)
    run = run_doctor(state, "--timeout", "2", stall_logs=True)
    assert run.exit_code == 1, run.output + run.stderr
    assert "fails for node pool t4-pool: device plugin pod is not Ready" in run.lines[0]
    assert "(previous instance) not read: no answer within 2s (read timeout)" in run.output
    assert f"lastState.terminated.message: {NVML}" in run.output


# --- 2. no false all-clear ---------------------------------------------------------------


def test_a_namespace_scoped_user_with_a_pending_gpu_pod_is_not_told_healthy(run_doctor):
    """Before: exit 0, "healthy: 0 GPU node(s), 1 GPU pod(s), every checked stage ok; 5 stage(s) not checked"."""
    state = clone(healthy_state())
    message = ("0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu." + PREEMPTION)
    state.pods.append(pod("ml", "big-0", node=None, phase="Pending", gpus=16, unschedulable=message))
    state.events.append(scheduler_event("ml", "big-0", message))
    run = run_doctor(state, "--namespace", "ml", role_namespace="ml")
    assert run.exit_code == 1, run.output
    assert "healthy" not in run.lines[0]
    assert "stage 4 (scheduler can place the pod) fails for pod ml/big-0" in run.lines[0]
    block = "\n".join(_stage_block(run.lines, 4))
    assert "event FailedScheduling: 0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient nvidia.com/gpu" in block
    assert "partly checked: RBAC forbids listing nodes" in block


def test_a_namespace_scoped_user_with_nothing_wrong_in_sight_gets_incomplete_not_healthy(run_doctor):
    """Before: exit 0 "healthy". Now: a distinct exit status and what could not be checked."""
    run = run_doctor(clone(healthy_state()), "--namespace", "ml", role_namespace="ml")
    assert run.exit_code == 5, run.output
    assert run.lines[0].startswith("imagelint doctor: not all checked: no problem seen in 1 GPU pod(s);")
    assert "stage 1 not checked: RBAC forbids listing nodes" in run.lines[0]
    assert "healthy" not in run.output.split("\n", 1)[0]


# --- 3. stages agree ---------------------------------------------------------------------


def test_gpu_nodes_that_stopped_reporting_block_scheduling_advice(run_doctor):
    """Before: stage 4 "every GPU node it could use is tainted node.kubernetes.io/unreachable... Add a toleration"."""
    state = clone(healthy_state())
    for name in GPU_NODES:
        not_ready(find(state, name))
    message = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)." + PREEMPTION
    state.pods.append(pod("ml", "wait-0", node=None, phase="Pending", gpus=1, unschedulable=message))
    state.events.append(scheduler_event("ml", "wait-0", message))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 3 (node advertises the GPUs)" in run.lines[0]
    assert "Add a toleration" not in run.output and "toleration" not in "\n".join(_stage_block(run.lines, 4))
    assert _stage_block(run.lines, 4)[0].startswith("stage 4 scheduler can place the pod: blocked"), run.output
    assert "Insufficient" not in "\n".join(_stage_block(run.lines, 4)[1:2])


def test_old_style_taint_message_naming_a_lifecycle_taint_is_no_toleration_advice(run_doctor):
    state = clone(healthy_state())
    not_ready(find(state, "gpu-a-2"), unreachable=False)
    find(state, "gpu-a-2")["metadata"]["labels"]["rack"] = "r2"
    message = ("0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, "
               "2 node(s) didn't match Pod's node affinity/selector.")
    state.pods.append(pod("ml", "pin-0", node=None, phase="Pending", gpus=1, nodeSelector={"rack": "r2"},
                          unschedulable=message))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "stage 3 (node advertises the GPUs) fails for node pool t4-pool: the node is not Ready" in run.lines[0]
    assert "Add a toleration" not in run.output and "toleration" not in "\n".join(_stage_block(run.lines, 4)), run.output
    assert _stage_block(run.lines, 4)[0] == "stage 4 scheduler can place the pod: blocked (what it judges fails an earlier stage)"


def test_cordoned_gpu_nodes_are_kept_off_by_kubernetes_not_by_a_missing_toleration(run_doctor):
    """Ready nodes (stage 3 passes) that were cordoned. Before: "Add a toleration" for node.kubernetes.io/unschedulable."""
    state = clone(healthy_state())
    for name in GPU_NODES:
        node = find(state, name)
        node["spec"]["unschedulable"] = True
        node["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]
    message = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)." + PREEMPTION
    state.pods.append(pod("ml", "cordoned-0", node=None, phase="Pending", gpus=1, unschedulable=message))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert ("pod ml/cordoned-0: every GPU node it could use is kept off by Kubernetes (node.kubernetes.io/unschedulable)"
            in run.lines[0]), run.output
    assert "toleration for node.kubernetes.io/*" in run.output and "Add a toleration" not in run.output


# --- 4. the scheduler's message read as counts -------------------------------------------


def test_the_cpu_nodes_insufficient_gpu_is_not_a_second_cause(run_doctor):
    """Before: "the scheduler says: insufficient gpu" (ask for fewer GPUs) beside the taint."""
    state = clone(healthy_state())
    for name in GPU_NODES:
        find(state, name)["spec"]["taints"] = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    message = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) had untolerated taint(s)." + PREEMPTION
    state.pods.append(pod("ml", "tainted-0", node=None, phase="Pending", gpus=1, unschedulable=message))
    state.events.append(scheduler_event("ml", "tainted-0", message))
    run = run_doctor(state)
    assert run.exit_code == 1
    block = _stage_block(run.lines, 4)
    causes = [line for line in block if line.startswith("  pod ")]
    assert len(causes) == 1 and "tainted dedicated=infra:NoSchedule" in causes[0], run.output
    assert "Ask for fewer GPUs" not in "\n".join(block)


def test_did_you_mean_never_offers_a_cpu_only_nodes_label_to_a_gpu_pod(run_doctor):
    """Before: "nodeSelector hardware-type=ai-server: did you mean hardware-type=cpu-server?"."""
    state = clone(healthy_state())
    find(state, "cpu-1")["metadata"]["labels"]["hardware-type"] = "cpu-server"
    state.pods.append(pod("ml", "sel-0", node=None, phase="Pending", gpus=1, nodeSelector={"hardware-type": "ai-server"},
                          unschedulable="0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector." + PREEMPTION))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "cpu-server" not in run.output
    assert "stage 4" in run.lines[0] and "nodeSelector hardware-type=ai-server" in run.lines[0]


def test_more_gpus_than_any_node_has_can_never_be_scheduled(run_doctor):
    """Before: "no node it can use has 16 free nvidia.com/gpu"."""
    state = clone(healthy_state())
    for name in GPU_NODES:
        node = find(state, name)
        node["status"]["capacity"]["nvidia.com/gpu"] = node["status"]["allocatable"]["nvidia.com/gpu"] = "8"
    message = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." + PREEMPTION
    state.pods.append(pod("ml", "huge-0", node=None, phase="Pending", gpus=16, unschedulable=message))
    state.events.append(scheduler_event("ml", "huge-0", message))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert ("pod ml/huge-0: no node has 16 nvidia.com/gpu at all (the largest has 8): this pod can never be scheduled"
            in run.output), run.output
    assert "free" not in "\n".join(_stage_block(run.lines, 4)[1:2])


def test_the_scheduler_latest_word_wins_whatever_timestamp_it_carries(run_doctor):
    """An old core/v1 event (lastTimestamp, count) listed after the scheduler's newer one (eventTime,
    null count). Before: the older message was shown as the scheduler's word."""
    state = clone(healthy_state())
    newer = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu." + PREEMPTION
    older = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    for name in ("gpu-a-1", "gpu-a-2"):
        state.pods.append(pod("ml", f"hog-{name}", node=name, gpus=2))
    find(state, "train-0")["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "0"
    state.pods.append(pod("ml", "late-0", node=None, phase="Pending", gpus=1))
    state.events.append(scheduler_event("ml", "late-0", newer, at="2026-12-02T06:10:00.000001Z"))
    old = event("ml", "Pod", "late-0", "FailedScheduling", older)
    old["lastTimestamp"] = "2026-12-02T05:00:00Z"
    state.events.append(old)
    run = run_doctor(state)
    block = "\n".join(_stage_block(run.lines, 4))
    assert "event FailedScheduling: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu" in block, run.output
    assert "didn't match" not in block


# --- 5. evidence used ------------------------------------------------------------------------


def test_a_validator_stuck_in_init_is_named_where_gpus_are_not_advertised(run_doctor):
    """Before: only "the node advertises no nvidia.com/* GPUs"."""
    state = clone(healthy_state())
    node = find(state, "gpu-a-2")
    del node["status"]["allocatable"]["nvidia.com/gpu"]
    del node["status"]["capacity"]["nvidia.com/gpu"]
    done = {"terminated": {"reason": "Completed", "exitCode": 0}}
    validator = pod("gpu-operator", "nvidia-operator-validator-x7k2p", node="gpu-a-2", gpus=None, phase="Pending",
                    container="nvidia-operator-validator", image="nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.0",
                    owner=("DaemonSet", "nvidia-operator-validator"), labels={"app": "nvidia-operator-validator"},
                    statuses=[container_status("nvidia-operator-validator", "v", waiting="PodInitializing")])
    validator["spec"]["initContainers"] = [{"name": n, "image": "v"} for n in
                                           ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation")]
    validator["status"]["initContainerStatuses"] = [
        {"name": n, "image": "v", "imageID": "", "ready": True, "restartCount": 0, "state": done}
        for n in ("driver-validation", "toolkit-validation", "cuda-validation")
    ] + [{"name": "plugin-validation", "image": "v", "imageID": "", "ready": False, "restartCount": 0,
          "state": {"running": {"startedAt": "2026-12-02T05:00:00Z"}}}]
    state.pods.append(validator)
    run = run_doctor(state)
    block = "\n".join(_stage_block(run.lines, 3))
    assert "node pool t4-pool (nodes gpu-a-2): the node advertises no nvidia.com/* GPUs" in block  # its node group, whatever it advertises
    assert ("evidence: Pod gpu-operator/nvidia-operator-validator-x7k2p status: Init:3/4 "
            "(plugin-validation running, not complete)") in block, run.output


def test_a_privileged_container_without_the_env_sees_every_gpu_and_collides(run_doctor):
    """Before: only deepstream-1's env was found; the collision with the privileged pod was missed."""
    state = clone(healthy_state())
    add_deepstream(state, 1, {"NVIDIA_VISIBLE_DEVICES": "all"})
    add_deepstream(state, 2, None)["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    run = run_doctor(state)
    block = "\n".join(_stage_block(run.lines, 6))
    assert "pods video/deepstream-1, video/deepstream-2 all use GPU 0 of node gpu-a-2" in block, run.output


def test_a_deployments_failed_create_is_named_by_its_deployment(run_doctor):
    """Before: "workload ml/infer-5f676786d4: ReplicaSet infer-5f676786d4 cannot create its pods"."""
    state = clone(healthy_state())
    state.objects["apis/apps/v1/replicasets"] = [{
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": "infer-5f676786d4", "namespace": "ml", "labels": {"pod-template-hash": "5f676786d4"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "infer", "controller": True}]},
        "spec": {}, "status": {"replicas": 0}}]
    state.events.append(event("ml", "ReplicaSet", "infer-5f676786d4", "FailedCreate",
                              'Error creating: pods "infer-5f676786d4-" is forbidden: pod rejected: RuntimeClass "nvidia-legacy" not found'))
    run = run_doctor(state)
    assert run.exit_code == 1
    assert "workload ml/infer: Deployment infer cannot create its pods" in run.output, run.output
    assert "evidence: ReplicaSet ml/infer-5f676786d4 event FailedCreate" in run.output
    # its pods too: one that got created before the RuntimeClass went away sits Pending
    state.pods.append(pod("ml", "infer-5f676786d4-x2x9p", node=None, phase="Pending", owner=("ReplicaSet", "infer-5f676786d4"),
                          labels={"pod-template-hash": "5f676786d4"}, nodeSelector={"zone": "mars"}))
    run = run_doctor(state, kube=run.kube)
    assert "pod ml/infer-5f676786d4-x2x9p (Deployment infer): nodeSelector zone=mars" in run.output, run.output


def test_two_identical_nodes_without_a_node_group_label_are_one_pool(run_doctor):
    """Before: two findings, "node pool gpu-a-1" and "node pool gpu-a-2"."""
    state = clone(healthy_state())
    for name in GPU_NODES:
        node = find(state, name)
        del node["metadata"]["labels"]["eks.amazonaws.com/nodegroup"]
        del node["status"]["allocatable"]["nvidia.com/gpu"]
        del node["status"]["capacity"]["nvidia.com/gpu"]
    run = run_doctor(state)
    entries = [line for line in _stage_block(run.lines, 3) if line.startswith("  node pool ")]
    assert len(entries) == 1 and "(nodes gpu-a-1, gpu-a-2)" in entries[0], run.output
    # one broken, one fine: the pool is their stack, so the broken one is still in pool Tesla-T4-550.54.15
    find(state, "gpu-a-1")["status"]["allocatable"]["nvidia.com/gpu"] = find(state, "gpu-a-1")["status"]["capacity"]["nvidia.com/gpu"] = "2"
    assert "fails for node pool Tesla-T4-550.54.15: the node advertises no" in run_doctor(state, kube=run.kube).lines[0]


def test_the_pods_condition_is_labelled_as_a_condition_not_an_event(run_doctor):
    """The scheduler's words read from status.conditions[PodScheduled] when no event is readable."""
    state = clone(healthy_state())
    message = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    state.pods.append(pod("ml", "cond-0", node=None, phase="Pending", gpus=1, nodeSelector={"zone": "mars"}, unschedulable=message))
    run = run_doctor(state)
    block = "\n".join(_stage_block(run.lines, 4))
    assert f"evidence: Pod ml/cond-0 status.conditions[PodScheduled]: False Unschedulable: {message}" in block, run.output
    assert "event FailedScheduling" not in block
