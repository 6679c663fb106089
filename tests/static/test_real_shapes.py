"""Fixtures in the shapes real repositories use (written for these tests, not copied): where GPU
pods live, DRA claims, CDI, sharing/MIG names, templates, and what must not be an error."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from types import MappingProxyType

import pytest

from imagelint.core.config import Config
from imagelint.core.lint import run_lint
from imagelint.deploytarget import GpuSpec, NodePool, Target

FLAGS_535 = Target(pools=(NodePool(name="driver-535", driver="535.104.05", cuda_driver_version="12.2"),), source="flags")
FLAGS_470 = Target(pools=(NodePool(name="driver-470", driver="470.57.02", cuda_driver_version="11.4"),), source="flags")


def lint(tmp_path, files: dict[str, str], target: Target = FLAGS_535, matrix=None, **kw):
    from imagelint.matrix import load_matrix

    paths = []
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
        paths.append(str(p))
    return run_lint(paths, target, matrix or load_matrix(), Config(), **kw)


def found(run, rule: str | None = None):
    return [(f.rule, f.severity, r.subject, f.text) for r in run.results for f in r.findings
            if rule is None or f.rule == rule]


def subjects(run) -> list[str]:
    return [r.subject for r in run.results]


# --- where GPU pods live ------------------------------------------------------------------

RAY = """\
    apiVersion: ray.io/v1
    kind: RayCluster
    metadata: {name: rc}
    spec:
      headGroupSpec:
        template:
          spec:
            containers:
            - {name: head, image: rayproject/ray:2.40.0-py311-cu128}
      workerGroupSpecs:
      - groupName: gpu-group
        template:
          spec:
            containers:
            - name: worker
              image: rayproject/ray:2.40.0-py311-cu130
              resources: {limits: {nvidia.com/gpu: 1}, requests: {nvidia.com/gpu: 1}}
    """

LWS = """\
    apiVersion: leaderworkerset.x-k8s.io/v1
    kind: LeaderWorkerSet
    metadata: {name: vllm}
    spec:
      leaderWorkerTemplate:
        size: 2
        leaderTemplate:
          spec:
            containers:
            - {name: leader, image: vllm/vllm-openai:v0.8.5, resources: {limits: {nvidia.com/gpu: "8"}}}
        workerTemplate:
          spec:
            containers:
            - name: worker
              image: vllm/vllm-openai:v0.8.5
              resources: {requests: {nvidia.com/gpu: "1"}}
    """

PYTORCHJOB = """\
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: pj}
    spec:
      pytorchReplicaSpecs:
        Worker:
          replicas: 2
          template:
            spec:
              containers:
              - name: pytorch
                image: pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime
                resources: {limits: {nvidia.com/gpu: 1}}
    """

VOLCANO = """\
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: vj}
    spec:
      tasks:
      - name: trainer
        replicas: 1
        template:
          spec:
            containers:
            - {name: t, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: "1"}}}
    """

KSERVE = """\
    apiVersion: serving.kserve.io/v1beta1
    kind: InferenceService
    metadata: {name: flowers}
    spec:
      predictor:
        tensorflow:
          storageUri: gs://bucket/model
          resources: {limits: {nvidia.com/gpu: 1}}
    """

ARGO = """\
    apiVersion: argoproj.io/v1alpha1
    kind: Workflow
    metadata: {generateName: train-}
    spec:
      entrypoint: main
      templates:
      - name: main
        nodeSelector: {kubernetes.io/hostname: "{{inputs.parameters.node}}"}
        container:
          image: nvcr.io/nvidia/tritonserver:24.05-py3
          args: ["--model-repository={{inputs.parameters.repo}}"]
          resources: {limits: {nvidia.com/gpu: 1}}
    """

JOBSET_CRON = """\
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata: {name: js}
    spec:
      replicatedJobs:
      - name: workers
        template:
          spec:
            template:
              spec:
                containers:
                - {name: w, image: busybox, resources: {limits: {nvidia.com/gpu: 2}}}
    ---
    apiVersion: batch/v1
    kind: CronJob
    metadata: {name: nightly}
    spec:
      schedule: "0 2 * * *"
      jobTemplate:
        spec:
          template:
            spec:
              containers:
              - {name: n, image: busybox, resources: {limits: {nvidia.com/gpu: 1}}}
    """


def _gpu_pods(run) -> dict[str, str]:
    return {r.subject.split(" container ")[1]: r.subject for r in run.results if " container " in r.subject}


def test_gpu_pods_found_in_every_controller_shape(tmp_path):
    run = lint(tmp_path, {"ray.yaml": RAY, "lws.yaml": LWS, "pj.yaml": PYTORCHJOB, "vj.yaml": VOLCANO,
                          "isvc.yaml": KSERVE, "wf.yaml": ARGO, "js.yaml": JOBSET_CRON})
    containers = _gpu_pods(run)
    assert set(containers) == {"head", "worker", "leader", "pytorch", "t", "tensorflow", "main", "w", "n"}
    # a request without a limit inside an LWS worker template is found (IL601, an API rejection)
    [(rule, sev, subject, msg)] = found(run, "IL601")
    assert sev == "error" and "lws.yaml" in subject and "worker" in subject


def test_shapes_are_named_in_messages(tmp_path):
    from imagelint.matrix import load_matrix
    from imagelint.static.kubernetes import manifest_facts

    shapes = {f.workload.container: f.workload.shape for name, text in
              (("ray", RAY), ("lws", LWS), ("pj", PYTORCHJOB), ("vj", VOLCANO), ("isvc", KSERVE), ("wf", ARGO))
              for f in manifest_facts(textwrap.dedent(text), f"{name}.yaml")}
    assert shapes["worker"] in ("RayCluster worker group 'gpu-group'", "LeaderWorkerSet worker template")
    assert shapes["head"] == "RayCluster head group" and shapes["leader"] == "LeaderWorkerSet leader template"
    assert shapes["pytorch"] == "PyTorchJob Worker replicas" and shapes["t"] == "Volcano Job task 'trainer'"
    assert shapes["tensorflow"] == "InferenceService predictor" and shapes["main"] == "Argo template 'main'"
    assert load_matrix() is not None


def test_image_fields_resolve_through_the_base_image_table(tmp_path):
    # tritonserver 24.05 (CUDA 12.4) on a 470 pool is caught without pulling; so is a cu130 Ray worker
    run = lint(tmp_path, {"wf.yaml": ARGO, "ray.yaml": RAY}, target=FLAGS_470)
    il101 = found(run, "IL101")
    triton = [(sev, m) for _, sev, s, m in il101 if "wf.yaml" in s]
    ray = [sev for _, sev, s, _ in il101 if "ray.yaml" in s]
    # NGC 24.05's notes list R470 (>= 470.57) for data-centre GPUs: the pool names no GPU, so it depends
    assert triton and all(sev == "warning" and "data-centre" in m for sev, m in triton)
    assert ray and all(sev == "error" for sev in ray)
    # the CPU-only Ray head runs a CUDA image but asks for no GPU: not judged
    assert not any(" container head" in s for _, _, s, _ in il101)
    assert any(" container worker" in s for _, _, s, _ in il101)


def test_objects_without_a_pod_template_are_named(tmp_path):
    run = lint(tmp_path, {"cr.yaml": """\
        apiVersion: nvidia.com/v1alpha1
        kind: NVIDIADriver
        metadata: {name: default}
        spec: {image: driver}
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: cm}
        data: {a: b}
        """})
    [note] = [n for n in run.notices if "cr.yaml" in n]
    assert "NVIDIADriver/default" in note and "ConfigMap" not in note


# --- templates, skips and malformed files ---------------------------------------------------

def test_helm_template_is_skipped_with_the_command_and_argo_placeholders_are_read(tmp_path):
    run = lint(tmp_path, {"chart/templates/deploy.yaml": """\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {{ include "x.fullname" . }}
        spec:
          template:
            spec:
              containers:
              - image: "{{ .Values.image }}"
        """, "wf.yaml": ARGO})
    [note] = [n for n in run.notices if "deploy.yaml" in n]
    assert "helm template" in note and "skipped" in note
    assert any("wf.yaml" in s for s in subjects(run))


def test_unrelated_files_are_noted_when_named_and_silent_under_pre_commit(tmp_path):
    files = {"values.yaml": "replicas: 3\n", "ci.yml": "on: push\njobs: {}\n", "pod.yaml": "apiVersion: v1\nkind: Pod\n"
             "metadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: busybox}\n"}
    named = lint(tmp_path, files)
    assert any("values.yaml" in n and "helm template" in n for n in named.notices)
    assert any("ci.yml" in n for n in named.notices)
    quiet = lint(tmp_path, files, quiet_unrelated=True)
    assert not any("values.yaml" in n or "ci.yml" in n for n in quiet.notices)
    assert any("pod.yaml" in s for s in subjects(quiet))


def test_a_malformed_file_is_an_error_result_and_the_others_are_linted(tmp_path):
    run = lint(tmp_path, {"bad.yaml": "apiVersion: v1\nkind: Pod\nspec:\n  - image: {x}/y\n  a: b\n", "wf.yaml": ARGO})
    bad = [r for r in run.results if r.error]
    assert len(bad) == 1 and "bad.yaml" in bad[0].error and run.exit_code == 2
    assert any("wf.yaml" in s for s in subjects(run))


def test_directory_walk_skips_vendor_and_unrelated_yaml(tmp_path):
    from imagelint.static.discover import discover

    (tmp_path / "repo" / "k8s").mkdir(parents=True)
    (tmp_path / "repo" / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "repo" / "k8s" / "job.yaml").write_text(textwrap.dedent(PYTORCHJOB))
    (tmp_path / "repo" / "node_modules" / "x" / "pod.yaml").write_text(textwrap.dedent(PYTORCHJOB))
    (tmp_path / "repo" / "mkdocs.yml").write_text("site_name: x\n")
    (tmp_path / "repo" / "Dockerfile-triton").write_text("FROM nvcr.io/nvidia/tritonserver:21.05-py3\n")
    (tmp_path / "repo" / "README.md").write_text("# x\n")
    files = discover(str(tmp_path / "repo")).files
    assert sorted(p.rsplit("/", 1)[-1] for p in files) == ["Dockerfile-triton", "job.yaml", "mkdocs.yml"]
    from imagelint.matrix import load_matrix

    run = run_lint([str(tmp_path / "repo")], FLAGS_535, load_matrix(), Config())
    assert not any("mkdocs.yml" in n for n in run.notices)  # found by the walk, unrelated: no note
    assert any("job.yaml" in s for s in subjects(run))
    # Read, and without findings of its own (R535's end of life is the target's, not this file's): counted, not listed.
    assert any("Dockerfile-triton" in s for s in (*subjects(run), *run.files_clean))


# --- DRA ----------------------------------------------------------------------------------

CLAIMS = """\
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: one-gpu}
    spec:
      spec:
        devices:
          requests:
          - name: gpu
            exactly: {deviceClassName: gpu.nvidia.com}
    ---
    apiVersion: resource.k8s.io/v1beta1
    kind: ResourceClaimTemplate
    metadata: {name: mig-1g}
    spec:
      spec:
        devices:
          requests:
          - name: mig
            deviceClassName: mig.nvidia.com
            selectors:
            - cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}
    ---
    apiVersion: resource.nvidia.com/v1beta1
    kind: ComputeDomain
    metadata: {name: cd}
    spec:
      numNodes: 2
      channel: {resourceClaimTemplate: {name: imex-channel}}
    """


def pod_with_claims(image: str, claims: str, limits: str = "") -> str:
    limits_line = f"\n      limits: {{{limits}}}" if limits else ""
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: ctr\n"
            f"    image: {image}\n    resources:\n      claims: [{{name: c}}]{limits_line}\n"
            f"  resourceClaims:\n  - {{name: c, {claims}}}\n")


def test_dra_pod_running_a_cuda13_image_on_a_535_pool_depends_on_its_compat_package(tmp_path):
    # nvidia/cuda 13.0 carries cuda-compat-13-0, which supports R535: it runs where the runtime loads it
    run = lint(tmp_path, {"claims.yaml": CLAIMS,
                          "pod.yaml": pod_with_claims("nvidia/cuda:13.0.1-runtime-ubuntu24.04",
                                                      "resourceClaimTemplateName: one-gpu")})
    [(_, sev, subject, msg)] = found(run, "IL101")
    assert sev == "warning" and "pod.yaml" in subject and "13.0" in msg


def test_claims_resolve_across_files_by_device_class(tmp_path):
    from imagelint.matrix import load_matrix
    from imagelint.core.lint import enrich, read_static

    (tmp_path / "c.yaml").write_text(textwrap.dedent(CLAIMS))
    pods = {"gpu": "resourceClaimTemplateName: one-gpu", "mig": "resourceClaimTemplateName: mig-1g",
            "imex": "resourceClaimTemplateName: imex-channel", "unknown": "resourceClaimTemplateName: elsewhere"}
    statics = [read_static(str(tmp_path / "c.yaml"))]
    for name, ref in pods.items():
        (tmp_path / f"{name}.yaml").write_text(pod_with_claims("busybox", ref))
        statics.append(read_static(str(tmp_path / f"{name}.yaml")))
    out = {s.path.rsplit("/", 1)[-1]: s for s in enrich(statics, load_matrix())}
    devices = {n: out[f"{n}.yaml"].facts[0].workload.pod_claims[0].device for n in pods}
    assert devices == {"gpu": "gpu", "mig": "mig", "imex": "imex", "unknown": "unknown"}
    assert out["mig.yaml"].facts[0].workload.pod_claims[0].requests[0].selectors


def test_il606_claim_not_listed_is_an_error_and_undefined_template_info(tmp_path):
    bad = textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - {name: ctr, image: busybox, resources: {claims: [{name: gpu}]}}
          resourceClaims:
          - {name: gpus, resourceClaimTemplateName: not-here}
        """)
    run = lint(tmp_path, {"pod.yaml": bad})
    severities = sorted(sev for _, sev, _, _ in found(run, "IL606"))
    assert severities == ["error", "info"]
    ok = lint(tmp_path, {"claims.yaml": CLAIMS, "pod.yaml": pod_with_claims("busybox", "resourceClaimTemplateName: one-gpu")})
    assert found(ok, "IL606") == []


