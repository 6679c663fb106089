"""Each static rule's docstring examples are real: the anti-pattern fires, the best practice does not.

The examples are taken from the rule modules' docstrings (what docs/rules.md shows), placed into
the file they belong in (a Dockerfile, a pod spec, a container's resources, a DeepStream config),
and linted against the target the example names.
"""

from __future__ import annotations

import importlib
import re
import textwrap
from types import MappingProxyType

import pytest

from imagelint.core.config import Config
from imagelint.core.lint import run_lint
from imagelint.deploytarget import GpuSpec, NodePool, Taint, Target

FLAGS = Target(pools=(NodePool(name="flags", driver="535.104.05", cuda_driver_version="12.2"),), source="flags")
T4_FILE = Target(pools=(NodePool(
    name="t4", driver="535.104.05", gpus=(GpuSpec(product="Tesla-T4"),), mig_strategy="none",
    taints=(Taint("nvidia.com/gpu", "present", "NoSchedule"),),
    labels=MappingProxyType({"nvidia.com/gpu.product": "Tesla-T4"}),
    resources=MappingProxyType({"nvidia.com/gpu": 4}), runtime_class="nvidia", nvidia_runtime_default=False,
    device_list_strategy=("envvar",), shared_resources=MappingProxyType({"nvidia.com/gpu.shared": 4}),
    fail_requests_greater_than_one=True, source="file:t.toml"),), runtime_classes=("nvidia",), source="file:t.toml")

GPU_CONTAINER = "containers:\n- {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}\n"
CLAIM_TEMPLATE = ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: single-gpu}\n"
                  "spec:\n  spec:\n    devices:\n      requests:\n      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}\n"
                  "---\n")


def blocks(rule_module: str) -> tuple[str, str]:
    doc = importlib.import_module(f"imagelint.rules.{rule_module}").__doc__ or ""
    m = re.search(r"Anti-pattern::\n\n(.*?)\n\nBest practice::\n\n(.*?)(?:\n\n\S|\Z)", doc, re.S)
    assert m, f"{rule_module}: no Anti-pattern:: / Best practice:: examples"
    return textwrap.dedent(m.group(1)).rstrip() + "\n", textwrap.dedent(m.group(2)).rstrip() + "\n"


def _pod(spec: str) -> str:
    return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n" + textwrap.indent(spec, "  ")


def as_dockerfile(block: str) -> tuple[str, str]:
    return "Dockerfile", (block if block.lstrip().startswith(("FROM", "ARG")) else "FROM busybox\n" + block)


def as_pod_spec(block: str) -> tuple[str, str]:
    body = block if "containers:" in block else GPU_CONTAINER + block
    return "pod.yaml", _pod(body)


def as_resources(block: str) -> tuple[str, str]:
    res = block if block.lstrip().startswith("resources:") else "resources:\n" + textwrap.indent(block, "  ")
    return "pod.yaml", _pod("containers:\n- name: c\n  image: busybox\n" + textwrap.indent(res, "  "))


def as_claim_pod(block: str) -> tuple[str, str]:
    _, pod = as_resources(block)
    return "pod.yaml", CLAIM_TEMPLATE + pod + "  resourceClaims:\n  - {name: gpu, resourceClaimTemplateName: single-gpu}\n"


def as_claim_spec(block: str) -> tuple[str, str]:
    return "pod.yaml", CLAIM_TEMPLATE + _pod(block.replace("image:", "image:") if "image" in block else block)


def as_deepstream(block: str) -> tuple[str, str]:
    return "pgie_config.txt", block


def as_compose(block: str) -> tuple[str, str]:
    if block.lstrip().startswith("services:"):
        return "compose.yaml", block
    return "compose.yaml", "services:\n  app:\n    image: busybox\n" + textwrap.indent(block, "    ")


A100_40GB = Target(pools=(NodePool(name="a100", driver="570.124.06", cuda_driver_version="12.8",
                                   gpus=(GpuSpec(product="A100-SXM4-40GB", compute_capability="8.0"),)),), source="flags")

CASES = [
    ("hardcoded_visible_devices", "IL301", as_dockerfile, FLAGS),
    ("hardcoded_gpu_index", "IL302", as_deepstream, FLAGS),
    ("visible_devices_all_leak", "IL303", as_dockerfile, T4_FILE),
    ("driver_capabilities_mismatch", "IL304", as_dockerfile, FLAGS),
    ("gpu_request_limit_mismatch", "IL601", as_resources, FLAGS),
    ("gpu_resource_unknown", "IL602", as_resources, T4_FILE),
    ("gpu_taint_not_tolerated", "IL603", as_pod_spec, T4_FILE),
    ("gpu_node_selector_unsatisfiable", "IL604", as_pod_spec, T4_FILE),
    ("runtime_class_missing", "IL605", as_pod_spec, T4_FILE),
    ("resource_claim_undefined", "IL606", as_claim_spec, FLAGS),
    ("gpu_claim_with_device_plugin", "IL607", as_claim_pod, FLAGS),
    ("shared_gpu_request_over_one", "IL608", as_resources, T4_FILE),
    ("privileged_gpu_container", "IL609", as_pod_spec, FLAGS),
    ("compose_gpu_request_invalid", "IL610", as_compose, FLAGS),
    ("compose_gpu_pinned", "IL611", as_compose, FLAGS),
    ("mig_profile_not_on_gpu", "IL612", as_resources, A100_40GB),
    ("gpu_query_at_build", "IL701", as_dockerfile, FLAGS),
    ("host_gpu_stack_installed", "IL702", as_dockerfile, FLAGS),
    ("driver_capabilities_all", "IL703", as_dockerfile, FLAGS),
    ("cuda_toolkit_reinstalled", "IL704", as_dockerfile, FLAGS),
    ("devel_final_stage", "IL705", as_dockerfile, FLAGS),
]


def _lint(tmp_path, name: str, text: str, target: Target, rule: str):
    from imagelint.matrix import load_matrix

    path = tmp_path / name
    path.write_text(text)
    run = run_lint([str(path)], target, load_matrix(), Config(select=(rule,)))
    assert not any(r.error for r in run.results), [r.error for r in run.results]
    return [f for r in run.results for f in r.findings if f.rule == rule and f.severity != "info"]


@pytest.mark.parametrize("module, rule, place, target", CASES, ids=[c[1] for c in CASES])
def test_docstring_examples(tmp_path, module, rule, place, target):
    bad, good = blocks(module)
    name, text = place(bad)
    assert _lint(tmp_path, name, text, target, rule), f"{rule}: the anti-pattern does not fire:\n{text}"
    name, text = place(good)
    assert not _lint(tmp_path, name, text, target, rule), f"{rule}: the best practice fires:\n{text}"
