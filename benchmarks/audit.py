"""Audit benchmark (not a timed test): ``imagelint audit --cluster`` of 1,000 pods over 100 images,
cold and warm, against ``imagelint check`` of the same 100 images.

    python3 benchmarks/audit.py [--pods 1000] [--images 100] [--runs 3] [--jobs 4]

Starts Debian's ``docker-registry`` on 127.0.0.1 (tests/support/registry.py), pushes ``--images``
small CUDA images built by tests/support/imagebuilder.py (distinct digests; the cost measured is
per image: manifest, config and layer reads, rules, placement and reporting, not decompressing
gigabytes: see README.md for that), serves ``--pods`` pods over them from the loopback API server
(tests/support/fakekube.py: T4 and H100 pools), and times each command as a child process (wall,
user + sys CPU and peak RSS from ``os.wait4``). "cold" starts with an empty cache directory;
"warm" reuses the one the cold run filled. Ratios within one run are what to read: the machine
is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.rules.helpers import official_env  # noqa: E402
from tests.support.fakekube import ClusterState, FakeKube, daemonset, gfd_node  # noqa: E402
from tests.support.imagebuilder import File, ImageSpec  # noqa: E402
from tests.support.registry import start_registry  # noqa: E402

TOKEN = "bench-token-0123456789abcdef"


def cuda_image(version: str, cudart: str, index: int):
    mm = ".".join(version.split(".")[:2])
    root = f"usr/local/cuda-{mm}"
    doc = {"cuda": {"name": "CUDA SDK", "version": version}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": cudart}}
    layer = [File(f"{root}/version.json", json.dumps(doc).encode()),
             File(f"{root}/targets/x86_64-linux/lib/libcudart.so.{cudart}", b"\x7fELF" + b"\0" * 60),
             File(f"app/{index}.txt", str(index).encode())]
    return ImageSpec(layers=[layer], env=official_env(version), labels={"bench.index": str(index)}).build()


def run_child(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, int, str]:
    """(wall s, CPU s, peak RSS MB, exit code, stderr tail)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024, proc.returncode, err[-300:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=1000)
    ap.add_argument("--images", type=int, default=100)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=4)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="imagelint-audit-bench-"))
    registry = start_registry(work / "registry")
    kube = None
    try:
        refs, digests = [], []
        for i in range(args.images):
            built = cuda_image("12.4.1" if i % 10 == 0 else "12.2.2", "12.4.127" if i % 10 == 0 else "12.2.140", i)
            registry.push(f"bench/app-{i}", "v1", built)
            refs.append(f"{registry.host}/bench/app-{i}:v1")
            digests.append(built.digest)
        nodes = [gfd_node(f"t4-{n}", "535.104.05", "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool="t4-pool") for n in range(8)]
        nodes += [gfd_node(f"h100-{n}", "550.54.15", "12.4", "NVIDIA-H100-80GB-HBM3", "9.0", "hopper", 8, nodepool="h100-pool") for n in range(4)]
        pods = []
        for p in range(args.pods):
            i = p % args.images
            node = nodes[p % len(nodes)]["metadata"]["name"]
            image = refs[i]
            pods.append({
                "metadata": {"name": f"app-{i}-{p}", "namespace": f"team-{i % 5}", "labels": {"pod-template-hash": "abc"},
                             "ownerReferences": [{"kind": "ReplicaSet", "name": f"app-{i}-abc", "controller": True}]},
                "spec": {"nodeName": node, "containers": [{"name": "main", "image": image,
                                                           "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
                "status": {"phase": "Running", "containerStatuses": [
                    {"name": "main", "image": image, "imageID": f"{registry.host}/bench/app-{i}@{digests[i]}"}]},
            })
        state = ClusterState(nodes=nodes, daemonsets=[daemonset("gpu-operator", "nvidia-device-plugin-daemonset",
                                                                "nvcr.io/nvidia/k8s-device-plugin:v0.17.0")],
                             pods=pods, objects={"apis/apps/v1/deployments": [], "apis/apps/v1/statefulsets": [],
                                      "apis/batch/v1/jobs": [], "apis/batch/v1/cronjobs": []})
        kube = FakeKube(state, work, TOKEN).start()
        kubeconfig = kube.write_kubeconfig(work / "kubeconfig")
        target = work / "target.toml"
        target.write_text('[[pool]]\nname = "t4-pool"\ndriver = "535.104.05"\ngpus = ["T4"]\narch = "amd64"\n\n'
                          '[[pool]]\nname = "h100-pool"\ndriver = "550.54.15"\ngpus = ["H100"]\narch = "amd64"\n')
        exe = [sys.executable, "-m", "imagelint"]
        audit = [*exe, "audit", "--cluster", "--kubeconfig", str(kubeconfig), "--insecure-registry", registry.host,
                 "--jobs", str(args.jobs), "--format", "json"]
        check = [*exe, "check", *(f"registry:{r}" for r in refs), "--target-file", str(target),
                 "--insecure-registry", registry.host, "--format", "json"]
        rows = []
        for name, argv in (("check, 100 images, 2 pools", check), (f"audit --cluster, {args.pods} pods", audit)):
            for state_name in ("cold", "warm"):
                results = []
                for _ in range(args.runs):
                    cache = work / f"cache-{name[:5]}"
                    if state_name == "cold":
                        shutil.rmtree(cache, ignore_errors=True)
                    env = {**os.environ, "IMAGELINT_CACHE_DIR": str(cache)}
                    env.pop("IMAGELINT_NO_CACHE", None)
                    if state_name == "warm" and not cache.exists():
                        run_child(argv, env)
                    results.append(run_child(argv, env))
                codes = {r[3] for r in results}
                rows.append((name, state_name, statistics.median(r[0] for r in results), min(r[0] for r in results),
                             statistics.median(r[1] for r in results), max(r[2] for r in results), codes, results[-1][4]))
        print(f"{args.pods} pods over {args.images} images (registry {registry.host}), --jobs {args.jobs}, runs {args.runs}; "
              f"load average {os.getloadavg()[0]:.2f}")
        print("| what | cache | wall median (s) | wall min (s) | CPU (s) | peak RSS (MB) | per image (ms, wall median) | exit |")
        print("|---|---|---:|---:|---:|---:|---:|---|")
        for name, state_name, wall, wall_min, cpu, rss, codes, _ in rows:
            print(f"| {name} | {state_name} | {wall:.2f} | {wall_min:.2f} | {cpu:.2f} | {rss} | {1000 * wall / args.images:.0f} | "
                  f"{','.join(map(str, sorted(codes)))} |")
        by = {(r[0][:5], r[1]): r[2] for r in rows}
        print(f"\naudit / check: cold {by[('audit', 'cold')] / by[('check', 'cold')]:.2f}, warm {by[('audit', 'warm')] / by[('check', 'warm')]:.2f}")
        for row in rows:
            if row[6] - {0, 1}:
                print(f"unexpected exit in {row[0]} {row[1]}: {row[7]}", file=sys.stderr)
    finally:
        if kube is not None:
            kube.stop()
        registry.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