def test_il607_gpu_claim_with_device_plugin_limit_but_not_an_imex_channel(tmp_path):
    both = pod_with_claims("busybox", "resourceClaimTemplateName: one-gpu", "nvidia.com/gpu: 1")
    imex = pod_with_claims("busybox", "resourceClaimTemplateName: imex-channel", "nvidia.com/gpu: 1")
    assert [sev for _, sev, _, _ in found(lint(tmp_path, {"c.yaml": CLAIMS, "both.yaml": both}), "IL607")] == ["warning"]
    assert found(lint(tmp_path, {"c.yaml": CLAIMS, "imex.yaml": imex}), "IL607") == []


# --- sharing and MIG names ------------------------------------------------------------------

def limits_pod(limits: str) -> str:
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
            f"    resources: {{limits: {{{limits}}}}}\n")


@pytest.mark.parametrize("limits", ["nvidia.com/mig-1g.10gb: 1", "nvidia.com/mig-1g.10gb+me: 1", "nvidia.com/gpu.shared: 1",
                                    "nvidia.com/gpu: 1, nvidia.com/gpumem: 3000, nvidia.com/gpucores: 30"])
def test_il602_flags_only_says_strategy_unknown_at_info(tmp_path, limits):
    run = lint(tmp_path, {"p.yaml": limits_pod(limits)})
    sev = {s for _, s, _, _ in found(run, "IL602")}
    assert sev == {"info"}


