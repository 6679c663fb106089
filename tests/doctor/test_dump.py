"""doctor --from: each dump shape the real tools write, built here from a scenario cluster (our own
fixtures in kubectl's / the GPU Operator's layouts), diagnosed as the live cluster is."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from tests.doctor.clusters import clone, container_status, find, healthy_state, pod
from tests.doctor.conftest import TOKEN, finding_lines
from tests.support.dumps import (
    cluster_info_stdout,
    kubectl_list,
    write_cluster_info_dump,
    write_must_gather,
)
from tests.support.fakekube import FakeKube

NVML = "E1201 08:00:01 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\n"


def _doctor(*args: str, stdin: str | None = None):
    from imagelint.cli import app

    return CliRunner().invoke(app, ["doctor", *args], input=stdin)


def crashing_plugin_state():
    """The device plugin on gpu-a-1 crash-loops on NVML (its previous instance's log says so), and a
    Pending pod's nodeSelector has a typo: a stage-2 and a stage-4 finding."""
    state = clone(healthy_state())
    name = "nvidia-device-plugin-daemonset-1"
    find(state, name)["status"]["containerStatuses"] = [container_status(
        "nvidia-device-plugin", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", waiting="CrashLoopBackOff", restarts=12, last="Error")]
    state.pod_logs[("gpu-operator", name, "nvidia-device-plugin", True)] = "I1201 08:00:01 main.go:279] Retrieving plugins.\n" + NVML
    state.pods.append(pod("ml", "sweep-0", node=None, phase="Pending", nodeSelector={"hardware-type": "ai-trainng"}))
    return state


def _live(tmp_path: Path, state, *args: str):
    kube = FakeKube(state, tmp_path, TOKEN).start()
    config = kube.write_kubeconfig(tmp_path / "kubeconfig")
    return kube, _doctor("--cluster", "--kubeconfig", str(config), *args)


def test_kubectl_get_all_namespaces_as_one_list_yaml_json_and_documents(tmp_path):
    state = crashing_plugin_state()
    kube, live = _live(tmp_path, state, "--format", "json")
    try:
        assert live.exit_code == 1
        listing = kubectl_list(state)
        (tmp_path / "list.yaml").write_text(yaml.safe_dump(listing))
        (tmp_path / "list.json").write_text(json.dumps(listing))
        (tmp_path / "docs.yaml").write_text(yaml.safe_dump_all(listing["items"]))  # several documents, one object each
        for name in ("list.yaml", "list.json", "docs.yaml"):
            run = _doctor("--from", str(tmp_path / name), "--format", "json")
            assert run.exit_code == 1, run.stdout + run.stderr
            data = json.loads(run.stdout)
            stage4 = data["stages"][3]["findings"]
            assert [(f["signature"], f["subject"]["name"]) for f in stage4] == [("selector-matches-no-node", "ml/sweep-0")]
            # kubectl get has no logs: the crash is seen, its log evidence is "not in the dump"
            stage2 = data["stages"][1]
            assert stage2["findings"][0]["subject"]["nodes"] == ["gpu-a-1"]
            notes = [n for s in data["stages"] for n in s["notes"]]
            assert any("(previous instance) not read: not in the dump" in n for n in notes), notes
            assert data["cluster"]["server"] == f"dump {tmp_path / name}"
        # same stage-4 findings as live (logs aside, the objects are the same)
        assert finding_lines(live.stdout)[-1] == finding_lines(run.stdout)[-1]
    finally:
        kube.stop()


def test_cluster_info_dump_directory_and_stdout(tmp_path):
    state = crashing_plugin_state()
    kube, _ = _live(tmp_path, state)
    try:
        root = write_cluster_info_dump(kube, tmp_path / "cluster-info")
        assert (root / "nodes.json").is_file() and (root / "gpu-operator" / "pods.json").is_file()
        assert "==== START logs for container nvidia-device-plugin of pod gpu-operator/nvidia-device-plugin-daemonset-2 ====" in \
            (root / "gpu-operator" / "nvidia-device-plugin-daemonset-2" / "logs.txt").read_text()
        run = _doctor("--from", str(root))
        assert run.exit_code == 1, run.stdout + run.stderr
        assert "stage 2 (device plugin registered)" in run.stdout.splitlines()[0]
        # the plugin's current log is in logs.txt; its crashed instance's is not (cluster-info dump has no --previous)
        assert "log of pod gpu-operator/nvidia-device-plugin-daemonset-1 container nvidia-device-plugin (previous instance) not read: not in the dump" in run.stdout
        assert "partly checked: runtimeclasses not in the dump" in run.stdout
        stdout = _doctor("--from", "-", stdin=cluster_info_stdout(kube))
        assert stdout.exit_code == 1
        assert finding_lines(stdout.stdout) == finding_lines(run.stdout)
    finally:
        kube.stop()


def test_gpu_operator_must_gather(tmp_path):
    state = crashing_plugin_state()
    kube, live = _live(tmp_path, state)
    try:
        root = write_must_gather(kube, tmp_path / "must-gather")
        run = _doctor("--from", str(root), "--verbose")
        assert run.exit_code == 1, run.stdout + run.stderr
        lines = run.stdout.splitlines()
        # nodes come back from gpu_nodes.descr, the crashed plugin's last words from its .previous.log
        assert "stage 2 (device plugin registered) fails for node pool t4-pool" in lines[0]
        assert "log: E1201 08:00:01 factory.go:68] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND." in run.stdout
        # only the operator's pods are in a must-gather: the workload stages are not checked, never "ok"
        assert "stage 4 not checked: pods not in the dump (only namespace(s) gpu-operator" in run.stdout
        assert "stage 4 scheduler can place the pod: not checked" in run.stdout
        live_stage2 = [l for l in finding_lines(live.stdout) if "Failed to initialize NVML" in l]
        assert live_stage2 and all(l in finding_lines(run.stdout) for l in live_stage2)
    finally:
        kube.stop()


def test_a_dump_that_lacks_what_a_stage_needs_exits_5_not_0(tmp_path):
    state = clone(healthy_state())
    listing = kubectl_list(state)
    listing["items"] = [i for i in listing["items"] if i["kind"] != "DaemonSet"]
    (tmp_path / "no-ds.yaml").write_text(yaml.safe_dump(listing))
    run = _doctor("--from", str(tmp_path / "no-ds.yaml"))
    assert run.exit_code == 5, run.stdout
    assert "stage 2 not checked: daemonsets not in the dump" in run.stdout
    assert not run.stdout.startswith("imagelint doctor: healthy")


def test_a_target_snapshot_is_read_and_every_stage_is_not_in_it(tmp_path):
    snapshot = tmp_path / "pools.toml"
    snapshot.write_text('# imagelint target (from flags)\n\n[[pool]]\nname = "t4"\ndriver = "550.54.15"\nnode-count = 1\n'
                        'gpus = [\n    { product = "T4", compute-capability = "7.5", brand = "Tesla", family = "turing" },\n]\n')
    run = _doctor("--from", str(snapshot))
    assert run.exit_code == 3, run.stdout + run.stderr  # nothing could be checked: never healthy
    assert "nodes not in the dump" in run.stdout and "is a target snapshot: 1 pool(s)" in run.stdout


def test_secrets_in_a_dump_are_never_printed(tmp_path):
    state = clone(healthy_state())
    secret_value = "s3cr3t-hunter2-value-0123456789"
    p = pod("ml", "leaky", node=None, phase="Pending", nodeSelector={"hardware-type": "ai-trainng"},
            env={"DB_PASSWORD": secret_value, "NVIDIA_VISIBLE_DEVICES": "all"})
    state.pods.append(p)
    listing = kubectl_list(state)
    listing["items"].append({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db", "namespace": "ml"},
                             "type": "Opaque", "stringData": {"password": secret_value}, "data": {"password": "czNjcjN0"}})
    listing["items"].append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app", "namespace": "ml"},
                             "data": {"API_TOKEN": secret_value, "gpu.conf": "gpu-id=0\n"}})
    (tmp_path / "dump.yaml").write_text(yaml.safe_dump(listing))
    for args in ((), ("--verbose",), ("--format", "json")):
        run = _doctor("--from", str(tmp_path / "dump.yaml"), *args)
        assert run.exit_code == 1
        assert secret_value not in run.stdout + run.stderr and "czNjcjN0" not in run.stdout


def test_bad_dumps_are_one_line_errors(tmp_path):
    (tmp_path / "bad.yaml").write_text("items: [\n  - {")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("hello")
    for path, words in ((tmp_path / "bad.yaml", "cannot be read as YAML or JSON"), (tmp_path / "empty", "no Kubernetes objects found"),
                        (tmp_path / "nope", "no such file or directory")):
        run = _doctor("--from", str(path))
        assert run.exit_code == 2, run.stdout + run.stderr
        assert words in run.stderr and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_target_snapshot_from_a_dump_writes_the_pools_a_live_snapshot_writes(tmp_path):
    from imagelint.cli import app

    def pools(text: str) -> str:
        return text[text.index("[[pool]]"):]

    state = clone(healthy_state())
    kube = FakeKube(state, tmp_path, TOKEN).start()
    try:
        config = kube.write_kubeconfig(tmp_path / "kubeconfig")
        live = CliRunner().invoke(app, ["target", "snapshot", "--cluster", "--kubeconfig", str(config)])
        assert live.exit_code == 0, live.stderr
        root = write_cluster_info_dump(kube, tmp_path / "cluster-info")
        # what cluster-info dump lacks, added beside it as kubectl get -o yaml writes it
        (root / "runtimeclasses.yaml").write_text(yaml.safe_dump(
            {"apiVersion": "v1", "kind": "List", "items": [i for i in kubectl_list(state)["items"] if i["kind"] == "RuntimeClass"]}))
        (tmp_path / "all.yaml").write_text(yaml.safe_dump(kubectl_list(state)))
        for path in (root, tmp_path / "all.yaml"):
            run = CliRunner().invoke(app, ["target", "snapshot", "--from", str(path)])
            assert run.exit_code == 0, run.stderr
            assert pools(run.stdout) == pools(live.stdout), run.stdout
        # a dump without RuntimeClasses: said, not silently "none"
        (root / "runtimeclasses.yaml").unlink()
        run = CliRunner().invoke(app, ["target", "snapshot", "--from", str(root)])
        assert "RuntimeClasses not in the dump" in run.stderr
        # the snapshot is a target file check/lint/audit read
        (tmp_path / "pools.toml").write_text(run.stdout)
        shown = CliRunner().invoke(app, ["target", "show", "--target-file", str(tmp_path / "pools.toml")])
        assert shown.exit_code == 0 and "t4-pool" in shown.stdout
        nodes_missing = CliRunner().invoke(app, ["target", "snapshot", "--from", str(tmp_path / "pools.toml")])
        assert nodes_missing.exit_code == 2 and "no nodes in the dump" in nodes_missing.stderr
    finally:
        kube.stop()


def test_a_healthy_dump_that_lacks_events_is_not_all_checked_never_ok(tmp_path):
    """kubectl get without any Event and without the ClusterPolicy: those stages would be 'ok' live; from
    the dump they are 'not checked in full' and the exit is 5 — until the dump carries them."""
    state = clone(healthy_state())
    listing = kubectl_list(state)
    (tmp_path / "healthy.yaml").write_text(yaml.safe_dump(listing))
    run = _doctor("--from", str(tmp_path / "healthy.yaml"))
    assert run.exit_code == 5, run.stdout
    assert run.stdout.startswith("imagelint doctor: not all checked: no problem seen in 2 GPU node(s) and 1 GPU pod(s); "
                                 "stage 1 not checked in full: events not in the dump")
    assert "stage 6 not checked in full: clusterpolicies not in the dump" in run.stdout
    assert ": ok" not in "\n".join(line for line in run.stdout.splitlines() if line.startswith(("stage 1 ", "stage 2 ", "stage 6 ")))
    # the same cluster dumped with an Event and the (absent) ClusterPolicy kind: healthy, exit 0
    listing["items"].append({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "n.1", "namespace": "default"}, "type": "Normal",
                             "reason": "RegisteredNode", "message": "Node gpu-a-1 event: Registered Node gpu-a-1 in Controller",
                             "involvedObject": {"kind": "Node", "name": "gpu-a-1"}})
    (tmp_path / "healthy.yaml").write_text(yaml.safe_dump_all([listing, {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicyList", "items": []}]))
    run = _doctor("--from", str(tmp_path / "healthy.yaml"))
    assert run.exit_code == 0, run.stdout
    assert run.stdout.startswith("imagelint doctor: healthy")


def test_events_dumped_through_events_k8s_io_are_read_as_core_events(tmp_path):
    """``kubectl get events.events.k8s.io -A -o yaml`` writes ``regarding``/``note``: the scheduler's words all the same."""
    state = clone(healthy_state())
    message = ("0/3 nodes are available: 3 Insufficient nvidia.com/gpu. no new claims to deallocate, "
               "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
    state.pods.append(pod("ml", "big-0", node=None, phase="Pending", gpus=16))
    listing = kubectl_list(state)
    listing["items"].append({
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "big-0.1", "namespace": "ml"},
        "regarding": {"apiVersion": "v1", "kind": "Pod", "name": "big-0", "namespace": "ml"}, "reason": "FailedScheduling",
        "note": message, "type": "Warning", "eventTime": "2026-12-02T06:00:00.123456Z", "action": "Scheduling",
        "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-cp"})
    (tmp_path / "dump.yaml").write_text(yaml.safe_dump(listing))
    run = _doctor("--from", str(tmp_path / "dump.yaml"))
    assert run.exit_code == 1, run.stdout
    assert f"Pod ml/big-0 event FailedScheduling: {message}" in run.stdout


def test_a_snapshot_from_a_dump_is_a_snapshot_of_the_nodes_labels(tmp_path):
    """Its labels are what the nodes carry (as a live snapshot's): a contradiction among them is a
    warning of the target, not a target-file error that refuses the file written from the dump."""
    from imagelint.matrix import load_matrix
    from imagelint.deploytarget import GpuSpec, NodePool, Target
    from imagelint.deploytarget.file import parse_target_text
    from imagelint.deploytarget.toml_writer import dump_target_toml

    pool = NodePool(name="t4", driver="550.54.15", gpus=(GpuSpec(product="Tesla-T4", compute_capability="7.5", count=2),),
                    labels={"node.kubernetes.io/instance-type": "g4dn.xlarge"})  # g4dn.xlarge has one T4
    text = dump_target_toml(Target(pools=(pool,), source=f"dump:{tmp_path / 'cluster-info'}"))
    assert f'snapshot-of = "dump:{tmp_path / "cluster-info"}"' in text
    read = parse_target_text(text, "pools.toml", load_matrix())
    assert read.pools[0].name == "t4" and any("g4dn.xlarge" in w for w in read.warnings)
