from __future__ import annotations

from tests.rules.helpers import compat_lib, facts, of, pool, run, target

_LIB = compat_lib("550.54.15", "12.4", (470, 525, 535))


def test_compat_loaded_on_geforce_fails_with_804():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    [finding] = of(run(f, target(pool(driver="535.104.05", gpus=("RTX 4090",), runtime_mode="cdi", toolkit="1.18.0"))), "IL107")
    assert finding.severity == "error" and "804" in finding.message and "GeForce" in finding.message
    assert "remove the cuda-compat package" in finding.remediation and finding.pool == "p"


def test_compat_not_used_when_host_newer():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    [finding] = of(run(f, target(pool(driver="570.124.06", gpus=("H100",), runtime_mode="cdi", toolkit="1.18.0"))), "IL107")
    assert finding.severity == "info" and "not from a newer branch" in finding.message and "natively" in finding.message


def test_compat_not_used_on_a_branch_its_note_leaves_out():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (535,)),))
    [finding] = of(run(f, target(pool(driver="525.60.13", gpus=("T4",), runtime_mode="cdi", toolkit="1.19.0"))), "IL107")
    assert "R525" in finding.message and finding.severity == "warning"
    assert finding.extra["outcome"] == "minor-version-compat"


def test_compat_usable_is_silent():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    assert not of(run(f, target(pool(driver="535.104.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0"))), "IL107")


def test_no_target_no_finding():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib(),))
    assert not of(run(f), "IL107")


def test_unused_compat_where_the_image_needs_it_is_a_warning():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    [needed] = of(run(f, target(pool(driver="470.57.02", gpus=("T4",), runtime_mode="cdi", toolkit="1.17.4"))), "IL107")
    assert needed.severity == "warning" and "where the image needs it" in needed.message
    assert "toolkit >= 1.17.5" in needed.remediation
