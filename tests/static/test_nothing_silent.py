"""Issue 29, "nothing passes in silence": every input that holds GPU workloads is read, or is an
error that names it; nothing that could hide a finding is skipped with exit 0."""

from __future__ import annotations

import json
import textwrap

import pytest
from imagelint.core.config import Config
from imagelint.core.lint import run_lint
from tests.static.test_real_shapes import FLAGS_535, found, lint

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"},
    "spec": {"template": {"spec": {"containers": [{
        "name": "c", "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
        "resources": {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}}}]}}},
}


def test_json_manifest_file_is_read_like_yaml(tmp_path):
    """`lint k8s/deploy.json` gives the answer `lint -` gives for the same bytes: IL601, exit 1."""
    for text in (json.dumps(DEPLOYMENT), json.dumps(DEPLOYMENT, indent="\t")):
        run = lint(tmp_path, {"k8s/deploy.json": text})
        assert [r for r, *_ in found(run, "IL601")] == ["IL601"] and run.exit_code == 1
        assert not run.files_skipped


def test_json_that_is_no_kubernetes_object_is_skipped_with_a_note(tmp_path):
    run = lint(tmp_path, {"package.json": '{"name": "x", "version": "1.0.0"}'})
    assert run.exit_code == 0 and any("package.json" in n for n in run.notices)


def test_yaml_that_does_not_parse_is_an_error_with_its_line_even_when_not_kubernetes(tmp_path):
    run = lint(tmp_path, {"conf/app.yaml": "settings:\n  a: 1\n   b: 2\n"})
    [bad] = [r for r in run.results if r.error]
    assert "app.yaml" in bad.error and run.exit_code == 2


def test_yaml_that_parses_and_is_not_kubernetes_is_still_skipped(tmp_path):
    run = lint(tmp_path, {"mkdocs.yml": "site_name: x\nnav: [a]\n"})
    assert run.exit_code == 0 and not [r for r in run.results if r.error]


