"""``lint`` of a manifest stream judges each pod as its document is read: one pod's facts are alive
at a time, whatever the number of documents (issue 40: 60,000 pods in one file)."""

from __future__ import annotations

import tracemalloc
import weakref
from pathlib import Path

import pytest
from typer.testing import CliRunner

import imagelint.cli.lint_cmd as lint_cmd
import imagelint.core.lint as lint
import imagelint.static.kubernetes as kubernetes
from imagelint.cli import app
from imagelint.core.config import Config
from imagelint.deploytarget import Target
from imagelint.errors import ConfigError
from imagelint.matrix import load_matrix
from imagelint.static.kubernetes import ManifestStream

# benchmarks/run.py's pod: one GPU pod a document, in flow style.
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p%x}\n"
       "spec: {containers: [{name: c,image: cuda,resources: {limits: {nvidia.com/gpu: 1}}}]}\n---\n")


def pods(n: int) -> str:
    return "".join(POD % i for i in range(n))


def test_a_manifest_stream_gives_the_first_pod_before_it_reads_the_next_document():
    stream = iter(ManifestStream(POD % 0 + "apiVersion: v1\nkind: Pod\nspec: [\n", "pods.yaml"))
    assert next(stream).workload.name == "p0"
    with pytest.raises(ConfigError, match="invalid YAML"):
        next(stream)


def test_lint_holds_one_pods_facts_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "pods.yaml").write_text(pods(300))
    alive = most = 0
    read, judge = kubernetes.pod_facts, lint.run_rules

    def gone() -> None:
        nonlocal alive
        alive -= 1

    def pod_facts(*args, **kwargs):
        nonlocal alive
        facts = read(*args, **kwargs)
        for f in facts:
            alive += 1
            weakref.finalize(f, gone)
        return facts

    def run_rules(*args, **kwargs):
        nonlocal most
        most = max(most, alive)
        return judge(*args, **kwargs)

    monkeypatch.setattr(kubernetes, "pod_facts", pod_facts)
    monkeypatch.setattr(lint, "run_rules", run_rules)
    run = lint.run_lint([str(tmp_path / "pods.yaml")], Target(), load_matrix(), Config())
    assert [r.subject for r in run.results[:2]] == [f"{tmp_path / 'pods.yaml'}:4 Pod/p0 container c",
                                                    f"{tmp_path / 'pods.yaml'}:9 Pod/p1 container c"]
    assert len(run.results) == 300
    assert most <= 2, f"{most} pods' facts alive at once while judging"


def test_a_pod_with_claims_is_judged_on_the_claims_of_a_file_read_after_it(tmp_path: Path):
    (tmp_path / "a-pod.yaml").write_text("""\
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, image: cuda, resources: {claims: [{name: gpu}]}}]
""")
    (tmp_path / "b-claims.yaml").write_text("""\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
""")
    run = lint.run_lint([str(tmp_path / "a-pod.yaml"), str(tmp_path / "b-claims.yaml")], Target(), load_matrix(),
                        Config())
    [pod] = [r for r in run.results if "trainer" in r.subject]
    assert "IL606" not in {f.rule for f in pod.findings}, "the template of b-claims.yaml was not found"


