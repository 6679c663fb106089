"""``imagelint check`` end to end: the installed console script against OCI layouts written by the
tests' image builder, read through the real sources, layers and facts."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from tests.rules.helpers import official_env
from tests.support.imagebuilder import File, ImageSpec, Symlink, build_index, write_oci_layout

ROOT = Path(__file__).resolve().parents[2]


def script(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The installed console script (exit codes as CI sees them)."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")}
    full_env["IMAGELINT_NO_CACHE"] = "1"  # never write the user's layer cache from tests
    full_env.update(env or {})
    return subprocess.run(["imagelint", *args], capture_output=True, text=True, timeout=120, env=full_env, cwd=cwd)


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str


def imagelint(*args: str, env: dict | None = None, cwd: Path | None = None) -> Outcome:
    """The same command in-process (typer's runner): fast, for behaviour beyond exit codes."""
    from typer.testing import CliRunner

    import imagelint.cli as cli

    full_env = {"GITHUB_ACTIONS": None, "GITHUB_STEP_SUMMARY": None, "IMAGELINT_NO_CACHE": "1", **(env or {})}
    old = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = CliRunner().invoke(cli.app, list(args), env=full_env)  # click 8.2+: stderr kept apart
    finally:
        os.chdir(old)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome(result.exit_code, result.stdout, result.stderr)


def cuda_runtime_layer(version: str, cudart: str) -> list:
    """The file layout of an official nvidia/cuda runtime image (without the compat package)."""
    mm = ".".join(version.split(".")[:2])
    root = f"usr/local/cuda-{mm}"
    lib = f"{root}/targets/x86_64-linux/lib"
    doc = {"cuda": {"name": "CUDA SDK", "version": version}, "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": cudart}}
    return [
        File(f"{root}/version.json", json.dumps(doc, indent=3).encode()),
        File(f"{lib}/libcudart.so.{cudart}", b"\x7fELF" + b"\0" * 60),
        Symlink(f"{lib}/libcudart.so.{cudart.split('.')[0]}", f"libcudart.so.{cudart}"),
        Symlink(f"{root}/lib64", "targets/x86_64-linux/lib"),
        Symlink("usr/local/cuda", f"cuda-{mm}"),
        Symlink(f"usr/local/cuda-{mm.split('.')[0]}", f"cuda-{mm}"),
        File("etc/ld.so.conf.d/000_cuda.conf", b"/usr/local/cuda/targets/x86_64-linux/lib\n"),
    ]


def official_image(version: str, cudart: str, extra_layers: list | None = None, **kw) -> object:
    env = official_env(version)
    env["PATH"] = "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return ImageSpec(layers=[cuda_runtime_layer(version, cudart), *(extra_layers or [])], env=env, **kw).build()


