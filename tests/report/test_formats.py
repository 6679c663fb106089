"""Every report format: valid against its schema/grammar, complete, and free of secrets."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from imagelint.core.engine import ImageResult
from imagelint.report import FORMAT_NAMES, ReportOptions, render
from imagelint.rules.base import Finding
from imagelint.report.github import escape_data, escape_property, step_summary
from imagelint.report.sarif import SarifArtifacts

from tests.report.conftest import make_run
from tests.rules.helpers import facts, run

SECRET = "hunter2-secret"
ROOT = Path(__file__).resolve().parents[2]
# SARIF points image findings at a repository file: this checkout's README stands in for a Dockerfile.
SARIF_OPTIONS = ReportOptions(sarif_artifacts=SarifArtifacts(root=str(ROOT), anchor=str(ROOT / "README.md")))


def test_json_validates_and_counts(busy_run, report_schema):
    doc = json.loads(render("json", busy_run))
    jsonschema.Draft202012Validator(report_schema).validate(doc)
    assert doc["exit_code"] == 3 and doc["matrix"]["version"] == busy_run.matrix_version
    ok, bad = doc["results"]
    assert bad["error"] and not bad["findings"]
    rules = {f["rule"] for f in ok["findings"]}
    assert {"IL101", "IL301", "IL302"} <= rules and "IL102" not in rules  # NVIDIA_DISABLE_REQUIRE=1
    assert [s["rule"] for s in ok["suppressed"]] == ["IL104"] and doc["summary"]["suppressed"] == 1
    assert doc["summary"]["error"] == sum(f["severity"] == "error" for f in ok["findings"])
    gpu = next(f for f in ok["findings"] if f["rule"] == "IL302")
    assert gpu["location"]["path"] == "app/config.txt" and gpu["location"]["line"] == 3
    assert ok["target"]["pools"][0]["name"] == "t4-pool"


@pytest.mark.parametrize("results", [0, 1, 3])
def test_json_written_a_result_at_a_time_is_the_whole_reports_text(busy_run, results):
    from dataclasses import replace

    from imagelint.report.json import render_pieces, to_dict

    run = replace(busy_run, results=(busy_run.results * 2)[:results])
    pieces = list(render_pieces(run, ReportOptions()))
    assert len(pieces) == results + 2  # the head, one piece a result, the tail
    assert "".join(pieces) == json.dumps(to_dict(run), indent=2) + "\n"


def test_json_of_results_alike_but_for_their_subject_is_each_ones_own_text(busy_run):
    """Clean results of one shape are written from the text of the one before (its subject
    swapped): every field but the subject counts, and a result with findings is written afresh."""
    from dataclasses import replace

    from imagelint.report.json import render_pieces, to_dict

    with_findings = busy_run.results[0]
    clean = ImageResult(subject="pods.yaml:4 Pod/p0 container c", kind="manifest", complete=False,
                        skipped_rules=("IL101",), rules_run=("IL101", "IL301"), path="pods.yaml")
    results = [clean, replace(clean, subject='pods.yaml:9 Pod/"p1" container ü'), replace(clean, subject="x"),
               replace(clean, subject="y", notices=("a notice",)), replace(clean, subject="z", complete=True),
               replace(clean, subject="w", skipped_rules=()), with_findings,
               replace(with_findings, subject="v"), replace(clean, subject="u", platform="linux/arm64")]
    run = replace(busy_run, results=tuple(results))
    assert "".join(render_pieces(run, ReportOptions())) == json.dumps(to_dict(run), indent=2) + "\n"


def test_json_schema_rejects_a_broken_report(busy_run, report_schema):
    doc = json.loads(render("json", busy_run))
    doc["results"][0]["findings"][0]["severity"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(report_schema).validate(doc)


def test_sarif_valid_with_findings_and_unreadable_image(busy_run, sarif_schema):
    doc = json.loads(render("sarif", busy_run, SARIF_OPTIONS))
    jsonschema.Draft4Validator(sarif_schema).validate(doc)
    [r] = doc["runs"]  # the unreadable image gets no run of its own (it would close its alerts)
    inv = r["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert any("connection refused" in n["message"]["text"] for n in inv["toolExecutionNotifications"])
    rules = r["tool"]["driver"]["rules"]
    assert {x["id"] for x in rules} >= {"IL101", "IL302"} and all(x["help"]["text"] for x in rules)
    res = next(x for x in r["results"] if x["ruleId"] == "IL302")
    assert rules[res["ruleIndex"]]["id"] == "IL302"
    loc = res["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "README.md"  # image paths are not repository files
    assert loc["logicalLocations"][0]["name"].startswith("/app/config.txt:3") and res["properties"]["imagePath"] == "/app/config.txt"
    supp = next(x for x in r["results"] if x["ruleId"] == "IL104")
    assert supp["suppressions"][0]["justification"].startswith("known")


def test_sarif_valid_with_no_findings(sarif_schema):
    clean = make_run([run(facts({}))])
    doc = json.loads(render("sarif", clean, SARIF_OPTIONS))
    jsonschema.Draft4Validator(sarif_schema).validate(doc)
    assert doc["runs"][0]["results"] == [] and doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_sarif_schema_is_the_official_one(sarif_schema):
    assert sarif_schema["id"].startswith("https://docs.oasis-open.org/sarif/sarif/v2.1.0/")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(sarif_schema).validate({"version": "2.1.0", "runs": [{"results": []}]})


def test_github_commands(busy_run):
    out = render("github", busy_run)
    lines = out.splitlines()
    il302 = next(line for line in lines if "IL302" in line)
    assert il302.startswith("::error title=IL302 hardcoded-gpu-index::")
    assert any(line.startswith("::warning ") for line in lines)
    assert any(line.startswith("::error title=imagelint%3A image unreadable::") for line in lines)
    assert lines[0].startswith("::group::") and "::endgroup::" in lines


def test_github_escaping():
    assert escape_data("50% done\r\nnext") == "50%25 done%0D%0Anext"
    assert escape_property("a:b,c%") == "a%3Ab%2Cc%25"


def test_github_file_property_for_repository_sources():
    from imagelint.facts.model import GpuIndexSetting, Provenance

    s = GpuIndexSetting("nvidia-visible-devices", "1", (1,), "ENV NVIDIA_VISIBLE_DEVICES=1",
                        Provenance("dockerfile", source="docker/Dockerfile,gpu", line=7))
    out = render("github", make_run([run(facts({}, index_settings=(s,), kind="dockerfile", platforms=()))]))
    assert "::error file=docker/Dockerfile%2Cgpu,line=7,title=IL301 hardcoded-visible-devices::" in out


def test_step_summary_table(busy_run):
    md = step_summary(busy_run)
    assert md.startswith("## imagelint") and "| Image | Severity | Rule | Pool | Message | Location |" in md
    assert "| oci-dir:app | error | IL302 hardcoded-gpu-index |" in md


def test_junit_is_valid_xml_with_failures(busy_run):
    root = ET.fromstring(render("junit", busy_run))
    suites = root.findall("testsuite")
    assert len(suites) == 2
    cases = {c.get("name"): c for c in suites[0].findall("testcase")}
    assert cases["IL302 hardcoded-gpu-index"].find("failure") is not None
    assert cases["IL303 visible-devices-all-leak"].find("failure") is None  # warning below fail-on error
    assert suites[1].find("testcase/error") is not None
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites) > 0


def test_text_groups_and_evidence(busy_run):
    out = render("text", busy_run)
    assert "/app/config.txt:3 (layer 1 sha256:abababababab)" in out
    assert out.index("  error (") < out.index("  warning (") < out.index("  info (")
    assert "suppressed (1)" in out and "unreadable: registry example.invalid" in out
    assert "\033[" not in out
    assert "\033[31m" in render("text", busy_run, ReportOptions(color=True))


def test_text_lists_rules_that_need_a_target():
    out = render("text", make_run([run(facts({"NVIDIA_REQUIRE_CUDA": "cuda>=12.4"}))]))
    assert "not run without a target:" in out and "IL102" in out


@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_no_secret_in_any_format(busy_run, fmt):
    assert SECRET not in render(fmt, busy_run, SARIF_OPTIONS)
    assert SECRET not in step_summary(busy_run)


def test_findings_are_a_headline_and_detail_lines():
    from imagelint.report.fragments import annotation_text, headline_and_details

    long = ("pool p (driver 535.104.05, T4): CUDA 12.4.1 (from version.json) depends on the runtime (give --runtime-mode): "
            "in legacy mode with toolkit >= 1.17.4; in cdi mode: runs only through minor-version compatibility; " + "x" * 600)
    head, details = headline_and_details(long)
    assert head == "pool p (driver 535.104.05, T4): CUDA 12.4.1 (from version.json) depends on the runtime (give --runtime-mode)"
    assert details[0] == "in legacy mode with toolkit >= 1.17.4" and details[-1] == "x" * 600
    assert headline_and_details("short; detail") == ("short", ("detail",))
    note = annotation_text(long, 300)
    assert len(note) <= 300 and note.startswith(head) and note.endswith("more detail line(s): imagelint --format text or json shows every line")
    assert "imagelint.json" not in note, "the JSON report stays on the runner: never point a CI reader at it"


def test_ci_formats_keep_the_fix_and_the_details():
    """GitHub annotations and JUnit failures carry the fix and the detail lines (bounded), not a
    pointer to a JSON file the documented workflow never uploads (issue 38)."""
    details = tuple(f"detail {i}" for i in range(3))
    f = Finding("IL101", "cuda-driver-too-old", "error", "CUDA 13.0 needs driver >= 580", None,
                remediation="upgrade the pool's driver to >= 580.65.06, or build FROM a CUDA 12.x base", details=details)
    r = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(f,), rules_run=("IL101",))])
    [note] = [ln for ln in render("github", r).splitlines() if ln.startswith("::error title=IL101")]
    assert "%0Adetail 2%0AFix: upgrade the pool's driver to >= 580.65.06, or build FROM a CUDA 12.x base" in note
    assert "JSON report" not in note
    failure = ET.fromstring(render("junit", r)).find(".//testcase[@name='IL101 cuda-driver-too-old']/failure")
    assert failure.text.splitlines()[1:] == ["  detail 0", "  detail 1", "  detail 2",
                                             "  fix: upgrade the pool's driver to >= 580.65.06, or build FROM a CUDA 12.x base"]
    many = Finding("IL101", "cuda-driver-too-old", "error", "head", None, remediation="the fix",
                   details=tuple(f"line {i}" for i in range(40)))
    r = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(many,), rules_run=("IL101",))])
    [note] = [ln for ln in render("github", r).splitlines() if ln.startswith("::error title=IL101")]
    assert "line 11%0A… 28 more detail line(s)" in note and note.endswith("%0AFix: the fix")
    failure = ET.fromstring(render("junit", r)).find(".//failure")
    assert "line 12" not in failure.text and "… 28 more detail line(s)" in failure.text and failure.text.endswith("fix: the fix")


def test_ci_formats_show_image_findings_on_the_dockerfile(tmp_path):
    """With --dockerfile, an image's findings are annotated on that Dockerfile (the line that set
    what they are about, else its last FROM), in GitHub annotations and JUnit alike."""
    from tests.rules.helpers import env_prov

    (tmp_path / "Dockerfile").write_text("# syntax=docker/dockerfile:1\nFROM nvidia/cuda:13.0.2-base AS base\n"
                                         "FROM base\nENV NVIDIA_VISIBLE_DEVICES=all\n")
    on_env = Finding("IL301", "visible-devices-all", "warning", "all GPUs", env_prov("NVIDIA_VISIBLE_DEVICES"))
    on_image = Finding("IL101", "cuda-driver-too-old", "error", "CUDA 13.0 needs driver >= 580", None)
    r = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(on_env, on_image), rules_run=("IL101", "IL301"))])
    options = ReportOptions(sarif_artifacts=SarifArtifacts(root=str(tmp_path), dockerfile=str(tmp_path / "Dockerfile")))
    out = render("github", r, options).splitlines()
    assert any(ln.startswith("::error file=Dockerfile,line=3,title=IL101") for ln in out), out
    assert any(ln.startswith("::warning file=Dockerfile,line=4,title=IL301") for ln in out), out
    case = ET.fromstring(render("junit", r, options)).find(".//testcase[@name='IL101 cuda-driver-too-old']")
    assert case.get("file") == "Dockerfile" and case.get("line") == "3"
    # without a Dockerfile: no file= (an annotation on a file that is not the image's would mislead)
    assert not any("file=" in ln for ln in render("github", r).splitlines())


def test_github_annotations_stay_short_and_json_keeps_the_whole_message():
    msg = "headline of it; " + "; ".join(f"detail {i} " + "y" * 60 for i in range(20))
    f = Finding("IL101", "cuda-driver-too-old", "error", msg, None)
    r = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(f,), rules_run=("IL101",))])
    [line] = [ln for ln in render("github", r).splitlines() if ln.startswith("::error title=IL101")]
    assert len(line) < 2500 and "headline of it%0Adetail 0" in line and "detail 19" not in line
    assert json.loads(render("json", r))["results"][0]["findings"][0]["message"] == msg
    text = render("text", r)
    assert "IL101 cuda-driver-too-old: headline of it\n      detail 0 " in text and "detail 19" in text


def test_a_finding_with_details_is_shown_as_written_in_every_format(report_schema):
    """A rule's headline and detail lines reach each report unsplit and in order (issue 15)."""
    details = ("legacy <1.17.4; cdi >=1.17.5: runs through forward compatibility — the hook (toolkit >= 1.17.5) loads it",
               "APIs newer than the driver fail with cudaErrorCallRequiresNewerDriver")
    f = Finding("IL101", "cuda-driver-too-old", "warning", "CUDA 12.4.1 on driver 535.104.05 (T4): depends on the container toolkit",
                None, remediation="One of: (1) upgrade; (2) rebuild.", pool="p", details=details)
    r = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(f,), rules_run=("IL101",))])
    doc = json.loads(render("json", r))
    jsonschema.Draft202012Validator(report_schema).validate(doc)
    got = doc["results"][0]["findings"][0]
    assert got["message"] == f.message and got["details"] == list(details)
    text = render("text", r).splitlines()
    i = next(n for n, ln in enumerate(text) if "IL101 cuda-driver-too-old [pool p]: CUDA 12.4.1" in ln)
    assert text[i].endswith("depends on the container toolkit")  # not cut at its ': '
    assert text[i + 1] == "      " + details[0] and text[i + 2] == "      " + details[1]
    assert text[i + 3] == "      fix One of: (1) upgrade; (2) rebuild."
    sarif = json.loads(render("sarif", r, SARIF_OPTIONS))
    lines = sarif["runs"][0]["results"][0]["message"]["text"].splitlines()
    assert lines[0].startswith("registry:ghcr.io/org/app:1: CUDA 12.4.1 on driver") and lines[1:3] == list(details)
    [note] = [ln for ln in render("github", r).splitlines() if ln.startswith("::warning title=IL101")]
    assert "depends on the container toolkit%0Alegacy <1.17.4; cdi >=1.17.5: runs" in note
    assert escape_data(details[1]) in note
    case = ET.fromstring(render("junit", r)).find(".//testcase[@name='IL101 cuda-driver-too-old']")
    assert case.find("system-out").text.splitlines() == [f"[warning] {f.message}", *(f"  {d}" for d in details),
                                                         "  fix: One of: (1) upgrade; (2) rebuild."]


