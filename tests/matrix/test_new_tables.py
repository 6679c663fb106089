"""The tables static linting needs: official image env, device-plugin naming, PTX ISA, NVIDIA names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from imagelint.errors import ConfigError
from imagelint.matrix import load_matrix, matrix_from_text
from imagelint.matrix.schema import SECTIONS
from imagelint.matrix.shipped import _slice, device_plugin_naming, nvidia_name, shipped_section
from tests.matrix.conftest import REPO, reference_json
from tests.matrix.test_matrix import MINIMAL

IMAGE_KEYS = ("NVIDIA_REQUIRE_CUDA", "CUDA_VERSION", "NV_CUDA_CUDART_VERSION", "NV_CUDA_COMPAT_PACKAGE",
              "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LD_LIBRARY_PATH")


@pytest.fixture(scope="module")
def m():
    return load_matrix()


# --- official CUDA image env ---------------------------------------------------------------------

def _reference_env(entry: dict, arch: str) -> dict[str, str]:
    env = {**entry["common_env"], **entry[arch]}
    return {k: v for k, v in env.items() if k in IMAGE_KEYS}


@pytest.mark.parametrize("entry", reference_json("cuda-image-env.json")["entries"], ids=lambda e: e["cuda_image_version"])
def test_every_reference_image_is_in_the_table(m, entry: dict) -> None:
    version = entry["cuda_image_version"]
    amd64 = m.cuda_image(version, "amd64")
    expected = _reference_env(entry, "amd64")
    if entry["flavor"] == "derived image env":  # 13.0.2: the derived image's LD_LIBRARY_PATH is not the base's
        expected.pop("LD_LIBRARY_PATH")
    assert dict(amd64.env) == expected
    assert amd64.env["NVIDIA_REQUIRE_CUDA"] == entry["amd64"]["NVIDIA_REQUIRE_CUDA"]  # verbatim, quirks included
    arm64 = m.cuda_image(version, "arm64")
    if entry["arm64"]:
        assert dict(arm64.env) == _reference_env(entry, "arm64")
    else:
        assert arm64 is None  # no data for that arch: no guess
    secondary = entry.get("reconstructed_from_pattern") or "FMCL-Docker" not in entry["source"]
    assert amd64.uncertain == bool(secondary)
    assert amd64.sources[0] == entry["source"]


def test_image_env_quirks_survive(m) -> None:
    assert m.cuda_image_env("12.3.2", "arm64")["NVIDIA_REQUIRE_CUDA"].startswith("CUDA>=12.3")  # uppercase on arm64
    assert " driver>=450" in m.cuda_image_env("11.3.1")["NVIDIA_REQUIRE_CUDA"]  # bare OR term
    assert "NV_CUDA_COMPAT_PACKAGE" not in m.cuda_image_env("12.4.1", "arm64")
    assert m.cuda_image_env("12.4.1")["NV_CUDA_COMPAT_PACKAGE"] == "cuda-compat-12-4"
    assert "NVIDIA_REQUIRE_CUDA" not in m.cuda_image_env("11.6.1", "arm64")  # as the snapshot has it
    assert "geforce" not in m.cuda_image_env("12.6.3")["NVIDIA_REQUIRE_CUDA"]


def test_image_lookup_is_exact(m) -> None:
    assert m.cuda_image_env("12.4") is None and m.cuda_image_env("12.4.0") is not None
    assert m.cuda_image_env("12.7.0") is None and m.cuda_image_env("twelve") is None
    assert m.cuda_image_env("v12.4.1") == m.cuda_image_env("12.4.1")
    for alias in ("x86_64", "linux/amd64", "AMD64"):
        assert m.cuda_image_env("12.4.1", alias) == m.cuda_image_env("12.4.1", "amd64")
    for alias in ("aarch64", "linux/arm64/v8", "sbsa"):
        assert m.cuda_image_env("12.4.1", alias) == m.cuda_image_env("12.4.1", "arm64")
    assert m.cuda_image_env("12.4.1", "ppc64le") is None
    shared = m.cuda_image("12.6.3", "arm64")
    assert shared.arch == "any" and shared.env == m.cuda_image("12.6.3", "amd64").env


def test_flavors_build_on_each_other(m) -> None:
    base = m.cuda_image_env("12.4.1")
    assert m.cuda_image_env("12.4.1", flavor="base") == base
    assert m.cuda_image_env("12.4.1", flavor="runtime") == base
    devel = m.cuda_image("12.4.1", flavor="devel")
    assert dict(devel.env) == {**base, "LIBRARY_PATH": "/usr/local/cuda/lib64/stubs"}
    assert len(devel.sources) == 3 and not devel.uncertain  # base row, runtime row, devel row
    cudnn = m.cuda_image("12.4.1", flavor="cudnn8-devel")  # old tag spelling
    assert cudnn.env["LIBRARY_PATH"] == "/usr/local/cuda/lib64/stubs" and cudnn.uncertain
    assert m.cuda_image_env("12.4.1", flavor="tensorrt") is None


def test_a_flavor_loop_in_an_overlay_is_refused_not_hung(tmp_path: Path) -> None:
    text = MINIMAL + (
        '\n[[cuda_image_env]]\nversion = "1.0.0"\narch = "any"\nflavor = "base"\nenv = ["A=1"]\nsource = "t"\n'
        '\n[[cuda_image_flavors]]\nflavor = "x"\nparent = "y"\nenv = []\nsource = "t"\n'
        '\n[[cuda_image_flavors]]\nflavor = "y"\nparent = "x"\nenv = []\nsource = "t"\n'
    )
    mine = matrix_from_text(text, "loop.toml")
    assert mine.cuda_image_env("1.0.0") == {"A": "1"} and mine.cuda_image_env("1.0.0", flavor="x") is None


@pytest.mark.parametrize(
    "row, expected",
    [
        ('version = "1.0"\narch = "any"\nflavor = "base"\nenv = ["NOEQUALS"]', "does not look like NAME=value"),
        ('version = "1.0"\narch = "riscv"\nflavor = "base"\nenv = []', "must be one of amd64, arm64, any"),
        ('version = "1.0"\narch = "any"\nflavor = "base"', "missing 'env'"),
    ],
)
def test_bad_image_rows_are_refused_with_file_and_line(tmp_path: Path, row: str, expected: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(MINIMAL + f"\n[[cuda_image_env]]\n{row}\nsource = \"t\"\n")
    with pytest.raises(ConfigError) as info:
        load_matrix(str(path))
    line = path.read_text().splitlines().index("[[cuda_image_env]]") + 1
    assert str(info.value).startswith(f"{path}:{line}: cuda_image_env[0]:") and expected in str(info.value)


# --- device plugin naming ----------------------------------------------------------------------

def test_device_plugin_naming(m) -> None:
    naming = m.device_plugin_naming()
    assert (naming.prefix, naming.full_gpu, naming.shared_suffix, naming.max_length) == ("nvidia.com", "nvidia.com/gpu", ".shared", 63)
    assert naming.mig_resource("3g.20gb") == "nvidia.com/mig-3g.20gb"
    assert naming.is_mig_resource("nvidia.com/mig-1g.5gb") and not naming.is_mig_resource("nvidia.com/gpu")
    assert not naming.is_mig_resource("nvidia.com/mig-")
    assert naming.is_shared("nvidia.com/gpu.shared") and not naming.is_shared("nvidia.com/gpu")
    assert naming.advertised("none", ("1g.5gb",)) == {"nvidia.com/gpu"}
    assert naming.advertised("single", ("1g.5gb",)) == {"nvidia.com/gpu"}
    assert naming.advertised("mixed", ("1g.5gb", "2g.10gb")) == {"nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb"}
    assert naming.advertised("mixed", ()) == {"nvidia.com/gpu"}  # a non-MIG GPU under mixed
    assert naming.advertised(None) == {"nvidia.com/gpu"}
    ref = reference_json("device-plugin-releases.json")["resource_names"]
    assert naming.full_gpu == ref["default"] and "63" in ref["constraints"] and naming.prefix in ref["constraints"]


def test_naming_falls_back_to_the_shipped_table(tmp_path: Path) -> None:
    minimal = matrix_from_text(MINIMAL, "minimal.toml")
    assert minimal.device_plugin_naming() is None
    assert device_plugin_naming(minimal) == load_matrix().device_plugin_naming() == device_plugin_naming(None)


# --- PTX ISA --------------------------------------------------------------------------------------

def test_ptx_isa_to_cuda(m) -> None:
    assert m.ptx_isa("8.4").min_cuda == "12.4"
    assert m.ptx_isa("9.0").min_cuda == "13.0"
    assert m.ptx_isa("8.6").min_cuda == "12.7"  # no PTX ISA came with 12.6
    assert m.ptx_isa("7.0").min_cuda == "11.0" and m.ptx_isa("8.2").min_cuda == "12.2"
    assert m.ptx_isa("9.4").min_cuda == "13.4" and m.ptx_isa("9.5").min_cuda == "13.5"  # ptxas 13.4 / 13.5 (PyPI)
    assert m.ptx_isa("9.6") is None and m.ptx_isa("x") is None  # unverified: left out
    rows = m.rows("ptx_isa_versions")
    cudas = [r["min_cuda"] for r in rows]
    # every CUDA named from 10.0 on is a release the matrix knows, or one a driver branch reports (12.7: R565)
    reported = {r["max_cuda"] for r in m.rows("driver_branches")}
    known = [c for c in cudas if int(c.split(".")[0]) >= 10]
    assert all(m.cuda_release(c) is not None or c in reported for c in known), known


# --- NVIDIA names ---------------------------------------------------------------------------------

def test_node_label_rows_name_real_gfd_labels(m) -> None:
    known = {label["name"] for label in reference_json("gfd-labels.json")["labels"]}
    rows = [r for r in m.rows("nvidia_names") if r["kind"] == "node-label"]
    assert len(rows) >= 10
    for row in rows:
        assert set(row["values"]) <= known, row["name"]
    assert m.nvidia_name("gfd-driver-version-parts-deprecated").deprecated
    assert m.nvidia_name("nope") is None


@pytest.mark.parametrize("section", sorted(SECTIONS))
def test_shipped_section_equals_the_full_load(m, section: str) -> None:
    assert [dict(r) for r in shipped_section(section)] == m.rows(section)


def test_slice_takes_only_the_section() -> None:
    text = '[meta]\nk = 1\n\n[[a]]\nx = 1\n\n[[b]]\ny = 2\n\n[[a]]\nx = 3\n'
    assert _slice(text, "a") == '[[a]]\nx = 1\n\n[[a]]\nx = 3\n'
    assert _slice(text, "c") == ""


def test_facts_names_come_from_the_matrix(m) -> None:
    from imagelint.facts import names

    assert names.CUDA_VERSION_LABELS == m.nvidia_name("cuda-version-labels").values == ("com.nvidia.cuda.version",)
    assert "NVARCH" in names.OFFICIAL_CUDA_ENV
    assert names.NGC_DRIVER_ENV == ("CUDA_DRIVER_VERSION",)
    assert (names.NGC_RELEASE_ENV_PREFIX, names.NGC_RELEASE_ENV_SUFFIX) == ("NVIDIA_", "_VERSION")
    assert names.OFFICIAL_CUDA_MAINTAINER_LABEL[0] == "maintainer"
    with pytest.raises(AttributeError):
        names.NOT_A_NAME  # noqa: B018
    with pytest.raises(ConfigError, match="no nvidia_names row 'nope'"):
        nvidia_name("nope")


def test_cluster_names_come_from_the_matrix() -> None:
    from imagelint.cluster import nvidia_names, operator

    nv = nvidia_names.nvidia_names()
    assert nvidia_names.LABEL_DRIVER_FULL == nv.driver_full == "nvidia.com/cuda.driver-version.full"
    assert nv.product_mig.search("A100-SXM4-40GB-MIG-1g.5gb").group(1) == "1g.5gb"
    assert nv.product_shared.search("Tesla-T4-SHARED") and not nv.product_shared.search("Tesla-T4")
    assert nv.mig_mixed_count.match("nvidia.com/mig-3g.20gb.count").group(1) == "3g.20gb"
    assert nv.volatile_labels.match("nvidia.com/gfd.timestamp") and not nv.volatile_labels.match("nvidia.com/gpu.product")
    assert nv.kept_labels.match("feature.node.kubernetes.io/pci-10de.present") and not nv.kept_labels.match("example.com/x")
    assert operator._image_kind("nvcr.io/nvidia/k8s-device-plugin:v0.17.0") == "device-plugin"
    assert operator._image_kind("nvcr.io/nvidia/k8s/container-toolkit:v1.17.0-ubuntu20.04") == "toolkit"
    assert operator._image_kind("nginx:1") is None


_PROBE = """
import json
from imagelint.facts import names
from imagelint.matrix import loader
from imagelint.matrix.shipped import shipped_section
names.CUDA_VERSION_LABELS, names.OFFICIAL_CUDA_ENV
print(json.dumps({"full_loads": loader._load_file_cached.cache_info().currsize,
                  "sections": shipped_section.cache_info().currsize}))
"""


def test_names_read_one_table_not_the_whole_matrix() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"full_loads": 0, "sections": 1}