@pytest.fixture(scope="module")
def layouts(tmp_path_factory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("layouts")
    deepstream = [
        File("app/run.sh", b"#!/bin/sh\nset -e\nexec deepstream-app -c /app/config.txt\n", mode=0o755),
        File("app/config.txt", b"[application]\nenable-perf-measurement=1\n\n[primary-gie]\nenable=1\ngpu-id=1\n"),
    ]
    images = {
        "gpuid": official_image("12.4.1", "12.4.127", [deepstream], entrypoint=["/app/run.sh"]),
        "cuda124": official_image("12.4.1", "12.4.127"),
        "cuda122": official_image("12.2.2", "12.2.140"),
        "cuda128": official_image("12.8.1", "12.8.90"),
        "labelled": official_image("12.4.1", "12.4.127", [deepstream], entrypoint=["/app/run.sh"],
                                   labels={"io.imagelint.ignore": "IL302:bench rig has two GPUs"}),
    }
    out = {}
    for name, img in images.items():
        write_oci_layout(tmp / name, {"latest": img})
        out[name] = f"oci-dir:{tmp / name}"
    arm = ImageSpec(layers=[cuda_runtime_layer("12.4.1", "12.4.127")], env=official_env("12.4.1", "arm64"),
                    architecture="arm64", variant="v8").build()
    write_oci_layout(tmp / "multi", {"latest": build_index([images["cuda124"], arm])})
    out["multi"] = f"oci-dir:{tmp / 'multi'}"
    return out


def test_gpu_id_in_config_reached_from_entrypoint(layouts):
    r = script("check", layouts["gpuid"], "--driver", "550.54.15", "--gpu", "T4")
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(l for l in r.stdout.splitlines() if "IL302" in l)
    assert "gpu-id=1" in line
    assert "/app/config.txt:6 (layer 1 sha256:" in r.stdout


def test_cuda_124_on_470_is_an_error_naming_the_floor(layouts):
    r = script("check", layouts["cuda124"], "--driver", "470.57.02", "--format", "json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    [f] = [f for f in doc["results"][0]["findings"] if f["rule"] == "IL101"]
    assert f["severity"] == "error" and "550.54.15" in f["message"]
    assert f["location"]["path"] == "usr/local/cuda-12.4/version.json"


def test_cuda_124_on_its_floor_passes(layouts):
    r = script("check", layouts["cuda124"], "--driver", "550.54.15")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "IL101" not in r.stdout


def test_minor_version_compat_is_a_warning_then_error_on_older_major(layouts):
    warn = imagelint("check", layouts["cuda122"], "--driver", "525.60.13", "--format", "json")
    assert warn.returncode == 0, warn.stderr
    [f] = [f for f in json.loads(warn.stdout)["results"][0]["findings"] if f["rule"] == "IL101"]
    assert f["severity"] == "warning" and "minor-version compatibility" in f["message"]
    assert imagelint("check", layouts["cuda122"], "--driver", "525.60.13", "--fail-on", "warning").returncode == 1
    err = script("check", layouts["cuda122"], "--driver", "470.57.02", "--select", "IL101")
    assert err.returncode == 1 and "IL101" in err.stdout and "535.104.05" in err.stdout


@pytest.mark.parametrize("name,driver", [("cuda122", "535.104.05"), ("cuda124", "550.54.15"), ("cuda128", "570.124.06")])
def test_clean_official_images_have_no_error_on_a_supporting_driver(layouts, name, driver):
    r = imagelint("check", layouts[name], "--driver", driver, "--gpu", "H100", "--toolkit", "1.17.0", "--format", "json")
    assert r.returncode == 0, r.stdout
    findings = json.loads(r.stdout)["results"][0]["findings"]
    assert not [f for f in findings if f["severity"] == "error"]


def test_unreadable_image_exits_3_and_still_writes_sarif_and_json(layouts, tmp_path):
    sarif, js = tmp_path / "out.sarif", tmp_path / "out.json"
    r = script("check", layouts["cuda124"], f"oci-dir:{tmp_path / 'missing'}", "--driver", "470.57.02",
                  "--format", "sarif", "--output", str(sarif), "--format", f"json={js}", "--sarif-artifact", "README.md", cwd=ROOT)
    assert r.returncode == 3 and "imagelint: error:" in r.stderr
    doc = json.loads(sarif.read_text())
    jsonschema.Draft4Validator(json.loads((ROOT / "tests/data/sarif-schema-2.1.0.json").read_text())).validate(doc)
    [readable] = doc["runs"]  # the unreadable image's error rides in the readable run (no empty run of its own)
    assert readable["invocations"][0]["executionSuccessful"] is False
    assert any(x["ruleId"] == "IL101" for x in readable["results"])  # the readable image's findings are kept
    report = json.loads(js.read_text())
    jsonschema.Draft202012Validator(json.loads((ROOT / "docs/report-schema.json").read_text())).validate(report)
    assert report["exit_code"] == 3


def test_format_output_pairs_follow_the_command_line(layouts, tmp_path):
    sarif = tmp_path / "x.sarif"
    r = script("check", layouts["cuda124"], "--driver", "550.54.15", "--format", "text", "--format", "sarif", "--output", str(sarif),
               "--sarif-artifact", "README.md", cwd=ROOT)
    assert r.returncode == 0 and r.stdout.startswith("oci-dir:") and json.loads(sarif.read_text())["version"] == "2.1.0"
    two = imagelint("check", layouts["cuda124"], "--format", "text", "--format", "json")
    assert two.returncode == 2 and "only one --format can go to stdout" in two.stderr


def test_github_format_chosen_in_actions_with_step_summary(layouts, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("previous step\n")
    r = imagelint("check", layouts["gpuid"], "--driver", "550.54.15",
                  env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert r.returncode == 1
    assert "::error title=IL302 hardcoded-gpu-index::" in r.stdout
    text = summary.read_text()
    assert text.startswith("previous step\n") and "| IL302 hardcoded-gpu-index |" in text


def test_inline_label_suppresses_unless_refused(layouts):
    ok = imagelint("check", layouts["labelled"], "--driver", "550.54.15", "--format", "json")
    assert ok.returncode == 0, ok.stdout
    result = json.loads(ok.stdout)["results"][0]
    assert [s["rule"] for s in result["suppressed"]] == ["IL302"] and json.loads(ok.stdout)["summary"]["suppressed"] == 1
    refused = imagelint("check", layouts["labelled"], "--driver", "550.54.15", "--no-inline-ignores")
    assert refused.returncode == 1 and "IL302" in refused.stdout and "not honoured" in refused.stdout


def test_config_file_select_severity_and_errors(layouts, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".imagelint.toml").write_text(
        'select = ["IL3"]\nfail-on = "warning"\n[severity]\nIL302 = "warning"\n[target]\ndriver = "550.54.15"\n'
    )
    r = imagelint("check", layouts["gpuid"], "--format", "json", cwd=tmp_path)
    doc = json.loads(r.stdout)
    rules = {f["rule"] for f in doc["results"][0]["findings"]}
    assert r.returncode == 1 and rules and all(x.startswith("IL3") for x in rules)
    assert next(f for f in doc["results"][0]["findings"] if f["rule"] == "IL302")["severity"] == "warning"
    assert doc["results"][0]["target"]["pools"][0]["driver"] == "550.54.15"
    # flags beat the file
    assert imagelint("check", layouts["gpuid"], "--fail-on", "error", cwd=tmp_path).returncode == 0
    (tmp_path / ".imagelint.toml").write_text('select = ["IL3"]\nfail_on = "warning"\n')
    bad = script("check", layouts["gpuid"], cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().endswith("unknown key 'fail_on' (expected one of: images, select, ignore, severity, fail-on, matrix, matrix-overlay, inline-ignores, target, ignores)")
    assert ".imagelint.toml:2:" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_bad_flags_exit_2(layouts):
    assert imagelint("check", layouts["cuda124"], "--select", "XX9").returncode == 2
    assert imagelint("check", layouts["cuda124"], "--fail-on", "fatal").returncode == 2
    assert imagelint("check", layouts["cuda124"], "--driver", "banana").returncode == 2


def test_all_platforms_and_platform_mismatch(layouts):
    r = imagelint("check", layouts["multi"], "--all-platforms", "--driver", "550.54.15", "--format", "json")
    platforms = [x["image"]["platform"] for x in json.loads(r.stdout)["results"] if x["image"]["kind"] == "image"]
    assert sorted(platforms) == ["linux/amd64", "linux/arm64/v8"]
    mismatch = imagelint("check", layouts["cuda124"], "--driver", "550.54.15", "--arch", "arm64", "--select", "IL402")
    assert mismatch.returncode == 1 and "IL402" in mismatch.stdout
    # Without --platform, the platform the arm64 pool pulls is the one checked.
    arm = imagelint("check", layouts["multi"], "--driver", "550.54.15", "--arch", "arm64", "--format", "json")
    assert arm.returncode == 0, arm.stdout
    doc = json.loads(arm.stdout)
    # (R550 is past end of life: that finding is the target's, on a result of its own)
    assert [r["image"]["platform"] for r in doc["results"] if r["image"]["kind"] == "image"] == ["linux/arm64/v8"]
    assert not [f for f in doc["results"][0]["findings"] if f["rule"] == "IL402"]


def test_no_target_lists_rules_that_could_not_run(layouts):
    r = imagelint("check", layouts["cuda124"], "--select", "IL1")
    assert r.returncode == 0 and "not run without a target: IL102, IL107" in r.stdout
    assert "needs NVIDIA driver >= 550.54.15" in r.stdout  # IL101 still reports the floor


class _Terminal:
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color():
    from imagelint.cli.run_options import use_color

    assert use_color(_Terminal(), {}) is True
    assert use_color(_Terminal(), {"NO_COLOR": "1"}) is False
    assert use_color(_Terminal(), {"NO_COLOR": ""}) is True  # no-color.org: "present and not an empty string"
    assert use_color(open(os.devnull, "w"), {}) is False
    assert use_color(open(os.devnull, "w"), {}, "always") is True
    assert use_color(_Terminal(), {"NO_COLOR": "1"}, "ALWAYS") is True  # an explicit flag wins
    assert use_color(_Terminal(), {}, "never") is False


def test_config_only_rules_do_not_read_layers(layouts, monkeypatch):
    monkeypatch.setenv("IMAGELINT_NO_CACHE", "1")
    from imagelint.core.check import run_check
    from imagelint.core.config import Config
    from imagelint.matrix import load_matrix
    from imagelint.sources import SourceOptions
    from imagelint.deploytarget import Target

    fast = run_check([layouts["gpuid"]], SourceOptions(), Target(), load_matrix(), Config(select=("IL103", "IL104")))
    full = run_check([layouts["gpuid"]], SourceOptions(), Target(), load_matrix(), Config(select=("IL302",)))
    assert fast.results[0].complete is False and full.results[0].complete is True
    assert [f.rule for f in full.results[0].findings] == ["IL302"]


def test_check_reads_images_from_config_when_no_reference_given(tmp_path):
    """The imagelint-image pre-commit hook runs `imagelint check` with no arguments."""
    import subprocess
    import sys

    from tests.support.imagebuilder import File, ImageSpec, write_oci_layout

    layout = write_oci_layout(
        tmp_path / "img",
        {"v1": ImageSpec(layers=[[File("app/config.txt", b"[primary-gie]\ngpu-id=1\n")]],
                         entrypoint=["deepstream-app", "-c", "/app/config.txt"]).build()},
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / ".imagelint.toml").write_text(f'images = ["oci-dir:{layout}"]\n[target]\ndriver = ["550.54.15"]\n')
    run = subprocess.run([sys.executable, "-m", "imagelint", "check"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert "IL302" in run.stdout and "/app/config.txt:2" in run.stdout
    (tmp_path / ".imagelint.toml").write_text("[target]\ndriver = ['550.54.15']\n")
    run = subprocess.run([sys.executable, "-m", "imagelint", "check"], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 2 and "no image to check" in run.stderr


def test_ngc_release_and_driver_env_are_not_mistaken_for_cuda_versions(tmp_path):
    """NGC images set CUDA_DRIVER_VERSION (a driver) and NVIDIA_PYTORCH_VERSION (a YY.MM
    release): neither is a CUDA runtime version. The release maps to CUDA through the matrix."""
    import json as _json
    import subprocess
    import sys

    from tests.support.imagebuilder import File, ImageSpec, Symlink, write_oci_layout

    env = {
        "CUDA_VERSION": "12.2.2.009", "CUDA_DRIVER_VERSION": "535.104.05", "NVIDIA_REQUIRE_CUDA": "cuda>=9.0",
        "NVIDIA_PYTORCH_VERSION": "23.10", "NVIDIA_PRODUCT_NAME": "PyTorch",
    }
    layers = [[File("usr/local/cuda-12.2/version.json", b'{"cuda":{"version":"12.2.2"}}'), Symlink("usr/local/cuda", "cuda-12.2")]]
    layout = write_oci_layout(tmp_path / "ngc", {"23.10": ImageSpec(layers=layers, env=env).build()})
    run = subprocess.run([sys.executable, "-m", "imagelint", "check", f"oci-dir:{layout}", "--driver", "470.57.02",
                          "--gpu", "T4", "--format", "json"], capture_output=True, text=True)
    doc = _json.loads(run.stdout)
    findings = doc["results"][0]["findings"]
    il101 = [f for f in findings if f["rule"] == "IL101"]
    assert il101 and "535.104.05" in il101[0]["message"] and "12.2.2" in il101[0]["message"], il101
    assert il101[0]["severity"] == "error", "no compat libs: CUDA 12.2 on R470 cannot run"
    assert not [f for f in findings if f["rule"] == "IL105"], "23.10 and the driver version are not CUDA evidence"
    assert run.returncode == 1


def test_fatbins_are_scanned_only_when_a_pool_gpu_can_be_judged(tmp_path):
    """The fatbin scan is the costliest capture: check skips it when no pool GPU has a known
    compute capability, and runs it (IL401 fires) when one does; inspect always shows it."""
    import json as _json
    import subprocess
    import sys

    from tests.facts.fatbin_support import container, entry
    from tests.support.imagebuilder import File, ImageSpec, write_oci_layout

    lib = b"\x7fELF" + b"\0" * 60 + container(entry(arch=80)) + b"\0" * 64
    layout = write_oci_layout(tmp_path / "img", {"v": ImageSpec(layers=[[File("opt/app/lib/libk.so", lib)]]).build()})

    def check(*flags):
        run = subprocess.run([sys.executable, "-m", "imagelint", "check", f"oci-dir:{layout}", "--driver", "550.54.15",
                              "--format", "json", "--no-cache", *flags], capture_output=True, text=True)
        return run.returncode, [f for f in _json.loads(run.stdout)["results"][0]["findings"] if f["rule"] == "IL401"]

    code, il401 = check("--gpu", "H100")
    assert code == 1 and il401 and il401[0]["severity"] == "error" and "sm_80" in " ".join([il401[0]["message"], *il401[0]["details"]])
    code, il401 = check()
    assert code == 0 and il401 == []
    shown = subprocess.run([sys.executable, "-m", "imagelint", "inspect", f"oci-dir:{layout}", "--format", "json", "--no-cache"],
                           capture_output=True, text=True)
    assert "sm_80" in shown.stdout
