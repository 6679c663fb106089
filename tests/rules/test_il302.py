"""IL302: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.facts.model import GpuIndexSetting

from tests.rules.helpers import facts, file_prov, of, run


def _gpu_id(value: int, referenced: bool = True) -> GpuIndexSetting:
    return GpuIndexSetting("gpu-id", str(value), (value,), f"gpu-id={value}", file_prov("app/config.txt", line=3), referenced)


def test_gpu_index_one_is_error():
    [f] = of(run(facts({}, index_settings=(_gpu_id(1),))), "IL302")
    assert f.severity == "error" and "/app/config.txt:3" in f.location.describe()


def test_gpu_index_zero_is_info():
    [f] = of(run(facts({}, index_settings=(_gpu_id(0),))), "IL302")
    assert f.severity == "info"


def test_unreferenced_config_is_info():
    [f] = of(run(facts({}, index_settings=(_gpu_id(1, referenced=False),))), "IL302")
    assert f.severity == "info" and "not reached" in f.message


def test_visible_devices_settings_are_not_gpu_index_findings():
    s = GpuIndexSetting("cuda-visible-devices", "1", (1,), "CUDA_VISIBLE_DEVICES=1", file_prov("app/run.sh", line=2))
    assert not of(run(facts({}, index_settings=(s,))), "IL302")
