"""The matrix current to December 2026 (issue 37): each fact below is typed from the source its
row cites, before the rows were written, and the row says where it comes from.

* CUDA 13.0.3 / 12.9.2 re-releases: NVIDIA's redistributable manifests (redistrib_13.0.3.json:
  2026-04-13, cudart 13.0.96, bundled driver 580.126.20; redistrib_12.9.2.json: 2026-05-14,
  cudart 12.9.79, bundled driver 575.57.08). 13.4.3: Triton 26.10's notes ("based on CUDA 13.4.3.001").
* CUDA 13.4's floor: 615.65.02, the driver CUDA 13.4.1 ships in NGC 26.08's environment.
* cuda-compat-13-5 for the host branches before R620; R620 refuses the older 13.x packages.
* NGC 26.09 (Triton notes: CUDA 13.4.1, "requires the NVIDIA Driver release. Please see CUDA
  Compatibility", "supports CUDA compute capability 7.5 and later"); PyTorch 26.07 (its image
  history: CUDA 13.3.1.008, CUDA_DRIVER_VERSION 610.43.02, CUDA_ARCH_LIST from 7.5).
* Container toolkit 1.20.0 reads libcuda's ELF metadata on every path (its GitHub release).
* CVE-2026-24260: NVIDIA's CVE record lists toolkit <= 1.19.0 and GPU Operator <= 26.3.1.
* developer.nvidia.com/cuda-gpus: RTX PRO 4500 Blackwell Server Edition 12.0 (data centre),
  Jetson T4000 11.0; Rubin 10.7 (cuBLASDx 0.8.0 / cuRANDDx 0.2.5 release notes: SM107).
"""

from __future__ import annotations

import json

import pytest

from imagelint.matrix import load_matrix
from tests.cli.test_check import imagelint


@pytest.fixture(scope="module")
def m():
    return load_matrix()


@pytest.mark.parametrize(("version", "floor", "uncertain", "cited"), [
    ("13.0.3", "580.95.05", True, "redistrib_13.0.3.json"),
    ("12.9.2", "575.57.08", False, "redistrib_12.9.2.json"),
    ("13.4.3", "615.65.02", True, "rel-26-10"),
])
def test_the_re_releases_have_rows_with_their_manifest(m, version, floor, uncertain, cited) -> None:
    release = m.cuda_release(version)
    assert release is not None, version
    assert (release.min_driver, release.uncertain) == (floor, uncertain)
    assert cited in release.source


def test_the_13_4_floor_is_a_driver_not_a_bare_branch(m) -> None:
    for version in ("13.4.1", "13.4.2", "13.4.3"):
        floor = m.driver_floor(version)
        assert floor.min_driver == "615.65.02" and floor.uncertain, version
        assert "26.08" in floor.source


def test_cuda_compat_13_5_and_r620_in_the_13x_rows(m) -> None:
    fc = m.forward_compat("13.5")
    assert fc is not None and fc.package == "cuda-compat-13-5" and fc.uncertain
    assert 535 in fc.host_branches and 615 in fc.host_branches and fc.not_needed_branches == (620,)
    for cuda in ("13.0", "13.1", "13.2", "13.3", "13.4"):
        assert 620 in m.forward_compat(cuda).incompatible_branches, cuda
    assert (m.driver_branch_info("620.10.01").max_cuda, m.driver_branch_info("610.43.02").max_cuda) == ("13.5", "13.3")


def test_ngc_26_09_and_pytorch_26_07_rows(m) -> None:
    triton = m.ngc_image("nvcr.io/nvidia/tritonserver", "26.09-py3")
    assert (triton.cuda, triton.defers_to_forward_compat, triton.min_compute_capability) == ("13.4.1", True, "7.5")
    assert "rel-26-09" in triton.compute_capability_source and not triton.uncertain
    pytorch = m.ngc_image("nvcr.io/nvidia/pytorch", "26.07-py3")
    assert (pytorch.cuda, pytorch.defers_to_forward_compat) == ("13.3.1", True)
    [row] = [r for r in m.rows("ngc_releases") if r["release"] == "26.07"]
    assert "nvcr.io/nvidia/pytorch" in row["repositories"] and "610.43.02" in row["note"]


@pytest.mark.parametrize("ref", ["nvcr.io/nvidia/jax:26.04-py3", "nvcr.io/nvidia/nemo:26.04", "nvcr.io/nvidia/nemo:26.02.00",
                                 "nvcr.io/nvidia/pytorch:26.05-py3"])
