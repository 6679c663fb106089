"""``imagelint inspect`` as a user runs it: the console script, real layouts, exit codes, JSON schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cuda-app"
SCHEMA = json.loads((ROOT / "docs" / "inspect-schema.json").read_text())


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "imagelint", "inspect", *args], capture_output=True, text=True, cwd=ROOT, timeout=60)


def test_text_output_names_each_fact_and_where() -> None:
    r = run("oci-dir:examples/cuda-app")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "12.4.1" in out and "/usr/local/cuda/version.json -> /usr/local/cuda-12.4/version.json" in out
    assert "/usr/local/cuda-12.4/compat/libcuda.so.550.54.15  [compat, version 550.54.15, not on loader path]" in out
    assert "fwd-compat note: CUDA 12.4" in out
    assert "gpu-id=1" in out and "/app/config.txt:10" in out
    assert "platform: linux/amd64" in out


def test_json_validates_against_the_documented_schema() -> None:
    r = run("oci-dir:examples/cuda-app", "--format", "json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["complete"] is True and doc["platform"] == "linux/amd64"
    r = run("oci-dir:examples/cuda-app", "--format", "json", "--config-only")
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["complete"] is False and doc["driver_libraries"] == []


def test_schema_rejects_what_it_should() -> None:
    doc = json.loads(run("oci-dir:examples/cuda-app", "--format", "json").stdout)
    doc["driver_libraries"][0]["role"] = "bundled"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, SCHEMA)


def test_all_platforms_gives_a_list(tmp_path: Path) -> None:
    from tests.support.imagebuilder import File, ImageSpec, build_index, write_oci_layout

    amd = ImageSpec(layers=[[File("usr/local/cuda-12.4/version.txt", b"CUDA Version 12.4.1")]]).build()
    arm = ImageSpec(layers=[[File("usr/local/cuda-12.2/version.txt", b"CUDA Version 12.2.2")]], architecture="arm64").build()
    layout = write_oci_layout(tmp_path / "multi", {"latest": build_index([amd, arm])})
    r = run(f"oci-dir:{layout}", "--all-platforms", "--format", "json")
    assert r.returncode == 0, r.stderr
    docs = json.loads(r.stdout)
    for d in docs:
        jsonschema.validate(d, SCHEMA)
    assert [(d["platform"], d["cuda"]["versions"][0]["version"]) for d in docs] == [("linux/amd64", "12.4.1"), ("linux/arm64", "12.2.2")]
    r = run(f"oci-dir:{layout}", "--platform", "linux/arm64")
    assert r.returncode == 0 and "12.2.2" in r.stdout and "12.4.1" not in r.stdout


@pytest.mark.parametrize("args,code,text", [
    (["oci-dir:examples/cuda-app", "--format", "xml"], 2, "--format"),
    (["oci-dir:examples/cuda-app", "--platform", "a/b/c/d"], 2, "invalid platform"),
    (["oci-dir:examples/cuda-app", "--platform", "linux/amd64", "--all-platforms"], 2, "exclude each other"),
    (["oci-dir:examples/cuda-app", "--ca-cert", "/nonexistent.pem"], 2, "--ca-cert"),
    (["oci-dir:/nonexistent/layout"], 3, "imagelint: error:"),
])
def test_bad_input_is_one_line_with_exit_code(args: list[str], code: int, text: str) -> None:
    r = run(*args)
    assert r.returncode == code
    assert text in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
