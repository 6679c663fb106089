"""The GPU catalogue: every spelling names one product, exact names win over substrings, every
row's family and compute capability are ones the matrix defines, and the rows NVIDIA's pages give."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import imagelint.cli
from imagelint.matrix import Matrix, load_matrix
from imagelint.matrix.rowstore import _gpu_key
from imagelint.deploytarget.values import gpus_from_flags

runner = CliRunner()

# The family names GFD writes (NVIDIA/k8s-device-plugin internal/lm/resource.go getArchFamily),
# without its "undefined" fallback, and the driver_gpu_support architecture each belongs to.
FAMILY_OF_ARCHITECTURE = {
    "Kepler": "kepler", "Maxwell": "maxwell", "Pascal": "pascal", "Volta": "volta", "Turing": "turing",
    "Ampere": "ampere", "Ada": "ada-lovelace", "Hopper": "hopper", "Blackwell": "blackwell",
    "Blackwell Ultra / GB10": "blackwell", "Thor": "blackwell", "Rubin": "rubin",
}


@pytest.fixture(scope="module")
def m() -> Matrix:
    return load_matrix()


def gpus(*args: str):
    return runner.invoke(imagelint.cli.app, ["gpus", *args])


def test_an_exact_name_answers_that_gpu_alone_not_every_name_containing_it(m) -> None:
    result = gpus("H20", "--format", "json")
    assert result.exit_code == 0
    assert [g["name"] for g in json.loads(result.output)] == ["NVIDIA H20"]
    assert [g["name"] for g in json.loads(gpus("h-20", "--format", "json").output)] == ["NVIDIA H20"]
    assert [g["name"] for g in json.loads(gpus("H200", "--format", "json").output)] == ["NVIDIA H200"]
    # a text that is no name still searches as a substring
    family = [g["name"] for g in json.loads(gpus("hopper", "--format", "json").output)]
    assert {"NVIDIA H100", "NVIDIA H200", "NVIDIA H20", "NVIDIA H800", "NVIDIA GH200"} <= set(family)


def test_a_near_miss_is_answered_with_did_you_mean(m) -> None:
    result = gpus("H2O")
    assert result.exit_code == 0
    assert result.output.strip() == "no GPU matches 'H2O'; did you mean NVIDIA H20?"
    assert m.search_gpus("Tesla P400").suggestions[:1] == ("Tesla P40",)
    assert m.search_gpus("Voodoo 2").suggestions == ()


def test_gpu_flag_resolves_china_and_pascal_skus_to_their_own_rows(m) -> None:
    (h20,) = gpus_from_flags(["H20"], None, None, m)
    assert (h20.compute_capability, h20.family) == ("9.0", "hopper")
    (p4,) = gpus_from_flags(["Tesla-P4"], None, None, m)
    assert (p4.compute_capability, p4.family) == ("6.1", "pascal")
    assert m.gpu("NVIDIA-A800-SXM4-80GB").compute_capability == "8.0"
    assert m.gpu("L20").family == "ada-lovelace"
    assert m.gpu("H800").uncertain and not m.gpu("H20").uncertain


def test_pascal_data_centre_cards_end_with_r580(m) -> None:
    pascal = next(r for r in m.rows("driver_gpu_support") if r["architecture"] == "Pascal")
    assert pascal["last_branch"] == 580
    for name, cc in (("P100", "6.0"), ("P40", "6.1"), ("P4", "6.1")):
        gpu = m.gpu(name)
        assert gpu.compute_capability == cc and gpu.kind == "datacenter" and cc in pascal["compute_capabilities"]


def test_every_spelling_names_one_product(m) -> None:
    owner: dict[str, str] = {}
    for row in m.rows("gpus"):
        for spelling in (row["name"], *row["aliases"]):
            key = _gpu_key(spelling)
            assert owner.setdefault(key, row["name"]) == row["name"], f"{spelling!r} names two GPUs"


def test_every_gpu_has_a_defined_family_matching_its_architecture(m) -> None:
    by_cc = {cc: r["architecture"] for r in m.rows("driver_gpu_support") for cc in r["compute_capabilities"]}
    assert set(by_cc.values()) <= set(FAMILY_OF_ARCHITECTURE), "an architecture without a family"
    for row in m.rows("gpus"):
        architecture = by_cc.get(row["compute_capability"])
        assert architecture is not None, f"{row['name']}: compute capability {row['compute_capability']} has no architecture"
        assert row["family"] == FAMILY_OF_ARCHITECTURE[architecture], row["name"]


@pytest.mark.parametrize("name", ["Jetson T5000", "Thor"])
def test_jetson_thor_is_blackwell(m, name: str) -> None:
    assert m.gpu(name).family == "blackwell"
