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
def test_unpinned_values_are_silent(value):
    assert not of(run(facts({"NVIDIA_VISIBLE_DEVICES": value, "CUDA_VISIBLE_DEVICES": value})), "IL301")


def test_pinned_in_script_the_entrypoint_runs():
    s = GpuIndexSetting("cuda-visible-devices", "2", (2,), "export CUDA_VISIBLE_DEVICES=2", file_prov("app/run.sh", line=4))
    [f] = of(run(facts({}, index_settings=(s,))), "IL301")
    assert f.location.line == 4


def test_pinned_in_dockerfile_env():
    s = GpuIndexSetting("nvidia-visible-devices", "1", (1,), "ENV NVIDIA_VISIBLE_DEVICES=1",
                        Provenance("dockerfile", source="Dockerfile", line=7))
    [f] = of(run(facts({}, index_settings=(s,), kind="dockerfile", platforms=())), "IL301")
    assert f.location.describe() == "Dockerfile:7"
