"""Nodes of one node group that differ only in labels are one pool (findings are not repeated)."""

from __future__ import annotations

from imagelint.cluster.nodes import pools_from_nodes

from tests.rules.helpers import matrix
from tests.support.fakekube import gfd_node


def t4(name: str, nodepool: str | None = "t4-pool", driver: str = "535.104.05", **extra: str) -> dict:
    return gfd_node(name, driver, "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool=nodepool, extra_labels=extra or None)


def pools(nodes):
    warnings: list[str] = []
    return pools_from_nodes(nodes, [], [], matrix(), "cluster:test", warnings), warnings


def test_label_only_differences_in_a_node_group_make_one_pool():
    nodes = [t4("a"), t4("b", **{"nvidia.com/gpu.deploy.driver": "pre-installed"}),
             t4("c", **{"nvidia.com/gpu.deploy.driver": "true", "nvidia.com/team": "vision"})]
    [pool], warnings = pools(nodes)
    assert pool.name == "t4-pool" and pool.node_count == 3
    assert "nvidia.com/gpu.deploy.driver" not in pool.labels and "nvidia.com/team" not in pool.labels
    assert pool.labels["nvidia.com/gpu.product"] == "Tesla-T4", "labels every node shares are kept"
    assert any("node group t4-pool" in w and "nvidia.com/gpu.deploy.driver" in w for w in warnings)


def test_a_different_stack_in_the_same_group_stays_apart():
    [a, b], _ = pools([t4("a"), t4("b", driver="550.54.15")])
    assert {a.driver, b.driver} == {"535.104.05", "550.54.15"}


def test_without_a_node_group_labels_still_tell_pools_apart():
    found, warnings = pools([t4("a", nodepool=None), t4("b", nodepool=None, **{"nvidia.com/team": "vision"})])
    assert len(found) == 2 and not warnings
