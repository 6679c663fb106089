"""A dump of 500 nodes and 5,000 pods is read within the doctor benchmark's memory.

The cluster is benchmarks/doctor.py's (ten GPU pools, a crash-looping plugin pool, Pending pods
with a selector typo and too many GPUs, CPU pods), written as ``kubectl get ... -A -o yaml``
writes it. doctor runs on it in a child whose data segment is capped (RLIMIT_DATA: heap and
anonymous mappings) at the live run's peak RSS in benchmarks/README.md ("doctor on a large
cluster": 101 MiB): a reader that holds the whole YAML node graph, or reserves a buffer the size
of its file limit, dies of MemoryError there. Bounded by memory, not by time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.dumps import kubectl_list

ROOT = Path(__file__).resolve().parents[2]
LIVE_PEAK_MIB = 101  # benchmarks/README.md, "doctor on a large cluster": imagelint doctor --cluster's peak RSS


def _benchmark_cluster():
    spec = importlib.util.spec_from_file_location("doctor_benchmark", ROOT / "benchmarks" / "doctor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build(500, 5000)


def test_a_500_node_5000_pod_yaml_dump_is_read_in_the_benchmarks_memory(tmp_path):
    state = _benchmark_cluster()
    dump = tmp_path / "cluster.yaml"
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    dump.write_text(yaml.dump(kubectl_list(state), Dumper=dumper))

    def cap() -> None:
        limit = LIVE_PEAK_MIB * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    out = tmp_path / "report.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "IMAGELINT_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-m", "imagelint", "doctor", "--from", str(dump), "--format", "json", "-o", str(out)],
                         preexec_fn=cap, capture_output=True, env=env, check=False)
    assert run.returncode == 1, run.stderr.decode(errors="replace")[-2000:]
    report = json.loads(out.read_text())
    found = {f["signature"] for s in report["stages"] for f in s["findings"]}
    # the planted problems were diagnosed (no logs in kubectl get: the crash is seen, its NVML line is not)
    assert {"selector-matches-no-node", "gpu-request-exceeds-every-node"} <= found, found
    assert report["gpu_nodes"] == 400
