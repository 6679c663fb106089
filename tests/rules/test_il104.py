from __future__ import annotations

import pytest

from imagelint.facts.model import CudaVersionEvidence
from tests.rules.helpers import facts, file_prov, of, run


@pytest.mark.parametrize("value", ["1", "t", "T", "TRUE", "true", "True"])
def test_disable_require_true_spellings(value):
    [f] = of(run(facts({"NVIDIA_DISABLE_REQUIRE": value})), "IL104")
    assert f.severity == "warning" and f.location.key == "NVIDIA_DISABLE_REQUIRE"


@pytest.mark.parametrize("value", ["yes", "0", "false", "on", ""])
def test_disable_require_not_true_is_silent(value):
    assert not of(run(facts({"NVIDIA_DISABLE_REQUIRE": value})), "IL104")


def test_loose_requirement_on_newer_cuda():
    [f] = of(run(facts({"CUDA_VERSION": "12.2.2.009", "NVIDIA_REQUIRE_CUDA": "cuda>=9.0"})), "IL104")
    assert "cuda>=9.0" in f.message and f.severity == "warning"


def test_matching_requirement_is_silent():
    assert not of(run(facts({"CUDA_VERSION": "12.4.1", "NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand=tesla,driver>=470,driver<471"})), "IL104")


def test_plural_variable_is_info():
    [f] = of(run(facts({"NVIDIA_DISABLE_REQUIRES": "true"})), "IL104")
    assert f.severity == "info" and "read by no" in f.message


def test_fix_never_says_remove_disable_require_on_images_that_never_set_it():
    f = facts({"CUDA_VERSION": "12.2.2", "NVIDIA_REQUIRE_CUDA": "cuda>=9.0"})
    [finding] = of(run(f), "IL104")
    assert "NVIDIA_DISABLE_REQUIRE" not in finding.remediation and "cuda>=12.2" in finding.remediation


def test_an_image_whose_cuda_only_a_soname_names_is_held_to_its_major():
    # libcudart.so.12 alone says CUDA 12.x: cuda>=11.0 lets it start on drivers too old for
    # any 12.x; cuda>=12.0 asks for what it is. Neither makes the rule fail.
    path = "usr/local/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
    major = CudaVersionEvidence("12", "libcudart", file_prov(path), "major", "cudart")
    [f] = of(run(facts({"NVIDIA_REQUIRE_CUDA": "cuda>=11.0"}, versions=(major,))), "IL104")
    assert "cuda>=11.0" in f.message and "cuda>=12 " in f.remediation
    assert not of(run(facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.0"}, versions=(major,))), "IL104")
