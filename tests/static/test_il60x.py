"""IL601–IL605 over real manifest text, through the engine (each: fires, and must not fire)."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from types import MappingProxyType

import pytest

from imagelint.core.config import Config
from imagelint.core.engine import run_rules
from imagelint.static.kubernetes import manifest_facts
from imagelint.deploytarget import GpuSpec, NodePool, Taint, Target

T4 = NodePool(
    name="t4", driver="535.104.05", gpus=(GpuSpec(product="Tesla-T4", count=1),), arch="amd64",
    taints=(Taint("nvidia.com/gpu", "present", "NoSchedule"),),
    labels=MappingProxyType({"nvidia.com/gpu.product": "Tesla-T4", "kubernetes.io/arch": "amd64"}),
    resources=MappingProxyType({"nvidia.com/gpu": 4}),
)
A100_MIG = NodePool(
    name="a100", driver="550.54.15", gpus=(GpuSpec(product="A100", mig_profiles=("1g.5gb",)),), arch="amd64",
    mig_strategy="mixed", runtime_class="nvidia",
)


def pod(spec: str, annotations: str = "") -> str:
    meta = "metadata:\n  name: p\n" + (f"  annotations:\n    {annotations}\n" if annotations else "")
    return "apiVersion: v1\nkind: Pod\n" + meta + "spec:\n" + textwrap.indent(textwrap.dedent(spec), "  ")


GPU_CONTAINER = "containers:\n- name: c\n  image: x\n  resources:\n    limits: {nvidia.com/gpu: 1}\n"


def findings(text: str, target: Target, registry, rule: str):
    out, suppressed = [], []
    for facts in manifest_facts(text, "pod.yaml"):
        result = run_rules(facts, target, None, Config(select=(rule,)))
        out += result.findings
        suppressed += result.suppressed
    return out, suppressed


@pytest.mark.parametrize(
    "resources, fires",
    [
        ("requests: {nvidia.com/gpu: 1}\n    limits: {nvidia.com/gpu: 2}", True),
        ("requests: {nvidia.com/gpu: 1}", True),
        ("requests: {nvidia.com/gpu: 1}\n    limits: {nvidia.com/gpu: '1'}", False),
        ("requests: {nvidia.com/gpu: 1000m}\n    limits: {nvidia.com/gpu: 1}", False),
        ("limits: {nvidia.com/gpu: 2}", False),
        ("requests: {cpu: 1}\n    limits: {cpu: 2}", False),
    ],
)
def test_il601(resources: str, fires: bool, registry) -> None:
    text = pod(f"containers:\n- name: c\n  image: x\n  resources:\n    {resources}\n")
    found, _ = findings(text, Target(), registry, "IL601")
    assert bool(found) is fires
    if fires:
        assert found[0].severity == "error" and found[0].location.line == 10


def test_il602_mig_under_none_strategy_and_shared(registry) -> None:
    none_pool = NodePool(name="t4", gpus=(GpuSpec(product="Tesla-T4"),), mig_strategy="none", source="file:t.toml")
    text = pod("containers:\n- name: c\n  image: x\n  resources:\n    limits: {nvidia.com/mig-1g.5gb: 1}\n")
    [f], _ = findings(text, Target(pools=(none_pool,)), registry, "IL602")
    assert f.severity == "error" and "mixed MIG strategy" in f.text and "nvidia.com/gpu" in f.text
    # flags only (--gpu T4): the strategy is unknown, an info note and not an error
    flags_pool = NodePool(name="t4", gpus=(GpuSpec(product="Tesla-T4"),))
    [f], _ = findings(text, Target(pools=(flags_pool,)), registry, "IL602")
    assert f.severity == "info" and "strategy is unknown" in f.text
    # the mixed-strategy pool with that profile advertises it
    assert findings(text, Target(pools=(A100_MIG,)), registry, "IL602")[0] == []
    shared = pod("containers:\n- name: c\n  image: x\n  resources:\n    limits: {nvidia.com/gpu.shared: 1}\n")
    [f], _ = findings(shared, Target(pools=(T4,)), registry, "IL602")
    assert "nvidia.com/gpu.shared" in f.text
    assert findings(pod(GPU_CONTAINER), Target(pools=(T4,)), registry, "IL602")[0] == []
    assert findings(text, Target(), registry, "IL602")[0] == []  # no target, no verdict


def test_il603_taints(registry) -> None:
    [f], _ = findings(pod(GPU_CONTAINER), Target(pools=(T4,)), registry, "IL603")
    assert "nvidia.com/gpu=present:NoSchedule" in f.text
    tolerated = pod(GPU_CONTAINER + "tolerations:\n- {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n")
    assert findings(tolerated, Target(pools=(T4,)), registry, "IL603")[0] == []
    wrong_value = pod(GPU_CONTAINER + "tolerations:\n- {key: nvidia.com/gpu, value: absent}\n")
    assert len(findings(wrong_value, Target(pools=(T4,)), registry, "IL603")[0]) == 1
    # another pool without taints is reachable
    assert findings(pod(GPU_CONTAINER), Target(pools=(T4, A100_MIG)), registry, "IL603")[0] == []
    # a pod without GPU resources is not judged
    assert findings(pod("containers:\n- name: c\n  image: x\n"), Target(pools=(T4,)), registry, "IL603")[0] == []


def test_il604_selectors(registry) -> None:
    a100_sel = pod(GPU_CONTAINER + "nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n")
    [f], _ = findings(a100_sel, Target(pools=(T4,)), registry, "IL604")
    assert "NVIDIA-A100-SXM4-80GB" in f.text and f.location.line == 11
    t4_sel = pod(GPU_CONTAINER + "nodeSelector: {nvidia.com/gpu.product: Tesla-T4}\n")
    assert findings(t4_sel, Target(pools=(T4,)), registry, "IL604")[0] == []
    arm = pod(GPU_CONTAINER + textwrap.dedent("""\
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: kubernetes.io/arch, operator: In, values: [arm64]}
        """))
    assert len(findings(arm, Target(pools=(T4,)), registry, "IL604")[0]) == 1
    # labels unknown (a flags pool with no GPU has only its arch): no guess, but said (issue 37)
    flags_pool = NodePool(name="flags", driver="535.104.05")
    [f], _ = findings(a100_sel, Target(pools=(flags_pool,)), registry, "IL604")
    assert f.severity == "info" and "nvidia.com/gpu.product" in f.text and "target snapshot --cluster" in f.remediation


def test_il605_runtime_class_and_annotation_suppression(registry) -> None:
    not_default = replace(A100_MIG, nvidia_runtime_default=False, device_list_strategy=("envvar",))
    target = Target(pools=(not_default,), runtime_classes=("nvidia",))
    [f], _ = findings(pod(GPU_CONTAINER), target, registry, "IL605")
    assert f.severity == "warning" and "'nvidia'" in f.text
    # the NVIDIA runtime is the default, or the plugin injects through CDI in the CRI: none needed
    for pool in (replace(not_default, nvidia_runtime_default=True),
                 replace(not_default, device_list_strategy=("cdi-annotations", "cdi-cri"))):
        assert findings(pod(GPU_CONTAINER), Target(pools=(pool,), runtime_classes=("nvidia",)), registry, "IL605")[0] == []
    # whether the runtime is the default is unknown: info, not a warning
    [f], _ = findings(pod(GPU_CONTAINER), Target(pools=(A100_MIG,), runtime_classes=("nvidia",)), registry, "IL605")
    assert f.severity == "info"
    named = pod("runtimeClassName: nvidia\n" + GPU_CONTAINER)
    assert findings(named, target, registry, "IL605")[0] == []
    wrong = pod("runtimeClassName: nvidia-cdi\n" + GPU_CONTAINER)
    assert "nvidia-cdi" in findings(wrong, target, registry, "IL605")[0][0].text
    ignored = pod(GPU_CONTAINER, annotations='imagelint.io/ignore: "IL605: set by our admission webhook"')
    found, suppressed = findings(ignored, target, registry, "IL605")
    assert found == [] and suppressed[0].reason == "set by our admission webhook"


def test_il602_names_the_nearest_resource_a_pool_offers(registry) -> None:
    """A missing MIG slice is explained with the pool that offers the nearest one, not the first pool."""
    t4 = NodePool(name="t4", gpus=(GpuSpec(product="Tesla-T4"),), resources={"nvidia.com/gpu": 4})
    a100 = NodePool(name="a100-mig", mig_strategy="mixed", gpus=(GpuSpec(product="A100-SXM4-40GB"),),
                    resources={"nvidia.com/mig-1g.10gb": 14, "nvidia.com/mig-3g.40gb": 2})
    text = pod("containers:\n- name: c\n  image: x\n  resources:\n    limits: {nvidia.com/mig-1g.5gb: 1}\n")
    [f], _ = findings(text, Target(pools=(t4, a100)), registry, "IL602")
    assert "nearest: nvidia.com/mig-1g.10gb on pool a100-mig" in f.text, f.text
    assert "pool t4: none" not in f.text and "(pool t4" not in f.text


def test_nearest_resource_ranks_slices_then_memory() -> None:
    from imagelint.rules._resources import nearest_resource

    offers = [("a", "nvidia.com/gpu"), ("b", "nvidia.com/mig-3g.40gb"), ("c", "nvidia.com/mig-1g.10gb+me"),
              ("d", "nvidia.com/mig-1g.20gb")]
    assert nearest_resource("nvidia.com/mig-1g.5gb", offers) == ("c", "nvidia.com/mig-1g.10gb+me")
    assert nearest_resource("nvidia.com/gpu.shared", offers) == ("a", "nvidia.com/gpu")
    assert nearest_resource("nvidia.com/gpu", []) is None
