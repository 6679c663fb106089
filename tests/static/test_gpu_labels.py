"""Issue 37: node labels that name a GPU are judged against the pool's GPU; the most specific
pool description wins; a label nothing can judge is said once, with the way out.

Manifests are written here in the shapes GKE, EKS/Karpenter, AKS and CoreWeave samples use
(nodeSelector on the provider's accelerator label, required node affinity on the instance type,
CoreWeave's class/vram affinity); none is copied from a repository.
"""

from __future__ import annotations

import textwrap

import pytest

from imagelint.core.config import Config
from imagelint.core.engine import run_rules
from imagelint.errors import ConfigError
from imagelint.matrix import load_matrix
from imagelint.static.kubernetes import manifest_facts
from imagelint.deploytarget import GpuSpec, NodePool, Target
from imagelint.deploytarget.file import parse_target_text


def target(text: str) -> Target:
    return parse_target_text(textwrap.dedent(text), "t.toml", load_matrix())


A100_40_GKE = target("""\
    [[pool]]
    name = "a100"
    driver = "550.54.15"
    labels = { "node.kubernetes.io/instance-type" = "a2-highgpu-1g" }
    """)
H100_P5 = target("""\
    [[pool]]
    name = "h100"
    driver = "550.54.15"
    gpus = ["H100"]
    labels = { "node.kubernetes.io/instance-type" = "p5.48xlarge", "karpenter.sh/nodepool" = "gpu" }
    """)
A100_BARE = Target(pools=(NodePool(name="a100", driver="550.54.15", gpus=(GpuSpec(product="A100", compute_capability="8.0"),)),))
T4_FLAGS = Target(pools=(NodePool(name="t4", driver="535.104.05",
                                  gpus=(GpuSpec(product="Tesla-T4", compute_capability="7.5", family="turing"),)),))
L4_FLAGS = Target(pools=(NodePool(name="l4", driver="550.54.15",
                                  gpus=(GpuSpec(product="NVIDIA-L4", compute_capability="8.9", family="ada-lovelace"),)),))


def workload(kind: str, scheduling: str, limits: str = "nvidia.com/gpu: 1") -> str:
    """A workload in the shape the samples use: pod template with scheduling and one GPU container."""
    pod = textwrap.indent(textwrap.dedent(scheduling), "      ") + (
        "      containers:\n      - name: server\n        image: vllm/vllm-openai:v0.6.3\n"
        f"        resources:\n          limits: {{{limits}}}\n"
    )
    api = "batch/v1" if kind == "Job" else "apps/v1"
    return f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n  template:\n    spec:\n" + pod


def il604(text: str, tgt: Target, registry) -> list:
    out = []
    for facts in manifest_facts(text, "w.yaml"):
        out += run_rules(facts, tgt, load_matrix(), Config(select=("IL604",))).findings
    return out


def severities(text: str, tgt: Target, registry) -> list[str]:
    return [f.severity for f in il604(text, tgt, registry)]


def affinity(*exprs: str) -> str:
    body = "".join(f"          - {e}\n" for e in exprs)
    return ("affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n"
            "      nodeSelectorTerms:\n      - matchExpressions:\n" + textwrap.indent(body, "  ").replace("            -", "        -"))


# --- 1. labels that name a GPU ----------------------------------------------------------------


@pytest.mark.parametrize("value, expected", [
    ("nvidia-l4", ["error"]),            # another GPU
    ("nvidia-a100-80gb", ["error"]),     # the other memory variant
    ("nvidia-h100-80gb", ["error"]),
    ("nvidia-tesla-a100", []),           # the pool's GPU: fine, and nothing to say
])
def test_gke_accelerator_selector_is_judged_against_the_pools_gpu(value, expected, registry):
    text = workload("Deployment", f"nodeSelector:\n  cloud.google.com/gke-accelerator: {value}\n")
    assert severities(text, A100_40_GKE, registry) == expected


def test_the_error_says_what_the_label_names_and_what_the_pool_has(registry):
    text = workload("Deployment", "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n")
    [f] = il604(text, A100_40_GKE, registry)
    assert "cloud.google.com/gke-accelerator=nvidia-l4" in f.text and "NVIDIA A100 40 GB" in f.text
    assert "Pending" in f.text


