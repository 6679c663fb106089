"""IL301: cases that fire and cases that must not."""

from __future__ import annotations

import pytest

from imagelint.facts.model import GpuIndexSetting, Provenance

from tests.rules.helpers import facts, file_prov, of, run


@pytest.mark.parametrize("name,value", [("CUDA_VISIBLE_DEVICES", "1"), ("NVIDIA_VISIBLE_DEVICES", "0,1"),
                                        ("NVIDIA_VISIBLE_DEVICES", "GPU-8f6b2c1e-1234-5678-9abc-def012345678")])
def test_pinned_visible_devices_in_env(name, value):
    [f] = of(run(facts({name: value})), "IL301")
    assert f.severity == "error" and f.location.key == name and value in f.message


@pytest.mark.parametrize("value", ["all", "none", "void", ""])
def test_unpinned_nvidia_visible_devices_values_are_silent(value):
    assert not of(run(facts({"NVIDIA_VISIBLE_DEVICES": value})), "IL301")


def test_cuda_visible_devices_all_is_silent():
    assert not of(run(facts({"CUDA_VISIBLE_DEVICES": "all"})), "IL301")
    assert not of(run(facts({"CUDA_VISIBLE_DEVICES": "${CUDA_VISIBLE_DEVICES:-0}"})), "IL301")


@pytest.mark.parametrize("value", ["-1", "", "NoDevFiles", "none", "void", "-1,0"])
def test_cuda_visible_devices_that_hides_every_gpu_is_an_info_not_a_pin(value):
    [f] = of(run(facts({"CUDA_VISIBLE_DEVICES": value})), "IL301")
    assert f.severity == "info" and "hides every GPU" in f.message and "CPU-only" in f.message
    assert "selects" not in f.message and f.extra.get("hides_all") is True


def test_cuda_visible_devices_hiding_the_gpus_a_compose_service_reserves_is_a_warning(tmp_path):
    from imagelint.static.compose import read_compose

    text = (
        "services:\n  worker:\n    image: python:3.12\n    environment:\n      CUDA_VISIBLE_DEVICES: \"-1\"\n"
        "    deploy:\n      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: 1\n              capabilities: [gpu]\n"
    )
    [svc] = read_compose(text, "compose.yaml")
    [f] = of(run(svc), "IL301")
    assert f.severity == "warning" and "allocated and unused" in f.message and f.location.line == 5


def test_cuda_reads_the_list_up_to_the_first_entry_that_is_no_device():
    [f] = of(run(facts({"CUDA_VISIBLE_DEVICES": "0,-1,1"})), "IL301")
    assert f.severity == "info" and "=0 selects the first GPU" in f.message.replace("CUDA_VISIBLE_DEVICES", "")


def test_pinned_in_script_the_entrypoint_runs():
    s = GpuIndexSetting("cuda-visible-devices", "2", (2,), "export CUDA_VISIBLE_DEVICES=2", file_prov("app/run.sh", line=4))
    [f] = of(run(facts({}, index_settings=(s,))), "IL301")
    assert f.location.line == 4


def test_pinned_in_dockerfile_env():
    s = GpuIndexSetting("nvidia-visible-devices", "1", (1,), "ENV NVIDIA_VISIBLE_DEVICES=1",
                        Provenance("dockerfile", source="Dockerfile", line=7))
    [f] = of(run(facts({}, index_settings=(s,), kind="dockerfile", platforms=())), "IL301")
    assert f.location.describe() == "Dockerfile:7"
