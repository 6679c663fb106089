"""Benchmark row: ``imagelint doctor --cluster`` on 500 nodes and 5,000 pods served by the test API server.

    python3 benchmarks/doctor.py [--nodes 500] [--pods 5000] [--runs 3]

Starts ``tests/support/fakekube.py`` on 127.0.0.1 with a generated cluster (80 % GPU nodes in
ten pools with the device plugin and toolkit on each, one pool's plugin crash-looping on
"Failed to initialize NVML", GPU training pods, Pending pods with a selector typo and an
untolerated taint, CPU pods, Warning events), then runs, as child processes measured with
``os.wait4`` (wall time, peak RSS):

* the floor: the same lists (nodes, pods, events, DaemonSets, RuntimeClasses) fetched with the
  official ``kubernetes`` client, paginated as doctor does, bodies parsed and dropped;
* ``imagelint doctor --cluster --format json`` on the same server;
* ``imagelint doctor --from`` on a dump of the same objects: ``kubectl get ... -A -o yaml``
  (one List) and a ``kubectl cluster-info dump`` directory (its logs.txt sections left empty:
  the generator's log lookup is per pod), both written by ``tests/support/dumps.py``.

The ratio doctor / floor says what doctor adds to reading the cluster. Not a test: it asserts
only that doctor found the planted problems (a benchmark of a run that failed is no figure).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from tests.doctor.clusters import (  # noqa: E402
    GPU_TERMS,
    PLUGIN_IMAGE,
    TOOLKIT_IMAGE,
    container_status,
    event,
    pod,
    ready,
)
from tests.support.fakekube import (  # noqa: E402
    ClusterState,
    FakeKube,
    cpu_node,
    daemonset,
    gfd_node,
    runtimeclass,
)

TOKEN = "bench-token-0123456789abcdef0123"

FLOOR = r"""
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
def pages(call, **kw):
    token = None
    while True:
        body = call(limit=500, _continue=token, _preload_content=False, **kw) if token else call(limit=500, _preload_content=False, **kw)
        import json; doc = json.loads(body.data); token = (doc.get("metadata") or {}).get("continue")
        if not token: return