def test_a_daemonset_whose_gpu_label_names_another_gpu_runs_no_pods(registry):
    text = workload("DaemonSet", "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-tesla-t4\n")
    [f] = il604(text, A100_40_GKE, registry)
    assert f.severity == "error" and "runs no pods" in f.text


@pytest.mark.parametrize("exprs, expected", [
    (("{key: gpu.nvidia.com/class, operator: In, values: [RTX_A5000, RTX_A6000]}",), ["error"]),
    (("{key: gpu.nvidia.com/class, operator: In, values: [A100_NVLINK, RTX_A6000]}",), []),
    (("{key: gpu.nvidia.com/vram, operator: In, values: ['8', '10', '11']}",), ["error"]),
    (("{key: gpu.nvidia.com/vram, operator: In, values: ['40']}",), []),
    (("{key: gpu.nvidia.com/class, operator: NotIn, values: [RTX_A5000]}",), []),
])
def test_coreweave_class_and_vram_affinity(exprs, expected, registry):
    text = workload("Deployment", affinity(*exprs))
    assert severities(text, A100_40_GKE, registry) == expected


def test_an_instance_type_affinity_contradicting_the_pools_own_is_an_error_beside_an_unknown_label(registry):
    """Karpenter's NodePool label is not described by the target; the instance type is certain."""
    text = workload("Deployment", affinity(
        "{key: node.kubernetes.io/instance-type, operator: In, values: [g5.xlarge, g5.2xlarge]}",
        "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}",
    ))
    [f] = il604(text, H100_P5, registry)
    assert f.severity == "error" and "g5.xlarge" in f.text


@pytest.mark.parametrize("key, op, values, tgt, expected", [
    ("karpenter.k8s.aws/instance-gpu-name", "In", ["a10g"], "h100", ["error"]),
    ("karpenter.k8s.aws/instance-gpu-name", "In", ["h100"], "h100", []),
    ("karpenter.k8s.aws/instance-gpu-count", "Gt", ["8"], "h100", ["error"]),
    ("karpenter.k8s.aws/instance-family", "In", ["g5", "g6"], "h100", ["error"]),
    ("nvidia.com/gpu.memory", "Gt", ["40000"], "t4", ["error"]),
    ("nvidia.com/gpu.memory", "Gt", ["20000"], "l4", []),
    ("nvidia.com/gpu.family", "In", ["hopper"], "t4", ["error"]),
    ("nvidia.com/gpu.compute.major", "Gt", ["7"], "t4", ["error"]),
    ("nvidia.com/mig.capable", "In", ["true"], "t4", ["error"]),
    ("cloud.google.com/gke-gpu-partition-size", "In", ["3g.40gb"], "a100-40", ["error"]),
    ("cloud.google.com/gke-gpu-partition-size", "In", ["1g.5gb"], "a100-40", []),
    ("feature.node.kubernetes.io/pci-10de.present", "In", ["true"], "t4", []),
    ("k8s.amazonaws.com/accelerator", "In", ["nvidia-tesla-t4"], "l4", ["error"]),
    ("nvidia.com/gpu.compute.major", "Lt", ["8"], "h100", ["error"]),
    ("nvidia.com/gpu.compute.major", "Lt", ["10"], "h100", []),
    ("nvidia.com/cuda.driver.major", "Gt", ["560"], "t4", ["error"]),   # the pool runs R535
    # whether the provider sets the label at all is not described: said, not guessed
    ("cloud.google.com/gke-accelerator", "Exists", [], "a100-40", ["info"]),
    ("cloud.google.com/gke-accelerator", "DoesNotExist", [], "a100-40", ["info"]),
])
def test_provider_gfd_and_nfd_labels(key, op, values, tgt, expected, registry):
    targets = {"h100": H100_P5, "t4": T4_FLAGS, "l4": L4_FLAGS, "a100-40": A100_40_GKE}
    shown = f", values: [{', '.join(repr(v) for v in values)}]" if values else ""
    expr = f"{{key: {key}, operator: {op}{shown}}}"
    assert severities(workload("Job", affinity(expr)), targets[tgt], registry) == expected


def test_a_pool_that_fits_keeps_the_pod_whatever_the_others_are(registry):
    both = Target(pools=(*A100_40_GKE.pools, *L4_FLAGS.pools))
    text = workload("Deployment", "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n")
    assert severities(text, both, registry) == []


