"""The cluster connection's generic API (what every cluster reader builds on): lists follow
``continue`` tokens within bounds, optional reads degrade to "not checked", any kind can be read.

Against the loopback API server of tests/support/fakekube.py, with the real ``kubernetes`` client.
"""

from __future__ import annotations

import subprocess
import sys
from urllib.parse import parse_qsl

import pytest

from imagelint.cluster import Resource, connect, target_from_cluster
from imagelint.cluster import connection as connection_module
from imagelint.cluster.resources import CONFIG_MAPS, DAEMON_SETS, NODES
from imagelint.errors import ClusterError


def test_lists_follow_continue_tokens(fakekube, kubeconfig, matrix, monkeypatch):
    whole = target_from_cluster(None, str(kubeconfig), matrix)
    monkeypatch.setattr(connection_module, "LIST_PAGE_SIZE", 1)
    fakekube.queries.clear()
    fakekube.requests.clear()
    paged = target_from_cluster(None, str(kubeconfig), matrix)
    assert paged == whole
    node_queries = [dict(parse_qsl(q)) for p, q in zip(fakekube.requests, fakekube.queries) if p == "/api/v1/nodes"]
    assert node_queries == [{"limit": "1"}] + [{"limit": "1", "continue": str(n)} for n in (1, 2, 3)]


def test_list_objects_returns_every_item_and_passes_selectors(fakekube, kubeconfig, monkeypatch):
    monkeypatch.setattr(connection_module, "LIST_PAGE_SIZE", 3)
    with connect(None, str(kubeconfig)) as conn:
        listing = conn.list_objects(NODES, label_selector="nvidia.com/gpu.present=true")
    assert listing.checked and listing.refused is None
    assert [n["metadata"]["name"] for n in listing.items] == ["ip-10-0-1-11", "ip-10-0-1-12", "ip-10-0-2-21", "ip-10-0-0-5"]
    assert dict(parse_qsl(fakekube.queries[0])) == {"limit": "3", "labelSelector": "nvidia.com/gpu.present=true"}


def test_a_server_repeating_its_continue_token_is_an_error_not_a_loop(fakekube, kubeconfig):
    fakekube.broken_continue = True
    with connect(None, str(kubeconfig)) as conn, pytest.raises(ClusterError) as caught:
        conn.list_objects(NODES)
    assert str(caught.value).endswith("listing nodes: the server repeats its continue token")
    assert len(fakekube.requests) == 2


def test_paging_is_bounded(fakekube, kubeconfig, monkeypatch):
    monkeypatch.setattr(connection_module, "LIST_PAGE_SIZE", 1)
    monkeypatch.setattr(connection_module, "MAX_LIST_PAGES", 2)
    with connect(None, str(kubeconfig)) as conn, pytest.raises(ClusterError, match=r"listing nodes: more than 2 nodes; stopped reading"):
        conn.list_objects(NODES)
    assert len(fakekube.requests) == 2


def test_an_answer_over_the_size_bound_is_not_read(fakekube, kubeconfig, monkeypatch):
    with connect(None, str(kubeconfig)) as conn:
        body = conn.request_bytes("reading nodes", NODES.list_call(conn.api_client, None))
        assert 1000 < len(body) and conn.request("reading nodes", NODES.list_call(conn.api_client, None), max_bytes=len(body))
        with pytest.raises(ClusterError, match=r"reading nodes: the answer is larger than 1000 bytes; stopped reading"):
            conn.request_bytes("reading nodes", NODES.list_call(conn.api_client, None), max_bytes=1000)
        monkeypatch.setattr(connection_module, "MAX_RESPONSE_BYTES", 1000)
        with pytest.raises(ClusterError, match=r"listing nodes: the answer is larger than 1000 bytes"):
            conn.list_objects(NODES)
        # The connection is still usable after an answer was cut off.
        assert conn.get_object(CONFIG_MAPS, "imagelint-matrix").checked


