"""Compose's merge tags (compose-spec merge.md: ``!reset`` removes an attribute, ``!override``
replaces it) are valid Compose: a file using them is read, not refused with exit 2. Any other
tag, and the same tags in a Kubernetes manifest, are still refused."""

from __future__ import annotations

import pytest

from imagelint.errors import ConfigError
from imagelint.static.compose import read_compose
from imagelint.static.yamlsafe import load_documents

COMPOSE = """\
services:
  trainer:
    image: nvcr.io/nvidia/pytorch:24.05-py3
    ports: !reset []
    environment: !override
      CUDA_VISIBLE_DEVICES: "1"
    command: !override ["python", "train.py"]
    deploy:
      resources:
        reservations:
          devices: !override
            - driver: nvidia
              count: !override 2
              capabilities: [gpu]
  web:
    image: nginx:1.27
    command: !reset null
"""


@pytest.mark.parametrize("use_libyaml", [True, False])
def test_merge_tags_are_read_with_their_lines(use_libyaml: bool) -> None:
    [doc] = load_documents(COMPOSE, "compose.yaml", use_libyaml=use_libyaml, compose_tags=True)
    trainer = doc["services"]["trainer"]
    assert "ports" not in trainer  # !reset: as if never written
    assert trainer["environment"] == {"CUDA_VISIBLE_DEVICES": "1"}
    assert trainer["environment"].line_of("CUDA_VISIBLE_DEVICES") == 6
    assert trainer["command"] == ["python", "train.py"]
    assert trainer["deploy"]["resources"]["reservations"]["devices"][0]["count"] == 2  # an int, as untagged
    assert "command" not in doc["services"]["web"]


def test_a_compose_file_with_merge_tags_is_linted() -> None:
    trainer, web = read_compose(COMPOSE, "compose.yaml")
    assert trainer.compose.gpu_requests[0].count == "2"
    assert trainer.gpu.cuda_visible_devices.value == "1" and trainer.gpu.cuda_visible_devices.provenance.line == 6
    assert web.cmd is None


@pytest.mark.parametrize("use_libyaml", [True, False])
def test_other_tags_and_manifests_are_still_refused(use_libyaml: bool) -> None:
    with pytest.raises(ConfigError, match="python/object"):
        load_documents(COMPOSE.replace("!override 2", "!!python/object:os.system 2"), "compose.yaml",
                       use_libyaml=use_libyaml, compose_tags=True)
    with pytest.raises(ConfigError, match="!custom"):
        load_documents(COMPOSE.replace("!reset []", "!custom []"), "compose.yaml", use_libyaml=use_libyaml,
                       compose_tags=True)
    manifest = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec: !reset {}\n"
    with pytest.raises(ConfigError, match="!reset"):
        load_documents(manifest, "pod.yaml", use_libyaml=use_libyaml)


def test_the_cli_reads_it_exit_1_not_2(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from imagelint.cli import app

    (tmp_path / "compose.yaml").write_text(COMPOSE)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["lint", "compose.yaml", "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 1, result.output  # IL301 on CUDA_VISIBLE_DEVICES=1: read, not refused
    assert "IL301" in result.output
