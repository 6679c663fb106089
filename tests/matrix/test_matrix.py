"""The shipped matrix, its queries, overlays, validation errors and the JSON Schema."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from imagelint.errors import ConfigError
from imagelint.matrix import load_matrix, matrix_from_text, shipped_versions
from imagelint.matrix.schema import SECTIONS, json_schema
from tests.matrix.conftest import REPO, reference_json

MATRICES = REPO / "matrices"
SCHEMA_FILE = REPO / "imagelint" / "schemas" / "matrix.schema.json"


@pytest.fixture(scope="module")
def m():
    return load_matrix()


def shipped_files() -> list[Path]:
    return [MATRICES / f"{v}.toml" for v in shipped_versions()]


def test_newest_is_default_and_files_are_found(m) -> None:
    versions = shipped_versions()
    assert versions and versions == sorted(versions)
    assert m.version == versions[-1] and m.schema_version == 1
    assert load_matrix(versions[-1]).sections == m.sections
    assert load_matrix(str(MATRICES / f"{versions[-1]}.toml")).sections == m.sections


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.name)
def test_shipped_files_validate_against_json_schema(path: Path) -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(tomllib.loads(path.read_text()), schema)


def test_schema_file_matches_runtime_spec() -> None:
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema()


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.name)
def test_every_row_has_a_source(path: Path) -> None:
    doc = tomllib.loads(path.read_text())
    for section in SECTIONS:
        for row in doc.get(section, []):
            assert row["source"].strip(), (section, row)


def test_cuda_table_matches_reference(m) -> None:
    ref = reference_json("cuda-driver-table.json")["toolkit_releases"]
    numeric = [r for r in ref if r["min_linux_x86_64_driver"].replace(".", "").isdigit()]
    # Rows older than the reference table (CUDA 7.0-9.2) are maintained by hand and say so.
    extra = [r for r in m.cuda_releases() if int(r.version.split(".")[0]) < 10]
    rows = {row["version"]: row for row in m.rows("cuda_releases")}
    assert extra and all("maintained by hand" in rows[r.version].get("note", "") for r in extra), extra
    # Releases the reference predates (13.4, 13.5, the redistributable re-releases) come from
    # NVIDIA's release notes and redistributable manifests, and say so.
    known = {"10.1.105" if r["toolkit_version"] == "10.1" else r["toolkit_version"] for r in numeric}
    newer = [r for r in m.cuda_releases() if int(r.version.split(".")[0]) >= 10 and r.version not in known]
    assert all("redistrib_" in r.source or "release-notes" in r.source for r in newer), newer
    assert len(m.cuda_releases()) - len(extra) - len(newer) == len(numeric)
    for r in numeric:
        version = "10.1.105" if r["toolkit_version"] == "10.1" else r["toolkit_version"]
        release = m.cuda_release(version)
        assert release is not None and release.min_driver == r["min_linux_x86_64_driver"], version
        # a row the reference marks uncertain is documented once NVIDIA's manifest was read
        documented_since = not release.uncertain and "redistrib_" in release.source
        assert release.uncertain == bool(r.get("uncertain")) or documented_since, version


def test_driver_floor_exact_and_ga(m) -> None:
    exact = m.driver_floor("12.4.1")
    assert (exact.min_driver, exact.release, exact.exact, exact.uncertain) == ("550.54.15", "12.4.1", True, False)
    ga = m.driver_floor("12.4")
    assert (ga.min_driver, ga.release, ga.exact) == ("550.54.14", "12.4.0", False)
    unknown_patch = m.driver_floor("12.4.7")
    assert (unknown_patch.min_driver, unknown_patch.exact) == ("550.54.14", False)
    assert m.driver_floor("12.2.2.009").min_driver == "535.104.05"  # NGC's 4-part CUDA_VERSION
    assert m.driver_floor("11.0").release == "11.0.2"  # 11.0.1 was the RC
    assert m.driver_floor("9.2").min_driver == "396.26"  # hand-maintained rows below the reference table
    assert m.driver_floor("9.0.176").min_driver == "384.81"  # nvidia/cuda:9.0's CUDA_VERSION: the GA floor
    assert m.driver_floor("6.5") is None and m.driver_floor("twelve") is None
    assert m.driver_floor("13.3.0").uncertain is False  # the 13.3 redistributable manifest bundles 610.43.02
    assert m.driver_floor("13.4").uncertain is True and m.driver_floor("13.4").release == "13.4.1"
    # 13.4's floor is the driver CUDA 13.4.1 ships in NGC 26.08's environment, not a bare "615"
    # that any 615.x would pass (issue 37); uncertain, its source being a copy of that env
    ga = m.cuda_release("13.4")
    assert (ga.min_driver, ga.uncertain) == ("615.65.02", True) and m.cuda_release("13.4.0") is None  # 13.4.0: a preview


def test_minor_version_compat(m) -> None:
    assert m.minor_version_compat(12).min_driver == "525.60.13"
    assert m.minor_version_compat(12).below_branch == 580
    assert m.minor_version_compat(11).min_driver == "450.80.02"
    assert m.minor_version_compat(13).min_driver == "580"
    assert m.minor_version_compat(10) is None


def test_cuda_for_driver(m) -> None:
    assert m.cuda_for_driver("535.104.05") == "12.2"
    assert m.cuda_for_driver("470.57.02") == "11.4"
    assert m.cuda_for_driver("580.95.05") == "13.0"
    assert m.driver_branch_info("565.57.01").uncertain is True
    assert m.cuda_for_driver("400.1") is None and m.cuda_for_driver("garbage") is None
    # A driver newer than every branch the matrix knows maps to nothing, not to the newest branch.
    assert m.cuda_for_driver("999.1") is None and m.driver_branch_info("999.1") is None
    assert m.cuda_for_driver("R535") == "12.2"


def test_forward_compat(m) -> None:
    fc = m.forward_compat("12.8.1")
    assert fc.package == "cuda-compat-12-8"
    assert fc.host_branches == (470, 525, 535, 545) and fc.not_needed_branches == (570,)  # R470-R545 from NGC 25.02
    assert "geforce" not in fc.eligible_kinds and "GeForce" not in fc.eligible_brands
    assert fc.brands_uncertain
    assert m.forward_compat("13.0").host_branches == (535, 570)
    # End-of-life host branches come from NGC release notes (22.10: CUDA 11.8 on R450/R470/R510/R515).
    assert m.forward_compat("11.8").host_branches == (450, 470, 510, 515)
    assert 470 in m.forward_compat("12.2").host_branches
    assert m.forward_compat("10.2") is None


@pytest.mark.parametrize(
    "name,cc",
    [("H100", "9.0"), ("H100-SXM5-80GB", "9.0"), ("NVIDIA-H100-80GB-HBM3", "9.0"), ("nvidia h100 80gb hbm3", "9.0"),
     ("T4", "7.5"), ("Tesla-T4", "7.5"), ("Tesla-T4-SHARED", "7.5"), ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "8.0"),
     ("B300", "10.3"), ("RTX 5090", "12.0")],
)
def test_gpu_aliases(m, name: str, cc: str) -> None:
    gpu = m.gpu(name)
    assert gpu is not None and gpu.compute_capability == cc


def test_gpu_brand_is_flagged_uncertain(m) -> None:
    h100 = m.gpu("H100")
    assert h100.datacenter and h100.family == "hopper" and h100.brand_uncertain
    assert m.gpu("RTX 4090").kind == "geforce" and not m.gpu("RTX 4090").datacenter
    assert m.gpu("") is None and m.gpu("Voodoo 2") is None


def test_ngc_images(m) -> None:
    verified = m.ngc_image("nvcr.io/nvidia/pytorch", "23.10-py3")
    assert verified.cuda == "12.2.2" and not verified.uncertain
    recalled = m.ngc_image("nvidia/pytorch", "24.05-py3")
    assert recalled.cuda == "12.4.1" and recalled.uncertain
    assert m.ngc_image("nvcr.io/nvidia/pytorch", "25.12").cuda == "13.1.0"
    assert m.ngc_image("nvcr.io/nvidia/pytorch", "19.01-py3") is None


def test_toolkit(m) -> None:
    assert m.toolkit_default_runtime_mode("1.17.8") == "legacy"
    assert m.toolkit_default_runtime_mode("1.18.0") == "jit-cdi"
    assert m.toolkit_default_runtime_mode("v1.19.5") == "jit-cdi"  # unknown patch still resolves
    tk = m.toolkit("v1.18.0")
    assert tk.default_runtime_mode == "jit-cdi" and "jit-cdi-default" in tk.features
    assert "nvml-brand-names" not in m.toolkit("1.8.1").features
    assert m.toolkit_has("1.9.0", "nvml-brand-names")
    assert m.toolkit("9.9.9") is None


def test_device_plugin_and_operator(m) -> None:
    dp = m.device_plugin("v0.15.0")
    assert dp.date == "2024-04-16" and "strategy-cdi-cri" in dp.features
    assert "strategy-cdi-annotations" not in m.device_plugin("0.13.0").features
    assert m.device_plugin_requirement("min_toolkit") == "1.7.0"
    op = m.gpu_operator("v25.10.0")
    assert op.default_driver == "580.95.05" and op.container_toolkit == "1.18.0" and op.device_plugin == "0.18.0"
    assert m.gpu_operator("26.7.0").default_driver == "595.91.07"


def test_to_toml_round_trips(m) -> None:
    again = matrix_from_text(m.to_toml(), "roundtrip")
    assert again.sections == m.sections and again.version == m.version


# --- errors -------------------------------------------------------------------------------------

MINIMAL = """\
[meta]
kind = "imagelint-matrix"
schema_version = 1
data_version = "2030-01-01"

