"""The refresh aid: NVIDIA's redistributable manifests (our own fixtures, written in their shape)
against a matrix, and the rows that differ."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from imagelint.matrix import load_matrix
from imagelint.matrix.refresh import ManifestError, differences, main, read_manifest
from tests.matrix.test_matrix import MINIMAL

REPO = Path(__file__).resolve().parents[2]

# the minimal matrix of test_matrix.py plus what the refresh compares
MATRIX = MINIMAL + """
[[cuda_releases]]
version = "12.4.1"
label = "CUDA 12.4 Update 1"
release_kind = "update"
min_driver = "550.54.15"
source = "test"

[[cuda_releases]]
version = "12.5.0"
label = "CUDA 12.5 GA"
release_kind = "ga"
min_driver = "555.42.02"
source = "test"
confidence = "uncertain"

[[cuda_image_env]]
version = "12.4.1"
arch = "amd64"
flavor = "base"
env = ["CUDA_VERSION=12.4.1", "NV_CUDA_CUDART_VERSION=12.4.99-1"]
source = "test"
"""


def component(name: str, version: str) -> dict:
    archive = f"{name}/linux-x86_64/{name}-linux-x86_64-{version}-archive.tar.xz"
    return {"name": name, "license": "CUDA Toolkit", "license_path": f"{name}/LICENSE.txt", "version": version,
            "linux-x86_64": {"relative_path": archive, "sha256": "0" * 64, "md5": "0" * 32, "size": "1024"}}


def manifest(tmp_path: Path, release: str, date: str = "2030-01-02", driver: str | None = None,
             cudart: str = "12.4.127") -> Path:
    doc = {"release_date": date, "release_label": release, "release_product": "cuda",
           "cuda_cudart": component("cuda_cudart", cudart), "cuda_nvcc": component("cuda_nvcc", cudart)}
    if driver:
        doc["nvidia_driver"] = component("nvidia_driver", driver)
    path = tmp_path / f"redistrib_{release}.json"
    path.write_text(json.dumps(doc, indent=4))
    return path


@pytest.fixture()
def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(MATRIX)
    return path


def kinds(tmp_path: Path, matrix: Path, path: Path) -> dict[str, str]:
    return {d.kind: d.message for d in differences(read_manifest(path), load_matrix(str(matrix)))}


def test_a_release_the_matrix_lacks_is_reported_with_its_driver(tmp_path: Path, matrix: Path) -> None:
    found = kinds(tmp_path, matrix, manifest(tmp_path, "12.6.0", "2030-02-01", driver="560.28.03"))
    assert "CUDA 12.6.0 (released 2030-02-01) has no cuda_releases row" in found["missing-release"]
    assert "bundled driver 560.28.03" in found["missing-release"]
    assert "12.6" in found["no-driver-branch"]


def test_a_different_bundled_driver_and_cudart_are_reported(tmp_path: Path, matrix: Path) -> None:
    found = kinds(tmp_path, matrix, manifest(tmp_path, "12.4.1", driver="550.54.16", cudart="12.4.127"))
    assert found["min-driver"] == "CUDA 12.4.1: min_driver 550.54.15 differs from the bundled driver 550.54.16"
    assert "NV_CUDA_CUDART_VERSION 12.4.99-1" in found["cudart"] and "12.4.127" in found["cudart"]


def test_an_agreeing_manifest_gives_nothing_and_an_uncertain_row_it_confirms_is_named(tmp_path: Path, matrix: Path) -> None:
    assert kinds(tmp_path, matrix, manifest(tmp_path, "12.4.1", driver="550.54.15", cudart="12.4.99")) == {}
    found = kinds(tmp_path, matrix, manifest(tmp_path, "12.5.0", driver="555.42.02"))
    assert set(found) == {"confirmable", "no-driver-branch"}


def test_a_manifest_without_a_driver_says_where_the_minimum_must_come_from(tmp_path: Path, matrix: Path) -> None:
    found = kinds(tmp_path, matrix, manifest(tmp_path, "12.4.0"))
    assert "bundles no driver" in found["no-bundled-driver"]


@pytest.mark.parametrize("text,why", [
    ("{not json", "not JSON"),
    ("[1, 2]", "a JSON object is expected"),
    ('{"release_label": "13.4"}', "is not X.Y.Z"),
    ('{"release_label": "13.4.1\\u001b[31m"}', "is not X.Y.Z"),
    ('{"release_label": "10.14.1", "release_product": "tensorrt"}', "not the CUDA toolkit's"),
    ("[" * 100000 + "]" * 100000, "not JSON"),
])
def test_what_is_not_a_manifest_is_one_line_and_exit_2(tmp_path: Path, matrix: Path, capsys, text: str, why: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(ManifestError, match=why):
        read_manifest(bad)
    assert main(["--matrix", str(matrix), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("refresh: ") and "\x1b" not in err


def test_run_as_a_module_with_json_output_and_exit_1_on_differences(tmp_path: Path, matrix: Path) -> None:
    path = manifest(tmp_path, "12.6.0", driver="560.28.03")
    run = subprocess.run([sys.executable, "-m", "imagelint.matrix.refresh", "--matrix", str(matrix),
                          "--format", "json", str(path)], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    assert {d["kind"] for d in json.loads(run.stdout)} == {"missing-release", "no-driver-branch"}
    agreeing = manifest(tmp_path, "12.4.1", driver="550.54.15", cudart="12.4.99")
    assert main(["--matrix", str(matrix), str(agreeing)]) == 0


def test_the_shipped_matrix_knows_the_releases_up_to_13_5(tmp_path: Path) -> None:
    """The shipped rows agree with manifests shaped like NVIDIA's for releases it documents."""
    shipped = load_matrix()
    assert differences(read_manifest(manifest(tmp_path, "13.3.0", driver="610.43.02", cudart="13.3.29")), shipped) == []
    found = {d.kind for d in differences(read_manifest(manifest(tmp_path, "13.5.0", cudart="13.5.37")), shipped)}
    assert found == {"no-bundled-driver"}
