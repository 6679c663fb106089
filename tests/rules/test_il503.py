from __future__ import annotations

import datetime as dt

import pytest

from imagelint.rules import driver_branch_unsupported as il503
from imagelint.rules.base import RuleContext

from tests.rules.helpers import facts, matrix, of, pool, run, target


@pytest.mark.parametrize(("driver", "gpu", "why"), [
    ("590.44.01", "V100", "R580 is the last branch"),
    ("550.54.15", "B200", "need branch R570"),
    ("565.57.01", "RTX 5090", "need branch R570"),
])
def test_driver_that_cannot_drive_the_gpu_is_an_error(driver: str, gpu: str, why: str) -> None:
    [f] = [x for x in of(run(facts({}), target(pool(driver=driver, gpus=(gpu,)))), "IL503") if x.severity == "error"]
    assert why in f.text and "no CUDA device is usable" in f.text


def test_volta_on_r580_and_blackwell_on_r570_are_fine() -> None:
    for driver, gpu in (("580.95.05", "V100"), ("570.124.06", "B200"), ("595.71.05", "H100")):
        assert not [x for x in of(run(facts({}), target(pool(driver=driver, gpus=(gpu,)))), "IL503") if x.severity == "error"]


def test_il101_never_says_a_gpu_the_driver_cannot_drive_runs() -> None:
    result = run(facts({"CUDA_VERSION": "12.4.1"}), target(pool(driver="590.44.01", gpus=("V100",))))
    assert not of(result, "IL101")


def test_end_of_life_branch_is_a_warning() -> None:
    ctx = RuleContext(facts({}), target(pool(driver="535.104.05", gpus=("T4",))), matrix())
    [f] = list(il503.check(ctx, today=dt.date(2026, 12, 1)))
    assert f.severity == "warning" and "June 2026" in f.text
    assert not list(il503.check(ctx, today=dt.date(2026, 5, 1)))


def test_driver_newer_than_any_known_branch_is_could_not_judge() -> None:
    [f] = of(run(facts({}), target(pool(driver="999.1", gpus=("T4",)))), "IL503")
    assert f.severity == "info" and "could not judge" in f.text and "R620" in f.text


def test_bare_branch_says_the_patch_level_is_unknown_and_is_judged_conservatively() -> None:
    result = run(facts({"CUDA_VERSION": "12.2.2"}), target(pool(driver="535", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0")))
    assert any("without a patch level" in f.text and f.severity == "info" for f in of(result, "IL503"))
    [il101] = of(result, "IL101")  # 12.2.2 needs 535.104.05: "some 535.x" may be older
    assert il101.extra["outcome"] == "minor-version-compat" and "patch level" in il101.text


# --- one ladder, judged on the run's date (NVIDIA's "Supported Drivers and CUDA Toolkit Versions",
# 620 page: R580 LTSB until June 2028, R595 PB until March 2027, R620 LTSB until September 2029;
# R535 ended June 2026, R570 February 2026, R610 August 2026; "all other previous driver branches
# not listed ... are end of life") ------------------------------------------------------------

DEC_2026 = dt.date(2026, 12, 2)
SUPPORTED_DEC_2026 = {580, 595, 620}


def il503_on(driver: str, gpu: str = "H100", day: dt.date = DEC_2026):
    ctx = RuleContext(facts({}), target(pool(driver=driver, gpus=(gpu,))), matrix(), day)
    return list(il503.check(ctx))


@pytest.mark.parametrize("driver", ["525.147.05", "535.104.05", "550.163.01", "570.124.06", "590.48.01", "610.57.04"])
def test_every_branch_past_end_of_life_gets_the_same_warning(driver: str) -> None:
    [f] = il503_on(driver)
    assert f.severity == "warning" and "end of life" in f.text


@pytest.mark.parametrize("driver", ["580.95.05", "595.71.05", "620.70.06"])
def test_a_branch_supported_today_gets_nothing(driver: str) -> None:
    assert il503_on(driver) == []


def test_advice_names_only_branches_supported_on_the_run_date() -> None:
    [f] = il503_on("535.104.05")
    assert set(f.extra["supported"]) == SUPPORTED_DEC_2026
    for gone in ("R535", "R570", "R610"):
        assert gone not in f.remediation
    # before R535's end of life it is not advice-worthy at all, and R570 is already past it
    assert il503_on("535.104.05", day=dt.date(2026, 5, 1)) == []
    [f570] = il503_on("570.124.06", day=dt.date(2026, 5, 1))
    assert 535 in f570.extra["supported"] and 610 in f570.extra["supported"]


def test_advice_keeps_to_branches_that_drive_the_pools_gpus() -> None:
    # Volta ends with R580 (CUDA Toolkit, Driver, and Architecture Matrix)
    [f] = il503_on("535.104.05", gpu="V100")
    assert f.extra["supported"] == [580]


def test_the_rule_list_shows_the_real_default_severity() -> None:
    from imagelint.rules import RULES

    assert RULES["IL503"].severity == "warning"


def test_lint_says_a_pool_finding_once_per_run(tmp_path) -> None:
    from typer.testing import CliRunner

    from imagelint.cli import app

    for n in range(3):
        (tmp_path / f"Dockerfile.{n}").write_text("FROM ubuntu:24.04\n")
    result = CliRunner().invoke(app, ["lint", *(str(tmp_path / f"Dockerfile.{n}") for n in range(3)),
                                      "--driver", "550.163.01", "--format", "json"])
    import json

    doc = json.loads(result.stdout)
    assert sum(f["rule"] == "IL503" for r in doc["results"] for f in r["findings"]) == 1
