from __future__ import annotations

from tests.rules.helpers import facts, of, official_env, pool, run, target

CLI_TEXT = ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver "
            "to a newer version, or use an earlier cuda container")


def test_legacy_mode_refuses_to_start_with_exact_message():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "CUDA_VERSION": "12.4.1"})
    [finding] = of(run(f, target(pool(driver="535.104.05", runtime_mode="legacy"))), "IL102")
    assert CLI_TEXT in finding.message and "refuses to start" in finding.message
    assert "cdi" not in finding.message


def test_jit_cdi_mode_starts_and_fails_later():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4"})
    [finding] = of(run(f, target(pool(driver="535.104.05", runtime_mode="jit-cdi"))), "IL102")
    assert "starts" in finding.message and "refuses" not in finding.message


def test_mode_from_toolkit_version_via_matrix():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4"})
    [old] = of(run(f, target(pool(driver="535.104.05", toolkit="1.14.0"))), "IL102")
    [new] = of(run(f, target(pool(driver="535.104.05", toolkit="1.18.0"))), "IL102")
    assert "refuses" in old.message and "cdi" not in old.message.split("refuses")[0]
    assert "refuses" not in new.message and "jit-cdi" in new.message


def test_unknown_mode_says_both():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4"})
    [finding] = of(run(f, target(pool(driver="535.104.05"))), "IL102")
    assert "legacy" in finding.message and "cdi" in finding.message


def test_brand_terms_are_evaluated_per_gpu_model():
    # Official 12.4.1: 470 drivers pass only through the brand=...,driver>=470 terms (forward compat).
    env = official_env("12.4.1")
    t4 = run(facts(env), target(pool(driver="470.57.02", gpus=("T4",), runtime_mode="legacy")))
    assert not of(t4, "IL102")
    odd = run(facts(env), target(pool(driver="510.47.03", gpus=("T4",), runtime_mode="legacy")))
    assert of(odd, "IL102")


def test_satisfied_requirement_is_silent():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.2"})
    assert not of(run(f, target(pool(driver="535.104.05"))), "IL102")


def test_no_target_no_finding():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4"})
    result = run(f)
    assert not of(result, "IL102") and "IL102" in result.skipped_rules


def test_disabled_requirement_is_not_reported_here():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "NVIDIA_DISABLE_REQUIRE": "true"})
    assert not of(run(f, target(pool(driver="470.57.02"))), "IL102")


def test_every_failing_variable_is_reported_at_its_own_variable_with_its_own_fix():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "NVIDIA_REQUIRE_ARCH": "arch>=9.0", "CUDA_VERSION": "12.4.1"})
    found = of(run(f, target(pool(driver="535.104.05", gpus=("T4",), runtime_mode="legacy"))), "IL102")
    by_var = {x.extra["variable"]: x for x in found}
    assert set(by_var) == {"NVIDIA_REQUIRE_CUDA", "NVIDIA_REQUIRE_ARCH"}
    arch = by_var["NVIDIA_REQUIRE_ARCH"]
    assert arch.location.key == "NVIDIA_REQUIRE_ARCH" and "compute capability" in arch.remediation
    assert "driver" not in arch.remediation.split(",")[0]
    assert by_var["NVIDIA_REQUIRE_CUDA"].location.key == "NVIDIA_REQUIRE_CUDA"


def test_cdi_note_renders_the_compatibility_verdict():
    f = facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4", "CUDA_VERSION": "12.4.1"})
    [finding] = of(run(f, target(pool(driver="535.104.05", runtime_mode="cdi", toolkit="1.18.0"))), "IL102")
    assert "minor-version compatibility" in finding.message
