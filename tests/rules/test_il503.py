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
    assert why in f.message and "no CUDA device is usable" in f.message


def test_volta_on_r580_and_blackwell_on_r570_are_fine() -> None:
    for driver, gpu in (("580.95.05", "V100"), ("570.124.06", "B200"), ("595.71.05", "H100")):
        assert not [x for x in of(run(facts({}), target(pool(driver=driver, gpus=(gpu,)))), "IL503") if x.severity == "error"]


def test_il101_never_says_a_gpu_the_driver_cannot_drive_runs() -> None:
    result = run(facts({"CUDA_VERSION": "12.4.1"}), target(pool(driver="590.44.01", gpus=("V100",))))
    assert not of(result, "IL101")


def test_end_of_life_branch_is_a_warning() -> None:
    ctx = RuleContext(facts({}), target(pool(driver="535.104.05", gpus=("T4",))), matrix())
    [f] = list(il503.check(ctx, today=dt.date(2026, 12, 1)))
    assert f.severity == "warning" and "June 2026" in f.message
    assert not list(il503.check(ctx, today=dt.date(2026, 5, 1)))


def test_driver_newer_than_any_known_branch_is_could_not_judge() -> None:
    [f] = of(run(facts({}), target(pool(driver="999.1", gpus=("T4",)))), "IL503")
    assert f.severity == "warning" and "could not judge" in f.message and "R620" in f.message


def test_bare_branch_says_the_patch_level_is_unknown_and_is_judged_conservatively() -> None:
    result = run(facts({"CUDA_VERSION": "12.2.2"}), target(pool(driver="535", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0")))
    assert any("without a patch level" in f.message and f.severity == "info" for f in of(result, "IL503"))
    [il101] = of(result, "IL101")  # 12.2.2 needs 535.104.05: "some 535.x" may be older
    assert il101.extra["outcome"] == "minor-version-compat" and "patch level" in il101.message
