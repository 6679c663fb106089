from __future__ import annotations

import pytest

from tests.rules.helpers import facts, of, run


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
