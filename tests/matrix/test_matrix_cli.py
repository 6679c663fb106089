"""``imagelint matrix ...`` through typer's CliRunner, and once through the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

import imagelint.cli
from imagelint.matrix import load_matrix, matrix_from_text, shipped_versions
from tests.matrix.test_matrix import MINIMAL, OVERLAY

runner = CliRunner()


def run(*args: str):
    return runner.invoke(imagelint.cli.app, ["matrix", *args])


def test_list_marks_newest() -> None:
    result = run("list")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert [line.split()[0] for line in lines] == shipped_versions()
    assert lines[-1].endswith("(newest, default)")


def test_show_text_toml_json() -> None:
    text = run("show", "--section", "cuda_releases")
    assert text.exit_code == 0 and "[cuda_releases]" in text.output and "550.54.15" in text.output
    assert "?" in text.output  # uncertain rows are marked
    toml_out = run("show", "--format", "toml")
    assert matrix_from_text(toml_out.output, "cli").sections == load_matrix().sections
    json_out = run("show", "--format", "json")
    assert json.loads(json_out.output)["meta"]["data_version"] == shipped_versions()[-1]


def test_show_bad_format_and_section() -> None:
    assert run("show", "--format", "xml").exit_code == 2
    result = run("show", "--section", "nope")
    assert result.exit_code == 2 and "unknown section 'nope'" in result.output


def test_validate_ok_and_broken(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(MINIMAL)
    ok = run("validate", str(good))
    assert ok.exit_code == 0 and "ok (matrix 2030-01-01, 3 rows)" in ok.output
    bad = tmp_path / "bad.toml"
    bad.write_text(MINIMAL.replace('source = "test"\n\n[[minor', "\n[[minor"))
    result = run("validate", str(bad))
    assert result.exit_code == 2
    assert f"imagelint: error: {bad}:6: cuda_releases[0]: missing 'source'" in result.output
    overlay = tmp_path / "overlay.toml"
    overlay.write_text(OVERLAY)
    assert run("validate", str(overlay)).exit_code == 0


def test_diff(tmp_path: Path) -> None:
    newest = shipped_versions()[-1]
    assert run("diff", newest, newest).output.strip() == "no differences"
    changed = tmp_path / "changed.toml"
    changed.write_text(MINIMAL.replace("550.54.14", "550.54.99"))
    other = tmp_path / "other.toml"
    other.write_text(MINIMAL)
    result = run("diff", str(other), str(changed))
    assert result.exit_code == 0
    assert "~ cuda_releases 12.4.0: min_driver: '550.54.14' -> '550.54.99'" in result.output
    assert "- cuda_releases 12.4.1" in run("diff", newest, str(other)).output


def test_export_with_overlay(tmp_path: Path) -> None:
    overlay = tmp_path / "site.toml"
    overlay.write_text(OVERLAY)
    result = run("export", "--format", "json", "--overlay", str(overlay))
    doc = json.loads(result.stdout)  # stderr has the note on the old spelling --overlay
    assert any(g["name"] == "Site GPU" for g in doc["gpus"])
    toml_out = run("export")
    assert matrix_from_text(toml_out.output, "export").version == shipped_versions()[-1]


def test_publish_configmap() -> None:
    result = run("publish", "--namespace", "gpu-system")
    assert result.exit_code == 0
    doc = yaml.safe_load(result.output)
    assert doc["kind"] == "ConfigMap" and doc["metadata"]["name"] == "imagelint-matrix"
    assert doc["metadata"]["namespace"] == "gpu-system"
    assert matrix_from_text(doc["data"]["matrix.toml"], "cm").sections == load_matrix().sections
    assert run("publish", "--name", "Bad_Name").exit_code == 2


def test_console_script(tmp_path: Path) -> None:
    exe = shutil.which("imagelint")
    if exe is None:
        pytest.fail("the imagelint console script is not installed (pip install -e .)")
    ok = subprocess.run([exe, "matrix", "list"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and shipped_versions()[-1] in ok.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text("[meta]\nkind = 'imagelint-matrix'\n")
    failed = subprocess.run([exe, "matrix", "validate", str(bad)], capture_output=True, text=True, timeout=60)
    assert failed.returncode == 2
    assert failed.stderr.strip() == f"imagelint: error: {bad}:1: meta: missing 'schema_version'"
    assert "Traceback" not in failed.stderr


def test_every_matrix_field_is_documented():
    """docs/matrix.md names every field the schema allows (an overlay must never need an undocumented one)."""
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    schema = json.loads((root / "imagelint" / "schemas" / "matrix.schema.json").read_text())
    doc = (root / "docs" / "matrix.md").read_text()
    missing = []
    for section, spec in schema["properties"].items():
        assert f"`{section}`" in doc, section
        for field in (spec.get("items") or spec).get("properties", {}):
            if not re.search(r"`" + re.escape(field) + r"`|^" + re.escape(field) + r"\s*=", doc, re.M):
                missing.append(f"{section}.{field}")
    assert not missing, f"fields docs/matrix.md does not explain: {missing}"
