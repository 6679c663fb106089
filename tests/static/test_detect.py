from __future__ import annotations

import re

import pytest

from imagelint.static.detect import FILES_REGEX, detect_kind

K8S = b"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
DS = b"[application]\nenable-perf-measurement=1\n[primary-gie]\ngpu-id=1\n"


@pytest.mark.parametrize(
    "path, head, kind",
    [
        ("Dockerfile", b"FROM a\n", "dockerfile"),
        ("docker/Dockerfile.gpu", b"FROM a\n", "dockerfile"),
        ("images/app.Dockerfile", b"FROM a\n", "dockerfile"),
        ("Containerfile", b"FROM a\n", "dockerfile"),
        ("k8s/deploy.yaml", K8S, "manifest"),
        ("k8s/values.yml", b"replicas: 3\n", None),
        ("ds/app.yml", b"application:\n  enable-perf-measurement: 1\nprimary-gie:\n  gpu-id: 1\n", "appconfig"),
        ("configs/deepstream_app.txt", DS, "appconfig"),
        ("configs/notes.txt", b"hello\n", None),
        ("entrypoint.sh", b"#!/bin/sh\nexec app\n", "script"),
        ("bin/start", b"#!/usr/bin/env bash\nexec app\n", "script"),
        ("build/Makefile", b"all:\n\ttrue\n", None),
        ("weird-name", b"# comment\nFROM ubuntu\nRUN true\n", "dockerfile"),
        ("Dockerfile_preprocessing", b"ARG X=1\nFROM a\n", "dockerfile"),
        ("train.py", b"import torch\ntorch.cuda.set_device(1)\n", "script"),
        ("cfg/config_infer_inferserver.txt", b"infer_config {\n  unique_id: 1\n  gpu_ids: [0]\n}\n", "appconfig"),
        ("model_repo/bert/config.pbtxt", b'name: "bert"\nplatform: "onnxruntime_onnx"\n', None),
    ],
)
def test_detect_kind(path: str, head: bytes, kind: str | None) -> None:
    assert detect_kind(path, head) == kind


@pytest.mark.parametrize(
    "path, matches",
    [
        ("Dockerfile", True), ("a/b/Dockerfile.cuda", True), ("x.Dockerfile", True), ("Containerfile", True),
        ("k8s/deploy.yaml", True), ("k8s/deploy.yml", True), ("run.sh", True),
        ("configs/deepstream_app_config.txt", True), ("models/config_infer_primary.txt", True),
        ("README.md", False), ("src/main.py", True), ("requirements.txt", False),
        ("PyTorch/DLRM/Dockerfile_preprocessing", True), ("TFT/Dockerfile-triton", True),
        ("apps/dstest1_pgie_config.yml", True), ("trafficcamnet/config_trafficcamnet_inferserver.txt", True),
        ("cross/ubuntu-cross-aarch64.dockerfile", True), ("docs/index.md", False),
    ],
)
def test_pre_commit_regex_covers_the_kinds(path: str, matches: bool) -> None:
    assert bool(re.search(FILES_REGEX, path)) is matches


def test_hooks_file_uses_the_regex() -> None:
    """.pre-commit-hooks.yaml's files regex is the one detect.py documents (they must not drift)."""
    from pathlib import Path

    import yaml

    hooks = yaml.safe_load((Path(__file__).resolve().parents[2] / ".pre-commit-hooks.yaml").read_text())
    default = next(h for h in hooks if h["id"] == "imagelint")
    assert default["files"] == FILES_REGEX
