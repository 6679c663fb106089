"""Every fact said once (issue 38): a finding about the target (IL503: the pool's driver branch is
past end of life) is reported once per run, attached to the target — the target file, or
``target`` when the pools come from flags — in text, JSON and SARIF; one cause is one finding
(IL101 and IL107 rendering one verdict); "not run without a target" is said once per run."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.cli.test_check import imagelint, official_image
from tests.support.imagebuilder import write_oci_layout

ROOT = Path(__file__).resolve().parents[2]
REPORT_SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text())
EXAMPLE = ROOT / "examples" / "gpu-repo"


@pytest.fixture(scope="module")
def two_images(tmp_path_factory) -> list[str]:
    tmp = tmp_path_factory.mktemp("said-once")
    refs = []
    for name, (version, cudart) in {"a": ("12.2.2", "12.2.140"), "b": ("11.8.0", "11.8.89")}.items():
        write_oci_layout(tmp / name, {"latest": official_image(version, cudart)})
        refs.append(f"oci-dir:{tmp / name}")
    return refs


def test_check_reports_the_pools_end_of_life_once_on_the_target_not_per_image(two_images) -> None:
    out = imagelint("check", *two_images, "--driver", "535.104.05", "--gpu", "T4", "--format", "json")
    report = json.loads(out.stdout)
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(report)
    where = [(r["image"]["kind"], r["image"]["ref"]) for r in report["results"] for f in r["findings"] if f["rule"] == "IL503"]
    assert where == [("target", "target")]
    assert report["summary"]["warning"] == sum(f["severity"] == "warning" for r in report["results"] for f in r["findings"])
    text = imagelint("check", *two_images, "--driver", "535.104.05", "--gpu", "T4")
    assert text.stdout.count("IL503") == 1 and "\ntarget\n" in text.stdout
    assert text.stdout.splitlines()[-1].startswith("2 image(s):")  # the target is no file or image looked at


def test_lint_attaches_the_pools_end_of_life_to_the_target_file(tmp_path: Path) -> None:
    target = str(EXAMPLE / "target.toml")
    out = imagelint("lint", str(EXAMPLE), "--target-file", target, "--format", "json")
    report = json.loads(out.stdout)
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(report)
    holders = [r["image"] for r in report["results"] if any(f["rule"] == "IL503" for f in r["findings"])]
    assert holders == [{"ref": target, "digest": None, "platform": None, "kind": "target"}]
    sarif = imagelint("lint", str(EXAMPLE), "--target-file", target, "--format", "sarif", cwd=ROOT)
    doc = json.loads(sarif.stdout)
    jsonschema.Draft4Validator(json.loads((ROOT / "tests/data/sarif-schema-2.1.0.json").read_text())).validate(doc)
    [il503] = [r for run in doc["runs"] for r in run["results"] if r["ruleId"] == "IL503"]
    assert il503["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "examples/gpu-repo/target.toml"
    # lint --image checks an image too: its target finding joins the files' (still once).
    both = imagelint("lint", str(EXAMPLE), "--target-file", target, "--image", "oci-dir:examples/cuda-app",
                     "--format", "json", cwd=ROOT)
    found = [r["image"]["kind"] for r in json.loads(both.stdout)["results"] for f in r["findings"] if f["rule"] == "IL503"]
    assert found == ["target"], found


def test_one_cause_is_one_finding_that_lists_its_consequences() -> None:
    """examples/cuda-app on T4 / 535: its compat libcuda is not loaded with toolkit 1.17.4 (or cdi
    before 1.17.5), so it runs only through minor-version compatibility: one problem, one fix."""
    out = imagelint("check", "oci-dir:examples/cuda-app", "--driver", "535.104.05", "--gpu", "T4", "--format", "json",
                    cwd=ROOT)
    findings = [f for r in json.loads(out.stdout)["results"] for f in r["findings"]]
    compat = [f for f in findings if f["rule"] in ("IL101", "IL107")]
    assert [f["rule"] for f in compat] == ["IL101"] and compat[0]["extra"]["also"] == ["IL107"]
    assert any("IL107" in d and "not loaded" in d for d in compat[0]["details"])
    assert any(d.startswith("PTX newer than the driver") for d in compat[0]["details"])  # what follows from it
    # Without IL101 the compat library's finding stands whole: nothing passes in silence.
    alone = imagelint("check", "oci-dir:examples/cuda-app", "--driver", "535.104.05", "--gpu", "T4", "--ignore", "IL101",
                      "--format", "json", cwd=ROOT)
    rules = [f["rule"] for r in json.loads(alone.stdout)["results"] for f in r["findings"]]
    assert "IL107" in rules


def test_rules_skipped_for_want_of_a_target_are_named_once_per_run(two_images) -> None:
    out = imagelint("check", *two_images)
    assert out.stdout.count("not run without a target") == 1, out.stdout
