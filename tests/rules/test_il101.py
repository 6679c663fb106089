from __future__ import annotations

from imagelint.facts.model import CudaVersionEvidence

from tests.rules.helpers import matrix, compat_lib, facts, file_prov, of, official_env, pool, run, target


def _cuda(version: str, extra: dict | None = None):
    return facts({"CUDA_VERSION": version, **(extra or {})})


def test_error_names_exact_floor_when_driver_too_old():
    [f] = of(run(_cuda("12.4.1"), target(pool(driver="470.57.02"))), "IL101")
    assert f.severity == "error"
    assert "550.54.15" in f.message and "470.57.02" in f.message and f.pool == "p"
    assert f.extra["min_driver"] == "550.54.15"


def test_passes_on_driver_at_floor():
    assert not of(run(_cuda("12.4.1"), target(pool(driver="550.54.15"))), "IL101")


def test_minor_version_compat_is_a_warning_naming_what_can_fail():
    [f] = of(run(_cuda("12.2.2"), target(pool(driver="525.60.13"))), "IL101")
    assert f.severity == "warning"
    assert "minor-version compatibility" in f.message and "PTX" in f.message
    assert "535.104.05" in f.message  # the exact floor of 12.2.2


def test_other_major_gets_no_minor_version_compat():
    [f] = of(run(_cuda("12.2.2"), target(pool(driver="470.57.02"))), "IL101")
    assert f.severity == "error"


def test_minor_precision_evidence_uses_ga_floor():
    ev = CudaVersionEvidence("12.4.127", "libcudart", file_prov("usr/local/cuda/lib64/libcudart.so.12.4.127"), "minor", "cudart")
    [f] = of(run(facts({}, versions=(ev,)), target(pool(driver="470.57.02"))), "IL101")
    ga = matrix().driver_floor("12.4")
    assert not ga.exact and ga.release == "12.4.0"
    assert f.extra["min_driver"] == ga.min_driver and ga.min_driver in f.message


def test_highest_evidence_governs():
    ev = CudaVersionEvidence("12.4.1", "version.json", file_prov("usr/local/cuda-12.4/version.json"), "patch")
    f = facts({"CUDA_VERSION": "12.2.2"}, versions=(ev,))
    [finding] = of(run(f, target(pool(driver="535.104.05"))), "IL101")
    assert "12.4.1" in finding.message and finding.location.path == "usr/local/cuda-12.4/version.json"


_COMPAT = compat_lib("550.54.15", "12.4", (470, 525, 535))


def test_forward_compat_on_datacentre_gpu_passes_with_info():
    """The hook (toolkit >= 1.17.5) loads the compat libcuda on a T4 whose branch it lists."""
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_COMPAT,))
    [finding] = of(run(f, target(pool(driver="470.57.02", gpus=("T4",), runtime_mode="cdi", toolkit="1.17.5"))), "IL101")
    assert finding.severity == "info" and "forward-compat" in finding.message
    assert finding.extra["outcome"] == "forward-compat" and "enable-cuda-compat" in finding.message


def test_forward_compat_before_the_hook_is_not_loaded_in_cdi_mode():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_COMPAT,))
    [finding] = of(run(f, target(pool(driver="470.57.02", gpus=("T4",), runtime_mode="cdi", toolkit="1.17.3"))), "IL101")
    assert finding.severity == "error" and "insufficient" in finding.message
    assert "cdi mode before toolkit 1.17.5" in finding.message


def test_forward_compat_with_unknown_gpu_is_a_warning_not_a_pass():
    """Forward compatibility is data-centre only: a pool with no GPU model cannot be cleared."""
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_COMPAT,))
    [finding] = of(run(f, target(pool(driver="470.57.02", gpus=(), runtime_mode="cdi", toolkit="1.19.0"))), "IL101")
    assert finding.severity == "warning" and finding.extra["outcome"] == "unknown"
    assert "data-centre GPUs" in finding.message and "--gpu" in finding.remediation


def test_forward_compat_does_not_save_geforce():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_COMPAT,))
    [finding] = of(run(f, target(pool(driver="470.57.02", gpus=("RTX 3090",), runtime_mode="cdi", toolkit="1.19.0"))), "IL101")
    assert finding.severity == "error" and "804" in finding.message


def test_forward_compat_needs_listed_host_branch():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (535,)),))
    [finding] = of(run(f, target(pool(driver="470.57.02", gpus=("T4",), runtime_mode="cdi", toolkit="1.19.0"))), "IL101")
    assert finding.severity == "error" and "R470" in finding.message


def test_no_target_reports_minimum_driver_as_info():
    [f] = of(run(_cuda("12.8.1")), "IL101")
    assert f.severity == "info" and "570.124.06" in f.message and f.pool is None


def test_nothing_without_cuda_evidence():
    assert not of(run(facts({}), target(pool(driver="470.57.02"))), "IL101")


def test_official_images_clean_on_supporting_driver():
    for version, driver in (("12.2.2", "535.104.05"), ("12.4.1", "550.54.15"), ("12.8.1", "570.124.06")):
        result = run(facts(official_env(version)), target(pool(driver=driver, gpus=("H100",))))
        assert not [f for f in result.findings if f.severity == "error"], (version, result.findings)
