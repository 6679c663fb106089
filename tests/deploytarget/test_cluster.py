from __future__ import annotations

import dataclasses

import pytest

from imagelint.cluster import read_configmap, target_from_cluster
from imagelint.errors import ClusterError
from imagelint.deploytarget import Taint
from imagelint.deploytarget.file import parse_target_text
from imagelint.deploytarget.toml_writer import dump_target_toml
from tests.support.fakekube import dead_url, gfd_node, make_ca
from tests.deploytarget.conftest import TOKEN


def test_gpu_nodes_collapse_into_pools(fakekube, kubeconfig, matrix):
    target = target_from_cluster(None, str(kubeconfig), matrix)
    assert target.source == "cluster:fake" and target.warnings == ()
    assert target.runtime_classes == ("nvidia", "nvidia-cdi")
    by_driver = {p.driver: p for p in target.pools}
    assert sorted(by_driver) == ["535.104.05", "550.54.15"]  # CPU node ignored

    t4 = by_driver["535.104.05"]
    assert (t4.name, t4.node_count, t4.cuda_driver_version, t4.arch) == ("t4-pool", 2, "12.2", "amd64")
    (gpu,) = t4.gpus
    assert (gpu.product, gpu.compute_capability, gpu.family, gpu.count) == ("Tesla-T4", "7.5", "turing", 1)
    assert gpu.brand == matrix.gpu("Tesla-T4").brand  # not in GFD labels: from the matrix
    assert (t4.toolkit, t4.device_plugin) == ("1.17.3", "0.17.0")
    assert t4.device_list_strategy == ("volume-mounts",) and t4.mig_strategy == "single"
    assert t4.accept_envvar_unprivileged is False and t4.runtime_class == "nvidia"
    assert dict(t4.resources) == {"nvidia.com/gpu": 1} and t4.taints == ()
    assert "kubernetes.io/hostname" not in t4.labels and "nvidia.com/gfd.timestamp" not in t4.labels
    assert t4.labels["nvidia.com/gpu.product"] == "Tesla-T4"

    h100 = by_driver["550.54.15"]
    assert (h100.node_count, h100.cuda_driver_version) == (1, "12.4")
    assert h100.gpus[0].compute_capability == "9.0" and h100.gpus[0].count == 8
    assert h100.taints == (Taint("nvidia.com/gpu", "present", "NoSchedule"),)
    assert dict(h100.resources) == {"nvidia.com/gpu": 8}
    assert fakekube.requests[0] == "/api/v1/nodes"


def test_a_taint_or_a_driver_splits_a_pool(fakekube, kubeconfig, matrix):
    fakekube.state.nodes.append(
        gfd_node("ip-10-0-1-13", "535.104.05", "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool="t4-pool",
                 taints=[{"key": "maintenance", "effect": "NoExecute"}])
    )
    fakekube.state.nodes.append(
        gfd_node("ip-10-0-1-14", "535.183.01", "12.2", "Tesla-T4", "7.5", "turing", 1, deprecated_driver_labels=True)
    )
    target = target_from_cluster(None, str(kubeconfig), matrix)
    counts = sorted((p.driver, len(p.taints), p.node_count) for p in target.pools)
    assert counts == [("535.104.05", 0, 2), ("535.104.05", 1, 1), ("535.183.01", 0, 1), ("550.54.15", 1, 1)]
    assert len({p.name for p in target.pools}) == 4  # t4-pool, t4-pool-2, ...


def test_snapshot_round_trip_equals_the_cluster_target(fakekube, kubeconfig, matrix):
    live = target_from_cluster(None, str(kubeconfig), matrix)
    again = parse_target_text(dump_target_toml(live), "snapshot.toml", matrix)
    assert [dataclasses.replace(p, source=live.source) for p in again.pools] == list(live.pools)
    assert again.runtime_classes == live.runtime_classes


def test_clusterpolicy_fills_in_when_daemonsets_are_forbidden(fakekube, kubeconfig, matrix):
    fakekube.forbidden.add("/apis/apps/v1/")
    target = target_from_cluster(None, str(kubeconfig), matrix)
    assert any("cannot list DaemonSets (403)" in w for w in target.warnings)
    for pool in target.pools:
        assert (pool.toolkit, pool.device_plugin, pool.device_list_strategy) == ("1.17.3", "0.17.0", ("volume-mounts",))


def test_optional_reads_forbidden_are_warnings_not_failures(fakekube, kubeconfig, matrix):
    fakekube.forbidden.update({"/apis/nvidia.com/", "/apis/node.k8s.io/"})
    target = target_from_cluster(None, str(kubeconfig), matrix)
    assert len(target.pools) == 2 and target.runtime_classes == ()
    assert target.warnings == (
        "cannot read the GPU Operator ClusterPolicy (403 Forbidden); ignored",
        "cannot list RuntimeClasses (403 Forbidden); runtime classes unknown",
    )


def test_no_gpu_operator_is_not_a_warning(fakekube, kubeconfig, matrix):
    fakekube.state.clusterpolicies = None  # CRD not installed: 404
    assert target_from_cluster(None, str(kubeconfig), matrix).warnings == ()


