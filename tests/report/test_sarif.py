"""SARIF for GitHub code scanning: GitHub's documented requirements on every SARIF imagelint writes
(check with findings, none, unreadable images; lint), where findings point, fingerprints, limits,
and the SARIF SDK's own validator with its GitHub ingestion rules."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from imagelint.core.engine import ImageResult
from imagelint.report import ReportOptions, render
from imagelint.report.sarif import (
    FINGERPRINT_KEY,
    MAX_RESULTS_PER_RUN,
    MAX_RUNS,
    SarifArtifacts,
    SarifLimitError,
    image_name,
    to_dict,
)
from imagelint.rules.base import Finding

from tests.report.conftest import make_run
from tests.report.sarif_github import assert_github_accepts, github_problems
from tests.rules.helpers import env_prov, facts, file_prov, pool, run, target
from tests.support.sarif_multitool import validator

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cuda-app"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout: .git, a Dockerfile, a config file (the anchor), the example image inside."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker" / "Dockerfile").write_text(
        "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all \\\n    APP=1\n"
        "LABEL org.opencontainers.image.source=https://github.com/org/repo\nENTRYPOINT [\"/app/run.sh\"]\n")
    (tmp_path / ".imagelint.toml").write_text('fail-on = "error"\n')
    return tmp_path


def artifacts(repo: Path, **kw) -> SarifArtifacts:
    return SarifArtifacts(root=str(repo), anchor=str(repo / ".imagelint.toml"), **kw)


def sarif(run_, arts: SarifArtifacts) -> tuple[dict, str]:
    text = render("sarif", run_, ReportOptions(sarif_artifacts=arts))
    return json.loads(text), text


def test_busy_run_meets_githubs_requirements(busy_run, repo):
    doc, text = sarif(busy_run, artifacts(repo))
    assert_github_accepts(doc, repo, text)
    assert "IMAGEROOT" not in text
    [good] = doc["runs"]  # the unreadable image has no run of its own: an empty one would close its alerts
    results = good["results"]
    assert results and all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ".imagelint.toml"
                           for r in results)
    il302 = next(r for r in results if r["ruleId"] == "IL302")
    # the in-image location is kept: message, logical location, properties
    assert "/app/config.txt:3" in il302["message"]["text"]
    assert il302["locations"][0]["logicalLocations"][0]["name"].startswith("/app/config.txt:3")
    assert il302["properties"]["imagePath"] == "/app/config.txt" and il302["properties"]["layerDigest"].startswith("sha256:")
    inv = good["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert any("example.invalid/app:1: registry example.invalid: connection refused" in n["message"]["text"]
               for n in inv["toolExecutionNotifications"])
    assert good["automationDetails"]["id"].startswith("imagelint/oci-dir/app/") or good["automationDetails"]["id"].startswith("imagelint/app/")
    assert not any("example.invalid" in r_["automationDetails"]["id"] for r_ in doc["runs"])


def test_no_findings_and_only_unreadable_are_accepted(repo):
    clean = make_run([run(facts({}))])
    doc, text = sarif(clean, artifacts(repo))
    assert_github_accepts(doc, repo, text)
    assert doc["runs"][0]["results"] == []
    unreadable = make_run([ImageResult("registry:ghcr.io/org/app:1", error="registry ghcr.io: 401", error_exit_code=3)])
    doc, text = sarif(unreadable, artifacts(repo))
    assert_github_accepts(doc, repo, text)
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_the_checker_catches_what_github_refuses(busy_run, repo):
    """The assertions can fail: each broken copy is caught."""
    doc, _ = sarif(busy_run, artifacts(repo))
    res = doc["runs"][0]["results"][0]
    for breakage in (
        lambda r: r["locations"].__setitem__(0, {"logicalLocations": [{"name": "env X"}]}),
        lambda r: r["locations"][0]["physicalLocation"]["artifactLocation"].__setitem__("uri", "usr/lib/libcuda.so"),
        lambda r: r["locations"][0]["physicalLocation"]["artifactLocation"].__setitem__("uri", "file:///etc/passwd"),
        lambda r: r.pop("partialFingerprints"),
        lambda r: r["locations"][0]["physicalLocation"].pop("region"),
    ):
        broken = json.loads(json.dumps(doc))
        breakage(broken["runs"][0]["results"][0])
        assert github_problems(broken, repo), breakage
    two, _ = sarif(make_run([_image_run("registry:ghcr.io/org/a:1"), _image_run("registry:ghcr.io/org/b:1")]), artifacts(repo))
    twin = json.loads(json.dumps(two))
    twin["runs"][1]["automationDetails"] = twin["runs"][0]["automationDetails"]
    assert any("share the category" in p for p in github_problems(twin, repo))
    assert res["partialFingerprints"][FINGERPRINT_KEY]


def test_an_unreadable_image_never_gets_an_empty_run_next_to_readable_ones(repo):
    """Uploading an empty run for an image's category would mark all its alerts fixed."""
    ok = _image_run("registry:ghcr.io/org/app:1")
    bad = ImageResult("registry:ghcr.io/org/other:1", error="registry ghcr.io: 503", error_exit_code=3)
    doc, text = sarif(make_run([ok, bad]), artifacts(repo))
    assert_github_accepts(doc, repo, text)
    assert [r_["automationDetails"]["id"].rsplit("/", 1)[0] for r_ in doc["runs"]] == ["imagelint/ghcr.io/org/app"]
    inv = doc["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False and "other:1: registry ghcr.io: 503" in json.dumps(inv)


def _image_run(subject: str, labels: dict | None = None):
    f = dataclasses.replace(facts({"NVIDIA_VISIBLE_DEVICES": "all", "CUDA_VERSION": "12.4.1"}, labels=labels), subject=subject)
    return run(f, target(pool("t4", driver="535.104.05")))


def test_image_findings_point_at_its_dockerfile_and_the_instruction(repo):
    r = _image_run("registry:ghcr.io/org/app:1.2")
    assert r.findings
    dockerfile = str(repo / "docker" / "Dockerfile")
    doc, text = sarif(make_run([r]), artifacts(repo, dockerfiles={"registry:ghcr.io/org/app:1.2": dockerfile}))
    assert_github_accepts(doc, repo, text)
    by_rule = {x["ruleId"]: x["locations"][0]["physicalLocation"] for x in doc["runs"][0]["results"]}
    assert {p["artifactLocation"]["uri"] for p in by_rule.values()} == {"docker/Dockerfile"}
    assert by_rule["IL303"]["region"]["startLine"] == 2  # ENV NVIDIA_VISIBLE_DEVICES=all


def test_dockerfile_from_the_oci_source_label_names_a_repository_file(repo):
    url = "https://github.com/org/repo/blob/0123abc/docker/Dockerfile"
    r = _image_run("registry:ghcr.io/org/app:1.2", labels={"org.opencontainers.image.source": url,
                                                           "org.opencontainers.image.revision": "0123abc"})
    doc, text = sarif(make_run([r]), artifacts(repo))
    assert_github_accepts(doc, repo, text)
    res = doc["runs"][0]["results"][0]
    assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "docker/Dockerfile"
    assert res["properties"]["imageSource"] == url and res["properties"]["imageRevision"] == "0123abc"
    # a label naming a file this checkout does not have falls back to the anchor
    gone = _image_run("registry:ghcr.io/org/app:1.2", labels={"org.opencontainers.image.source": url.replace("docker/", "nope/")})
    doc, _ = sarif(make_run([gone]), artifacts(repo))
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == ".imagelint.toml"


def test_source_label_credentials_never_reach_the_report(repo):
    r = _image_run("registry:ghcr.io/org/app:1", labels={"org.opencontainers.image.source": "https://bot:ghp_s3cret@github.com/org/repo"})
    _, text = sarif(make_run([r]), artifacts(repo))
    assert "ghp_s3cret" not in text and "bot:" not in text


def test_fingerprints_survive_a_new_tag_and_separate_findings(repo):
    one = _image_run("registry:ghcr.io/org/app:1.2")
    two = _image_run("registry:ghcr.io/org/app:1.3")
    fp = lambda r: sorted(x["partialFingerprints"][FINGERPRINT_KEY] for x in to_dict(make_run([r]), artifacts(repo))["runs"][0]["results"])
    assert fp(one) == fp(two), "a new build of the same image keeps its alerts"
    assert len(set(fp(one))) == len(fp(one)), "different findings never share a fingerprint"
    other = _image_run("registry:ghcr.io/org/other:1.2")
    assert not set(fp(one)) & set(fp(other))
    assert image_name("registry:ghcr.io/org/app:1.2@sha256:" + "a" * 64) == "ghcr.io/org/app"
    assert image_name("nginx") == "docker.io/library/nginx"


def test_two_findings_on_one_anchor_line_stay_two_alerts(repo):
    gpu = [Finding("IL302", "hardcoded-gpu-index", "error", f"gpu-id={i}", file_prov("app/c.txt", line=i)) for i in (3, 9)]
    r = ImageResult("registry:ghcr.io/org/app:1", findings=tuple(gpu), rules_run=("IL302",))
    doc, text = sarif(make_run([r]), artifacts(repo))
    assert_github_accepts(doc, repo, text)
    fps = {x["partialFingerprints"][FINGERPRINT_KEY] for x in doc["runs"][0]["results"]}
    assert len(fps) == 2


def test_one_run_per_image_and_at_most_twenty(repo):
    results = [_image_run(f"registry:ghcr.io/org/app{i}:1") for i in range(3)]
    results.append(dataclasses.replace(results[0], platform="linux/arm64"))  # same image, other platform: same run
    doc, text = sarif(make_run(results), artifacts(repo))
    assert_github_accepts(doc, repo, text)
    assert len(doc["runs"]) == 3
    many = [ImageResult(f"registry:ghcr.io/org/app{i}:1") for i in range(MAX_RUNS + 1)]
    with pytest.raises(SarifLimitError, match="at most 20 runs"):
        render("sarif", make_run(many), ReportOptions(sarif_artifacts=artifacts(repo)))


def test_results_per_run_are_capped_keeping_the_most_severe(repo):
    n = MAX_RESULTS_PER_RUN + 5
    findings = tuple(Finding("IL303", "visible-devices-all-leak", "info", f"m{i}", env_prov(f"V{i}")) for i in range(n - 1))
    findings += (Finding("IL101", "cuda-driver-too-old", "error", "the one error", env_prov("CUDA_VERSION")),)
    r = ImageResult("registry:ghcr.io/org/app:1", findings=findings, rules_run=("IL101", "IL303"))
    doc, text = sarif(make_run([r]), artifacts(repo))
    [sarif_run] = doc["runs"]
    assert len(sarif_run["results"]) == MAX_RESULTS_PER_RUN
    assert any(x["ruleId"] == "IL101" for x in sarif_run["results"])
    assert any("left out" in nt["message"]["text"] for nt in sarif_run["invocations"][0]["toolExecutionNotifications"])
    assert_github_accepts(doc, repo, text)


def test_rule_metadata_for_code_scanning(busy_run, repo):
    doc, _ = sarif(busy_run, artifacts(repo))
    rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["IL303"]["properties"]["security-severity"] == "5.0" and "security" in rules["IL303"]["properties"]["tags"]
    assert "security-severity" not in rules["IL101"]["properties"]
    assert all(r["properties"]["precision"] and r["properties"]["tags"] for r in rules.values())


def test_no_anchor_and_no_dockerfile_points_at_the_image_name_as_trivy_does(busy_run, repo):
    """No repository file for the image: its name is the pseudo-path (trivy's image SARIF), marked
    ``pseudoPath`` and said in the run, never a file of the repository that is not the image's."""
    doc = json.loads(render("sarif", busy_run, ReportOptions(sarif_artifacts=SarifArtifacts(root=str(repo)))))
    assert_github_accepts(doc, repo)
    [sarif_run] = doc["runs"]
    locations = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif_run["results"]}
    assert locations == {"app"} and all(r["properties"]["pseudoPath"] is True for r in sarif_run["results"])
    notes = [n["message"]["text"] for n in sarif_run["invocations"][0]["toolExecutionNotifications"]]
    assert any("--dockerfile" in n and "as trivy's image SARIF does" in n for n in notes)


