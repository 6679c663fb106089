"""``imagelint audit`` end to end: the real ``kubernetes`` client against the loopback API server
(tests/support/fakekube.py) serving ~300 pods over tens of images pushed to the real registries.

The cluster: t4-pool (2 nodes, driver 535 = CUDA 12.2), v100-pool (470 = CUDA 11.4), h100-pool
(550, tainted), gh200-pool (550, arm64), one CPU node. Images: 20 CUDA 12.2 apps, one image under
three tags (one digest), CUDA 11.8 and 12.8 images, a multi-arch and an amd64-only image on the
arm64 pool, and an image on the authenticated registry that the audit may not pull.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.audit.policyreport_schema import report_schema
from tests.cli.test_check import imagelint, official_image
from tests.rules.helpers import official_env
from tests.support.fakekube import ClusterState, FakeKube, cpu_node, daemonset, gfd_node
from tests.support.imagebuilder import ImageSpec, build_index

TOKEN = "audit-bearer-token-never-printed-0123456789"
PR_COLLECTION = "apis/wgpolicyk8s.io/v1alpha2/policyreports"
TAINT = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
TOLERATE = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


def _pod_spec(image: str, *, gpu: bool = True, tolerate: bool = False, selector: dict | None = None,
              pull_secret: str | None = None) -> dict:
    container = {"name": "main", "image": image}
    if gpu:
        container["resources"] = {"limits": {"nvidia.com/gpu": "1"}}
    spec: dict = {"containers": [container]}
    if tolerate:
        spec["tolerations"] = TOLERATE
    if selector:
        spec["nodeSelector"] = selector
    if pull_secret:
        spec["imagePullSecrets"] = [{"name": pull_secret}]
    return spec


def _pod(ns: str, name: str, owner: tuple[str, str], image: str, image_id: str, node: str, **kw) -> dict:
    kind, owner_name = owner
    meta: dict = {"name": name, "namespace": ns, "labels": {"app": owner_name}}
    if kind == "ReplicaSet":
        meta["labels"]["pod-template-hash"] = "5d8f9c"
    if kind != "Pod":
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": kind, "name": owner_name + ("-5d8f9c" if kind == "ReplicaSet" else ""),
                                    "controller": True, "uid": f"uid-{owner_name}"}]
    spec = {**_pod_spec(image, **kw), "nodeName": node}
    status = {"phase": "Running", "containerStatuses": [{"name": "main", "image": image, "imageID": image_id, "ready": True}]}
    return {"metadata": meta, "spec": spec, "status": status}


def _controller(kind: str, ns: str, name: str, image: str, replicas: int = 1, **kw) -> dict:
    template = {"metadata": {"labels": {"app": name}}, "spec": _pod_spec(image, **kw)}
    if kind == "CronJob":
        return {"metadata": {"name": name, "namespace": ns}, "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": template}}}}
    return {"metadata": {"name": name, "namespace": ns, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": template}}


def _pull_secret(ns: str, name: str, host: str, user: str, password: str) -> dict:
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    config = json.dumps({"auths": {f"https://{host}": {"auth": auth}}}).encode()
    return {"metadata": {"name": name, "namespace": ns}, "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": base64.b64encode(config).decode()}}


class Fleet:
    def __init__(self, kube: FakeKube, kubeconfig: Path, plain, tls, workdir: Path) -> None:
        self.kube, self.kubeconfig, self.plain, self.tls, self.workdir = kube, kubeconfig, plain, tls, workdir

    def audit(self, *args: str):
        return imagelint("audit", "--cluster", "--kubeconfig", str(self.kubeconfig), "--insecure-registry", self.plain.host,
                         "--ca-cert", str(self.tls.ca_cert), *args)


@pytest.fixture(scope="module")
def fleet(plain_registry, tls_registry, tmp_path_factory):
    work = tmp_path_factory.mktemp("audit-fleet")
    host = plain_registry.host
    digests: dict[str, str] = {}

    def push(repo: str, tag: str, built, registry=plain_registry) -> str:
        registry.push(repo, tag, built)
        digests[f"{repo}:{tag}"] = built.digest
        return built.digest

    for i in range(20):
        push(f"apps/app-{i}", "v1", official_image("12.2.2", "12.2.140", labels={"app.index": str(i)}))
    shared = official_image("12.2.2", "12.2.140", labels={"shared": "yes"})
    for tag in ("a", "b", "c"):
        push("shared/base", tag, shared)
    push("legacy/cuda118", "v1", official_image("11.8.0", "11.8.89"))
    push("new/cuda128", "v1", official_image("12.8.1", "12.8.90"))
    push("x86/only", "v1", official_image("12.2.2", "12.2.140", labels={"x86": "only"}))
    amd = official_image("12.2.2", "12.2.140", labels={"multi": "yes"})
    env = official_env("12.2.2", "arm64")
    arm = ImageSpec(layers=[[]], env=env, architecture="arm64", labels={"multi": "yes"}).build()
    push("multi/app", "v1", build_index([amd, arm]))
    push("private/app", "v1", official_image("12.2.2", "12.2.140", labels={"private": "yes"}), registry=tls_registry)

    nodes = [
        gfd_node("t4-a", "535.104.05", "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool="t4-pool"),
        gfd_node("t4-b", "535.104.05", "12.2", "Tesla-T4", "7.5", "turing", 1, nodepool="t4-pool"),
        gfd_node("v100-a", "470.182.03", "11.4", "Tesla-V100-SXM2-16GB", "7.0", "volta", 1, nodepool="v100-pool"),
        gfd_node("h100-a", "550.54.15", "12.4", "NVIDIA-H100-80GB-HBM3", "9.0", "hopper", 8, nodepool="h100-pool", taints=TAINT),
        gfd_node("gh200-a", "550.54.15", "12.4", "NVIDIA-GH200-480GB", "9.0", "hopper", 1, arch="arm64", nodepool="gh200-pool"),
        cpu_node("cpu-a"),
    ]
    pods: list[dict] = []
    deployments: list[dict] = []
    statefulsets: list[dict] = []

    def run(ns: str, kind: str, name: str, repo_tag: str, node_list: list[str], count: int, registry_host: str = host, **kw) -> None:
        image = f"{registry_host}/{repo_tag}"
        digest = digests.get(repo_tag, "sha256:" + "0" * 64)
        image_id = f"{registry_host}/{repo_tag.split(':')[0]}@{digest}"
        owner = ("ReplicaSet", name) if kind == "Deployment" else (kind, name)
        for n in range(count):
            pods.append(_pod(ns, f"{name}-{n}", owner, image, image_id, node_list[n % len(node_list)], **kw))
        (deployments if kind == "Deployment" else statefulsets).append(_controller(kind, ns, name, image, count, **kw))

    for i in range(20):
        where = ["v100-a"] if i < 4 else (["h100-a"] if i in (4, 5) else ["t4-a", "t4-b"])
        run(f"team-{i % 3}", "Deployment", f"app-{i}", f"apps/app-{i}:v1", where, 10, tolerate=i in (4, 5))
    for tag in ("a", "b", "c"):
        run("team-0", "StatefulSet", f"shared-{tag}", f"shared/base:{tag}", ["t4-a", "t4-b"], 10)
    run("team-1", "Deployment", "legacy", "legacy/cuda118:v1", ["v100-a"], 20)
    run("team-1", "Deployment", "cuda128", "new/cuda128:v1", ["h100-a"], 10, tolerate=True)
    run("team-2", "Deployment", "multi", "multi/app:v1", ["gh200-a"], 10)
    run("team-2", "Deployment", "x86-only", "x86/only:v1", ["gh200-a"], 10)
    run("team-2", "Deployment", "private", "private/app:v1", ["t4-a"], 10, registry_host=tls_registry.host, pull_secret="regcred")
    for n in range(20):
        pods.append(_pod("kube-system", f"coredns-{n}", ("ReplicaSet", "coredns"), "registry.k8s.io/coredns/coredns:v1.11.1",
                         "registry.k8s.io/coredns/coredns@sha256:" + "1" * 64, "cpu-a", gpu=False))
    # Templates with no running pod: scaled to zero (pinned to the V100 pool), and a CronJob between runs.
    deployments.append(_controller("Deployment", "team-1", "idle", f"{host}/apps/app-0:v1", 0, selector={"eks.amazonaws.com/nodegroup": "v100-pool"}))
    cronjobs = [_controller("CronJob", "team-2", "nightly", f"{host}/apps/app-7:v1", tolerate=True, selector={"kubernetes.io/arch": "amd64"})]

    state = ClusterState(
        nodes=nodes,
        pods=pods,
        daemonsets=[daemonset("gpu-operator", "nvidia-device-plugin-daemonset", "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"),
                    daemonset("gpu-operator", "nvidia-container-toolkit-daemonset", "nvcr.io/nvidia/k8s/container-toolkit:v1.17.3-ubuntu20.04")],
        objects={
            "apis/apps/v1/deployments": deployments,
            "apis/apps/v1/statefulsets": statefulsets,
            "apis/batch/v1/jobs": [],
            "apis/batch/v1/cronjobs": cronjobs,
            PR_COLLECTION: [],
            "api/v1/secrets": [_pull_secret("team-2", "regcred", tls_registry.host, tls_registry.username, tls_registry.password)],
        },
        writable={PR_COLLECTION},
    )
    kube = FakeKube(state, work, TOKEN).start()
    try:
        yield Fleet(kube, kube.write_kubeconfig(work / "kubeconfig"), plain_registry, tls_registry, work)
    finally:
        kube.stop()


@pytest.fixture(scope="module")
def audit_json(fleet) -> dict:
    out = fleet.audit("--format", "json")
    assert out.returncode == 3, out.stderr  # the private image could not be read: a partial audit never passes
    return json.loads(out.stdout)


def _verdicts(report: dict, verdict: str) -> set[tuple[str, str, str]]:
    return {(w["namespace"], f"{w['owner']['kind']}/{w['owner']['name']}", pool)
            for w in report["workloads"] for pool, v in w["verdicts"].items() if v == verdict}


def test_audit_finds_exactly_the_broken_workloads_with_their_pool(audit_json) -> None:
    assert _verdicts(audit_json, "fail") == {
        ("team-0", "Deployment/app-0", "v100-pool"),
        ("team-1", "Deployment/app-1", "v100-pool"),
        ("team-2", "Deployment/app-2", "v100-pool"),
        ("team-0", "Deployment/app-3", "v100-pool"),
        ("team-2", "Deployment/x86-only", "gh200-pool"),
        ("team-1", "Deployment/idle", "v100-pool"),  # a template: the pool its nodeSelector picks
        ("team-2", "CronJob/nightly", "v100-pool"),  # a template: every amd64 pool it tolerates
    }
    assert _verdicts(audit_json, "error") == {("team-2", "Deployment/private", "t4-pool")}
    nightly = next(w for w in audit_json["workloads"] if w["owner"] == {"kind": "CronJob", "name": "nightly"})
    assert sorted(nightly["pools"]) == ["h100-pool", "t4-pool", "v100-pool"]
    assert nightly["placement"] == "scheduling"
    checks = {(c["image_key"], c["pool"]): c for c in audit_json["checks"]}
    app0 = next(w for w in audit_json["workloads"] if w["owner"]["name"] == "app-0")
    assert [f["rule"] for f in checks[(app0["image_key"], "v100-pool")]["findings"] if f["severity"] == "error"] == ["IL101"]
    x86 = next(w for w in audit_json["workloads"] if w["owner"]["name"] == "x86-only")
    assert "IL402" in {f["rule"] for f in checks[(x86["image_key"], "gh200-pool")]["findings"]}


def test_audit_dedupes_by_digest_and_skips_cpu_pods(audit_json) -> None:
    jsonschema.validate(audit_json, json.loads((Path(__file__).parents[2] / "docs" / "audit-schema.json").read_text()))
    shared = {w["image_key"] for w in audit_json["workloads"] if w["owner"]["name"].startswith("shared-")}
    assert len(shared) == 1 and next(iter(shared)).startswith("sha256:")
    image = next(i for i in audit_json["images"] if i["key"] in shared)
    assert len(image["references"]) == 3  # three tags, one digest, checked once
    # 20 apps + shared + cuda118 + cuda128 + multi + x86 + private; coredns runs on a CPU node
    assert audit_json["summary"]["images"] == 26
    coredns = next(w for w in audit_json["workloads"] if w["owner"]["name"] == "coredns")
    assert coredns["pools"] == [] and coredns["pods"] == 20
    off = [(w["owner"]["name"], w["placement"]) for w in audit_json["workloads"] if not w["pools"]]
    assert off == [  # the operator's DaemonSets (templates here) ask for no GPU
        ("nvidia-container-toolkit-daemonset", "requests no GPU"),
        ("nvidia-device-plugin-daemonset", "requests no GPU"),
        ("coredns", "node cpu-a (no GPU pool)"),
    ], off
    assert sum(w["pods"] for w in audit_json["workloads"]) == 310
    # One entry per workload container, whatever the number of nodes its pods run on.
    keys = [(w["namespace"], w["owner"]["kind"], w["owner"]["name"], w["container"], w["image"]) for w in audit_json["workloads"]]
    assert len(keys) == len(set(keys))
    app10 = next(w for w in audit_json["workloads"] if w["owner"]["name"] == "app-10")
    assert app10["pods"] == 10 and app10["pools"] == ["t4-pool"] and app10["placement"] == "nodes t4-a, t4-b"


def test_audit_text_lists_broken_workloads_with_pool_and_reason(fleet) -> None:
    out = fleet.audit()
    assert out.returncode == 3
    assert "FAIL" in out.stdout and "Deployment/x86-only" in out.stdout and "gh200-pool" in out.stdout
    assert "IL101" in out.stdout and "not checked" in out.stdout
    assert TOKEN not in out.stdout + out.stderr


def test_plan_to_an_older_driver_breaks_and_a_newer_one_fixes(fleet) -> None:
    older = fleet.audit("--plan-driver", "470.182.03", "--format", "json")
    assert older.returncode == 3, older.stderr  # the private image is still unreadable
    plan = json.loads(older.stdout)
    breaks = {(c["namespace"], c["owner"]["name"], c["pool"]) for c in plan["changes"] if c["change"] == "breaks"}
    assert ("team-1", "app-10", "t4-pool") in breaks and ("team-1", "app-4", "h100-pool") in breaks
    assert not any(c["change"] == "fixed" for c in plan["changes"])
    assert not any(name == "legacy" for _, name, _ in breaks)  # CUDA 11.8 on 470: as today
    reason = next(c for c in plan["changes"] if c["owner"]["name"] == "app-10" and c["change"] == "breaks")["reasons"]
    assert any(r.startswith("IL101:") for r in reason)

    newer = fleet.audit("--plan-driver", "580.65.06", "--format", "json")
    plan = json.loads(newer.stdout)
    fixed = {(c["owner"]["name"], c["pool"]) for c in plan["changes"] if c["change"] == "fixed"}
    assert {("app-0", "v100-pool"), ("idle", "v100-pool"), ("nightly", "v100-pool")} <= fixed
    assert ("x86-only", "gh200-pool") not in fixed  # a driver does not change the image's CPU architecture
    assert not any(c["change"] == "breaks" for c in plan["changes"])
    text = fleet.audit("--plan-driver", "580.65.06")
    assert "Fixed:" in text.stdout and "namespace team-0" in text.stdout


def test_four_shards_merged_equal_one_run(fleet) -> None:
    whole = fleet.audit("--format", "json")
    parts = []
    for i in range(4):
        out = fleet.audit("--format", "json", "--shard", f"{i}/4")
        part = fleet.workdir / f"part{i}.json"
        part.write_text(out.stdout)
        parts.append(str(part))
        assert json.loads(out.stdout)["shard"] == {"index": i, "count": 4}
    merged = imagelint("audit", "merge", *parts, "--format", "json")
    assert merged.returncode == whole.returncode == 3
    assert merged.stdout == whole.stdout  # canonical JSON: byte for byte
    sizes = [len(json.loads(Path(p).read_text())["images"]) for p in parts]
    assert sum(sizes) == 26 and max(sizes) < 26
    missing = imagelint("audit", "merge", *parts[:3])
    assert missing.returncode == 2 and "3/4" in missing.stderr


def test_policy_reports_are_valid_and_write_reports_is_idempotent(fleet) -> None:
    out = fleet.audit("--format", "policyreport")
    docs = list(yaml.safe_load_all(out.stdout))
    assert {d["metadata"]["namespace"] for d in docs} == {"team-0", "team-1", "team-2"}
    for doc in docs:
        jsonschema.validate(doc, report_schema(doc["kind"]))
    team2 = next(d for d in docs if d["metadata"]["namespace"] == "team-2")
    fails = {(r["resources"][0]["name"], r["properties"]["pool"], r["rule"]) for r in team2["results"] if r["result"] == "fail"}
    assert ("x86-only", "gh200-pool", "IL402") in fails
    assert any(r["result"] == "error" and r["resources"][0]["name"] == "private" for r in team2["results"])

    first = fleet.audit("--write-reports", "--format", "json")
    assert first.returncode == 3 and first.stderr.count("created") == 3, first.stderr
    stored = {o["metadata"]["namespace"]: o for o in fleet.kube.state.objects[PR_COLLECTION]}
    assert set(stored) == {"team-0", "team-1", "team-2"}
    assert stored["team-2"]["results"] == team2["results"]
    writes = len(fleet.kube.writes)
    second = fleet.audit("--write-reports", "--format", "json")
    assert second.stderr.count("unchanged") == 3 and len(fleet.kube.writes) == writes
    assert len(fleet.kube.state.objects[PR_COLLECTION]) == 3
    # A changed report replaces the old one (PUT with its resourceVersion), never a second object.
    fleet.kube.state.objects[PR_COLLECTION][0]["results"] = []
    third = fleet.audit("--write-reports", "--format", "json")
    assert third.stderr.count("updated") == 1 and len(fleet.kube.state.objects[PR_COLLECTION]) == 3
    assert fleet.kube.writes[-1][0] == "PUT"


def test_forbidden_workload_lists_are_warnings_but_pods_are_required(fleet) -> None:
    fleet.kube.forbidden.add("/apis/batch/v1/cronjobs")
    try:
        out = fleet.audit("--format", "json")
        report = json.loads(out.stdout)
        assert not any(w["owner"]["kind"] == "CronJob" for w in report["workloads"])
        assert any("CronJobs" in w and "403" in w for w in report["warnings"])
    finally:
        fleet.kube.forbidden.discard("/apis/batch/v1/cronjobs")
    fleet.kube.forbidden.add("/api/v1/pods")
    try:
        out = fleet.audit()
        assert out.returncode == 3 and "pods" in out.stderr and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
    finally:
        fleet.kube.forbidden.discard("/api/v1/pods")


def test_pull_secrets_are_used_only_when_allowed_and_never_written(fleet, tmp_path) -> None:
    password = fleet.tls.password
    out = imagelint("audit", "--cluster", "--kubeconfig", str(fleet.kubeconfig), "--insecure-registry", fleet.plain.host,
                    "--ca-cert", str(fleet.tls.ca_cert), "--use-pull-secrets", "--format", "json",
                    env={"IMAGELINT_NO_CACHE": None, "IMAGELINT_CACHE_DIR": str(tmp_path / "cache")})
    assert out.returncode == 1, out.stderr  # every image read now; the broken ones still fail
    report = json.loads(out.stdout)
    readable = _verdicts(report, "pass") | _verdicts(report, "warn")
    assert ("team-2", "Deployment/private", "t4-pool") in readable
    assert not _verdicts(report, "error")
    assert any(p.startswith("GET /api/v1/namespaces/team-2/secrets/regcred") or p == "/api/v1/namespaces/team-2/secrets/regcred"
               for p in fleet.kube.requests)
    encoded = base64.b64encode(f"{fleet.tls.username}:{password}".encode()).decode()
    for text in (out.stdout, out.stderr, *(f.read_text(errors="replace") for f in (tmp_path / "cache").rglob("*") if f.is_file())):
        assert password not in text and encoded not in text
    enumerate_out = imagelint("audit", "enumerate", "--cluster", "--kubeconfig", str(fleet.kubeconfig))
    assert password not in enumerate_out.stdout and "regcred" not in enumerate_out.stdout
    refused = fleet.audit("--use-pull-secrets", "--images", "x")
    assert refused.returncode == 2


def test_the_in_cluster_flow_enumerate_then_indexed_shards_then_merge(fleet, audit_json) -> None:
    """deploy/: the CronJob's two commands, the Indexed Job's shards (index from the environment), merge."""
    work = fleet.workdir / "run"
    work.mkdir(exist_ok=True)
    snapshot = imagelint("target", "snapshot", "--cluster", "--kubeconfig", str(fleet.kubeconfig))
    assert snapshot.returncode == 0, snapshot.stderr
    (work / "target.toml").write_text(snapshot.stdout)
    enumerated = imagelint("audit", "enumerate", "--cluster", "--kubeconfig", str(fleet.kubeconfig), "-o", str(work / "inventory.json"))
    assert enumerated.returncode == 0, enumerated.stderr
    parts = []
    for index in range(3):
        out = imagelint("audit", "--images", str(work / "inventory.json"), "--target-file", str(work / "target.toml"),
                        "--insecure-registry", fleet.plain.host, "--ca-cert", str(fleet.tls.ca_cert), "--format", "json",
                        "-o", str(work / f"part-{index}.json"), env={"JOB_COMPLETION_INDEX": str(index), "IMAGELINT_SHARDS": "3"})
        assert out.returncode in (1, 3), out.stderr
        parts.append(str(work / f"part-{index}.json"))
    merged = json.loads(imagelint("audit", "merge", *parts, "--format", "json").stdout)
    # The same verdicts as the direct --cluster run: the snapshot's pools are the cluster's pools.
    assert {k: v for k, v in merged["summary"].items()} == audit_json["summary"]
    assert [w["verdicts"] for w in merged["workloads"]] == [w["verdicts"] for w in audit_json["workloads"]]


def test_sharded_plans_merge_into_the_unsharded_plan(fleet) -> None:
    whole = fleet.audit("--plan-driver", "470.182.03", "--format", "json")
    parts = []
    for i in range(2):
        out = fleet.audit("--plan-driver", "470.182.03", "--format", "json", "--shard", f"{i}/2")
        path = fleet.workdir / f"plan-{i}.json"
        path.write_text(out.stdout)
        parts.append(str(path))
    merged = imagelint("audit", "merge", *parts, "--format", "json")
    assert merged.returncode == whole.returncode and merged.stdout == whole.stdout


def test_namespace_and_selector_narrow_what_is_read(fleet) -> None:
    out = fleet.audit("-n", "team-1", "-l", "app=legacy", "--format", "json")
    report = json.loads(out.stdout)
    assert {(w["namespace"], w["owner"]["name"]) for w in report["workloads"]} == {("team-1", "legacy")}
    assert any("labelSelector=app%3Dlegacy" in q or "labelSelector=app=legacy" in q for q in fleet.kube.queries)
    both = fleet.audit("-n", "team-1", "-A")
    assert both.returncode == 2 and "not both" in both.stderr


def test_matrix_from_the_cluster_uses_the_same_kubeconfig(fleet) -> None:
    out = fleet.audit("--matrix", "cluster")
    # The fake cluster publishes no imagelint-matrix ConfigMap: the error names that server, so the
    # --kubeconfig given was the one used to look (not a default one).
    assert out.returncode in (2, 3) and fleet.kube.url in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_il303_is_not_raised_on_workloads_that_request_a_gpu(audit_json) -> None:
    """IL303 says a pod that requests NO GPU still sees every GPU: every container here asks for one."""
    checked = {w["image_key"] for w in audit_json["workloads"] if w["pools"]}
    il303 = [(c["image_key"], c["pool"]) for c in audit_json["checks"] if c["image_key"] in checked
             for f in c["findings"] if f["rule"] == "IL303"]
    assert il303 == []
    assert all(w["requests_gpu"] for w in audit_json["workloads"] if w["pools"])


def _stored_report(fleet, namespace: str) -> dict:
    return next(o for o in fleet.kube.state.objects[PR_COLLECTION] if o["metadata"]["namespace"] == namespace)


def test_write_reports_retries_a_conflict_with_the_fresh_resource_version(fleet) -> None:
    fleet.audit("--write-reports", "--namespace", "team-0", "--format", "json")  # the report exists
    _stored_report(fleet, "team-0")["results"] = []  # changed since: the next run replaces it
    fleet.kube.conflicts_left = 2  # another writer wins twice
    out = fleet.audit("--write-reports", "--namespace", "team-0", "--format", "json")
    assert out.returncode == 1, out.stderr  # the audit's verdict: app-0 fails on v100-pool
    assert "imagelint: PolicyReport team-0/imagelint-audit updated" in out.stderr
    assert _stored_report(fleet, "team-0")["results"] != []


def test_a_write_that_keeps_failing_never_hides_the_audits_verdict(fleet) -> None:
    fleet.audit("--write-reports", "--namespace", "team-0", "--format", "json")
    _stored_report(fleet, "team-0")["results"] = []
    fleet.kube.conflicts_left = 10
    try:
        out = fleet.audit("--write-reports", "--namespace", "team-0", "--format", "json")
    finally:
        fleet.kube.conflicts_left = 0
    assert out.returncode == 1, out.stderr  # before: exit 3, "409" and the run's result lost
    assert json.loads(out.stdout)["summary"]["fail"] >= 1
    assert "PolicyReport team-0/imagelint-audit not written: 409 Conflict 3 times" in out.stderr


def test_a_report_another_tool_manages_is_left_alone(fleet) -> None:
    theirs = {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
              "metadata": {"name": "imagelint-audit", "namespace": "team-1", "resourceVersion": "7",
                           "labels": {"app.kubernetes.io/managed-by": "kyverno"}},
              "results": [{"policy": "theirs", "result": "pass"}], "summary": {"pass": 1}}
    collection = fleet.kube.state.objects[PR_COLLECTION]
    collection[:] = [o for o in collection if o["metadata"]["namespace"] != "team-1"] + [theirs]
    out = fleet.audit("--write-reports", "--namespace", "team-1", "--format", "json")
    assert ("PolicyReport team-1/imagelint-audit left alone: its app.kubernetes.io/managed-by label names 'kyverno', "
            "not 'imagelint'") in out.stderr
    assert _stored_report(fleet, "team-1") == theirs