pages(core.list_node); pages(core.list_pod_for_all_namespaces); pages(core.list_event_for_all_namespaces, field_selector="type=Warning")
pages(lambda **kw: custom.list_cluster_custom_object("apps", "v1", "daemonsets", **kw))
pages(lambda **kw: custom.list_cluster_custom_object("node.k8s.io", "v1", "runtimeclasses", **kw))
"""


def build(nodes: int, pods: int) -> ClusterState:
    gpu = int(nodes * 0.8)
    state_nodes = []
    for i in range(gpu):
        pool = f"pool-{i % 10}"
        taints = [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}] if i % 10 == 9 else None
        state_nodes.append(ready(gfd_node(f"gpu-{i:04d}", "550.54.15", "12.4", "NVIDIA-H100-80GB-HBM3", "9.0", "hopper", 8,
                                          nodepool=pool, taints=taints, extra_labels={"hardware-type": "ai-training"}),
                                 handlers=["runc", "nvidia"]))
    state_nodes += [ready(cpu_node(f"cpu-{i:04d}")) for i in range(nodes - gpu)]
    plugin = daemonset("gpu-operator", "nvidia-device-plugin-daemonset", PLUGIN_IMAGE, affinity_terms=GPU_TERMS)
    toolkit = daemonset("gpu-operator", "nvidia-container-toolkit-daemonset", TOOLKIT_IMAGE, node_selector={"nvidia.com/gpu.present": "true"})
    for ds in (plugin, toolkit):
        ds["status"] = {"desiredNumberScheduled": gpu, "numberReady": gpu - gpu // 10, "numberUnavailable": gpu // 10}
    state_pods, logs, events = [], {}, []
    for i in range(gpu):
        node = f"gpu-{i:04d}"
        statuses = None
        if i % 10 == 3:  # pool-3: the plugin crash-loops
            statuses = [container_status("nvidia-device-plugin", PLUGIN_IMAGE, waiting="CrashLoopBackOff", restarts=40, last="Error")]
            logs[("gpu-operator", f"dp-{i}", "nvidia-device-plugin", True)] = "Loading NVML\nFailed to initialize NVML: ERROR_LIBRARY_NOT_FOUND\n"
        state_pods.append(pod("gpu-operator", f"dp-{i}", node=node, image=PLUGIN_IMAGE, gpus=None, container="nvidia-device-plugin",
                              owner=("DaemonSet", plugin["metadata"]["name"]), statuses=statuses))
        state_pods.append(pod("gpu-operator", f"tk-{i}", node=node, image=TOOLKIT_IMAGE, gpus=None, container="nvidia-container-toolkit",
                              owner=("DaemonSet", toolkit["metadata"]["name"])))
    left = pods - len(state_pods)
    for i in range(left):
        kind = i % 10
        if kind < 6:  # GPU training pods, Running
            state_pods.append(pod(f"team-{i % 40}", f"train-{i}", node=f"gpu-{i % gpu:04d}", gpus=1 + i % 2))
        elif kind == 6:  # Pending: selector typo
            state_pods.append(pod(f"team-{i % 40}", f"typo-{i}", node=None, phase="Pending", nodeSelector={"hardware-type": "ai-trainng"}))
        elif kind == 7:  # Pending: scheduler says Insufficient
            name = f"big-{i}"
            state_pods.append(pod(f"team-{i % 40}", name, node=None, phase="Pending", gpus=16))
            events.append(event(f"team-{i % 40}", "Pod", name, "FailedScheduling", "0/500 nodes are available: 400 Insufficient nvidia.com/gpu."))
        else:  # CPU pods
            state_pods.append(pod(f"web-{i % 20}", f"web-{i}", node=f"cpu-{i % (nodes - gpu):04d}", gpus=None, image="nginx:1.27"))
    return ClusterState(nodes=state_nodes, daemonsets=[plugin, toolkit], runtimeclasses=[runtimeclass("nvidia", "nvidia")],
                        pods=state_pods, events=events, pod_logs=logs)


def write_dumps(state: ClusterState, kube: FakeKube, work: Path) -> dict[str, Path]:
    """The same objects as a kubectl List (YAML) and a cluster-info dump directory."""
    import yaml

    from tests.support.dumps import kubectl_list, write_cluster_info_dump

    listing = work / "cluster.yaml"
    listing.write_text(yaml.dump(kubectl_list(state), Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    return {"kubectl get -A -o yaml": listing,
            "cluster-info dump directory": write_cluster_info_dump(kube, work / "cluster-info", logs=False)}


# A child's ru_maxrss starts at its parent's RSS when it is forked (Linux carries the high-water
# mark across exec): measured straight from this process, which holds the generated cluster, every
# row would read this process's size. A small launcher forks the measured command instead and
# reports the grandchild's own peak.
LAUNCHER = r"""
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(proc.pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(argv: list[str], env: dict[str, str]) -> tuple[float, int, int, bytes]:
    """Wall seconds, peak RSS (KiB), exit code, output of one child."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", LAUNCHER, rss.name, *argv], capture_output=True, env=env, check=False)
        wall = time.perf_counter() - start
        peak = int(rss.read() or 0)
    return wall, peak, proc.returncode, proc.stdout + proc.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--pods", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="il-doctor-bench-"))
    state = build(args.nodes, args.pods)
    kube = FakeKube(state, work, TOKEN).start()
    try:
        config = kube.write_kubeconfig(work / "kubeconfig")
        env = {**os.environ, "IMAGELINT_CACHE_DIR": str(work / "cache")}
        floor, doctor, floor_rss, doctor_rss = [], [], [], []
        for _ in range(args.runs):
            wall, rss, code, out = run_measured([sys.executable, "-c", FLOOR, str(config)], env)
            assert code == 0, out.decode(errors="replace")[-2000:]
            floor.append(wall), floor_rss.append(rss)
            wall, rss, code, out = run_measured([sys.executable, "-m", "imagelint", "doctor", "--cluster", "--kubeconfig", str(config),
                                                 "--format", "json"], env)
            assert code == 1, out.decode(errors="replace")[-2000:]
            report = json.loads(out)
            found = {f["signature"] for s in report["stages"] for f in s["findings"]}
            assert {"nvml-init-failed", "selector-matches-no-node", "gpu-request-exceeds-every-node"} <= found, found
            doctor.append(wall), doctor_rss.append(rss)
        dumps = write_dumps(state, kube, work)
        from_dump: dict[str, tuple[list[float], list[int]]] = {}
        for name, path in dumps.items():
            walls, rsses = from_dump.setdefault(name, ([], []))
            for _ in range(args.runs):
                wall, rss, code, out = run_measured([sys.executable, "-m", "imagelint", "doctor", "--from", str(path), "--format", "json"], env)
                assert code == 1, out.decode(errors="replace")[-2000:]
                dumped = {f["signature"] for s in json.loads(out)["stages"] for f in s["findings"]}
                assert {"selector-matches-no-node", "gpu-request-exceeds-every-node"} <= dumped, dumped
                walls.append(wall), rsses.append(rss)
        f, d = statistics.median(floor), statistics.median(doctor)
        print(f"cluster: {args.nodes} nodes ({int(args.nodes * 0.8)} GPU), {len(state.pods)} pods, {len(state.events)} events; runs: {args.runs}")
        print("| row | wall (median) | peak RSS |")
        print("|---|---:|---:|")
        print(f"| floor: the same lists with the kubernetes client | {f:.2f} s | {max(floor_rss) / 1024:.0f} MiB |")
        print(f"| imagelint doctor --cluster --format json | {d:.2f} s | {max(doctor_rss) / 1024:.0f} MiB |")
        print(f"| ratio doctor / floor | {d / f:.2f}x | {max(doctor_rss) / max(floor_rss):.2f}x |")
        for name, (walls, rsses) in from_dump.items():
            print(f"| imagelint doctor --from ({name}) | {statistics.median(walls):.2f} s | {max(rsses) / 1024:.0f} MiB |")
        print(f"findings: {sum(len(s['findings']) for s in report['stages'])} (signatures: {', '.join(sorted(found))})")
    finally:
        kube.stop()


if __name__ == "__main__":
    main()