def test_braces_inside_quoted_values_are_no_template(tmp_path):
    run = lint(tmp_path, {"tgi.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: tgi}
        spec:
          template:
            spec:
              containers:
              - name: c
                image: ghcr.io/huggingface/text-generation-inference:2.0
                env:
                - name: HF_TOKEN
                  value: "{{HUGGING_FACE_HUB_TOKEN}}"
                - name: CUDA_VISIBLE_DEVICES
                  value: "1"
                resources:
                  limits: {nvidia.com/gpu: 1}
        """})
    assert not run.files_skipped
    assert [r for r, *_ in found(run, "IL301")] == ["IL301"] and run.exit_code == 1


def test_an_oci_layout_named_to_lint_is_an_error_that_points_at_check(tmp_path):
    layout = tmp_path / "img"
    (layout / "blobs").mkdir(parents=True)
    (layout / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (layout / "index.json").write_text('{"schemaVersion": 2, "manifests": []}')
    from imagelint.matrix import load_matrix

    run = run_lint([str(layout)], FLAGS_535, load_matrix(), Config())
    [res] = run.results
    assert run.exit_code == 2 and f"check oci-dir:{layout}" in res.error
    # walked from above, it is one note, not an error
    (tmp_path / "Dockerfile").write_text("FROM ubuntu:22.04\n")
    walked = run_lint([str(tmp_path)], FLAGS_535, load_matrix(), Config())
    assert walked.exit_code == 0 and any(f"oci-dir:{layout}" in n for n in walked.notices)


PRIVILEGED = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers:
      - name: c
        image: nvidia/cuda:12.4.1-base-ubuntu22.04
        securityContext: {privileged: %s}
        resources:
          limits: {nvidia.com/gpu: 1}
      - name: exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
        securityContext: {privileged: true}
    """


def test_a_privileged_gpu_container_is_flagged_and_a_privileged_cpu_sidecar_is_not(tmp_path):
    run = lint(tmp_path, {"pod.yaml": PRIVILEGED % "true"})
    hits = found(run, "IL609")
    assert len(hits) == 1 and "container c " in hits[0][3] and "every GPU" in hits[0][3]
    assert not found(lint(tmp_path, {"pod.yaml": PRIVILEGED % "false"}), "IL609")


def test_sys_admin_is_privileged_for_lint_and_doctor_alike():
    from imagelint.doctor.isolation import _privileged
    from imagelint.static.podspecs import privileged_by

    c = {"securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}
    assert privileged_by(c) and _privileged(c)
    assert not privileged_by({"securityContext": {"privileged": False}})


COMPOSE = """\
    services:
      detector:
        image: nvcr.io/nvidia/deepstream:7.0-triton-multiarch
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  device_ids: ["1"]
                  capabilities: [gpu]
      tracker:
        image: nvidia/cuda:12.4.1-runtime-ubuntu22.04
        environment:
          - CUDA_VISIBLE_DEVICES=1
        deploy:
          resources:
            reservations:
              devices:
                - driver: nvidia
                  count: 1
      web:
        image: nginx
        gpus: all
        privileged: true
    """


def test_compose_gpu_reservations_are_read_and_linted(tmp_path):
    run = lint(tmp_path, {"docker-compose.yml": COMPOSE})
    assert not run.files_skipped
    rules = {(rule, sev, subj.rsplit(" ", 1)[-1]) for rule, sev, subj, _ in found(run)}
    assert ("IL610", "error", "tracker") in rules  # no capabilities: compose refuses it
    assert ("IL611", "info", "detector") in rules  # host GPU 1 pinned
    assert ("IL301", "error", "tracker") in rules  # CUDA_VISIBLE_DEVICES=1 with one GPU
    assert ("IL609", "warning", "web") in rules
    assert ("IL101", "warning", "tracker") in rules  # the image's CUDA 12.4 on driver 535
    assert run.exit_code == 1


def test_two_compose_services_pinning_one_gpu_share_it(tmp_path):
    run = lint(tmp_path, {"compose.yaml": COMPOSE.replace("count: 1", 'device_ids: ["1"]\n' + " " * 18 + "capabilities: [gpu]")})
    assert {(sev, subj.rsplit(" ", 1)[-1]) for _, sev, subj, _ in found(run, "IL611")} == {
        ("warning", "detector"), ("warning", "tracker")}


# --- wrong answers -----------------------------------------------------------------------

PLACEHOLDER_POD = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers:
      - name: c
        image: busybox
        resources:
          requests: {nvidia.com/gpu: %s}
          limits: {nvidia.com/gpu: %s}
    """


def test_identical_placeholder_quantities_are_equal_and_unresolvable_ones_are_info(tmp_path):
    for same in ("$GPU_PER_NODE", "PLACEHOLDER_NUM_GPU_PER_NODE", '"{{ .Values.gpus }}"'):
        run = lint(tmp_path, {"pod.yaml": PLACEHOLDER_POD % (same, same)})
        assert not found(run, "IL601") and run.exit_code == 0, same
    run = lint(tmp_path, {"pod.yaml": PLACEHOLDER_POD % ("$REQ", "$LIM")})
    assert [sev for _, sev, *_ in found(run, "IL601")] == ["info"] and run.exit_code == 0
    assert [sev for _, sev, *_ in found(lint(tmp_path, {"pod.yaml": PLACEHOLDER_POD % (1, 2)}), "IL601")] == ["error"]


DAEMONSET = """\
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: burn}
    spec:
      template:
        spec:
          nodeSelector: {%s: "%s"}
          containers:
          - name: c
            image: busybox
            resources:
              limits: {nvidia.com/gpu: 1}
    """


def _pool_target(source: str):
    from types import MappingProxyType

    from imagelint.deploytarget import NodePool, Target

    pool = NodePool(name="t4", driver="550.54.15", cuda_driver_version="12.4", source=source,
                    labels=MappingProxyType({"nvidia.com/gpu.product": "Tesla-T4"}))
    return Target(pools=(pool,), source=source)


def test_daemonset_matching_no_pool_runs_no_pods_rather_than_pending(tmp_path):
    run = lint(tmp_path, {"ds.yaml": DAEMONSET % ("nvidia.com/gpu.product", "A100")}, target=_pool_target("file:t.toml"))
    [hit] = found(run, "IL604")
    assert "runs no pods" in hit[3] and "Pending" not in hit[3]


def test_labels_a_target_file_does_not_describe_are_unknown_but_a_cluster_knows(tmp_path):
    files = {"ds.yaml": DAEMONSET % ("nvidia.com/gpu.deploy.driver", "true")}
    # unknown is said (issue 37): an info naming the label, not an error and not silence
    [(_, severity, _, text)] = [f for f in found(lint(tmp_path, files, target=_pool_target("file:t.toml")), "IL604")]
    assert severity == "info" and "nvidia.com/gpu.deploy.driver" in text
    assert [f[1] for f in found(lint(tmp_path, files, target=_pool_target("cluster:prod")), "IL604")] == ["error"]


MIG_POD = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: m}
    spec:
      containers:
      - name: c
        image: busybox
        resources:
          limits: {nvidia.com/mig-%s: 1}
    """


def _gpu_target(gpu: str):
    from imagelint.matrix import load_matrix
    from imagelint.deploytarget.options import target_from_flags

    return target_from_flags(["570.124.06"], [gpu], None, None, None, None, None, None, load_matrix())


@pytest.mark.parametrize("profile, gpu, severity, needle", [
    ("3g.40gb", "A100", "info", "A100 80 GB"),                 # which A100 the profile needs
    ("3g.40gb", "A100-SXM4-80GB", None, ""),                    # it fits
    ("3g.40gb", "A100-SXM4-40GB", "error", "3g.20gb"),          # the 40 GB part's 3-slice profile
    ("3g.20gb", "A100-SXM4-40GB", None, ""),
    ("1g.10gb", "T4", "error", "has no MIG"),
])
def test_mig_profile_is_checked_against_the_gpu_and_its_memory(tmp_path, profile, gpu, severity, needle):
    run = lint(tmp_path, {"pod.yaml": MIG_POD % profile}, target=_gpu_target(gpu))
    hits = found(run, "IL612")
    if severity is None:
        assert not hits
    else:
        [(_, sev, _, text)] = hits
        assert sev == severity and needle in text


MIG_DAEMONSET = """\
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: mig-agent}
    spec:
      selector: {matchLabels: {app: a}}
      template:
        metadata: {labels: {app: a}}
        spec:
          containers:
          - name: a
            image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
            resources:
              limits: {nvidia.com/mig-3g.40gb: 1}
    """


def test_a_daemonset_asking_for_a_missing_mig_profile_runs_no_pods(tmp_path):
    run = lint(tmp_path, {"ds.yaml": MIG_DAEMONSET}, target=_gpu_target("A100-SXM4-40GB"))
    [(_, sev, _, text)] = found(run, "IL612")
    assert sev == "error" and "the DaemonSet runs no pods" in text and "Pending" not in text


def test_a_directory_walk_lists_only_files_that_concern_gpus(tmp_path):
    from imagelint.matrix import load_matrix
    from imagelint.report import ReportOptions
    from imagelint.report.text import render
    from imagelint.deploytarget import Target

    repo = tmp_path / "repo"
    repo.mkdir()
    for i in range(40):
        (repo / f"job{i}.sh").write_text("#!/bin/sh\necho hi\n")
        (repo / f"Dockerfile.{i}").write_text("FROM python:3.12\nRUN pip install flask\n")
    (repo / "pod.yaml").write_text(textwrap.dedent(PRIVILEGED % "true"))
    run = run_lint([str(repo)], Target(), load_matrix(), Config())
    assert {r.path for r in run.results} == {str(repo / "pod.yaml")} and len(run.files_clean) == 80
    text = render(run, ReportOptions())
    assert len(run.results) == 2 and text.count("not run without a target") == 1  # about the run: said once
    assert "81 file(s) (80 without findings, not listed)" in text


def test_a_rendered_compose_file_on_standard_input_is_read():
    """`docker compose config | imagelint lint -` (variables and anchors resolved) is Compose, not 'YAML with no
    Kubernetes objects'."""
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run([sys.executable, "-m", "imagelint", "lint", "-", "--format", "json"], input=textwrap.dedent(COMPOSE),
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[2])
    rules = {f["rule"] for r in json.loads(proc.stdout)["results"] for f in r["findings"]}
    assert proc.returncode == 1 and {"IL609", "IL610", "IL611"} <= rules, proc.stdout + proc.stderr
