"""One image reference on one pool gets one judgement, whichever file names it (issue 38): a
Dockerfile's ``FROM``, a Kubernetes container's ``image:`` and a Compose service's ``image:`` are
the same image, so IL101 says the same thing (outcome, severity, headline, fix) for each."""

from __future__ import annotations

from pathlib import Path

import pytest

from imagelint.core.config import Config
from imagelint.core.lint import run_lint
from imagelint.deploytarget import GpuSpec, NodePool, Target

from tests.rules.helpers import matrix

DOCKERFILE = "FROM {image}\nCMD [\"./app\"]\n"
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: app}}
spec:
  selector: {{matchLabels: {{app: app}}}}
  template:
    metadata: {{labels: {{app: app}}}}
    spec:
      containers:
      - name: app
        image: {image}
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""
COMPOSE = """services:
  app:
    image: {image}
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 1
              capabilities: [gpu]
"""
IMAGES = ("nvidia/cuda:12.4.1-runtime-ubuntu22.04", "nvidia/cuda:12.8.1-base-ubuntu24.04",
          "nvcr.io/nvidia/pytorch:24.05-py3", "nvidia/cuda:11.8.0-runtime-ubuntu22.04")
POOLS = (
    NodePool("t4", driver="535.104.05", gpus=(GpuSpec(product="T4"),), toolkit="1.17.8", arch="amd64"),
    NodePool("t4-cdi", driver="535.104.05", gpus=(GpuSpec(product="T4"),), toolkit="1.17.3", runtime_mode="cdi",
             arch="amd64"),
    NodePool("rtx", driver="535.104.05", gpus=(GpuSpec(product="RTX 3090"),), arch="amd64"),
    NodePool("old", driver="470.57.02", gpus=(GpuSpec(product="A100"),), arch="amd64"),
)


def _judgements(tmp_path: Path, image: str, pool: NodePool) -> dict[str, list[tuple]]:
    files = {"Dockerfile": DOCKERFILE, "deploy.yaml": DEPLOYMENT, "compose.yaml": COMPOSE}
    for name, text in files.items():
        (tmp_path / name).write_text(text.format(image=image))
    run = run_lint([str(tmp_path / n) for n in files], Target(pools=(pool,), source="flags"), matrix(),
                   Config(select=("IL101",)))
    out: dict[str, list[tuple]] = {name: [] for name in files}
    for result in run.results:
        name = Path(result.path or result.subject).name
        for f in result.findings:
            out[name].append((f.severity, f.extra.get("outcome"), f.message, f.remediation))
    return out


@pytest.mark.parametrize("image", IMAGES)
@pytest.mark.parametrize("pool", POOLS, ids=lambda p: p.name)
def test_every_file_kind_judges_an_image_on_a_pool_alike(tmp_path: Path, image: str, pool: NodePool) -> None:
    found = _judgements(tmp_path, image, pool)
    assert found["Dockerfile"] == found["deploy.yaml"] == found["compose.yaml"], found


def test_compose_sees_the_compat_package_an_official_cuda_image_ships(tmp_path: Path) -> None:
    """The example's case: on T4 / 535 with toolkit 1.17.8, nvidia/cuda:12.4.1 runs through
    forward compatibility; "install cuda-compat-12-4" is no fix for an image that ships it."""
    found = _judgements(tmp_path, "nvidia/cuda:12.4.1-runtime-ubuntu22.04", POOLS[0])
    [(severity, outcome, _, fix)] = found["compose.yaml"]
    assert (severity, outcome) == ("info", "forward-compat") and "install cuda-compat" not in fix
