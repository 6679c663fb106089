"""Forward compatibility as NVIDIA's own images carry it, cell by cell (``lint`` of a Dockerfile).

The expectations below are typed from NVIDIA's documents, each cited next to its cells; they
were written before the model was changed and are never taken from what imagelint prints.

* NGC framework containers carry the CUDA compat package and their entrypoint enables it:
  each release's "Driver Requirements" section lists the data-centre drivers the release runs
  on through forward compatibility (Triton Inference Server release notes,
  docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-YY-MM.html; every
  framework container of a monthly release shares its CUDA base and that paragraph).
* Forward compatibility is for data-centre GPUs (and NGC server-ready RTX, Jetson) only, never
  GeForce (docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html). On GeForce
  the image meets the host driver alone: CUDA 12.x minor-version compatibility from 525.60.13,
  11.x from 450.80.02, else "CUDA driver version is insufficient" (CUDA Toolkit release notes
  Table 2/3).
* Official nvidia/cuda images install cuda-compat-X-Y under /usr/local/cuda-X.Y/compat, off the
  loader path (gitlab.com/nvidia/container-images/cuda Dockerfiles: NV_CUDA_COMPAT_PACKAGE).
  Only the container toolkit loads it: legacy mode before 1.17.4, the enable-cuda-compat hook
  from 1.17.5 (NVIDIA Container Toolkit release notes 1.17.4 / 1.17.5); the forward-compatibility
  page lists the host branches each package supports (cuda-compat-13-1: R535, R570, R580;
  cuda-compat-13-0 and 12-9: R535, R570).
"""

from __future__ import annotations

import pytest

from imagelint.core.config import Config
from imagelint.core.engine import run_rules
from imagelint.static.dockerfile import parse_dockerfile
from imagelint.static.dockerfile_facts import dockerfile_facts
from imagelint.deploytarget import GpuSpec, NodePool, Target

from tests.rules.helpers import matrix

SEVERITY = {"forward-compat": "info", "minor-version-compat": "warning", "fails": "error", "depends": "warning",
            "unknown": "warning"}

NGC_2310 = "FROM nvcr.io/nvidia/pytorch:23.10-py3\nCMD [\"python\", \"train.py\"]\n"
NGC_2205 = "FROM nvcr.io/nvidia/tritonserver:22.05-py3\n"
NGC_2405 = "FROM nvcr.io/nvidia/pytorch:24.05-py3\n"
CUDA_1311 = "FROM nvidia/cuda:13.1.1-runtime-ubuntu24.04\nCMD [\"./app\"]\n"
CUDA_1300 = "FROM nvidia/cuda:13.0.0-runtime-ubuntu24.04\n"
CUDA_1291 = "FROM nvidia/cuda:12.9.1-base-ubuntu22.04\n"


def il101(dockerfile: str, driver: str, gpu: str | None = "A100", toolkit: str | None = None,
          mode: str | None = None):
    facts = dockerfile_facts(parse_dockerfile(dockerfile, "Dockerfile"), matrix())
    pool = NodePool("p", driver=driver, gpus=(GpuSpec(product=gpu),) if gpu else (), toolkit=toolkit,
                    runtime_mode=mode)
    result = run_rules(facts, Target(pools=(pool,), source="flags"), matrix(), Config(select=("IL101",)))
    return [f for f in result.findings if f.rule == "IL101"]


