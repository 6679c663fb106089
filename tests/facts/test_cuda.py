from __future__ import annotations

import json
from pathlib import Path

import pytest

from imagelint.facts.cuda import (
    parse_libcudart_name,
    parse_libcudart_soname,
    parse_torch_version_py,
    parse_version_json,
    parse_version_txt,
    parse_wheel_dist_info,
)
from tests.facts.helpers import facts_for
from tests.support.imagebuilder import Dir, File, ImageSpec, Symlink

VERSION_JSON = json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.4.1"},
                           "cuda_cudart": {"name": "CUDA Runtime (cudart)", "version": "12.4.127"}}).encode()


def test_version_json_prefers_cudart_then_toolkit() -> None:
    assert parse_version_json(VERSION_JSON) == [("12.4.127", "cudart"), ("12.4.1", None)]
    assert parse_version_json(b'{"cuda": {"version": "11.8.0"}}') == [("11.8.0", None)]
    assert parse_version_json(b"not json") == []
    assert parse_version_json(b'{"cuda": {"version": "twelve"}}') == []
    assert parse_version_json(b"[1,2]") == []


def test_version_txt() -> None:
    assert parse_version_txt(b"CUDA Version 12.4.1\n") == "12.4.1"
    assert parse_version_txt(b"CUDA Version 10.2.89") == "10.2.89"
    assert parse_version_txt(b"hello") is None


@pytest.mark.parametrize("name,expected", [
    ("libcudart.so.12.4.127", "12.4.127"), ("libcudart.so.11.0.221", "11.0.221"), ("libcudart.so.11.0", None),
    ("libcudart.so.12", None), ("libcudart.so", None), ("libcudart_static.a", None), ("libcudart.so.12.4.127.bak", None),
])
def test_libcudart_names(name: str, expected: str | None) -> None:
    assert parse_libcudart_name(name) == expected


@pytest.mark.parametrize("name,expected", [
    ("nvidia_cuda_runtime_cu12-12.4.127.dist-info", "12.4.127"),
    ("nvidia_cuda_runtime_cu11-11.8.89.dist-info", "11.8.89"),
    ("nvidia_cuda_runtime-13.0.96.dist-info", "13.0.96"),
    ("nvidia_cuda_runtime_cu12-12.1.105.dist-info", "12.1.105"),
    ("nvidia_cuda_nvrtc_cu12-12.4.127.dist-info", None),
    ("nvidia_cuda_runtime_cu12-12.4.127.data", None),
])
def test_wheel_dist_info(name: str, expected: str | None) -> None:
    assert parse_wheel_dist_info(name) == expected


def test_torch_version_py_forms() -> None:
    assert parse_torch_version_py(b"__version__ = '2.3.0+cu121'\ncuda = '12.1'\n") == ("12.1", 2)
    assert parse_torch_version_py(
        b"from typing import Optional\n__version__ = '2.4.0'\ndebug = False\ncuda: Optional[str] = '12.4'\nhip = None\n"
    ) == ("12.4", 4)
    assert parse_torch_version_py(b"__version__ = '2.3.0+cpu'\ncuda: Optional[str] = None\n") == (None, 2)
    assert parse_torch_version_py(b"git_version = 'abc'\n") is None


def test_image_evidence_with_provenance(tmp_path: Path) -> None:
    sp = "usr/local/lib/python3.10/dist-packages"
    base = [
        Dir("usr/local/cuda-12.4"),
        File("usr/local/cuda-12.4/version.json", VERSION_JSON),
        Symlink("usr/local/cuda", "/usr/local/cuda-12.4"),
        File("usr/local/cuda-11.8/version.txt", b"CUDA Version 11.8.0\n"),
        File("usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", b"\x7fELF"),
        Symlink("usr/local/cuda-12.4/lib64/libcudart.so.12", "libcudart.so.12.4.127"),
    ]
    app = [
        Dir(f"{sp}/nvidia_cuda_runtime_cu12-12.1.105.dist-info"),
        File(f"{sp}/nvidia_cuda_runtime_cu12-12.1.105.dist-info/METADATA", b"Name: nvidia-cuda-runtime-cu12\n"),
        File(f"{sp}/nvidia_cuda_runtime-13.0.96.dist-info/METADATA", b"Name: nvidia-cuda-runtime\n"),  # no dir entry
        File(f"{sp}/torch/version.py", b"__version__ = '2.3.0'\ncuda: Optional[str] = '12.1'\n"),
    ]
    spec = ImageSpec(
        layers=[base, app],
        env={"CUDA_VERSION": "12.2.2.009", "NVIDIA_REQUIRE_CUDA": "cuda>=9.0", "NVIDIA_REQUIRE_JETPACK": "csv-mounts=all",
             "NVIDIA_DISABLE_REQUIRE": "1", "NVIDIA_DISABLE_REQUIRES": "true", "CUDA_DRIVER_VERSION": "535.104.05",
             "NVIDIA_PYTORCH_VERSION": "23.10", "NVIDIA_PRODUCT_NAME": "PyTorch"},
        labels={"com.nvidia.cuda.version": "12.2.2"},
    )
    facts = facts_for(tmp_path, spec)
    got = [(v.source, v.version, v.component, v.precision) for v in facts.cuda.versions]
    assert got == [
        ("version.json", "12.4.127", "cudart", "minor"),
        ("version.json", "12.4.1", None, "patch"),
        ("version.txt", "11.8.0", None, "patch"),
        ("libcudart", "12.4.127", "cudart", "minor"),
        ("pip-wheel", "12.1.105", "cudart", "minor"),
        ("pip-wheel", "13.0.96", "cudart", "minor"),
        ("torch", "12.1", "torch", "minor"),
        ("env", "12.2.2.009", None, "patch"),
        ("ngc-env", "535.104.05", "driver", "patch"),
        ("ngc-env", "23.10", "ngc-pytorch", "minor"),
        ("label", "12.2.2", None, "patch"),
    ]
    vj = facts.cuda.versions[0].provenance
    assert (vj.kind, vj.path, vj.via, vj.layer_index) == ("file", "usr/local/cuda-12.4/version.json", "usr/local/cuda/version.json", 0)
    assert vj.layer_digest and vj.layer_digest.startswith("sha256:")
    torch = facts.cuda.versions[6].provenance
    assert torch.path.endswith("torch/version.py") and torch.line == 2 and torch.layer_index == 1
    assert [e.name for e in facts.cuda.requires] == ["NVIDIA_REQUIRE_CUDA", "NVIDIA_REQUIRE_JETPACK"]
    assert facts.cuda.disable_require.value == "1" and facts.cuda.disable_requires_plural.value == "true"
    assert facts.cuda.cuda_version_env.value == "12.2.2.009"
    assert facts.cuda.env["NVIDIA_DISABLE_REQUIRE"] == "1"


