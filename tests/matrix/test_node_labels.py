"""matrices/node-labels.toml: every row valid and sourced; a bad row fails loudly, naming it."""

from __future__ import annotations

import pytest

from imagelint.errors import ConfigError
from imagelint.matrix.node_labels import READS, load_node_labels, node_labels_from_document


def test_every_shipped_row_has_a_source_and_names_gpus_the_catalogue_knows_where_it_can():
    table = load_node_labels()
    assert len(table.labels) >= 30 and len(table.instance_types) >= 80
    assert all(r.source.strip() and r.reads in READS for r in table.labels.values())
    assert all(r.source.strip() for r in (*table.values.values(), *table.instance_types.values()))
    # Rows name GPUs by the matrix's own name, so the pool's GPU and the label's compare as one;
    # the few the catalogue lacks (CoreWeave's RTX A5000, Quadro RTX 4000...) are workstation parts.
    unknown = {r.gpu for r in (*table.values.values(), *table.instance_types.values()) if table.gpu_name(r.gpu) != r.gpu}
    assert unknown <= {"NVIDIA RTX A5000", "NVIDIA RTX A4000", "Quadro RTX 5000", "Quadro RTX 4000"}, unknown


@pytest.mark.parametrize("key, value, gpu, memory, count", [
    ("node.kubernetes.io/instance-type", "p4de.24xlarge", "NVIDIA A100", 80, 8),
    ("node.kubernetes.io/instance-type", "P4D.24XLARGE", "NVIDIA A100", 40, 8),
    ("beta.kubernetes.io/instance-type", "a2-ultragpu-1g", "NVIDIA A100", 80, 1),
    ("node.kubernetes.io/instance-type", "Standard_NC24ads_A100_v4", "NVIDIA A100", 80, 1),
    ("cloud.google.com/gke-accelerator", "nvidia-h100-mega-80gb", "NVIDIA H100", 80, None),
    ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "NVIDIA A100", 40, None),
    ("nvidia.com/gpu.product", "Tesla-T4-SHARED", "Tesla T4", None, None),
    ("karpenter.k8s.aws/instance-gpu-name", "l40s", "NVIDIA L40S", None, None),
    ("gpu.nvidia.com/class", "RTX_A5000", "NVIDIA RTX A5000", 24, None),
])
def test_values_describe_the_gpu(key, value, gpu, memory, count):
    d = load_node_labels().describe(key, value)
    assert d is not None and (d.gpu, d.memory_gb, d.count) == (gpu, memory, count)


def test_values_nobody_documented_describe_nothing():
    table = load_node_labels()
    assert table.describe("cloud.google.com/gke-accelerator", "nvidia-future-gpu") is None
    assert table.describe("node.kubernetes.io/instance-type", "m5.large") is None
    assert table.describe("team.example.com/gpu", "a100") is None


GOOD = {"schema": 1, "label": [{"key": "k", "reads": "gpu", "provider": "p", "source": "s"}]}


@pytest.mark.parametrize("doc, needle", [
    ({**GOOD, "schema": 2}, "schema"),
    ({**GOOD, "label": [{"key": "k", "reads": "colour", "provider": "p", "source": "s"}]}, "reads"),
    ({**GOOD, "label": [{"key": "k", "reads": "gpu", "provider": "p"}]}, "'source'"),
    ({**GOOD, "value": [{"key": "other", "values": ["v"], "gpu": "T4", "source": "s"}]}, "value #1"),
    ({**GOOD, "instance-type": [{"provider": "AWS", "names": ["x"], "gpu": "T4", "source": "s"}]}, "count"),
    ({**GOOD, "instance-type": [{"provider": "AWS", "names": ["x"], "gpu": "T4", "count": 1, "source": "s",
                                 "confidence": "sure"}]}, "confidence"),
    ({**GOOD, "extra": []}, "unknown tables"),
])
def test_a_bad_row_is_an_error_naming_it(doc, needle):
    with pytest.raises(ConfigError) as exc:
        node_labels_from_document(doc, "matrices/node-labels.toml")
    assert needle in exc.value.message
