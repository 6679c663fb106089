"""Untrusted cluster objects in ``audit``: malformed pods and templates are left out with a
warning, references never reach a local path or the daemon, names are printed escaped, a pull
secret that cannot be read is named, never shown; plus the pure helpers (imageID, shards)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from imagelint.audit.shard import parse_shard, shard_from, shard_of
from imagelint.cluster.pull_secrets import parse_docker_config
from imagelint.cluster.workloads import parse_image_id
from imagelint.errors import UsageError
from tests.cli.test_check import imagelint
from tests.support.fakekube import ClusterState, FakeKube, gfd_node

TOKEN = "hostile-audit-token-0123456789"
DIGEST = "sha256:" + "a" * 64


@pytest.mark.parametrize("image_id, expected", [
    (f"docker-pullable://reg.example/app@{DIGEST}", (DIGEST, f"reg.example/app@{DIGEST}")),
    (f"reg.example:5000/team/app@{DIGEST}", (DIGEST, f"reg.example:5000/team/app@{DIGEST}")),
    (DIGEST, (None, None)),  # a config ID: names no manifest
    (f"app@sha256:{'z' * 64}", (None, None)),
    ("", (None, None)),
    (42, (None, None)),
])
def test_image_ids(image_id, expected) -> None:
    assert parse_image_id(image_id) == expected


def test_shards_are_deterministic_and_cover_everything() -> None:
    keys = [f"sha256:{i:064x}" for i in range(400)]
    parts = [[k for k in keys if shard_of(k, 4) == i] for i in range(4)]
    assert sorted(k for p in parts for k in p) == sorted(keys) and all(60 < len(p) < 140 for p in parts)
    assert shard_of(keys[0], 4) == shard_of(keys[0], 4)
    assert shard_from(None, {"JOB_COMPLETION_INDEX": "2", "IMAGELINT_SHARDS": "4"}) == (2, 4)
    assert shard_from(None, {}) is None
    with pytest.raises(UsageError, match="IMAGELINT_SHARDS"):
        shard_from(None, {"JOB_COMPLETION_INDEX": "2"})
    for bad in ("4/4", "-1/4", "1/0", "a/b", "1"):
        with pytest.raises(UsageError):
            parse_shard(bad)


def test_pull_secret_payloads() -> None:
    auth = base64.b64encode(b"bob:s3cret-pw").decode()
    creds = parse_docker_config(json.dumps({"auths": {"https://index.docker.io/v1/": {"auth": auth},
                                                      "reg.example:5000": {"username": "u", "password": "p"},
                                                      "bad": "x"}}).encode(), legacy=False)
    assert {(c.registry, c.username) for c in creds} == {("docker.io", "bob"), ("reg.example:5000", "u")}
    assert "s3cret-pw" not in repr(creds)


def _pod(name: str, image: object, **extra) -> dict:
    return {"metadata": {"name": name, "namespace": "ns"},
            "spec": {"nodeName": "t4-a", "containers": [{"name": "main", "image": image,
                                                         "resources": {"limits": {"nvidia.com/gpu": "1"}}}], **extra},
            "status": {"phase": "Running"}}


@pytest.fixture
def hostile(tmp_path: Path):
    local = tmp_path / "local-layout"
    local.mkdir()
    (local / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    pods = [
        _pod("escape\x1b[31m-red", "127.0.0.1:1/app:v1"),
        _pod("local-path", str(local)),              # a path: must not be opened
        _pod("bad-ref", "UPPER/Case::x"),            # not a reference: one error verdict
        {"metadata": "not an object"},               # malformed: left out with a warning
        _pod("bad-containers", "x", containers="oops"),
        "a string, not a pod",
    ]
    state = ClusterState(
        nodes=[gfd_node("t4-a", "535.104.05", "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool="t4-pool")],
        pods=pods, objects={"apis/apps/v1/deployments": [{"metadata": {"namespace": "ns"}, "spec": 5}],
                 "apis/apps/v1/statefulsets": [], "apis/batch/v1/jobs": [], "apis/batch/v1/cronjobs": [],
                 "api/v1/secrets": []},
    )
    kube = FakeKube(state, tmp_path, TOKEN).start()
    try:
        yield kube, kube.write_kubeconfig(tmp_path / "kubeconfig"), local
    finally:
        kube.stop()


def test_malformed_objects_and_references_never_become_tracebacks(hostile) -> None:
    kube, kubeconfig, local = hostile
    out = imagelint("audit", "--cluster", "--kubeconfig", str(kubeconfig), "--format", "json", "--timeout", "2")
    assert out.returncode == 3, out.stderr  # images unreadable: never a pass
    report = json.loads(out.stdout)
    names = {w["owner"]["name"] for w in report["workloads"]}
    assert {"escape?[31m-red", "local-path", "bad-ref"} <= names  # control characters out at read (cluster.objects)
    local_key = next(w["image_key"] for w in report["workloads"] if w["owner"]["name"] == "local-path")
    local_check = next(c for c in report["checks"] if c["image_key"] == local_key)
    assert local_check["verdict"] == "error" and local_check["digest"] is None  # read as a registry name, not the layout
    assert any("not an object imagelint understands" in w for w in report["warnings"])
    text = imagelint("audit", "--cluster", "--kubeconfig", str(kubeconfig), "--timeout", "2")
    assert "\x1b" not in text.stdout and "escape?[31m-red" in text.stdout
    assert "Traceback" not in text.stderr + out.stderr


def test_a_pull_secret_that_cannot_be_read_is_a_warning(hostile) -> None:
    kube, kubeconfig, _ = hostile
    kube.state.pods = [_pod("p", "127.0.0.1:1/app:v1", imagePullSecrets=[{"name": "missing"}])]
    kube.forbidden.add("/api/v1/namespaces/ns/secrets/")
    out = imagelint("audit", "--cluster", "--kubeconfig", str(kubeconfig), "--use-pull-secrets", "--format", "json",
                    "--timeout", "2")
    report = json.loads(out.stdout)
    assert any("pull secret ns/missing: not readable (403 Forbidden)" in w for w in report["warnings"])


def test_a_gpu_template_that_can_land_nowhere_is_said_not_passed(hostile) -> None:
    kube, kubeconfig, _ = hostile
    kube.state.pods = []
    spec = {"containers": [{"name": "main", "image": "127.0.0.1:1/app:v1", "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
            "nodeSelector": {"eks.amazonaws.com/nodegroup": "does-not-exist"}}
    kube.state.objects["apis/apps/v1/deployments"] = [
        {"metadata": {"name": "stranded", "namespace": "ns"}, "spec": {"replicas": 0, "template": {"spec": spec}}}]
    out = imagelint("audit", "--cluster", "--kubeconfig", str(kubeconfig), "--timeout", "2")
    assert out.returncode == 0
    assert "nothing was checked" in out.stdout
    assert "ns/Deployment/stranded container main: asks for a GPU but its scheduling matches no GPU pool" in out.stdout


def test_gpu_workload_kinds_are_enumerated_through_the_manifest_reader(hostile) -> None:
    """A RayCluster scaled to zero: its GPU worker group is found by static.podspecs (the generic
    pod-spec discovery lint uses) and placed on the pools it can land on; its CPU head is not."""
    kube, kubeconfig, _ = hostile
    kube.state.pods = []
    kube.state.objects["apis/apps/v1/deployments"] = []
    worker = {"spec": {"containers": [{"name": "ray-worker", "image": "127.0.0.1:1/ray:2.9-gpu",
                                       "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    head = {"spec": {"containers": [{"name": "ray-head", "image": "127.0.0.1:1/ray:2.9"}]}}
    kube.state.objects["apis/ray.io/v1/rayclusters"] = [{
        "metadata": {"name": "rc", "namespace": "ml"},
        "spec": {"headGroupSpec": {"template": head},
                 "workerGroupSpecs": [{"groupName": "gpu", "replicas": 0, "template": worker}]},
    }]
    out = imagelint("audit", "enumerate", "--cluster", "--kubeconfig", str(kubeconfig))
    assert out.returncode == 0, out.stderr
    inventory = json.loads(out.stdout)
    found = {(w["owner"]["kind"], w["owner"]["name"], w["container"]): (w["pools"], w["placement"]) for w in inventory["workloads"]}
    assert found[("RayCluster", "rc", "ray-worker")] == (["t4-pool"], "scheduling")
    assert found[("RayCluster", "rc", "ray-head")] == ([], "requests no GPU")
    assert [i["references"] for i in inventory["images"]] == [["127.0.0.1:1/ray:2.9-gpu"]]


def test_an_images_file_or_part_that_is_a_fifo_is_refused_at_once(tmp_path):
    """`--images`, `audit merge` parts: local inputs are read as regular files only (a FIFO used to block forever)."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "images.txt"
    os.mkfifo(fifo)
    now = tmp_path / "now.toml"
    now.write_text('[[pool]]\nname = "t4"\ndriver = "535.104.05"\ngpus = ["T4"]\n')
    for args in (["audit", "--images", str(fifo), "--target-file", str(now)], ["audit", "merge", str(fifo)]):
        proc = subprocess.run([sys.executable, "-m", "imagelint", *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert "not a regular file" in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