def test_jax_nemo_and_pytorch_26xx_are_known_and_say_they_are_assumed(m, ref) -> None:
    repository, tag = ref.rsplit(":", 1)
    ngc = m.ngc_image(repository, tag)
    assert ngc is not None and ngc.cuda.startswith("13.") and ngc.uncertain
    assert ngc.min_compute_capability == "7.5" and ngc.defers_to_forward_compat in (True, False)


def test_every_26xx_release_has_its_compute_capability_floor(m) -> None:
    rows = [r for r in m.rows("ngc_releases") if r["release"].startswith("26.")]
    assert {r["release"] for r in rows} >= {"26.02", "26.03", "26.04", "26.05", "26.06", "26.07", "26.08", "26.09", "26.10"}
    assert all(r.get("min_compute_capability") == "7.5" and r.get("compute_capability_source") for r in rows)


def test_toolkit_1_20_checks_the_compat_library_on_every_path(m) -> None:
    assert m.toolkit_has("1.20.0", "compat-elf-check-always") and not m.toolkit_has("1.19.1", "compat-elf-check-always")
    from tests.compat.test_forward_compat_images import il101

    image = "FROM nvidia/cuda:12.9.1-base-ubuntu22.04\n"  # cuda-compat-12-9: R470/R525/R535/R545/R570, not R560
    [before] = il101(image, "560.35.03", "A100", "1.19.0", "legacy")
    [after] = il101(image, "560.35.03", "A100", "1.20.0", "legacy")
    # legacy cuda-compat-mode=ldconfig loaded it by major (error 803); 1.20.0 reads the note and leaves it
    assert (before.extra["outcome"], before.extra["cases"][0]["failure"]) == ("fails", "system-driver-mismatch")
    assert (after.extra["outcome"], after.severity) == ("minor-version-compat", "warning")


def test_cve_2026_24260_marks_the_affected_gpu_operator_releases(m) -> None:
    for version in ("26.3.0", "26.3.1", "25.10.0"):
        assert m.gpu_operator(version).affected_by == ("CVE-2026-24260",), version
    for version in ("26.3.2", "26.7.0"):
        assert m.gpu_operator(version).affected_by == (), version
    fixed = next(r for r in m.rows("toolkit_releases") if r["version"] == "1.19.1")
    assert "cve.org/CVERecord?id=CVE-2026-24260" in fixed["note"] and "26.3.1" in fixed["note"]


def test_new_gpus_are_their_own_rows(m) -> None:
    pro = m.gpu("NVIDIA-RTX-PRO-4500-Blackwell-Server-Edition")
    assert (pro.name, pro.compute_capability, pro.kind) == ("NVIDIA RTX PRO 4500 Blackwell Server Edition", "12.0", "datacenter")
    t4000 = m.gpu("Jetson T4000")
    assert (t4000.name, t4000.compute_capability, t4000.kind) == ("Jetson T4000", "11.0", "jetson")
    assert m.gpu("Jetson T5000").name == "Jetson T5000"
    rubin = m.gpu("Rubin")
    assert (rubin.compute_capability, rubin.family) == ("10.7", "rubin")


def test_the_commands_show_them() -> None:
    drivers = imagelint("drivers", "620")
    assert drivers.returncode == 0 and "13.5" in drivers.stdout
    gpus = imagelint("gpus", "rubin")
    assert gpus.returncode == 0 and "10.7" in gpus.stdout
    shown = imagelint("matrix", "show", "--section", "cuda_releases", "--format", "json")
    versions = {r["version"] for r in json.loads(shown.stdout)["cuda_releases"]}
    assert {"13.0.3", "12.9.2", "13.4.3"} <= versions


def test_the_dra_driver_0_5_0_row_has_its_release_date_and_says_what_was_not_read(m) -> None:
    """kubernetes-sigs/dra-driver-nvidia-gpu pull 1367 ("Bump versions for the release of v0.5.0",
    for release issue 1365) was approved and merged on 2026-08-19; the standalone chart's
    kubeVersion at that tag was not read, and the row says so instead of guessing."""
    [row] = [r for r in m.rows("dra_driver_releases") if r["version"] == "0.5.0"]
    assert row["released"] == "2026-08-19"
    assert "pull/1367" in row["source"]
    assert "kubeVersion at v0.5.0 was not read" in row["note"]