[[cuda_releases]]
version = "12.4.0"
label = "CUDA 12.4 GA"
release_kind = "ga"
min_driver = "550.54.14"
source = "test"

[[minor_version_compat]]
cuda_major = 12
min_driver = "525.60.13"
source = "test"

[[driver_branches]]
branch = 550
max_cuda = "12.4"
source = "test"
"""


def test_minimal_matrix_loads_from_a_path(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(MINIMAL)
    loaded = load_matrix(str(path))
    assert loaded.version == "2030-01-01" and loaded.driver_floor("12.4").min_driver == "550.54.14"
    assert loaded.gpu("H100") is None  # sections may be absent


@pytest.mark.parametrize(
    "edit,expected",
    [
        (lambda t: t.replace('source = "test"\n\n[[minor', '\n[[minor'), "cuda_releases[0]: missing 'source'"),
        (lambda t: t.replace('min_driver = "550.54.14"', 'min_driver = 550'), "cuda_releases[0]: 'min_driver' must be string"),
        (lambda t: t.replace('min_driver = "550.54.14"', 'min_driver = "r550"'), "does not look like a numeric version"),
        (lambda t: t.replace('release_kind = "ga"', 'release_kind = "beta"'), "must be one of ga, update, rc"),
        (lambda t: t + '\n[[gpus]]\nname = "x"\nsource = "s"\n', "gpus[0]: missing 'aliases'"),
        (lambda t: t.replace("schema_version = 1", "schema_version = 7"), "schema_version 7 is not supported"),
        (lambda t: t.replace('"2030-01-01"', '"2030-02-30"'), "not a real date"),
        (lambda t: t.replace('"2030-01-01"', "2030-01-01"), "must be a quoted string"),
        (lambda t: t + "\n[[cuda_releases]]\nversion = \"12.4.0\"\nlabel = \"dup\"\nrelease_kind = \"ga\"\nmin_driver = \"1\"\nsource = \"s\"\n", "cuda_releases[1]: duplicate of cuda_releases[0]"),
        (lambda t: t + "\n[[bogus]]\nsource = \"s\"\n", "unknown section 'bogus'"),
        (lambda t: t.replace("[meta]", "[meta]\ncolour = \"red\""), "meta: unknown key 'colour'"),
        (lambda t: t + "\nthis is not toml", "not valid TOML"),
        (lambda t: t.replace('kind = "imagelint-matrix"', 'kind = "imagelint-matrix-overlay"'), "this is an overlay"),
    ],
)
def test_broken_files_name_file_row_and_line(tmp_path: Path, edit, expected: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(edit(MINIMAL))
    with pytest.raises(ConfigError) as info:
        load_matrix(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}:") and expected in message
    assert info.value.exit_code == 2 and "\n" not in message


def test_row_errors_carry_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(MINIMAL.replace('min_driver = "525.60.13"', 'min_driver = "x"'))
    with pytest.raises(ConfigError) as info:
        load_matrix(str(path))
    line = MINIMAL.splitlines().index("[[minor_version_compat]]") + 1
    assert str(info.value).startswith(f"{path}:{line}: minor_version_compat[0]:")


def test_unknown_version_and_missing_file() -> None:
    with pytest.raises(ConfigError, match="unknown matrix version '1999-01-01'"):
        load_matrix("1999-01-01")
    with pytest.raises(ConfigError, match="no such matrix file"):
        load_matrix("/nonexistent/m.toml")


OVERLAY = """\
[meta]
kind = "imagelint-matrix-overlay"
schema_version = 1
data_version = "2030-01-02"