def test_a_label_the_pool_lists_is_compared_as_written(registry):
    """A described label never overrides what the target file writes for the label itself."""
    listed = target("""\
        [[pool]]
        name = "l4"
        driver = "550.54.15"
        gpus = ["L4"]
        labels = { "cloud.google.com/gke-accelerator" = "nvidia-l4" }
        """)
    ok = workload("Deployment", "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-l4\n")
    assert severities(ok, listed, registry) == []


# --- 2. the most specific description wins ----------------------------------------------------


def test_gpu_product_label_makes_a_bare_a100_the_80gb_part():
    [pool] = target("""\
        [[pool]]
        name = "a100"
        driver = "550.54.15"
        gpus = ["A100"]
        labels = { "nvidia.com/gpu.product" = "NVIDIA-A100-SXM4-80GB" }
        """).pools
    assert pool.gpus[0].product == "NVIDIA-A100-SXM4-80GB" and pool.gpus[0].compute_capability == "8.0"


def test_instance_type_alone_describes_the_gpu_its_memory_and_count():
    [pool] = target("""\
        [[pool]]
        name = "p4de"
        driver = "550.54.15"
        labels = { "node.kubernetes.io/instance-type" = "p4de.24xlarge" }
        """).pools
    [gpu] = pool.gpus
    assert (gpu.product, gpu.count, gpu.compute_capability) == ("NVIDIA-A100-SXM4-80GB", 8, "8.0")


def test_mig_profiles_are_judged_on_the_described_variant(tmp_path):
    from tests.static.test_real_shapes import found, lint

    pool = target("""\
        [[pool]]
        name = "a100"
        driver = "550.54.15"
        gpus = ["A100"]
        mig-strategy = "mixed"
        labels = { "node.kubernetes.io/instance-type" = "p4de.24xlarge" }
        """)
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
           "    resources:\n      limits: {nvidia.com/mig-%s: 1}\n")
    assert [f[1] for f in found(lint(tmp_path, {"p.yaml": pod % "3g.20gb"}, target=pool), "IL612")] == ["error"]
    assert not found(lint(tmp_path, {"p.yaml": pod % "3g.40gb"}, target=pool), "IL612")


def test_a_described_label_contradicting_a_selector_is_an_error_for_a_hand_written_target(registry):
    text = workload("Deployment", "nodeSelector:\n  nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB\n")
    p4d = target("""\
        [[pool]]
        name = "p4d"
        driver = "550.54.15"
        labels = { "node.kubernetes.io/instance-type" = "p4d.24xlarge" }
        """)
    assert severities(text, p4d, registry) == ["error"]


@pytest.mark.parametrize("pool", [
    'gpus = ["T4"]\nlabels = { "node.kubernetes.io/instance-type" = "p4d.24xlarge" }',
    'labels = { "nvidia.com/gpu.product" = "Tesla-T4", "node.kubernetes.io/instance-type" = "p4d.24xlarge" }',
    'gpus = ["A100-SXM4-40GB"]\nlabels = { "cloud.google.com/gke-accelerator" = "nvidia-a100-80gb" }',
])
def test_a_pool_whose_descriptions_contradict_each_other_is_a_target_file_error(pool):
    with pytest.raises(ConfigError) as exc:
        target(f'[[pool]]\nname = "x"\ndriver = "550.54.15"\n{pool}\n')
    assert "x" in exc.value.message and "says" in exc.value.message and exc.value.line


# --- 3. unknown is said, once, with the way out -------------------------------------------------


def test_a_site_label_is_one_info_per_workload_with_the_way_out(registry):
    two_pools = Target(pools=(*A100_40_GKE.pools, *H100_P5.pools))
    text = workload("Deployment", "nodeSelector:\n  cloud.google.com/compute-class: gpu-inference\n"
                                  "  team.example.com/site: lab-2\n")
    [f] = il604(text, two_pools, registry)
    assert f.severity == "info"
    assert "cloud.google.com/compute-class" in f.message and "team.example.com/site" in f.message
    assert "does not describe" in f.message
    assert "imagelint target snapshot --cluster" in f.remediation and "labels" in f.remediation


