"""The refresh reads NVIDIA's driver manifests and PyPI's wheel metadata too, and writes the rows
the manifests determine as a matrix overlay (issue 37). Fixtures are our own, in the shapes of
``redistrib_<driver>.json`` (release_date / release_label / release_product "nvidia-driver",
components with ``cuda_variant``) and of ``https://pypi.org/pypi/<name>/json`` (``info`` +
``releases`` with ``upload_time_iso_8601``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from imagelint.matrix import load_matrix
from imagelint.matrix.refresh import ManifestError, derived_rows, main, read_any
from tests.matrix.test_refresh import MATRIX, manifest

BRANCHES = MATRIX + """
[[driver_branches]]
branch = 555
max_cuda = "12.5"
source = "test"
confidence = "uncertain"
"""


@pytest.fixture()
def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(BRANCHES)
    return path


def driver_manifest(tmp_path: Path, driver: str, variants: list, date: str = "2030-03-04") -> Path:
    def component(name: str) -> dict:
        archive = f"{name}/linux-x86_64/{name}-linux-x86_64-{driver}-archive.tar.xz"
        return {"name": name, "license": "NVIDIA Driver", "license_path": f"{name}/LICENSE.txt", "version": driver,
                "cuda_variant": variants,
                "linux-x86_64": {"relative_path": archive, "sha256": "0" * 64, "md5": "0" * 32, "size": "1024"}}

    doc = {"release_date": date, "release_label": driver, "release_product": "nvidia-driver",
           "nvidia_driver": component("nvidia_driver"), "fabricmanager": component("fabricmanager")}
    path = tmp_path / f"redistrib_{driver}.json"
    path.write_text(json.dumps(doc, indent=4))
    return path


def pypi(tmp_path: Path, name: str, version: str) -> Path:
    upload = {"filename": f"{name.replace('-', '_')}-{version}-py3-none-manylinux_2_27_x86_64.whl",
              "upload_time_iso_8601": "2030-05-06T07:08:09.123456Z", "packagetype": "bdist_wheel"}
    doc = {"info": {"name": name, "version": version, "summary": "CUDA Runtime native Libraries"},
           "releases": {version: [upload], "12.4.127": []}, "urls": [upload]}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def kinds(matrix: Path, *paths: Path) -> dict[str, str]:
    from imagelint.matrix.refresh import _differences

    m = load_matrix(str(matrix))
    return {d.kind: d.message for p in paths for d in _differences(read_any(p), m)}


def test_a_driver_manifest_gives_its_branch_and_cuda(tmp_path: Path, matrix: Path) -> None:
    found = kinds(matrix, driver_manifest(tmp_path, "620.10.01", ["13.5", "12.9"]))
    assert "no driver_branches row for R620" in found["missing-branch"] and "CUDA 13.5" in found["missing-branch"]
    assert kinds(matrix, driver_manifest(tmp_path, "550.54.15", ["12.4"])) == {}
    assert "differs" in kinds(matrix, driver_manifest(tmp_path, "550.90.07", ["12.6"]))["branch-cuda"]
    assert "confirmable" in kinds(matrix, driver_manifest(tmp_path, "555.42.02", ["cuda12.5"]))


def test_a_variant_that_names_only_a_major_derives_nothing(tmp_path: Path, matrix: Path) -> None:
    path = driver_manifest(tmp_path, "620.10.01", ["13"])
    assert set(kinds(matrix, path)) == {"no-cuda-minor"}
    assert derived_rows([read_any(path)], load_matrix(str(matrix))) == {}


def test_pypi_metadata_names_a_cuda_the_matrix_lacks(tmp_path: Path, matrix: Path) -> None:
    found = kinds(matrix, pypi(tmp_path, "nvidia-cuda-runtime", "13.5.37"))
    assert "CUDA 13.5" in found["missing-release"] and "uploaded 2030-05-06" in found["missing-release"]
    assert kinds(matrix, pypi(tmp_path, "nvidia-cuda-nvcc-cu12", "12.4.131")) == {}
    with pytest.raises(ManifestError, match="not of nvidia-cuda-runtime"):
        read_any(pypi(tmp_path, "requests", "2.32.3"))


def test_the_derived_rows_are_a_valid_overlay_citing_their_manifests(tmp_path: Path, matrix: Path) -> None:
    out = tmp_path / "derived.toml"
    paths = [manifest(tmp_path, "12.6.0", "2030-02-01", driver="560.28.03", cudart="12.6.37"),
             manifest(tmp_path, "12.5.0", driver="555.42.02"),  # confirms the uncertain 12.5.0 row
             manifest(tmp_path, "13.6.0", cudart="13.6.1"),     # no bundled driver: reported, not derived
             driver_manifest(tmp_path, "620.10.01", ["13.5"]), driver_manifest(tmp_path, "555.42.02", ["12.5"]),
             pypi(tmp_path, "nvidia-cuda-runtime", "13.5.37")]
    assert main(["--matrix", str(matrix), "--write-overlay", str(out), *map(str, paths)]) == 1
    merged = load_matrix(str(matrix), overlays=[str(out)])
    new = merged.cuda_release("12.6.0")
    assert (new.min_driver, new.release_kind, new.uncertain) == ("560.28.03", "ga", False)
    assert "redistrib_12.6.0.json" in new.source
    assert not merged.cuda_release("12.5.0").uncertain and merged.cuda_release("13.6.0") is None
    assert merged.driver_branch_info("620.10.01").max_cuda == "13.5"
    assert not merged.driver_branch_info("555.42.02").uncertain
    assert "nvidia-driver/redist/redistrib_620.10.01.json" in out.read_text()


@pytest.mark.parametrize("doc,why", [
    ({"release_product": "nvidia-driver", "release_label": "620.10.01\u001b[31m"}, "not a driver version"),
    ({"release_product": "nvidia-driver", "release_label": "1" * 5000}, "not a driver version"),
    ({"info": {"name": "nvidia-cuda-runtime", "version": "13.5"}, "releases": {}}, "not X.Y.Z"),
    ({"info": {"name": ["x"], "version": "1.2.3"}, "releases": {}}, "not of nvidia-cuda-runtime"),
])
def test_hostile_manifests_are_one_line_and_exit_2(tmp_path: Path, matrix: Path, capsys, doc, why) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ManifestError, match=why):
        read_any(bad)
    assert main(["--matrix", str(matrix), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and len(err) < 400


def test_odd_variants_are_skipped_and_the_work_is_bounded(tmp_path: Path, matrix: Path) -> None:
    doc = {"release_product": "nvidia-driver", "release_label": "620.10.01",
           **{f"c{i}": {"cuda_variant": [None, 13, "13.x", "13.5", {"a": 1}] * 50} for i in range(5000)}}
    path = tmp_path / "big.json"
    path.write_text(json.dumps(doc))
    assert read_any(path).cuda_variants == ("13.5",)


def test_the_overlay_is_never_written_through_a_symlink(tmp_path: Path, matrix: Path, capsys) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / "out.toml"
    os.symlink(victim, link)
    assert main(["--matrix", str(matrix), "--write-overlay", str(link),
                 str(driver_manifest(tmp_path, "620.10.01", ["13.5"]))]) == 2
    assert victim.read_text() == "keep" and "cannot write" in capsys.readouterr().err


def test_the_scheduled_workflow_runs_the_refresh_with_flags_it_has() -> None:
    import shlex

    import yaml

    from imagelint.matrix.refresh import _arguments

    workflow = yaml.safe_load((Path(__file__).resolve().parents[2] / "deploy" / "github-matrix-refresh.yml").read_text())
    runs = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    [line] = [" ".join(r.replace("\\\n", " ").split()) for r in runs if "imagelint.matrix.refresh" in r]
    words = shlex.split(line.split("imagelint.matrix.refresh", 1)[1].split(">", 1)[0])
    args = _arguments(words)  # argparse exits on an unknown flag
    assert args.write_overlay and args.manifests == ["manifests/*.json"]
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["schedule"] and {"contents", "pull-requests"} <= set(workflow["permissions"])