[[cuda_releases]]
version = "12.4.0"
label = "CUDA 12.4 GA (site override)"
release_kind = "ga"
min_driver = "550.90.07"
source = "site policy"

[[gpus]]
name = "Site GPU"
aliases = ["SITE-X1"]
compute_capability = "9.0"
family = "hopper"
brand = "Nvidia"
brand_confidence = "uncertain"
kind = "datacenter"
datacenter = true
source = "site inventory"
"""


def test_overlay_overrides_and_adds(tmp_path: Path) -> None:
    overlay = tmp_path / "site.toml"
    overlay.write_text(OVERLAY)
    merged = load_matrix(None, [str(overlay)])
    assert merged.driver_floor("12.4").min_driver == "550.90.07"
    assert merged.driver_floor("12.4.1").min_driver == "550.54.15"  # untouched rows stay
    assert merged.gpu("site-x1").name == "Site GPU"
    assert merged.origin.endswith(f"+{overlay}")
    base_count = len(load_matrix().rows("cuda_releases"))
    assert len(merged.rows("cuda_releases")) == base_count


def test_broken_overlay_names_the_overlay(tmp_path: Path) -> None:
    overlay = tmp_path / "site.toml"
    overlay.write_text(OVERLAY.replace('source = "site inventory"\n', ""))
    with pytest.raises(ConfigError, match=rf"^{overlay}:\d+: gpus\[0\]: missing 'source'$"):
        load_matrix(None, [str(overlay)])


def test_other_teams_toml_in_matrices_dir_is_ignored() -> None:
    assert all(not v.startswith("driver") for v in shipped_versions())


def test_matrix_is_hashable_for_caches(m) -> None:
    assert hash(m) == hash(load_matrix())
    assert {m: 1}[load_matrix()] == 1


def test_only_files_named_by_an_ascii_date_are_matrix_versions() -> None:
    from imagelint.matrix.loader import _file_version

    assert _file_version("2026-11-30.toml") == "2026-11-30"
    for name in ("2026-1-30.toml", "2026-11-30.toml.bak", "x2026-11-30.toml", "2026-11-30.TOML", "2026_11-30.toml",
                 "２026-11-30.toml", "2026-11-٣0.toml", ".toml", "driver-libraries.toml"):
        assert _file_version(name) is None, name