def test_il602_with_a_target_file_is_exact(tmp_path):
    pool = NodePool(name="a100", driver="550.54.15", gpus=(GpuSpec(product="A100", mig_profiles=("1g.10gb",)),),
                    mig_strategy="mixed", source="file:t.toml")
    target = Target(pools=(pool,), source="file:t.toml")
    assert found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/mig-1g.10gb: 1")}, target), "IL602") == []
    [(_, sev, _, msg)] = found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/mig-3g.40gb: 1")}, target), "IL602")
    assert sev == "error" and "nvidia.com/mig-1g.10gb" in msg
    none = replace(pool, mig_strategy="none")
    [(_, sev, _, _)] = found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/gpumem: 3000")},
                                  Target(pools=(none,), source="file:t.toml")), "IL602")
    assert sev == "error"


def test_il608_shared_request_over_one_fails_with_fail_requests_greater_than_one(tmp_path):
    pool = NodePool(name="t4", driver="535.104.05", resources=MappingProxyType({"nvidia.com/gpu.shared": 16}),
                    shared_resources=MappingProxyType({"nvidia.com/gpu.shared": 4}),
                    fail_requests_greater_than_one=True, source="file:t.toml")
    target = Target(pools=(pool,), source="file:t.toml")
    [(_, sev, _, msg)] = found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/gpu.shared: 2")}, target), "IL608")
    assert sev == "error" and "UnexpectedAdmissionError" in msg
    assert found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/gpu.shared: 1")}, target), "IL608") == []
    lenient = Target(pools=(replace(pool, fail_requests_greater_than_one=False),), source="file:t.toml")
    assert {s for _, s, _, _ in found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/gpu.shared: 2")}, lenient),
                                     "IL608")} == {"info"}


