"""The planner is a diff of findings (issue 38): an image that bundles ``libnvidia-ml.so.535.104.05``
and puts its 535 forward-compat libcuda first on ``LD_LIBRARY_PATH`` works on pools that run exactly
535.104.05 today, and breaks on 580 (error 803, and the bundled library no longer matches the kernel
module). Every new error the plan brings is a break, counted and shown with what to do, in text,
JSON (docs/audit-schema.json) and SARIF."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from examples.synth_elf import build_elf, compat_libcuda
from tests.cli.test_check import cuda_runtime_layer, imagelint
from tests.rules.helpers import official_env
from tests.support.imagebuilder import File, ImageSpec, Symlink, write_oci_layout

ROOT = Path(__file__).resolve().parents[2]
POOL = '[[pool]]\nname = "a100"\ndriver = "{driver}"\ngpus = ["A100"]\narch = "amd64"\n'


def _bundling_image() -> object:
    """An official CUDA 12.2.2 runtime image plus what a hand-rolled Dockerfile adds: the 535
    cuda-compat libcuda first on LD_LIBRARY_PATH, and a copy of the host's NVML library."""
    env = official_env("12.2.2")
    env["LD_LIBRARY_PATH"] = "/usr/local/cuda/compat:/usr/local/nvidia/lib:/usr/local/nvidia/lib64"
    env["PATH"] = "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    added = [
        File("usr/local/cuda-12.2/compat/libcuda.so.535.104.05",
             compat_libcuda("12.2", [470, 525, 535], [1, 2, 7, 8, 9, 10, 11, 12, 13, 14]), 0o755),
        Symlink("usr/local/cuda-12.2/compat/libcuda.so.1", "libcuda.so.535.104.05"),
        File("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.104.05", build_elf(), 0o755),
        Symlink("usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml.so.535.104.05"),
    ]
    return ImageSpec(layers=[cuda_runtime_layer("12.2.2", "12.2.140"), added], env=env).build()


@pytest.fixture(scope="module")
def case(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("plan-findings")
    write_oci_layout(work / "bundling", {"latest": _bundling_image()})
    (work / "images.txt").write_text(f"oci-dir:{work / 'bundling'}\n")
    for name, driver in (("now", "535.104.05"), ("older-patch", "535.129.03"), ("next", "580.95.05")):
        (work / f"{name}.toml").write_text(POOL.format(driver=driver))
    return work


def _plan(case: Path, now: str = "now", *args: str):
    return imagelint("audit", "--images", str(case / "images.txt"), "--target-file", str(case / f"{now}.toml"),
                     "--plan", str(case / "next.toml"), *args)


def test_the_upgrade_that_breaks_a_bundled_driver_library_is_counted_as_a_break(case: Path) -> None:
    out = _plan(case)
    assert out.returncode == 1, out.stdout + out.stderr
    summary = out.stdout.splitlines()[1]
    assert "0 failing today" in summary and "1 break," in summary and "0 still failing" in summary, out.stdout
    assert "warn → fail" in out.stdout
    # Each break says what to do: the fix check gives, each fix once.
    assert "because: IL201" in out.stdout and "fix IL201: Remove driver packages" in out.stdout
    assert any(line.strip().startswith("fix ") and "LD_LIBRARY_PATH" in line for line in out.stdout.splitlines())


def test_a_new_error_on_a_workload_that_fails_today_is_a_break(case: Path) -> None:
    """On 535.129.03 the bundled 535.104.05 NVML already fails (IL201); the plan adds error 803."""
    out = _plan(case, "older-patch", "--format", "json")
    assert out.returncode == 1, out.stderr
    plan = json.loads(out.stdout)
    assert plan["summary"] == {"breaks": 1, "fixed": 0, "still-failing": 0, "unchanged": 0, "failing-today": 1}
    [change] = plan["changes"]
    assert (change["before"], change["after"], change["change"]) == ("fail", "fail", "breaks")
    assert change["reasons"] and not any(r.startswith("IL201:") for r in change["reasons"])  # only what is new
    assert any("803" in r for r in change["reasons"])
    assert change["fixes"] and all(": " in f for f in change["fixes"])
    text = _plan(case, "older-patch")
    assert "1 failing today; with the plan: 1 break" in text.stdout and "fail → fail with a new error" in text.stdout


def test_the_plan_as_json_validates_against_the_published_audit_schema(case: Path) -> None:
    out = _plan(case, "now", "--format", "json")
    schema = json.loads((ROOT / "docs" / "audit-schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    plan = json.loads(out.stdout)
    jsonschema.validate(plan, schema)
    findings = [f for c in plan["proposed"]["checks"] for f in c["findings"]]
    assert any(f["rule"] == "IL201" and f["fix"] for f in findings)
    with pytest.raises(jsonschema.ValidationError):  # the schema still says something: a plan without its diff fails
        jsonschema.validate({k: v for k, v in plan.items() if k != "changes"}, schema)


def test_the_plan_as_sarif_marks_what_the_upgrade_brings_as_new(case: Path) -> None:
    out = _plan(case, "now", "--format", "sarif")
    assert out.returncode == 1, out.stderr
    sarif = json.loads(out.stdout)
    jsonschema.validate(sarif, json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text()))
    run = sarif["runs"][0]
    states = {(r["ruleId"], r["baselineState"]) for r in run["results"]}
    assert ("IL101", "new") in states  # error 803 on 580: nothing of IL101 today
    assert ("IL201", "updated") in states  # a warning today, an error on 580
    assert all(r["properties"]["change"] == "breaks" for r in run["results"])
    assert run["properties"]["plan"]["breaks"] == 1 and run["properties"]["baselineTarget"].endswith("now.toml")
