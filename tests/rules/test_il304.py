"""IL304: cases that fire and cases that must not."""

from __future__ import annotations

from tests.rules.helpers import facts, file_prov, of, run


def test_missing_video_capability():
    needs = (("video", file_prov("app/run.sh", line=2)),)
    [f] = of(run(facts({"NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}, needs_capabilities=needs)), "IL304")
    assert "'video'" in f.text and "/app/run.sh:2" in f.text


def test_empty_means_utility_compute():
    needs = (("video", file_prov("app/run.sh", line=2)),)
    [f] = of(run(facts({"NVIDIA_DRIVER_CAPABILITIES": ""}, needs_capabilities=needs)), "IL304")
    assert "empty" in f.text


def test_all_or_listed_capability_is_silent():
    needs = (("video", file_prov("app/run.sh", line=2)),)
    assert not of(run(facts({"NVIDIA_DRIVER_CAPABILITIES": "all"}, needs_capabilities=needs)), "IL304")
    assert not of(run(facts({"NVIDIA_DRIVER_CAPABILITIES": "compute,video,utility"}, needs_capabilities=needs)), "IL304")


def test_legacy_image_unset_gets_everything():
    needs = (("video", file_prov("app/run.sh", line=2)),)
    assert not of(run(facts({"CUDA_VERSION": "11.0.3"}, needs_capabilities=needs)), "IL304")
    # the same image with NVIDIA_REQUIRE_CUDA is not legacy: unset means utility,compute
    [f] = of(run(facts({"CUDA_VERSION": "11.0.3", "NVIDIA_REQUIRE_CUDA": "cuda>=11.0"}, needs_capabilities=needs)), "IL304")
    assert "unset" in f.text


def test_cuda_image_without_compute():
    [f] = of(run(facts({"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "NVIDIA_DRIVER_CAPABILITIES": "utility"})), "IL304")
    assert "'compute'" in f.text
