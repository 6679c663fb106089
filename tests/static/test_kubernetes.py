from __future__ import annotations

import textwrap

import pytest

from imagelint.errors import ConfigError
from imagelint.static.gpuscan import scan_command
from imagelint.static.kubernetes import container_images, manifest_facts

DEPLOYMENT = textwrap.dedent("""\
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: infer
      namespace: ml
      annotations:
        imagelint.io/ignore: "IL605: runtime class set by admission"
    spec:
      template:
        spec:
          nodeSelector:
            nvidia.com/gpu.product: Tesla-T4
          tolerations:
          - key: nvidia.com/gpu
            operator: Exists
            effect: NoSchedule
          initContainers:
          - name: fetch
            image: busybox
          containers:
          - name: server
            image: registry.example/infer:1.0
            args: ["--device", "cuda:1"]
            env:
            - name: CUDA_VISIBLE_DEVICES
              value: "1"
            - name: FROM_SECRET
              valueFrom: {secretKeyRef: {name: s, key: k}}
            resources:
              requests:
                nvidia.com/gpu: 1
              limits:
                nvidia.com/gpu: "2"
          - name: sidecar
            image: registry.example/log:1
    """)


def test_deployment_containers_env_resources_and_lines() -> None:
    facts = manifest_facts(DEPLOYMENT, "k8s/deploy.yaml", scan_command)
    assert [f.workload.container for f in facts] == ["fetch", "server", "sidecar"]
    init, server, sidecar = facts
    assert init.workload.init_container and not init.workload.primary
    assert server.workload.primary and not sidecar.workload.primary
    env = server.env_setting("CUDA_VISIBLE_DEVICES")
    assert env.value == "1"
    assert (env.provenance.kind, env.provenance.source, env.provenance.line) == ("manifest", "k8s/deploy.yaml", 25)
    assert env.provenance.key == "spec.template.spec.containers[0].env[0]"
    assert server.env_setting("FROM_SECRET") is None  # valueFrom has no literal value
    [gpu] = server.workload.resources
    assert (gpu.name, gpu.request, gpu.limit, gpu.provenance.line) == ("nvidia.com/gpu", "1", "2", 31)
    assert server.workload.pod_resources == ("nvidia.com/gpu",)
    assert dict(server.workload.node_selector) == {"nvidia.com/gpu.product": "Tesla-T4"}
    assert server.workload.tolerations[0].operator == "Exists"
    assert server.labels["io.imagelint.ignore"] == "IL605: runtime class set by admission"
    [setting] = server.gpu.index_settings
    assert setting.indices == (1,) and setting.provenance.line == 23
    assert server.cmd == ("--device", "cuda:1")


def test_kinds_list_cronjob_pod_and_non_k8s_docs_skipped() -> None:
    text = textwrap.dedent("""\
        # not kubernetes
        name: values
        ---
        apiVersion: v1
        kind: List
        items:
        - apiVersion: v1
          kind: Pod
          metadata: {name: p}
          spec:
            containers: [{name: a, image: x}]
        - apiVersion: batch/v1
          kind: CronJob
          metadata: {name: c}
          spec:
            jobTemplate:
              spec:
                template:
                  spec:
                    containers: [{name: b, image: y}]
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: cm}
        data: {a: b}
        ---
        apiVersion: argoproj.io/v1alpha1
        kind: Rollout
        metadata: {name: r}
        spec:
          template:
            spec:
              containers: [{name: d, image: z}]
        """)
    facts = manifest_facts(text, "m.yaml")
    assert [(f.workload.kind, f.workload.name, f.workload.container) for f in facts] == [
        ("Pod", "p", "a"), ("CronJob", "c", "b"), ("Rollout", "r", "d")]
    assert facts[1].workload.provenance.key == "spec.jobTemplate.spec.template.spec.containers[0]"


def test_alias_bomb_refused() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 14):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    with pytest.raises(ConfigError) as exc:
        manifest_facts("apiVersion: v1\nkind: Pod\n" + "\n".join(lines) + "\n", "bomb.yaml")
    assert "aliases" in exc.value.message and exc.value.exit_code == 2


def test_bad_yaml_names_file_and_line() -> None:
    with pytest.raises(ConfigError) as exc:
        manifest_facts("apiVersion: v1\nkind: Pod\nspec: [\n", "bad.yaml")
    assert exc.value.message.startswith("bad.yaml:4:")


def test_container_images() -> None:
    from imagelint.static.yamlsafe import load_documents

    assert container_images(load_documents(DEPLOYMENT, "d.yaml")) == [
        "busybox", "registry.example/infer:1.0", "registry.example/log:1"]
