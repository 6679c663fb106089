"""deploy/ holds valid Kubernetes objects: a structural check of each kind shipped (the fields the
API server requires, their types), RBAC that is read-only and covers what ``audit`` reads, jobs
whose imagelint command lines use flags that exist, and a GitHub Actions workflow of the right shape."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
API_VERSIONS = {
    "Namespace": "v1", "ServiceAccount": "v1", "PersistentVolumeClaim": "v1",
    "ClusterRole": "rbac.authorization.k8s.io/v1", "ClusterRoleBinding": "rbac.authorization.k8s.io/v1",
    "Job": "batch/v1", "CronJob": "batch/v1",
}
NAMESPACED = {"ServiceAccount", "PersistentVolumeClaim", "Job", "CronJob"}
READ_VERBS = {"get", "list", "watch"}


def objects() -> list[tuple[str, dict]]:
    out = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                out.append((path.name, doc))
    return out


def _problems_pod_template(tpl: dict, where: str) -> list[str]:
    problems = []
    spec = tpl.get("spec") if isinstance(tpl, dict) else None
    if not isinstance(spec, dict):
        return [f"{where}.spec missing"]
    if spec.get("restartPolicy") not in ("Never", "OnFailure"):
        problems.append(f"{where}.spec.restartPolicy must be Never or OnFailure for a Job")
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        return problems + [f"{where}.spec.containers must be a non-empty list"]
    volumes = {v.get("name") for v in spec.get("volumes") or []}
    for v in spec.get("volumes") or []:
        sources = [k for k in v if k != "name"]
        if len(sources) != 1:
            problems.append(f"{where} volume {v.get('name')} needs exactly one source")
    for c in containers:
        if not isinstance(c.get("name"), str) or not DNS1123.match(c["name"]):
            problems.append(f"{where} container name {c.get('name')!r}")
        if not isinstance(c.get("image"), str) or not c["image"]:
            problems.append(f"{where} container {c.get('name')} has no image")
        for key in ("command", "args"):
            if key in c and not (isinstance(c[key], list) and all(isinstance(a, str) for a in c[key])):
                problems.append(f"{where} container {c.get('name')}.{key} must be a list of strings")
        for env in c.get("env") or []:
            if not isinstance(env.get("name"), str) or not isinstance(env.get("value", ""), str):
                problems.append(f"{where} env {env!r}: name and a string value")
        for m in c.get("volumeMounts") or []:
            if m.get("name") not in volumes or not str(m.get("mountPath", "")).startswith("/"):
                problems.append(f"{where} mount {m!r} names no volume or no absolute path")
    return problems


def problems(doc: dict) -> list[str]:
    """What the API server would reject in one object of a kind deploy/ ships."""
    kind = doc.get("kind")
    if kind not in API_VERSIONS:
        return [f"kind {kind!r} is not one deploy/ is checked for"]
    out = []
    if doc.get("apiVersion") != API_VERSIONS[kind]:
        out.append(f"{kind}: apiVersion {doc.get('apiVersion')!r}, expected {API_VERSIONS[kind]}")
    meta = doc.get("metadata")
    if not isinstance(meta, dict):
        return out + [f"{kind}: metadata missing"]
    name = meta.get("name") or meta.get("generateName", "").rstrip("-")
    if not isinstance(name, str) or not name or not DNS1123.match(name) or len(name) > 63:
        out.append(f"{kind}: metadata.name/generateName {name!r} is not a DNS-1123 name")
    if (kind in NAMESPACED) != ("namespace" in meta):
        out.append(f"{kind} {name}: namespace {'missing' if kind in NAMESPACED else 'on a cluster-scoped kind'}")
    spec = doc.get("spec")
    if kind == "PersistentVolumeClaim":
        if not isinstance(spec, dict) or not spec.get("accessModes") or "storage" not in (spec.get("resources") or {}).get("requests", {}):
            out.append("PersistentVolumeClaim: accessModes and resources.requests.storage required")
    if kind == "ClusterRole":
        for rule in doc.get("rules") or []:
            for key in ("apiGroups", "resources", "verbs"):
                if not isinstance(rule.get(key), list) or not rule[key]:
                    out.append(f"ClusterRole {name}: rule {rule!r} needs a {key} list")
    if kind == "ClusterRoleBinding":
        ref = doc.get("roleRef") or {}
        if ref.get("apiGroup") != "rbac.authorization.k8s.io" or ref.get("kind") not in ("ClusterRole", "Role") or not ref.get("name"):
            out.append(f"ClusterRoleBinding {name}: roleRef needs apiGroup, kind and name")
        for s in doc.get("subjects") or []:
            if s.get("kind") == "ServiceAccount" and not s.get("namespace"):
                out.append(f"ClusterRoleBinding {name}: a ServiceAccount subject needs a namespace")
    if kind == "Job":
        if not isinstance(spec, dict):
            return out + ["Job: spec missing"]
        if spec.get("completionMode") == "Indexed" and not isinstance(spec.get("completions"), int):
            out.append("Job: an Indexed Job needs completions")
        out += _problems_pod_template(spec.get("template"), f"Job {name}.spec.template")
    if kind == "CronJob":
        if not isinstance(spec, dict) or not isinstance(spec.get("schedule"), str) or len(spec["schedule"].split()) != 5:
            return out + ["CronJob: spec.schedule must be a 5-field cron line"]
        job = (spec.get("jobTemplate") or {}).get("spec")
        out += _problems_pod_template((job or {}).get("template"), f"CronJob {name}.spec.jobTemplate.spec.template")
    return out


@pytest.mark.parametrize("name, doc", objects(), ids=lambda v: v if isinstance(v, str) else f"{v.get('kind')}")
def test_every_object_is_a_valid_kubernetes_object(name, doc) -> None:
    assert problems(doc) == [], name


def test_the_validator_rejects_what_the_api_server_would() -> None:
    job = next(d for _, d in objects() if d["kind"] == "Job" and d["spec"].get("completionMode") == "Indexed")
    broken = yaml.safe_load(yaml.safe_dump(job))
    del broken["spec"]["completions"]
    broken["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    broken["spec"]["template"]["spec"]["containers"][0].pop("image")
    found = problems(broken)
    assert len(found) == 3, found
    assert problems({"apiVersion": "v1", "kind": "ClusterRole", "metadata": {"name": "X"}})


def _role(name: str) -> dict:
    return next(d for _, d in objects() if d["kind"] == "ClusterRole" and d["metadata"]["name"] == name)


def test_the_read_role_is_read_only_and_covers_every_kind_audit_reads() -> None:
    from imagelint.cluster.resources import CLUSTER_POLICIES, DAEMON_SETS, NODES, PODS, RUNTIME_CLASSES
    from imagelint.cluster.workloads import TEMPLATE_KINDS

    role = _role("imagelint-audit-read")
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"] if "list" in rule["verbs"]}
    for resource in (NODES, PODS, DAEMON_SETS, RUNTIME_CLASSES, CLUSTER_POLICIES, *TEMPLATE_KINDS):
        assert (resource.group, resource.plural) in granted, resource
    for rule in role["rules"]:
        assert set(rule["verbs"]) <= READ_VERBS and "secrets" not in rule["resources"] and "*" not in rule["resources"]
    reports = _role("imagelint-audit-reports")
    assert {r for rule in reports["rules"] for r in rule["resources"]} == {"policyreports", "clusterpolicyreports"}
    secrets = _role("imagelint-audit-pull-secrets")
    assert secrets["rules"] == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]  # get by name, never list
    bound = {d["roleRef"]["name"] for _, d in objects() if d["kind"] == "ClusterRoleBinding"}
    assert bound == {"imagelint-audit-read", "imagelint-audit-reports", "imagelint-audit-pull-secrets"}


def _imagelint_lines(text: str) -> list[list[str]]:
    lines = []
    for part in re.split(r"[;&|\n]", text.replace("\\\n", " ")):
        words = shlex.split(part.strip().replace("$JOB_COMPLETION_INDEX", "0"), posix=True) if part.strip() else []
        if words and words[0] == "imagelint":
            lines.append(words)
    return lines


def _commands() -> list[list[str]]:
    found = []
    for _, doc in objects():
        spec = doc.get("spec") or {}
        tpl = spec.get("template") or ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}
        for c in (tpl.get("spec") or {}).get("containers") or []:
            found += _imagelint_lines(" ".join(c.get("args") or []))
    workflow = yaml.safe_load((DEPLOY / "github-actions-audit.yml").read_text())
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            found += _imagelint_lines(step.get("run", ""))
    return found


def test_every_imagelint_command_line_uses_flags_that_exist() -> None:
    from typer.testing import CliRunner

    import imagelint.cli as cli

    commands = _commands()
    assert len(commands) >= 8
    for words in commands:
        path = [w for w in words[1:4] if not w.startswith("-")][:2]
        sub = path[:2] if path[1:2] and path[1] in ("merge", "enumerate", "snapshot", "show") else path[:1]
        help_text = CliRunner().invoke(cli.app, [*sub, "--help"], env={"COLUMNS": "400"}).stdout
        for flag in (w.split("=")[0] for w in words if w.startswith("--")):
            assert flag in help_text, (words, flag)


def test_the_github_workflow_is_a_matrix_of_shards() -> None:
    workflow = yaml.safe_load((DEPLOY / "github-actions-audit.yml").read_text())
    jobs = workflow["jobs"]
    assert set(jobs) == {"enumerate", "shard", "merge"}
    assert jobs["shard"]["needs"] == "enumerate" and jobs["merge"]["needs"] == "shard"
    assert jobs["shard"]["strategy"]["matrix"]["shard"] == [0, 1, 2, 3]
    for job in jobs.values():
        assert job["runs-on"] and all("uses" in s or "run" in s for s in job["steps"])
    assert workflow["permissions"] == {"contents": "read"}


def test_each_file_applies_on_a_fresh_cluster_in_the_documented_order() -> None:
    """A server-side dry run of a file that creates a namespace and objects in it fails (the namespace
    does not exist yet): the namespace is its own file, applied first."""
    for path in sorted(DEPLOY.glob("*.yaml")):
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
        created = {d["metadata"]["name"] for d in docs if d["kind"] == "Namespace"}
        used = {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"} - {None}
        assert not created & used, f"{path.name} creates namespace {created & used} and objects in it"
    namespaces = {d["metadata"]["name"] for _, d in objects() if d["kind"] == "Namespace"}
    assert {d["metadata"]["namespace"] for _, d in objects() if d["kind"] in NAMESPACED} <= namespaces


def test_generate_name_manifests_are_shown_with_kubectl_create_never_apply() -> None:
    """``kubectl apply`` refuses an object without metadata.name: a Job with generateName is created."""
    generated = sorted(p.name for p in DEPLOY.glob("*.yaml")
                       if any(d and "generateName" in d.get("metadata", {}) for d in yaml.safe_load_all(p.read_text())))
    assert generated
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted(DEPLOY.iterdir())]
    for text_path in texts:
        for line in text_path.read_text().splitlines():
            for name in generated:
                if name in line and "kubectl" in line:
                    assert "kubectl apply" not in line and "kubectl create" in line, (text_path.name, line)