def test_il604_hostname_selector_is_not_judged(tmp_path):
    pool = NodePool(name="t4", driver="535.104.05", labels=MappingProxyType({"nvidia.com/gpu.product": "Tesla-T4"}),
                    resources=MappingProxyType({"nvidia.com/gpu": 4}), source="file:t.toml")
    text = limits_pod("nvidia.com/gpu: 1") + "  nodeSelector: {kubernetes.io/hostname: gpu-node-7}\n"
    # not judged, but said (issue 37): one info that a pool cannot answer for a single node
    [(_, severity, _, text)] = found(lint(tmp_path, {"p.yaml": text}, Target(pools=(pool,), source="file:t.toml")), "IL604")
    assert severity == "info" and "kubernetes.io/hostname" in text


# --- CDI, indices and pass-through values ----------------------------------------------------

def env_pod(name: str, value: str, gpus: int | None = None) -> str:
    res = f"\n    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}" if gpus else ""
    return ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
            f"    env:\n    - {{name: {name}, value: \"{value}\"}}{res}\n")


@pytest.mark.parametrize("name, value, gpus, expected", [
    ("NVIDIA_VISIBLE_DEVICES", "${NVIDIA_VISIBLE_DEVICES}", None, set()),
    ("CUDA_VISIBLE_DEVICES", "${CUDA_VISIBLE_DEVICES:-all}", None, set()),
    ("CUDA_VISIBLE_DEVICES", "$GPUS", None, set()),
    ("NVIDIA_VISIBLE_DEVICES", "nvidia.com/gpu=all", None, set()),
    ("NVIDIA_VISIBLE_DEVICES", "void", None, set()),
    ("CUDA_VISIBLE_DEVICES", "0", None, {"info"}),
    ("NVIDIA_VISIBLE_DEVICES", "nvidia.com/gpu=0", None, {"info"}),
    ("CUDA_VISIBLE_DEVICES", "0,1", None, {"error"}),
    ("CUDA_VISIBLE_DEVICES", "0,1", 2, {"info"}),
    ("CUDA_VISIBLE_DEVICES", "2", 2, {"error"}),
    ("NVIDIA_VISIBLE_DEVICES", "GPU-8f1d2c3a-0000-1111-2222-333344445555", None, {"error"}),
])
def test_il301_values(tmp_path, name, value, gpus, expected):
    run = lint(tmp_path, {"p.yaml": env_pod(name, value, gpus)})
    assert {s for _, s, _, _ in found(run, "IL301")} == expected


