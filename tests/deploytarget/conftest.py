from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.support.fakekube import (
    ClusterState,
    FakeKube,
    clusterpolicy,
    cpu_node,
    daemonset,
    gfd_node,
    runtimeclass,
)

TOKEN = "s3cr3t-bearer-token-do-not-print-0123456789"


@pytest.fixture(scope="session")
def matrix():
    """The real shipped matrix."""
    from imagelint.matrix import load_matrix

    return load_matrix()  # a shipped matrix that does not load fails every test that uses it


def realistic_state() -> ClusterState:
    """2 T4 nodes on 535.104.05, 1 tainted H100 node on 550.54.15, 1 CPU node; device plugin,
    toolkit and GFD DaemonSets as the GPU Operator deploys them, RuntimeClass nvidia."""
    gpu_terms = [{"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]
    return ClusterState(
        nodes=[
            gfd_node("ip-10-0-1-11", "535.104.05", "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool="t4-pool"),
            gfd_node("ip-10-0-1-12", "535.104.05", "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool="t4-pool"),
            gfd_node(
                "ip-10-0-2-21",
                "550.54.15",
                "12.4",
                "NVIDIA-H100-80GB-HBM3",
                "9.0",
                "hopper",
                8,
                memory_mib=81559,
                taints=[{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
            ),
            cpu_node("ip-10-0-0-5"),
        ],
        daemonsets=[
            daemonset(
                "gpu-operator",
                "nvidia-device-plugin-daemonset",
                "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                env={"DEVICE_LIST_STRATEGY": "volume-mounts", "PASS_DEVICE_SPECS": "true"},
                args=["--mig-strategy=single"],
                affinity_terms=gpu_terms,
            ),
            daemonset(
                "gpu-operator",
                "gpu-feature-discovery",
                "nvcr.io/nvidia/k8s-device-plugin:v0.17.0",
                command=["gpu-feature-discovery"],
                affinity_terms=gpu_terms,
            ),
            daemonset(
                "gpu-operator",
                "nvidia-container-toolkit-daemonset",
                "nvcr.io/nvidia/k8s/container-toolkit:v1.17.3-ubuntu20.04",
                env={"ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED": "false", "RUNTIME": "containerd"},
                node_selector={"nvidia.com/gpu.present": "true"},
            ),
            daemonset("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.30.2"),
        ],
        runtimeclasses=[runtimeclass("nvidia", "nvidia"), runtimeclass("nvidia-cdi", "nvidia-cdi")],
        clusterpolicies=[clusterpolicy("v1.17.3-ubuntu20.04", "v0.17.0")],
        configmaps={("default", "imagelint-matrix"): {"matrix.toml": "# a matrix\n"}},
    )


@pytest.fixture
def fakekube(tmp_path: Path) -> Iterator[FakeKube]:
    kube = FakeKube(realistic_state(), tmp_path, TOKEN).start()
    try:
        yield kube
    finally:
        kube.stop()


@pytest.fixture
def kubeconfig(fakekube: FakeKube, tmp_path: Path) -> Path:
    return fakekube.write_kubeconfig(tmp_path / "kubeconfig")