def _assert_one_line_cluster_error(info, server, fragment):
    error = info.value
    assert isinstance(error, ClusterError) and error.exit_code == 3
    assert error.message.startswith(f"cluster {server}: listing nodes: "), error.message
    assert fragment in error.message
    assert "\n" not in error.message and TOKEN not in error.message and TOKEN[:12] not in error.message


def test_401_is_a_cluster_error_without_the_token(fakekube, tmp_path):
    kubeconfig = fakekube.write_kubeconfig(tmp_path / "bad-token", token="wrong-" + TOKEN)
    with pytest.raises(ClusterError) as info:
        target_from_cluster(None, str(kubeconfig), None)
    _assert_one_line_cluster_error(info, fakekube.url, "401 Unauthorized")
    assert "wrong-" not in info.value.message


def test_403_on_nodes_is_a_cluster_error(fakekube, kubeconfig):
    fakekube.forbidden.add("/api/v1/nodes")
    with pytest.raises(ClusterError) as info:
        target_from_cluster(None, str(kubeconfig), None)
    _assert_one_line_cluster_error(info, fakekube.url, "403 Forbidden")


def test_connection_refused(fakekube, tmp_path):
    url = dead_url()
    kubeconfig = fakekube.write_kubeconfig(tmp_path / "dead", server=url)
    with pytest.raises(ClusterError) as info:
        target_from_cluster(None, str(kubeconfig), None)
    _assert_one_line_cluster_error(info, url, "connection refused")


def test_stalled_server_times_out_quickly(fakekube, kubeconfig):
    fakekube.stall = True
    with pytest.raises(ClusterError) as info:
        target_from_cluster(None, str(kubeconfig), None, timeout=(1.0, 1.0))
    assert len(fakekube.requests) == 1, fakekube.requests  # one read timeout, no retries of the read
    _assert_one_line_cluster_error(info, fakekube.url, "no answer within 1s (read timeout)")


def test_untrusted_certificate_is_a_tls_error(fakekube, tmp_path):
    kubeconfig = fakekube.write_kubeconfig(tmp_path / "other-ca", ca_pem=make_ca().cert_pem)
    with pytest.raises(ClusterError) as info:
        target_from_cluster(None, str(kubeconfig), None)
    _assert_one_line_cluster_error(info, fakekube.url, "TLS")


def test_unknown_context_and_missing_kubeconfig(fakekube, kubeconfig, tmp_path):
    with pytest.raises(ClusterError, match="kubeconfig .*: .*prod"):
        target_from_cluster("prod", str(kubeconfig), None)
    with pytest.raises(ClusterError, match="no such file"):
        target_from_cluster(None, str(tmp_path / "missing"), None)


def test_read_configmap_uses_the_context_namespace(fakekube, tmp_path):
    kubeconfig = fakekube.write_kubeconfig(tmp_path / "kc", namespace="gpu-ops")
    fakekube.state.configmaps[("gpu-ops", "imagelint-matrix")] = {"matrix.toml": "[meta]\nschema_version = 1\n"}
    assert read_configmap("imagelint-matrix", None, None, str(kubeconfig)) == "[meta]\nschema_version = 1\n"
    assert read_configmap("imagelint-matrix", "default", None, str(kubeconfig)) == "# a matrix\n"
    with pytest.raises(ClusterError, match=r"reading ConfigMap gpu-ops/other: 404 Not Found"):
        read_configmap("other", None, None, str(kubeconfig))


def test_check_reads_the_matrix_published_in_the_cluster(fakekube, kubeconfig, tmp_path):
    """`imagelint matrix publish` output, served as a ConfigMap, is what `check --matrix cluster` uses."""
    import subprocess
    import sys

    import yaml

    published = subprocess.run([sys.executable, "-m", "imagelint", "matrix", "publish"], capture_output=True, text=True)
    assert published.returncode == 0, published.stderr
    text = yaml.safe_load(published.stdout)["data"]["matrix.toml"]
    # An organisation's matrix: the published one, re-dated so we can tell it was read.
    shipped_version = text.split('data_version = "', 1)[1].split('"', 1)[0]
    text = text.replace(f'data_version = "{shipped_version}"', 'data_version = "2099-01-01"', 1)
    fakekube.state.configmaps[("default", "imagelint-matrix")] = {"matrix.toml": text}
    fakekube.state.configmaps[("gpu-ops", "custom")] = {"matrix.toml": text.replace("2099-01-01", "2099-02-02", 1)}

    from imagelint.cluster import matrix_from_cluster

    m = matrix_from_cluster(None, str(kubeconfig), selector="cluster")
    assert m.version == "2099-01-01" and m.origin == "cluster:imagelint-matrix"
    assert matrix_from_cluster(None, str(kubeconfig), selector="cluster:gpu-ops/custom").version == "2099-02-02"
    assert m.driver_floor("12.4.1").min_driver == "550.54.15"

    from tests.support.imagebuilder import ImageSpec, write_oci_layout

    layout = write_oci_layout(tmp_path / "img", {"v1": ImageSpec(layers=[[]], env={"CUDA_VERSION": "12.4.1"}).build()})
    run = subprocess.run(
        [sys.executable, "-m", "imagelint", "check", f"oci-dir:{layout}", "--kubeconfig", str(kubeconfig),
         "--matrix", "cluster", "--driver", "550.54.15", "--format", "json"],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    import json

    assert json.loads(run.stdout)["matrix"]["version"] == "2099-01-01"
