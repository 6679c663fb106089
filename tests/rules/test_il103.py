from __future__ import annotations

from tests.rules.helpers import facts, of, run


def test_invalid_operator_fires():
    [f] = of(run(facts({"NVIDIA_REQUIRE_CUDA": "cuda==12.4"})), "IL103")
    assert "'cuda==12.4'" in f.text and "invalid expression" in f.text
    assert f.location.key == "NVIDIA_REQUIRE_CUDA"


def test_invalid_factor_in_later_or_term_is_found():
    [f] = of(run(facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand>=tesla"})), "IL103")
    assert "brand>=tesla" in f.text


def test_four_part_cuda_version_in_legacy_image():
    [f] = of(run(facts({"CUDA_VERSION": "12.2.2.009"})), "IL103")
    assert "12.2.2.009" in f.text and f.location.key == "CUDA_VERSION"


def test_ngc_style_four_part_with_require_cuda_is_fine():
    assert not of(run(facts({"CUDA_VERSION": "12.2.2.009", "NVIDIA_REQUIRE_CUDA": "cuda>=9.0"})), "IL103")


def test_valid_official_requirement_is_silent():
    env = {"NVIDIA_REQUIRE_CUDA": "cuda>=12.4 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=525,driver<526"}
    assert not of(run(facts(env)), "IL103")


def test_jetpack_requirements_are_ignored():
    assert not of(run(facts({"NVIDIA_REQUIRE_JETPACK": "csv==1"})), "IL103")