def test_a_longer_stream_keeps_its_results_not_its_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The whole command, the JSON report written to a file. Once every pod is judged, what stays of
    each is its result (~250 bytes: the subject and a slotted ImageResult), not its facts; and the
    report is written a result at a time: writing it costs no more for 4,000 pods than for 1,000."""
    memory: dict[str, int] = {}
    emit_reports = lint_cmd.emit_reports

    def measured_emit_reports(*args, **kwargs):
        memory["judged"] = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        emit_reports(*args, **kwargs)
        memory["writing"] = tracemalloc.get_traced_memory()[1] - memory["judged"]

    monkeypatch.setattr(lint_cmd, "emit_reports", measured_emit_reports)

    def lint_pods(n: int) -> dict[str, int]:
        (tmp_path / "pods.yaml").write_text(pods(n))
        tracemalloc.start()
        try:
            out = CliRunner().invoke(app, ["lint", str(tmp_path / "pods.yaml"), "--format", "json",
                                           "--output", str(tmp_path / "out.json")], catch_exceptions=False)
        finally:
            tracemalloc.stop()
        assert out.exit_code == 0, out.output
        return dict(memory)

    lint_pods(10)  # the imports a run makes, not counted below
    small, large = lint_pods(1_000), lint_pods(4_000)
    kept = (large["judged"] - small["judged"]) / 3_000
    assert kept < 600, f"{kept:.0f} bytes kept a pod once judged"
    assert large["writing"] - small["writing"] < 32 * 1024, (
        f"writing the report of 4,000 pods took {large['writing'] >> 10} KiB, of 1,000 {small['writing'] >> 10} KiB")


# Documents that repeat one another but for their names, among others that may not stand for one
# another: another image, a finding (a hard-coded GPU, a privileged container), claims, a List, an
# ignore annotation, two containers, a namespace, a controller, a pod under a NaN key (a value
# unequal to itself); and clean ones (nothing to say).
VARIED = """\
apiVersion: v1
kind: Pod
metadata: {name: b0}
spec: {containers: [{name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: w0}
spec:
  template:
    spec:
      initContainers: [{name: fetch, image: busybox}]
      containers: [{name: a, image: cuda, resources: {limits: {nvidia.com/gpu: 2}}}, {image: busybox}]
---
apiVersion: v1
kind: Pod
metadata: {name: a0}
spec: {containers: [{name: c, image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: v0}
spec: {containers: [{name: c, image: cuda, env: [{name: NVIDIA_VISIBLE_DEVICES, value: "0"}], resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: s0}
spec: {containers: [{name: c, image: cuda, securityContext: {privileged: true}, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: n0, namespace: ml, annotations: {imagelint.io/ignore: "IL609: a test"}}
spec: {containers: [{name: c, image: cuda, securityContext: {privileged: true}, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: t0}
spec:
  containers:
  - {name: a, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: 2}}}
  - {name: b, image: busybox}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d0}
spec: {template: {spec: {containers: [{name: c, image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
---
apiVersion: example.com/v1
kind: Runner
metadata: {name: x0}
spec: {.nan: {containers: [{name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}]}}
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: l0}, spec: {containers: [{name: c, image: cuda}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: l1}, spec: {containers: [{name: c, image: cuda, securityContext: {privileged: true}, resources: {limits: {nvidia.com/gpu: 1}}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: c0}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, image: cuda, resources: {claims: [{name: gpu}]}}]
"""


def renamed(text: str, n: int) -> str:
    """Each document of ``text`` n times, every copy's names changed (a0 → a1...), shuffled in."""
    docs = text.split("---\n")
    out = []
    for i in range(n):
        for j, doc in enumerate(docs):
            out.append(doc.replace("0}", f"{i}}}").replace("l1}", f"l1x{i}}}") if (i + j) % 3 else doc)
    return "---\n".join(out)


# No target; a driver past end of life (its finding, about the target alone, is on every result);
# a supported one.
@pytest.mark.parametrize("target", [Target(), "470.57.02", "580.95.05"])
def test_a_pod_that_repeats_a_clean_shape_gets_what_judging_it_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     target):
    from imagelint.deploytarget.options import target_from_flags

    if isinstance(target, str):
        target = target_from_flags([target], ["A100"], None, None, None, None, None, None, load_matrix())
    (tmp_path / "pods.yaml").write_text(renamed(VARIED, 6))
    made = 0
    read = kubernetes.pod_facts

    def pod_facts(*args, **kwargs):
        nonlocal made
        made += 1
        return read(*args, **kwargs)

    monkeypatch.setattr(kubernetes, "pod_facts", pod_facts)

    def lint_run() -> tuple[list, int]:
        nonlocal made
        made = 0
        run = lint.run_lint([str(tmp_path / "pods.yaml")], target, load_matrix(), Config())
        return list(run.results), made

    remembered, made_remembering = lint_run()
    monkeypatch.setattr(lint, "MAX_SHAPES", 0)
    judged, made_judging = lint_run()
    assert remembered == judged
    assert made_remembering < made_judging  # repeats of clean shapes were not read again
    assert any(r.findings for r in judged) and any(not r.findings for r in judged)
    assert len({r.subject for r in judged}) == len(judged)


def test_a_result_for_another_subject_is_replace_with_that_subject() -> None:
    """``_for_subject`` (how a repeated pod gets its shape's results) is ``dataclasses.replace``:
    every field but the subject kept, whatever ImageResult holds."""
    from dataclasses import fields, replace

    from imagelint.core.engine import ImageResult
    from imagelint.core.lint import _for_subject

    plain = ImageResult("x")
    values: dict = {}
    for i, f in enumerate(fields(ImageResult)):  # every field other than its default
        default = getattr(plain, f.name)
        values[f.name] = {bool: not default, tuple: (f"t{i}",), int: i}.get(type(default), f"v{i}")
    values["error_exit_code"] = 3
    values["source_labels"] = {"org.opencontainers.image.source": "https://example.invalid/r"}
    result = ImageResult(**values)
    assert all(getattr(result, name) != getattr(plain, name) for name in values)
    again = _for_subject(result, "deploy/other:container app")
    assert again == replace(result, subject="deploy/other:container app")
    assert type(again) is ImageResult and again.subject == "deploy/other:container app"