def test_index_zero_is_info_in_every_spelling(tmp_path):
    run = lint(tmp_path, {
        "Dockerfile": "FROM busybox\nENV CUDA_VISIBLE_DEVICES=0\nCMD [\"python3\", \"serve.py\", \"--device\", \"cuda:0\"]\n",
        "pgie_config.txt": "[property]\ngpu-id=0\n",
        "train.py": "import torch\ntorch.cuda.set_device(0)\n",
    })
    sev = {(r, s) for r, s, _, _ in found(run) if r in ("IL301", "IL302")}
    assert sev == {("IL301", "info"), ("IL302", "info")}


def test_cdi_annotation_is_a_gpu_request(tmp_path):
    from imagelint.static.kubernetes import manifest_facts

    [f] = manifest_facts(textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata:
          name: p
          annotations: {cdi.k8s.io/ctr: "nvidia.com/gpu=all"}
        spec:
          containers: [{name: c, image: nvidia/cuda:12.4.1-base-ubuntu22.04}]
        """), "p.yaml")
    assert f.workload.cdi_devices == ("nvidia.com/gpu=all",) and f.workload.requests_gpu


# --- DeepStream, nvinferserver and Python -----------------------------------------------------

def test_bare_deepstream_config_gets_no_il304_but_gpu_ids_are_read(tmp_path):
    run = lint(tmp_path, {
        "dstest1_pgie_config.yml": "property:\n  gpu-id: 1\n  batch-size: 1\n",
        "config_infer_primary_inferserver.txt": "infer_config {\n  unique_id: 1\n  gpu_ids: [1]\n}\n",
        "deepstream_app.txt": "[application]\nenable-perf-measurement=1\n[tracker]\ngpu-id=0\n",
    })
    assert found(run, "IL304") == []
    il302 = {(s.rsplit("/", 1)[-1], sev) for _, sev, s, _ in found(run, "IL302")}
    assert il302 == {("dstest1_pgie_config.yml", "error"), ("config_infer_primary_inferserver.txt", "error"),
                     ("deepstream_app.txt", "info")}


def test_python_files_are_scanned(tmp_path):
    run = lint(tmp_path, {"serve.py": 'import os\nos.environ["CUDA_VISIBLE_DEVICES"] = "1"\nmodel.to("cuda:1")\n'})
    assert {r for r, s, _, _ in found(run) if s == "error"} == {"IL301", "IL302"}


# --- base images beyond nvidia/cuda -----------------------------------------------------------

@pytest.mark.parametrize("base, cuda", [
    ("nvcr.io/nvidia/pytorch:21.02-py3", "11.2"),
    ("nvcr.io/nvidia/tensorflow:22.05-tf2-py3", "11.7"),
    ("nvcr.io/nvidia/tritonserver:24.05-py3", "12.4"),
    ("nvcr.io/nvidia/deepstream:7.1-triton-multiarch", "12.6"),
    ("pytorch/pytorch:2.5.0-cuda12.4-cudnn9-runtime", "12.4"),
    ("rayproject/ray-llm:2.52.0-py311-cu128", "12.8"),
    ("ubuntu:22.04", None),
])
def test_from_resolves_through_the_table_following_arg_defaults(tmp_path, base, cuda):
    from imagelint.matrix import load_matrix
    from imagelint.core.lint import read_static

    (tmp_path / "Dockerfile").write_text(f"ARG FROM_IMAGE_NAME={base}\nFROM ${{FROM_IMAGE_NAME}}\n")
    [facts] = read_static(str(tmp_path / "Dockerfile"), load_matrix()).facts
    versions = {".".join(v.version.split(".")[:2]) for v in facts.cuda.versions if v.source == "base-image"}
    assert versions == ({cuda} if cuda else set())


def test_a_finding_about_the_target_alone_is_reported_once_per_run(tmp_path):
    files = {f"d{i}/Dockerfile": "FROM nvcr.io/nvidia/pytorch:21.02-py3\n" for i in range(3)}
    run = lint(tmp_path, files)  # R535 is past end of life (IL503): about the pool, not the files
    il503 = found(run, "IL503")
    assert len(il503) == 1
    [about_target] = [r for r in run.results if r.kind == "target"]  # attached to the target, not a file
    assert [f.rule for f in about_target.findings] == ["IL503"]


@pytest.mark.parametrize("text", [
    "apiVersion: v1\nkind: Pod\nspec: " + "[" * 150_000 + "]" * 150_000 + "\n",
    "apiVersion: v1\nkind: Pod\nspec:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 1500)),
], ids=["flow", "block"])
def test_deep_nesting_never_reaches_libyaml_recursion(tmp_path, text):
    # libyaml's composer recurses in C (a segfault); deep text must take the bounded loader
    import subprocess
    import sys

    (tmp_path / "deep.yaml").write_text(text)
    run = subprocess.run([sys.executable, "-m", "imagelint", "lint", "deep.yaml"], cwd=tmp_path,  # noqa: S603
                         capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 2) and "Traceback" not in run.stderr, (run.returncode, run.stderr[-500:])


def test_il604_claim_cel_selectors_against_the_pools_gpus(tmp_path):
    claim = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: a100}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                exactly:
                  deviceClassName: gpu.nvidia.com
                  selectors:
                  - cel: {expression: "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')"}
        """)
    pod = pod_with_claims("busybox", "resourceClaimTemplateName: a100")
    t4 = NodePool(name="t4", driver="535.104.05", gpus=(GpuSpec(product="Tesla-T4"),), source="file:t.toml")
    a100 = replace(t4, name="a100", gpus=(GpuSpec(product="NVIDIA-A100-SXM4-80GB"),))
    [(_, sev, _, msg)] = found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, Target(pools=(t4,))), "IL604")
    assert sev == "error" and "a100" in msg
    assert found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, Target(pools=(t4, a100))), "IL604") == []
    unknown = replace(t4, gpus=())  # GPU model unknown: not judged
    assert found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, Target(pools=(unknown,))), "IL604") == []