def test_optional_reads_are_not_checked_on_403_and_404(fakekube, kubeconfig):
    fakekube.forbidden.add("/apis/apps/v1/daemonsets")
    dra_slices = Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", "ResourceSlices")
    with connect(None, str(kubeconfig)) as conn:
        refused = conn.list_objects(DAEMON_SETS, optional=True)
        assert (refused.checked, refused.refused, refused.items) == (False, 403, ())
        namespaced = conn.list_objects(DAEMON_SETS, "gpu-operator", optional=True)
        assert namespaced.checked and len(namespaced.items) == 3  # another path: allowed
        not_served = conn.list_objects(dra_slices, optional=True)  # an API this server does not serve
        assert (not_served.checked, not_served.refused) == (False, 404)
        missing = conn.get_object(CONFIG_MAPS, "nope", "default", optional=True)
        assert (missing.checked, missing.refused, missing.object) == (False, 404, None)
        found = conn.get_object(CONFIG_MAPS, "imagelint-matrix")  # the context's namespace
        assert found.checked and found.object["data"] == {"matrix.toml": "# a matrix\n"}
        with pytest.raises(ClusterError, match=r"listing DaemonSets: 403 Forbidden \(the credentials lack permission"):
            conn.list_objects(DAEMON_SETS)  # not optional: the run ends
        with pytest.raises(ClusterError, match=r"listing ResourceSlices: 404 Not Found"):
            conn.list_objects(dra_slices)
    assert "/apis/resource.k8s.io/v1/resourceslices" in fakekube.requests
    assert "/apis/apps/v1/namespaces/gpu-operator/daemonsets" in fakekube.requests


def test_importing_the_cluster_package_does_not_import_the_kubernetes_client():
    probe = "import sys, imagelint.cluster, imagelint.deploytarget.options; print('kubernetes' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"



@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        (b"[1, 2]", None),
        (b'{"items": "nodes"}', None),
        (b'{"items": 3}', None),
        (b'{"items": [], "metadata": ["x"]}', ()),
        (b'{"items": [1, {"metadata": {"name": "a"}}, "x"]}', ({"metadata": {"name": "a"}},)),
        (b"not json", "the answer is not JSON"),
    ],
)
def test_a_malformed_list_answer_is_one_error_line_or_skipped(fakekube, kubeconfig, answer, kept):
    fakekube.raw["/api/v1/nodes"] = answer
    with connect(None, str(kubeconfig)) as conn:
        if isinstance(kept, tuple):
            assert conn.list_objects(NODES).items == kept  # non-objects among the items are skipped
        else:
            with pytest.raises(ClusterError, match=f"listing nodes: {kept or 'the answer is not a list of objects'}"):
                conn.list_objects(NODES)


def test_malformed_objects_are_left_out_with_a_warning(fakekube, kubeconfig, matrix):
    """Each reader skips an object that does not fit the API (cluster objects are untrusted) and says so;
    the well-formed objects still make the target."""
    import json

    state = fakekube.state
    bad = {
        "/api/v1/nodes": [*state.nodes, {"metadata": "x"}],
        "/apis/apps/v1/daemonsets": [*state.daemonsets, {"metadata": {"namespace": "x", "name": "bad"}, "spec": {"template": {"spec": {
            "containers": [{"image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "args": "x"}]}}}}],
        "/apis/node.k8s.io/v1/runtimeclasses": [*state.runtimeclasses, {"metadata": {"name": "odd"}, "handler": "nvidia-x",
                                                                        "scheduling": {"nodeSelector": ["a"]}}],
        "/apis/nvidia.com/v1/clusterpolicies": [*state.clusterpolicies, {"metadata": {"name": "cp2"}, "spec": {"mig": "single"}}],
    }
    whole = target_from_cluster(None, str(kubeconfig), matrix)
    fakekube.raw = {path: json.dumps({"items": items}).encode() for path, items in bad.items()}
    target = target_from_cluster(None, str(kubeconfig), matrix)
    assert target.pools == whole.pools and target.runtime_classes == whole.runtime_classes
    assert set(target.warnings) == {
        "node ?: not an object imagelint understands (AttributeError); ignored",
        "DaemonSet x/bad: not an object imagelint understands (ValueError); ignored",
        "RuntimeClass odd: not an object imagelint understands; ignored",
        "ClusterPolicy cp2: not an object imagelint understands (AttributeError); ignored",
    }
