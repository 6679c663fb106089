"""IL105: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.facts.model import CudaVersionEvidence

from tests.rules.helpers import facts, file_prov, of, run


def test_conflict_names_both_and_governing():
    ev = CudaVersionEvidence("12.4.1", "version.json", file_prov("usr/local/cuda-12.4/version.json"), "patch")
    [f] = of(run(facts({"CUDA_VERSION": "12.2.2"}, versions=(ev,))), "IL105")
    assert "12.2" in f.message and "12.4" in f.message and "CUDA 12.4.1 from version.json governs" in f.message


def test_same_major_minor_is_no_conflict():
    ev = CudaVersionEvidence("12.4.127", "libcudart", file_prov("usr/local/cuda/lib64/libcudart.so.12.4.127"), "minor")
    assert not of(run(facts({"CUDA_VERSION": "12.4.1"}, versions=(ev,))), "IL105")