@pytest.mark.parametrize("expr, product, verdict", [
    ("device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'", "NVIDIA-A100-SXM4-80GB", True),
    ("device.attributes['gpu.nvidia.com'].productName == 'NONEXISTENT-GPU-XYZ'", "Tesla-T4", False),
    ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", "Tesla-T4", None),
    ("device.attributes['gpu.nvidia.com'].productName == 'x' || true", "Tesla-T4", None),
])
def test_cel_subset(expr, product, verdict):
    from imagelint.kube.cel import selects

    assert selects(expr, GpuSpec(product=product)) is verdict


def test_a_gpu_pods_image_is_judged_on_the_pools_it_reaches(tmp_path):
    old = NodePool(name="k80", driver="470.57.02", cuda_driver_version="11.4", source="file:t.toml",
                   labels=MappingProxyType({"nvidia.com/gpu.product": "Tesla-K80"}))
    new = NodePool(name="h100", driver="550.54.15", cuda_driver_version="12.4", source="file:t.toml",
                   labels=MappingProxyType({"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}))
    target = Target(pools=(old, new), source="file:t.toml")
    pod = limits_pod("nvidia.com/gpu: 1").replace("image: busybox", "image: nvcr.io/nvidia/pytorch:24.05-py3")
    anywhere = found(lint(tmp_path, {"p.yaml": pod}, target), "IL101")
    # could land on the 470 pool, where it runs only if the (uncatalogued) K80 took forward compatibility
    assert any(sev == "warning" and "k80" in m for _, sev, _, m in anywhere)
    pinned = pod + "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
    assert [f for f in found(lint(tmp_path, {"p.yaml": pinned}, target), "IL101") if f[1] != "info"] == []


def test_cuda_compat_package_from_apt_is_a_forward_compat_library(tmp_path):
    from imagelint.matrix import load_matrix
    from imagelint.core.lint import read_static

    (tmp_path / "Dockerfile").write_text(
        "FROM ubuntu:24.04\nENV CUDA_VERSION=13.0.1\n"
        "RUN apt-get update && apt-get install -y cuda-cudart-13-0 cuda-compat-13-0\n")
    [facts] = read_static(str(tmp_path / "Dockerfile"), load_matrix()).facts
    [lib] = [d for d in facts.driver_libraries if d.role == "compat"]
    assert lib.path.startswith("usr/local/cuda-13.0/compat/libcuda.so.") and 535 in lib.fwd_compat.driver_branches


def test_classic_dra_objects_are_named(tmp_path):
    run = lint(tmp_path, {"rc.yaml": """\
        apiVersion: resource.k8s.io/v1alpha2
        kind: ResourceClaim
        metadata: {name: gpu-ts-sharing}
        spec:
          resourceClassName: gpu.nvidia.com
        """})
    assert any("rc.yaml" in n and "v1alpha" in n and "ResourceClaim/gpu-ts-sharing" in n for n in run.notices)


def test_il603_resource_keyed_taint_is_a_warning_other_taints_errors(tmp_path):
    from imagelint.deploytarget import Taint

    pool = NodePool(name="t4", driver="535.104.05", resources=MappingProxyType({"nvidia.com/gpu": 4}),
                    taints=(Taint("nvidia.com/gpu", "present", "NoSchedule"),), source="file:t.toml")
    [(_, sev, _, msg)] = found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/gpu: 1")}, Target(pools=(pool,))), "IL603")
    assert sev == "warning" and "ExtendedResourceToleration" in msg
    dedicated = replace(pool, taints=(Taint("dedicated", "gpu", "NoSchedule"),))
    [(_, sev, _, _)] = found(lint(tmp_path, {"p.yaml": limits_pod("nvidia.com/gpu: 1")}, Target(pools=(dedicated,))), "IL603")
    assert sev == "error"


def test_json_report_with_a_malformed_file_and_notes_follows_the_schema(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    import jsonschema

    (tmp_path / "bad.yaml").write_text("apiVersion: v1\nkind: Pod\nspec:\n  - a: {x}/y\n  b: c\n")
    (tmp_path / "values.yaml").write_text("replicas: 3\n")
    (tmp_path / "Dockerfile").write_text("FROM nvidia/cuda:12.4.1-base-ubuntu22.04\n")
    run = subprocess.run([sys.executable, "-m", "imagelint", "lint", "bad.yaml", "values.yaml", "Dockerfile",  # noqa: S603
                          "--driver", "535.104.05", "--format", "json", "--output", "r.json"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "bad.yaml:4:" in run.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report-schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(report)
    assert any("values.yaml" in n for n in report["notices"])


@pytest.mark.parametrize("expr, driver, cc, verdict", [
    ("device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('550.0.0')) >= 0", "535.104.05", None, False),
    ("device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('550.0.0')) >= 0", "570.86.15", None, True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))", None, "9.0", True),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))", None, "7.5", False),
    ("device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))", None, None, None),
])
def test_cel_version_comparisons(expr, driver, cc, verdict):
    from imagelint.kube.cel import selects

    assert selects(expr, GpuSpec(product="X", compute_capability=cc), driver) is verdict


def test_dra_claim_needing_a_newer_driver_matches_no_pool(tmp_path):
    claim = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: new-driver}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                exactly:
                  deviceClassName: gpu.nvidia.com
                  selectors:
                  - cel: {expression: "device.attributes['gpu.nvidia.com'].driverVersion.compareTo(semver('580.0.0')) >= 0"}
        """)
    pod = pod_with_claims("busybox", "resourceClaimTemplateName: new-driver")
    old = NodePool(name="r535", driver="535.104.05", source="file:t.toml")
    [(_, sev, _, _)] = found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, Target(pools=(old,))), "IL604")
    assert sev == "error"
    new = replace(old, name="r580", driver="580.95.05")
    assert found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, Target(pools=(old, new))), "IL604") == []


def test_each_claim_request_is_its_own_device_and_unknown_mig_layouts_are_not_judged(tmp_path):
    claim = textwrap.dedent("""\
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: mig-devices}
        spec:
          spec:
            devices:
              requests:
              - name: a
                exactly:
                  deviceClassName: mig.nvidia.com
                  selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"}}]
              - name: b
                exactly:
                  deviceClassName: mig.nvidia.com
                  selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '3g.20gb'"}}]
        """)
    pod = pod_with_claims("busybox", "resourceClaimTemplateName: mig-devices")
    flags = Target(pools=(NodePool(name="flags", driver="535.104.05"),), source="flags")
    assert found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, flags), "IL604") == []
    a100 = NodePool(name="a100", driver="550.54.15", source="file:t.toml",
                    gpus=(GpuSpec(product="A100", mig_profiles=("1g.5gb", "3g.20gb")),))
    assert found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, Target(pools=(a100,))), "IL604") == []
    only_small = replace(a100, gpus=(GpuSpec(product="A100", mig_profiles=("1g.5gb",)),))
    assert len(found(lint(tmp_path, {"c.yaml": claim, "p.yaml": pod}, Target(pools=(only_small,))), "IL604")) == 1
