from __future__ import annotations

from tests.rules.helpers import compat_lib, facts, of, pool, run, target

# IL107's own findings: the rule selected alone (with IL101 selected too, the engine folds an IL107
# finding that states IL101's verdict into IL101's: tests/cli/test_said_once.py).

_LIB = compat_lib("550.54.15", "12.4", (470, 525, 535))


def test_compat_loaded_on_geforce_fails_with_804():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    [finding] = of(run(f, target(pool(driver="535.104.05", gpus=("RTX 4090",), runtime_mode="cdi", toolkit="1.18.0")), select="IL107"), "IL107")
    assert finding.severity == "error" and "804" in finding.text and "GeForce" in finding.text
    assert "remove the cuda-compat package" in finding.remediation and finding.pool == "p"


def test_compat_not_used_when_host_newer():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    [finding] = of(run(f, target(pool(driver="570.124.06", gpus=("H100",), runtime_mode="cdi", toolkit="1.18.0"))), "IL107")
    assert finding.severity == "info" and "not from a newer branch" in finding.text and "natively" in finding.text


def test_compat_not_used_on_a_branch_its_note_leaves_out():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (535,)),))
    [finding] = of(run(f, target(pool(driver="525.60.13", gpus=("T4",), runtime_mode="cdi", toolkit="1.19.0")), select="IL107"), "IL107")
    assert "R525" in finding.text and finding.severity == "warning"
    assert finding.extra["outcome"] == "minor-version-compat"


def test_compat_usable_is_silent():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    assert not of(run(f, target(pool(driver="535.104.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0"))), "IL107")


def test_no_target_no_finding():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib(),))
    assert not of(run(f), "IL107")


def test_unused_compat_where_the_image_needs_it_is_a_warning():
    f = facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_LIB,))
    [needed] = of(run(f, target(pool(driver="470.57.02", gpus=("T4",), runtime_mode="cdi", toolkit="1.17.4")), select="IL107"), "IL107")
    assert needed.severity == "warning" and "where the image needs it" in needed.text
    assert "toolkit >= 1.17.5" in needed.remediation


def test_a_compat_libcuda_the_images_own_loader_path_loads_is_never_said_not_loaded():
    """A CUDA 12.2 image with its 535.104.05 compat libcuda first on LD_LIBRARY_PATH, on driver
    535.129.03: the loader loads it whatever the toolkit does; it is of the host's branch, so it adds
    nothing — IL107 says that, not "is not loaded"."""
    from dataclasses import replace

    lib = replace(compat_lib("535.104.05", "12.2", (470, 525, 535)), on_loader_path=True)
    f = facts({"CUDA_VERSION": "12.2.2"}, driver_libraries=(lib,))
    for mode, toolkit in (("legacy", "1.17.4"), ("cdi", "1.17.3"), ("cdi", "1.18.0")):
        result = run(f, target(pool(driver="535.129.03", gpus=("A100",), runtime_mode=mode, toolkit=toolkit)))
        [finding] = of(result, "IL107")
        assert "not loaded" not in finding.text, (mode, toolkit, finding.text)
        assert finding.severity == "info" and "loaded by the image's own loader path" in finding.message
        assert not of(result, "IL101")  # the host driver runs CUDA 12.2.2 natively