# (Dockerfile, driver, GPU, toolkit, mode) -> NVIDIA's verdict (None: runs natively, no finding)
CELLS = [
    # Triton 23.10 notes: "Release 23.10 is based on CUDA 12.2.2, which requires NVIDIA Driver release
    # 535 or later. However, if you are running on a data center GPU ... you can use NVIDIA driver
    # release 450.51 (or later R450), 470.57 (or later R470), 510.47 (or later R510), or 525.85
    # (or later R525), or 535.86 (or later R535)."
    (NGC_2310, "470.82.01", "A100", None, None, "forward-compat"),
    (NGC_2310, "450.80.02", "A100", None, None, "forward-compat"),
    (NGC_2310, "510.47.03", "T4", None, None, "forward-compat"),
    (NGC_2310, "525.85.12", "H100", None, None, "forward-compat"),
    (NGC_2310, "535.86.10", "A100", None, None, "forward-compat"),   # below 12.2.2's floor: compat, not minor
    (NGC_2310, "535.104.05", "A100", None, None, None),              # the floor of CUDA 12.2.2: native
    # "... users should upgrade from all R418, R440, R460, and R520 drivers"
    (NGC_2310, "460.32.03", "A100", None, None, "fails"),
    # GeForce: no forward compatibility; the host driver alone (12.x minor compat from 525.60.13)
    (NGC_2310, "470.82.01", "RTX 3090", None, None, "fails"),
    (NGC_2310, "525.85.12", "RTX 3090", None, None, "minor-version-compat"),
    # GPU unknown: runs on a data-centre GPU, fails on GeForce -> a warning that says so
    (NGC_2310, "470.82.01", None, None, None, "unknown"),
    # Triton 22.05 notes: CUDA 11.7 ... "450.51 (or later R450), 470.57 (or later R470), or 510.47 (or
    # later R510)"; R418/R440/R460 must upgrade (and 418 is below 11.x minor compat's 450.80.02).
    (NGC_2205, "450.51.06", "T4", None, None, "forward-compat"),
    (NGC_2205, "418.87.01", "T4", None, None, "fails"),
    # Triton 24.05 notes: CUDA 12.4 ... "470.57 (or later R470), 525.85 (or later R525), 535.86 (or
    # later R535), or 545.23 (or later R545)"; R450 is no longer listed (and below 525.60.13).
    (NGC_2405, "535.104.05", "A100", None, None, "forward-compat"),  # through the entrypoint, not minor compat
    (NGC_2405, "470.57.02", "A100", None, None, "forward-compat"),
    (NGC_2405, "450.80.02", "A100", None, None, "fails"),
    # Official nvidia/cuda 13.1.1 on R535: forward compatibility if the runtime loads cuda-compat-13-1
    # (page: R535 supported), else CUDA 13.1 on a CUDA 12.2 driver fails.
    (CUDA_1311, "535.104.05", "A100", None, None, "depends"),
    (CUDA_1311, "535.104.05", "A100", "1.17.5", "cdi", "forward-compat"),
    (CUDA_1311, "535.104.05", "A100", "1.18.0", "jit-cdi", "forward-compat"),
    (CUDA_1311, "535.104.05", "A100", "1.17.3", "cdi", "fails"),      # cdi before the hook never loads it
    (CUDA_1311, "535.104.05", "A100", "1.17.4", "legacy", "fails"),   # 1.17.4 stopped mounting compat libs
    (CUDA_1311, "535.104.05", "RTX 3090", "1.18.0", "jit-cdi", "fails"),  # loaded on GeForce: error 804
    # cuda-compat-13-0 supports R535 and R570.
    (CUDA_1300, "570.124.06", "H100", None, None, "depends"),
    (CUDA_1300, "570.124.06", "H100", "1.17.5", "legacy", "forward-compat"),
    # cuda-compat-12-9 supports R535 and R570; without it, R570 runs 12.9 by minor-version compatibility.
    (CUDA_1291, "570.124.06", "A100", "1.18.0", "jit-cdi", "forward-compat"),
    (CUDA_1291, "570.124.06", "A100", "1.17.3", "cdi", "minor-version-compat"),
]


@pytest.mark.parametrize(("dockerfile", "driver", "gpu", "toolkit", "mode", "want"), CELLS)
def test_nvidias_images_get_nvidias_verdict(dockerfile, driver, gpu, toolkit, mode, want) -> None:
    findings = il101(dockerfile, driver, gpu, toolkit, mode)
    if want is None:
        assert findings == []
        return
    [f] = findings
    assert (f.extra["outcome"], f.severity) == (want, SEVERITY[want]), f.text


def test_ngc_forward_compat_names_the_entrypoint_and_the_release_notes() -> None:
    [f] = il101(NGC_2310, "470.82.01")
    assert "entrypoint" in f.text and "23.10" in f.text and "470.57" in f.text
    assert "needs driver >= 535.104.05" not in f.message


def test_an_ngc_finding_says_whose_release_notes_it_cites_and_the_rows_own_source() -> None:
    """The matrix reads NGC release 24.05's driver list from Triton's release notes: a PyTorch
    finding says so, and its uncertain row is the PyTorch image's row, cited with that row's source."""
    [f] = il101(NGC_2405, "535.104.05", "T4")
    assert "Triton Inference Server 24.05's release notes" in f.text and "NGC pytorch 24.05" in f.text
    assert "NGC pytorch 24.05's release notes" not in f.text
    [row] = [d for d in f.details if d.startswith("rests on an uncertain matrix row")]
    assert "NGC pytorch 24.05's row" in row and "triton-inference-server" not in row
    # Triton's own image cites its own notes as its own.
    [t] = il101(NGC_2405.replace("pytorch", "tritonserver"), "535.104.05", "T4")
    assert "NGC tritonserver 24.05's release notes ('Driver Requirements')" in t.text


def test_ngc_on_geforce_meets_the_failure_it_really_meets() -> None:
    [f] = il101(NGC_2310, "470.82.01", "RTX 3090")
    assert f.extra["cases"][0]["failure"] == "driver-insufficient"
    assert "data-centre" in f.text


def test_an_unknown_gpu_says_which_way_each_class_goes() -> None:
    [f] = il101(NGC_2310, "470.82.01", None)
    assert "data-centre" in f.text and "GeForce" in f.text


def test_official_base_without_a_toolkit_is_a_conditional_warning_naming_the_hook() -> None:
    [f] = il101(CUDA_1311, "535.104.05")
    outcomes = {c["outcome"] for c in f.extra["cases"]}
    assert outcomes == {"forward-compat", "fails"}
    assert "1.17.5" in f.text and "enable-cuda-compat" in f.text


def test_an_ngc_image_whose_entrypoint_is_replaced_depends_on_who_enables_compat() -> None:
    [f] = il101(NGC_2310.replace("CMD", "ENTRYPOINT"), "470.82.01")
    assert f.extra["outcome"] == "depends" and f.severity == "warning"
    assert "entrypoint" in f.text


