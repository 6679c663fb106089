from __future__ import annotations

from tests.rules.helpers import compat_lib, facts, of, pool, run, target


def test_compat_unusable_on_geforce():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (470, 525, 535)),))
    [finding] = of(run(f, target(pool(driver="535.104.05", gpus=("RTX 4090",)))), "IL107")
    assert "not a data-centre GPU" in finding.message and finding.pool == "p"


def test_compat_unusable_when_host_newer():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (470, 525, 535)),))
    [finding] = of(run(f, target(pool(driver="570.124.06", gpus=("H100",)))), "IL107")
    assert "not newer than the host driver" in finding.message


def test_compat_unusable_on_unlisted_branch():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (535,)),))
    [finding] = of(run(f, target(pool(driver="525.60.13", gpus=("T4",)))), "IL107")
    assert "R525" in finding.message


def test_compat_usable_is_silent():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (470, 525, 535)),))
    assert not of(run(f, target(pool(driver="535.104.05", gpus=("T4",)))), "IL107")


def test_no_target_no_finding():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib(),))
    assert not of(run(f), "IL107")


def test_unused_compat_is_info_when_host_runs_the_image_natively():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (470, 525, 535)),))
    [finding] = of(run(f, target(pool(driver="570.124.06", gpus=("H100",)))), "IL107")
    assert finding.severity == "info" and "natively" in finding.message
    [needed] = of(run(f, target(pool(driver="535.104.05", gpus=("RTX 4090",)))), "IL107")
    assert needed.severity == "warning" and "will fail" in needed.message