# --- as users run it -----------------------------------------------------------------------------


def cli(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full.update({"IMAGELINT_NO_CACHE": "1", "NO_COLOR": "1", **(env or {})})
    return subprocess.run(["imagelint", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A repository with the example image, its Dockerfile, a manifest and a workflow file; no config."""
    (tmp_path / ".git").mkdir()
    shutil.copytree(EXAMPLE, tmp_path / "image")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\nENV NVIDIA_VISIBLE_DEVICES=all\n")
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "job.yaml").write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: c\n        image: app:1\n        env:\n        - {name: CUDA_VISIBLE_DEVICES, value: \"1\"}\n"
        "        resources:\n          requests: {nvidia.com/gpu: 1}\n      restartPolicy: Never\n")
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    (tmp_path / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    return tmp_path


def _written(checkout: Path, name: str = "out.sarif") -> tuple[dict, str]:
    text = (checkout / name).read_text()
    return json.loads(text), text


def test_sarif_without_a_dockerfile_never_stops_the_other_formats(checkout):
    """Issue 38: ``--format sarif … --format junit … --format json`` with no Dockerfile wrote
    nothing (exit 2). Every report is written; SARIF names the image."""
    r = cli("check", "oci-dir:image", "--driver", "535.104.05", "--format", "sarif", "--output", "out.sarif",
            "--format", "junit", "--output", "out.xml", "--format", "json", "--output", "out.json", cwd=checkout)
    assert r.returncode == 1, r.stderr
    assert all((checkout / name).stat().st_size for name in ("out.sarif", "out.xml", "out.json"))
    doc, text = _written(checkout)
    assert_github_accepts(doc, checkout, text)
    assert {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in doc["runs"][0]["results"]} == {"image"}


def test_one_formats_limit_does_not_stop_the_others(checkout):
    """SARIF's 20-runs limit refuses that report (exit 2, said once); JSON is still written."""
    images = []
    for n in range(21):
        shutil.copytree(checkout / "image", checkout / f"img{n}")
        images.append(f"oci-dir:img{n}")
    r = cli("check", *images, "--driver", "535.104.05", "--format", "sarif", "--output", "out.sarif",
            "--format", "json", "--output", "out.json", cwd=checkout)
    assert r.returncode == 2 and "at most 20 runs" in r.stderr and "the other reports are written" in r.stderr, r.stderr
    results = json.loads((checkout / "out.json").read_text())["results"]
    kinds = [r["image"]["kind"] for r in results]
    assert kinds.count("image") == 21 and kinds.count("target") == 1  # the pools' own finding (IL503), once
    assert not (checkout / "out.sarif").exists()


def test_check_lint_and_unreadable_sarif_from_the_cli(checkout):
    written = []
    r = cli("check", "oci-dir:image", "--driver", "535.104.05", "--gpu", "T4", "--dockerfile", "Dockerfile",
            "--format", "sarif", "--output", "check.sarif", cwd=checkout)
    assert r.returncode == 1, r.stderr
    written.append("check.sarif")
    r = cli("check", "oci-dir:image", "oci-dir:missing", "--driver", "535.104.05", "--sarif-artifact", "Dockerfile",
            "--format", "sarif", "--output", "unreadable.sarif", cwd=checkout)
    assert r.returncode == 3
    written.append("unreadable.sarif")
    sub = checkout / "k8s"
    r = cli("lint", "job.yaml", "../Dockerfile", "--driver", "535.104.05", "--format", "sarif", "--output", "../lint.sarif", cwd=sub)
    assert r.returncode in (0, 1), r.stderr
    written.append("lint.sarif")
    r = cli("check", "oci-dir:image", "--driver", "535.104.05", "--format", "sarif", "--output", "actions.sarif", cwd=checkout,
            env={"GITHUB_REPOSITORY": "org/repo", "GITHUB_WORKFLOW_REF": "org/repo/.github/workflows/ci.yml@refs/heads/main",
                 "GITHUB_WORKSPACE": str(checkout)})
    assert r.returncode == 1, r.stderr
    written.append("actions.sarif")
    for name in written:
        doc, text = _written(checkout, name)
        assert_github_accepts(doc, checkout, text)
    check, _ = _written(checkout, "check.sarif")
    assert {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in check["runs"][0]["results"]} == {"Dockerfile"}
    lint, _ = _written(checkout, "lint.sarif")
    uris = {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in lint["runs"][0]["results"]}
    assert "k8s/job.yaml" in uris, "paths are relative to the repository root, not the working directory"
    actions, _ = _written(checkout, "actions.sarif")
    assert {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in actions["runs"][0]["results"]} \
        == {".github/workflows/ci.yml"}


def test_config_images_name_their_dockerfile(checkout):
    (checkout / ".imagelint.toml").write_text('images = [{ ref = "oci-dir:image", dockerfile = "Dockerfile" }]\n')
    r = cli("check", "--driver", "535.104.05", "--format", "sarif", "--output", "out.sarif", cwd=checkout)
    assert r.returncode == 1, r.stderr
    doc, text = _written(checkout)
    assert_github_accepts(doc, checkout, text)
    assert {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in doc["runs"][0]["results"]} == {"Dockerfile"}


def test_dockerfile_outside_the_repository_is_refused(checkout, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "Dockerfile"
    outside.write_text("FROM scratch\n")
    r = cli("check", "oci-dir:image", "--dockerfile", str(outside), "--format", "sarif", "--output", "o.sarif", cwd=checkout)
    assert r.returncode == 2 and "not inside the repository" in r.stderr
    r = cli("check", "oci-dir:image", "--dockerfile", "Nope", "--format", "sarif", "--output", "o.sarif", cwd=checkout)
    assert r.returncode == 2 and "no such file" in r.stderr
    r = cli("check", "oci-dir:image", "--dockerfile", "Dockerfile", "--format", "json", cwd=checkout)
    assert r.returncode == 2 and "only apply to --format sarif, github or junit" in r.stderr


def test_the_sarif_sdk_validator_with_githubs_ingestion_rules(checkout, busy_run, tmp_path_factory):
    tool, why = validator()
    if tool is None:
        pytest.skip(f"SARIF multitool unavailable: {why}")
    files = []
    r = cli("check", "oci-dir:image", "--driver", "535.104.05", "--gpu", "T4", "--dockerfile", "Dockerfile",
            "--format", "sarif", "--output", "check.sarif", cwd=checkout)
    assert r.returncode == 1, r.stderr
    files.append(checkout / "check.sarif")
    r = cli("check", "oci-dir:missing", "--sarif-artifact", "Dockerfile", "--format", "sarif", "--output", "unreadable.sarif", cwd=checkout)
    assert r.returncode == 3
    files.append(checkout / "unreadable.sarif")
    r = cli("lint", "k8s/job.yaml", "Dockerfile", "--driver", "535.104.05", "--format", "sarif", "--output", "lint.sarif", cwd=checkout)
    files.append(checkout / "lint.sarif")
    (checkout / "busy.sarif").write_text(render("sarif", busy_run, ReportOptions(sarif_artifacts=SarifArtifacts(
        root=str(checkout), anchor=str(checkout / "Dockerfile")))))
    files.append(checkout / "busy.sarif")
    problems = tool.problems(*files, workdir=tmp_path_factory.mktemp("multitool"))
    assert not problems, "\n".join(problems[:20])
    # and it does catch GitHub's requirements: a result with only a logical location
    broken = json.loads((checkout / "check.sarif").read_text())
    broken["runs"][0]["results"][0]["locations"] = [{"logicalLocations": [{"name": "env X"}]}]
    (checkout / "broken.sarif").write_text(json.dumps(broken))
    assert any(p.startswith("GH1001") for p in tool.problems(checkout / "broken.sarif", workdir=tmp_path_factory.mktemp("m2")))


def test_a_manifest_object_without_a_located_finding_points_at_its_file(repo):
    (repo / "k8s").mkdir()
    (repo / "k8s" / "pods.yaml").write_text("apiVersion: v1\nkind: Pod\n")
    f = Finding("IL602", "gpu-resource-unknown", "error", "unknown resource", None)
    r = ImageResult("k8s/pods.yaml:1 Pod/p container c", kind="manifest", findings=(f,), rules_run=("IL602",),
                    path=str(repo / "k8s" / "pods.yaml"))
    doc, text = sarif(make_run([r]), artifacts(repo))
    assert_github_accepts(doc, repo, text)
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "k8s/pods.yaml"
    assert doc["runs"][0]["automationDetails"]["id"].startswith("imagelint/files/")