def _ngc_image(with_compat: bool):
    from imagelint.facts.model import CudaVersionEvidence, DriverLibrary

    from tests.rules.helpers import env_prov, facts, file_prov

    release = CudaVersionEvidence("23.10", "env", env_prov("NVIDIA_PYTORCH_VERSION"), "minor", "ngc-pytorch")
    path = "usr/local/cuda-12.2/compat/lib.real/libcuda.so.535.104.05"
    libs = (DriverLibrary("libcuda.so.535.104.05", path, "compat", "535.104.05", False, file_prov(path)),) if with_compat else ()
    return facts({"CUDA_VERSION": "12.2.2", "NVIDIA_REQUIRE_CUDA": "cuda>=9.0"}, versions=(release,), driver_libraries=libs)


def test_a_read_ngc_image_runs_forward_only_if_its_files_hold_the_compat_package() -> None:
    from tests.rules.helpers import of, pool, run, target

    on_470 = target(pool(driver="470.82.01", gpus=("A100",)))
    [f] = of(run(_ngc_image(True), on_470, select="IL101"), "IL101")
    assert (f.extra["outcome"], f.severity) == ("forward-compat", "info")
    [g] = of(run(_ngc_image(False), on_470, select="IL101"), "IL101")
    assert (g.extra["outcome"], g.severity) == ("fails", "error")


# A RUN that takes the compat package out builds an image without it (issue 37): the base no longer
# counts, whatever form the removal takes; a removal of another release's package, or one the build
# undoes by installing it again, changes nothing.
REMOVALS = [
    (CUDA_1311 + "RUN apt-get update && apt-get purge -y --auto-remove cuda-compat-13-1 && rm -rf /var/lib/apt/lists/*\n",
     "fails"),
    (CUDA_1311 + "RUN apt-get remove -y 'cuda-compat*'; apt-get clean\n", "fails"),
    (CUDA_1311 + "RUN rm -rf /usr/local/cuda/compat\n", "fails"),
    (CUDA_1311 + "RUN set -eux; \\\n    rm -rf /usr/local/cuda-13.1/compat\n", "fails"),
    ("FROM nvidia/cuda:13.1.1-runtime-ubi9\nRUN dnf remove -y cuda-compat-13-1 && dnf clean all\n", "fails"),
    ("FROM nvidia/cuda:13.1.1-runtime-ubi9\nRUN microdnf remove cuda-compat-13-1\n", "fails"),
    (CUDA_1311 + "RUN apt-get purge -y cuda-compat-12-4\n", "forward-compat"),
    (CUDA_1311 + "RUN rm -rf /usr/local/cuda-12.4/compat\n", "forward-compat"),
    (CUDA_1311 + "RUN apt-get purge -y cuda-compat-13-1 && apt-get install -y cuda-compat-13-1\n", "kept"),
    (CUDA_1311 + "RUN echo 'apt-get purge -y cuda-compat-13-1' > /notes.txt\n", "forward-compat"),
    ("FROM nvidia/cuda:13.1.1-runtime-ubuntu24.04 AS build\nRUN apt-get purge -y cuda-compat-13-1\n"
     "FROM nvidia/cuda:13.1.1-runtime-ubuntu24.04\nCOPY --from=build /app /app\n", "forward-compat"),
]


@pytest.mark.parametrize(("dockerfile", "want"), REMOVALS)
def test_a_run_that_removes_the_compat_package_leaves_an_image_without_it(dockerfile, want) -> None:
    [f] = il101(dockerfile, "535.104.05", "A100", "1.18.0", "jit-cdi")
    if want == "kept":  # installed again by the RUN: judged as the installed package, not as removed
        assert f.extra["outcome"] != "fails" and "removes the" not in f.text, f.text
        return
    assert f.extra["outcome"] == want, f.text
    if want == "fails":
        assert f.severity == "error" and "removes the forward-compatibility package" in f.text


def test_an_ngc_image_whose_compat_directory_is_removed_runs_on_the_host_driver_alone() -> None:
    [kept] = il101(NGC_2405, "470.57.02")
    assert kept.extra["outcome"] == "forward-compat"
    [f] = il101(NGC_2405 + "RUN rm -rf /usr/local/cuda/compat\n", "470.57.02")
    assert f.extra["outcome"] == "fails" and f.severity == "error"
    assert "NGC pytorch 24.05" in f.text and "removes the forward-compatibility package" in f.text


def test_installing_the_compat_package_on_a_plain_base_adds_it() -> None:
    plain = "FROM ubuntu:24.04\nENV CUDA_VERSION=13.1.1\nRUN apt-get update && apt-get install -y cuda-cudart-13-1\n"
    [without] = il101(plain, "535.104.05", "A100", "1.18.0", "jit-cdi")
    [with_it] = il101(plain.replace("cuda-cudart-13-1", "cuda-cudart-13-1 cuda-compat-13-1"), "535.104.05", "A100",
                      "1.18.0", "jit-cdi")
    assert without.extra["outcome"] == "fails" and with_it.extra["outcome"] != "fails"  # already so on main