def test_a_gpu_label_that_fits_beside_an_unknown_label_is_still_said(registry):
    text = workload("Deployment", "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-tesla-a100\n"
                                  "  cloud.google.com/compute-class: gpu-inference\n")
    [f] = il604(text, A100_40_GKE, registry)
    assert f.severity == "info" and "cloud.google.com/compute-class" in f.message
    assert "gke-accelerator" not in f.message


def test_an_unknown_value_of_a_known_label_is_said_not_guessed(registry):
    text = workload("Deployment", "nodeSelector:\n  cloud.google.com/gke-accelerator: nvidia-future-gpu\n")
    assert severities(text, A100_40_GKE, registry) == ["info"]


def test_a_cluster_snapshot_pool_lacking_the_label_is_certain(registry):
    from dataclasses import replace

    [pool] = A100_40_GKE.pools
    snap = Target(pools=(replace(pool, source="cluster:prod"),))
    text = workload("Deployment", "nodeSelector:\n  cloud.google.com/compute-class: gpu-inference\n")
    assert severities(text, snap, registry) == ["error"]


@pytest.mark.parametrize("value", ["PLACEHOLDER_INSTANCE_TYPE", "${INSTANCE_TYPE}", "$INSTANCE_TYPE", "<instance-type>"])
def test_a_placeholder_selector_value_is_unknown_not_a_mismatch(value, registry):
    """Templates fill the instance type in later: said as an info, never a certain error."""
    text = workload("Deployment", f"nodeSelector:\n  node.kubernetes.io/instance-type: '{value}'\n"
                                  "  sagemaker.amazonaws.com/node-health-status: Schedulable\n")
    [f] = il604(text, H100_P5, registry)
    assert f.severity == "info" and "placeholder" in f.text


def test_a_gpu_the_catalogue_does_not_know_is_judged_by_name(registry):
    a5000 = target("""\
        [[pool]]
        name = "a5000"
        driver = "550.54.15"
        gpus = [{ product = "RTX-A5000", compute-capability = "8.6" }]
        """)
    cls = "{key: gpu.nvidia.com/class, operator: In, values: [%s]}"
    assert severities(workload("Deployment", affinity(cls % "A40")), a5000, registry) == ["error"]
    assert severities(workload("Deployment", affinity(cls % "RTX_A5000")), a5000, registry) == []
    # the catalogue knows the Quadro RTX 5000 (Turing) and the RTX A5000 (Ampere): another GPU, certain
    assert severities(workload("Deployment", affinity(cls % "Quadro_RTX_5000")), a5000, registry) == ["error"]
    # two GPUs the catalogue does not know, spelled differently: not guessed
    a1000 = target('[[pool]]\nname = "a1000"\ndriver = "550.54.15"\ngpus = [{ product = "RTX-A1000", compute-capability = "8.6" }]\n')
    product = "{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-RTX-A2000-12GB]}"
    assert severities(workload("Deployment", affinity(product)), a1000, registry) == ["info"]


def test_a_contradiction_resting_on_an_uncertain_row_is_a_warning_and_the_pool_stays_as_written():
    """CoreWeave's class rows are not re-read from CoreWeave's page: no exit 2 on them alone."""
    tgt = target('[[pool]]\nname = "x"\ndriver = "550.54.15"\ngpus = ["T4"]\n'
                 'labels = { "gpu.nvidia.com/class" = "A40" }\n')
    assert tgt.pools[0].gpus[0].product == "T4"
    [warning] = tgt.warnings
    assert "gpu.nvidia.com/class=A40" in warning and "uncertain" in warning


def test_a_snapshot_whose_node_labels_contradict_each_other_is_a_warning_not_exit_2():
    """A cluster's nodes are what they are: the snapshot still loads, and the contradiction is said."""
    tgt = target('snapshot-of = "cluster:prod"\n[[pool]]\nname = "x"\ndriver = "550.54.15"\n'
                 'gpus = ["NVIDIA-GH200-480GB"]\n'
                 'labels = { "node.kubernetes.io/instance-type" = "p5.48xlarge", '
                 '"nvidia.com/gpu.product" = "NVIDIA-GH200-480GB" }\n')
    assert tgt.pools[0].gpus[0].product == "NVIDIA-GH200-480GB"
    [warning] = tgt.warnings
    assert "p5.48xlarge" in warning and "GH200" in warning
