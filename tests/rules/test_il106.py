"""IL106: cases that fire and cases that must not."""

from __future__ import annotations

from imagelint.facts.model import DriverLibrary

from tests.rules.helpers import facts, file_prov, of, run


def _cudart_stub_lib() -> DriverLibrary:
    return DriverLibrary("libcuda.so", "usr/local/cuda/lib64/stubs/libcuda.so", "stub", None, False,
                         file_prov("usr/local/cuda/lib64/stubs/libcuda.so"))


def test_unknown_version_with_gpu_libraries_is_info():
    [f] = of(run(facts({}, driver_libraries=(_cudart_stub_lib(),))), "IL106")
    assert f.severity == "info" and "stubs/libcuda.so" in f.message


def test_unknown_version_silent_when_version_known_or_no_libs():
    assert not of(run(facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(_cudart_stub_lib(),))), "IL106")
    assert not of(run(facts({})), "IL106")


def test_unknown_version_silent_when_layers_not_read():
    assert not of(run(facts({}, driver_libraries=(_cudart_stub_lib(),), complete=False)), "IL106")


def test_major_only_evidence_is_named_and_said_to_be_partial():
    from imagelint.facts.model import CudaVersionEvidence

    path = "usr/local/lib/python3.11/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"
    major = CudaVersionEvidence("12", "libcudart", file_prov(path), "major", "cudart")
    [f] = of(run(facts({}, versions=(major,))), "IL106")
    assert f.severity == "info" and "only the CUDA major is known: 12.x" in f.message and path in f.message
    # With a precise version beside it, the major adds nothing to say.
    precise = CudaVersionEvidence("12.4.1", "env", file_prov(path), "patch")
    assert not of(run(facts({}, versions=(major, precise))), "IL106")