@pytest.mark.parametrize("name, expected", [
    ("libcudart.so.12", ("12", "major")), ("libcudart.so.13", ("13", "major")),
    ("libcudart.so.11.0", ("11", "major")),  # the SONAME of every CUDA 11.x
    ("libcudart.so.10.2", ("10.2", "minor")), ("libcudart.so.10.1", ("10.1", "minor")),
    ("libcudart.so.12.4", None), ("libcudart.so.12.4.127", None), ("libcudart.so", None), ("libcudart.so.x", None),
])
def test_libcudart_sonames(name: str, expected: tuple[str, str] | None) -> None:
    assert parse_libcudart_soname(name) == expected


def test_a_soname_only_libcudart_is_major_only_evidence(tmp_path: Path) -> None:
    """What pip wheels ship (and images copy into /usr/local/cuda/lib64): the major is evidence."""
    sp = "usr/local/lib/python3.11/site-packages/nvidia/cuda_runtime/lib"
    spec = ImageSpec(layers=[[
        File("usr/local/cuda/lib64/libcudart.so.12", b"\x7fELF"),
        Symlink("usr/local/cuda/lib64/libcudart.so", "libcudart.so.12"),
        File(f"{sp}/libcudart.so.11.0", b"\x7fELF"),
        File("opt/full/libcudart.so.12.4.127", b"\x7fELF"),
        Symlink("opt/full/libcudart.so.12", "libcudart.so.12.4.127"),  # the full name already says 12.4
    ]])
    facts = facts_for(tmp_path, spec)
    got = sorted((v.version, v.precision, v.provenance.path) for v in facts.cuda.versions if v.source == "libcudart")
    assert got == [("11", "major", f"{sp}/libcudart.so.11.0"), ("12", "major", "usr/local/cuda/lib64/libcudart.so.12"),
                   ("12.4.127", "minor", "opt/full/libcudart.so.12.4.127")]


def test_cpu_torch_and_whiteout(tmp_path: Path) -> None:
    from tests.support.imagebuilder import Whiteout

    spec = ImageSpec(layers=[
        [File("usr/local/cuda-12.4/version.txt", b"CUDA Version 12.4.1"), File("opt/venv/lib/python3.11/site-packages/torch/version.py", b"cuda = None\n")],
        [Whiteout("usr/local/cuda-12.4")],
    ])
    facts = facts_for(tmp_path, spec)
    assert facts.cuda.versions == ()


@pytest.mark.parametrize(("content", "said"), [
    (b"[" * 60_000 + b"]" * 60_000, "nested 60000 deep"),  # issue 39's probe: once a crash, then silence
    (b"not json", "not JSON"),
    (b'{"cuda": {"version": "twelve"}}', "holds no cuda_cudart or cuda version"),
])
def test_a_version_json_without_a_readable_version_is_said(tmp_path: Path, content: bytes, said: str) -> None:
    """The file gives no version; the image's other evidence decides, and the facts say why the file did not."""
    spec = ImageSpec(layers=[[
        File("usr/local/cuda-12.4/version.json", content),
        Symlink("usr/local/cuda", "/usr/local/cuda-12.4"),
    ]], env={"CUDA_VERSION": "12.4.1"})
    facts = facts_for(tmp_path, spec)
    assert [(v.source, v.version) for v in facts.cuda.versions] == [("env", "12.4.1")]
    [warning] = [w for w in facts.warnings if "version.json" in w]
    assert warning.startswith("/usr/local/cuda-12.4/version.json: ") and said in warning
    assert "taken from the image's other evidence" in warning and "\n" not in warning