def test_a_long_message_without_details_still_falls_back_to_the_splitter():
    """Findings from a rule written before ``details`` (or a plugin) still read as lines."""
    msg = "headline of it; " + "; ".join(f"detail {i}" for i in range(3))
    f = Finding("IL101", "cuda-driver-too-old", "error", msg + " " + "z" * 150, None)
    r = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(f,), rules_run=("IL101",))])
    assert "IL101 cuda-driver-too-old: headline of it\n      detail 0\n      detail 1\n" in render("text", r)
    short = Finding("IL101", "cuda-driver-too-old", "error", "short: with; a semicolon", None)
    r2 = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(short,), rules_run=("IL101",))])
    assert "IL101 cuda-driver-too-old: short: with; a semicolon\n" in render("text", r2)  # short: never split


def test_detail_lines_from_an_image_are_escaped_like_the_message():
    """A detail line is image-controlled as often as the headline (a path, an env value, a script
    line): a terminal escape or a newline with a workflow command in it stays inert."""
    evil = "the line: 'gpu-id=1\x1b]0;owned\x07\n::error::forged'"
    f = Finding("IL302", "hardcoded-gpu-index", "error", "GPU index 1 hard-coded", None, details=(evil,))
    r = make_run([ImageResult("registry:ghcr.io/org/app:1", findings=(f,), rules_run=("IL302",))])
    text = render("text", r)
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]0;owned\\x07\\n::error::forged" in text
    assert not any(ln.lstrip().startswith("::") for ln in text.splitlines())
    gh = render("github", r)
    assert "\x1b" not in gh and not any(ln.startswith("::error::forged") for ln in gh.splitlines())
    ET.fromstring(render("junit", r))  # well-formed although the detail holds control characters
