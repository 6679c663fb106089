"""libnvidia-container / toolkit quirks beyond the shared case file, and a fuzz test."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from imagelint.matrix.require import (
    Device,
    RequireEnvError,
    evaluate_env,
    evaluate_requirement,
    requirements_from_env,
    runtime_enforces_requirements,
)

T4 = Device("Tesla", "7.5")
A100 = Device("NVIDIA", "8.0")


def test_error_prints_only_the_first_space_separated_token() -> None:
    outcome = evaluate_requirement("driver>=999 brand=geforce", "535.104.05", "12.2", [T4])
    assert outcome.result == "fail"
    assert outcome.message == "unsatisfied condition: driver>=999"
    assert outcome.requirement == "driver>=999 brand=geforce"


def test_ret_carries_over_a_comma_only_term() -> None:
    # dsl.c keeps the previous factor's result when a later OR term holds no factors at all.
    assert evaluate_requirement("cuda>=13.0 ,,", "535.104.05", "12.2", [T4]).result == "fail"
    assert evaluate_requirement(",, cuda>=13.0", "535.104.05", "12.2", [T4]).result == "pass"


def test_leading_space_gives_an_empty_token_in_the_message() -> None:
    outcome = evaluate_requirement(" cuda>=13.0", "535.104.05", "12.2", [T4])
    assert outcome.message == "unsatisfied condition: "


@pytest.mark.parametrize("req", ["cuda=<12.0", "cuda<>12.0", "cuda>=>12", "=12", "cuda", "arch>=8.0=1"])
def test_invalid_operator_spans(req: str) -> None:
    assert evaluate_requirement(req, "535.104.05", "12.2", [A100]).message == "invalid expression"


def test_lone_operators_map_like_the_c_table() -> None:
    assert evaluate_requirement("cuda<13", "535.104.05", "12.2", [T4]).passed
    assert evaluate_requirement("cuda>12.1", "535.104.05", "12.2", [T4]).passed
    assert evaluate_requirement("cuda!12.1", "535.104.05", "12.2", [T4]).passed  # '!' reads as '!='


def test_long_false_factor_overflows_the_c_buffer() -> None:
    long_brand = "x" * 130
    assert evaluate_requirement(f"brand={long_brand}", None, None, [T4]).result == "error"
    assert evaluate_requirement(f"brand!={long_brand}", None, None, [T4]).result == "pass"  # true: not formatted


def test_unknown_driver_and_cuda_are_satisfied() -> None:
    assert evaluate_requirement("cuda>=99.0,driver>=999", None, None, [T4]).passed


def test_brand_is_ascii_case_insensitive_only() -> None:
    assert evaluate_requirement("BRAND=tesla", None, None, [T4]).passed
    assert not evaluate_requirement("brand=teſla", None, None, [T4]).passed  # no Unicode folding


def test_every_device_must_pass_and_the_failing_one_is_named() -> None:
    outcome = evaluate_requirement("arch>=8.0", None, None, [A100, T4])
    assert outcome.result == "fail" and outcome.device_index == 1


def test_evaluate_env_reports_device_and_requirement() -> None:
    env = {"NVIDIA_REQUIRE_CUDA": "cuda>=12.0", "NVIDIA_REQUIRE_ARCH": "arch>=8.0"}
    outcome = evaluate_env(env, "535.104.05", "12.2", [A100, T4])
    assert (outcome.result, outcome.requirement, outcome.device_index) == ("fail", "arch>=8.0", 1)


def test_disable_require_false_values_do_not_disable() -> None:
    for value in ("false", "0", "", "TRUE ", "on"):
        assert requirements_from_env({"NVIDIA_DISABLE_REQUIRE": value, "NVIDIA_REQUIRE_CUDA": "cuda>=1"}) == ["cuda>=1"]


def test_ngc_style_env_is_not_legacy() -> None:
    env = {"NVIDIA_REQUIRE_CUDA": "cuda>=9.0", "CUDA_VERSION": "12.2.2.009"}
    assert requirements_from_env(env) == ["cuda>=9.0"]
    with pytest.raises(RequireEnvError):
        requirements_from_env({"CUDA_VERSION": "12.2.2.009"})


def test_runtime_modes() -> None:
    assert runtime_enforces_requirements("legacy") and runtime_enforces_requirements("csv")
    assert not runtime_enforces_requirements("cdi") and not runtime_enforces_requirements("jit-cdi")
    with pytest.raises(ValueError):
        runtime_enforces_requirements("auto")
    outcome = evaluate_env({"NVIDIA_REQUIRE_CUDA": "cuda>=99.0"}, "535.104.05", "12.2", [T4], mode="jit-cdi")
    assert outcome.passed and outcome.enforced is False


def test_csv_uses_device_zero_and_case_sensitive_names() -> None:
    env = {"NVIDIA_REQUIRE_CUDA": "arch>=8.0"}
    assert evaluate_env(env, None, "12.2", [A100, T4], mode="csv").passed  # only device 0 is looked at
    assert evaluate_env(env, None, "12.2", [T4, A100], mode="csv").result == "fail"
    assert evaluate_env({"NVIDIA_REQUIRE_CUDA": "ARCH>=99.0"}, None, "12.2", [T4], mode="csv").passed


def test_csv_parses_everything_before_evaluating() -> None:
    # Go builds every constraint first: an invalid factor after a true OR term is still an error.
    env = {"NVIDIA_REQUIRE_CUDA": "cuda>=1.0 cuda>=x"}
    assert evaluate_env(env, None, "12.2", [T4], mode="csv").result == "error"
    assert evaluate_env(env, None, "12.2", [T4]).result == "pass"  # C short-circuits


_REQ_ALPHABET = string.ascii_letters + string.digits + " ,.<>=!_-+v" + "\t\0é"


@settings(max_examples=150, deadline=None)
@given(
    req=st.one_of(st.text(alphabet=_REQ_ALPHABET, max_size=60), st.text(max_size=40)),
    driver=st.one_of(st.none(), st.text(alphabet="0123456789.x", max_size=12)),
    cuda=st.one_of(st.none(), st.text(alphabet="0123456789.v-", max_size=8)),
    brand=st.one_of(st.none(), st.text(max_size=8)),
    arch=st.one_of(st.none(), st.text(alphabet="0123456789.", max_size=5)),
    mode=st.sampled_from(["legacy", "csv", "cdi", "jit-cdi"]),
)
def test_fuzz_never_raises(req: str, driver, cuda, brand, arch, mode: str) -> None:
    devices = [Device(brand, arch)]
    outcome = evaluate_requirement(req, driver, cuda, devices)
    assert outcome.result in ("pass", "fail", "error")
    env = {"NVIDIA_REQUIRE_CUDA": req, "CUDA_VERSION": cuda or ""}
    assert evaluate_env(env, driver, cuda, devices, mode=mode).result in ("pass", "fail", "error")


@settings(max_examples=100, deadline=None)
@given(env=st.dictionaries(st.sampled_from(["NVIDIA_REQUIRE_CUDA", "NVIDIA_REQUIRE_X", "CUDA_VERSION", "NVIDIA_DISABLE_REQUIRE", "NVIDIA_REQUIRE_JETPACK"]), st.text(max_size=20)))
def test_fuzz_requirements_from_env_raises_only_its_own_error(env: dict) -> None:
    try:
        requirements_from_env(env)
    except RequireEnvError:
        pass
