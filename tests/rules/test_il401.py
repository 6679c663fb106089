from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from imagelint.facts.capture import CAPTURE_SPEC
from imagelint.facts.collect import collect_image_facts
from imagelint.facts.fatbin import FATBIN_CAPTURE_RULES, SCANNERS, gpu_code_facts
from imagelint.facts.model import GpuCodeObject
from imagelint.layers.model import CaptureSpec
from imagelint.layers.reader import read_image_filesystem
from imagelint.rules import no_kernel_for_gpu as rule
from imagelint.rules.base import RuleContext
from imagelint.deploytarget import GpuSpec, NodePool
from tests.facts.fatbin_support import compile_library
from tests.facts.helpers import open_spec
from tests.rules.helpers import facts, file_prov, matrix, pool, target
from tests.support.imagebuilder import File, ImageSpec, Symlink


def lib(path: str, sass=(), ptx=(), layer: int = 2) -> GpuCodeObject:
    return GpuCodeObject(path, tuple(sass), tuple(ptx), file_prov(path, layer=layer))


def check(f, t=None):
    return list(rule.check(RuleContext(f, t or target(), matrix())))


def with_code(*objs: GpuCodeObject, env: dict | None = None):
    return dataclasses.replace(facts(env or {}), gpu_code=objs)


def test_sm80_only_library_has_no_kernel_for_h100():
    f = with_code(lib("usr/lib/libk.so", sass=("sm_70", "sm_80")))
    [finding] = check(f, target(pool("h100", gpus=("H100",))))
    assert finding.severity == "error" and finding.pool == "h100" and finding.rule == "IL401"
    assert "/usr/lib/libk.so (layer 2)" in finding.text
    assert "has sm_70, sm_80; needs sm_90 SASS or PTX <= compute_90" in finding.text
    assert finding.location.path == "usr/lib/libk.so" and finding.extra["compute_capability"] == "9.0"


def test_same_library_is_fine_on_a100_and_a10():
    f = with_code(lib("usr/lib/libk.so", sass=("sm_80",)))
    assert check(f, target(pool("a100", gpus=("A100",)), pool("a10", gpus=("A10",)))) == []


def test_ptx_saves_the_library_but_jit_is_noted():
    f = with_code(lib("usr/lib/libk.so", sass=("sm_80",), ptx=("compute_80",)))
    [finding] = check(f, target(pool("h100", gpus=("H100",))))
    assert finding.severity == "info" and "JIT" in finding.text and "compute_80" in finding.text


def lib_isa(path: str, sass=(), ptx=(), isa: str = "8.4", **kw) -> GpuCodeObject:
    return GpuCodeObject(path, tuple(sass), tuple(ptx), file_prov(path), ptx_isa=tuple((p, isa) for p in ptx), **kw)


@pytest.mark.parametrize(
    "isa, driver, outcome",
    [
        ("8.2", "535.104.05", "jit"),  # CUDA 12.2 PTX on a 12.2 driver
        ("8.4", "535.104.05", "ptx-too-new"),  # CUDA 12.4 PTX: minor-version compatibility does not JIT it
        ("8.4", "550.54.14", "jit"),
        ("9.0", "570.86.10", "ptx-too-new"),  # CUDA 13.0 PTX-only library on R570 (CUDA 12.8, ISA 8.7)
        ("9.0", "580.65.06", "jit"),
        ("9.0", "535", "ptx-too-new"),  # a bare branch is some 535.x: the branch decides the JIT
        ("9.0", None, "jit-unknown-driver"),
    ],
)
def test_ptx_is_compared_with_the_drivers_jit(isa, driver, outcome):
    f = with_code(lib_isa("usr/lib/libk.so", ptx=("compute_80",), isa=isa))
    [finding] = check(f, target(pool("h100", driver=driver, gpus=("H100",))))
    assert finding.extra["outcome"] == outcome and f"ISA {isa}" in finding.text
    assert finding.severity == ("error" if outcome == "ptx-too-new" else "info")
    if driver is None:
        assert "driver is not known" in finding.text and "CUDA 13.0 or newer" in finding.text


def test_sass_for_the_gpu_needs_no_jit_whatever_the_ptx_isa():
    f = with_code(lib_isa("usr/lib/libk.so", sass=("sm_90",), ptx=("compute_90",), isa="9.1"))
    assert check(f, target(pool("h100", driver="535.104.05", gpus=("H100",)))) == []


def test_relocatable_code_left_out_is_named_in_the_finding():
    f = with_code(lib_isa("usr/lib/librdc.so", sass=("sm_80",), not_loaded=("__nv_relfatbin: compute_90",)))
    [finding] = check(f, target(pool("b200", driver="580.65.06", gpus=("B200",))))
    assert finding.severity == "error" and "no kernel image is available" in finding.text
    assert "compute_90 in __nv_relfatbin" in finding.text and "never loads it" in finding.text


def test_arch_specific_code_runs_only_on_its_own_gpu():
    f = with_code(lib("opt/fa3/libfa3.so", sass=("sm_90a",), ptx=("compute_90a",)))
    t = target(pool("h100", gpus=("H100",)), pool("b200", gpus=("B200",)), pool("l4", gpus=("L4",)))
    found = check(f, t)
    assert sorted(x.pool for x in found) == ["b200", "l4"] and all(x.severity == "error" for x in found)


def test_only_failing_libraries_are_listed_and_code_free_ones_ignored():
    f = with_code(
        lib("usr/lib/libgood.so", sass=("sm_80", "sm_90")),
        lib("usr/lib/libbad.so", sass=("sm_75",), layer=3),
        GpuCodeObject("usr/lib/libnone.so", (), (), file_prov("usr/lib/libnone.so")),
    )
    [finding] = check(f, target(pool("h100", gpus=("H100",))))
    assert finding.extra["library"] == "usr/lib/libbad.so" and "(layer 3)" in finding.text


def test_compute_capability_given_directly_and_gpus_sharing_one_are_merged():
    p = NodePool("mixed", gpus=(GpuSpec(compute_capability="8.6"), GpuSpec(product="A10"), GpuSpec(product="A100")))
    f = with_code(lib("usr/lib/libk.so", sass=("sm_90",)))
    found = check(f, target(p))
    assert sorted(x.extra["compute_capability"] for x in found) == ["8.0", "8.6"]
    [a86] = [x for x in found if x.extra["compute_capability"] == "8.6"]
    assert "needs sm_80..sm_86 SASS or PTX <= compute_86" in a86.text


def test_no_target_gpu_is_info():
    f = with_code(lib("usr/lib/libk.so", sass=("sm_80",)))
    [finding] = check(f)
    assert finding.severity == "info" and "no target GPU" in finding.text and "sm_80" in finding.text
    [finding] = check(f, target(NodePool("cpu-less", driver="535.104.05")))
    assert finding.severity == "info" and finding.pool == "cpu-less"


def test_no_device_code_no_findings():
    assert check(facts({}), target(pool("h100", gpus=("H100",)))) == []


def test_torch_arch_list_is_secondary_evidence():
    f = facts({"TORCH_CUDA_ARCH_LIST": "7.0 7.5 8.0 8.6"}, complete=False)
    [finding] = check(f, target(pool("h100", gpus=("H100",))))
    assert finding.severity == "warning" and "secondary evidence" in finding.text
    assert "layers were not read" in finding.text
    assert finding.location.kind == "env" and finding.extra["evidence"] == "TORCH_CUDA_ARCH_LIST"
    assert check(facts({"TORCH_CUDA_ARCH_LIST": "8.0 9.0+PTX"}), target(pool("b200", gpus=("B200",))))[0].severity == "info"


def test_binaries_win_over_torch_arch_list():
    f = with_code(lib("usr/lib/libtorch_cuda.so", sass=("sm_90",)), env={"TORCH_CUDA_ARCH_LIST": "7.0"})
    assert check(f, target(pool("h100", gpus=("H100",)))) == []


# --- end to end: real nvcc libraries in an image, read by the real reader ------------------------


def _merged_spec() -> CaptureSpec:
    """What capture.py will hold once the fatbin rules are merged (after the existing scan rules)."""
    scans = [r for r in CAPTURE_SPEC.rules if r.action == "scan"]
    rest = [r for r in CAPTURE_SPEC.rules if r.action != "scan"]
    return CaptureSpec((*scans, *FATBIN_CAPTURE_RULES, *rest),
                       MappingProxyType({**CAPTURE_SPEC.scanner_factory, **SCANNERS}))


@pytest.mark.network
@pytest.mark.slow
@pytest.mark.parametrize("with_ptx, fires", [(False, True), (True, False)])
def test_real_library_in_an_image_on_h100(tmp_path, with_ptx, fires):
    gencodes = ("arch=compute_80,code=sm_80",) + (("arch=compute_80,code=compute_80",) if with_ptx else ())
    so = compile_library(gencodes).read_bytes()
    spec = ImageSpec(layers=[
        [File("etc/ld.so.conf", b"include /etc/ld.so.conf.d/*.conf\n")],
        [File("opt/app/lib/libk.so.1.0", so, 0o755), Symlink("opt/app/lib/libk.so", "libk.so.1.0")],
    ], env={"CUDA_VERSION": "13.0.1"})
    image = open_spec(tmp_path, spec)
    fs = read_image_filesystem(image, _merged_spec())
    assert fs.read("etc/ld.so.conf")  # the loader's content rule still gets its file
    f = dataclasses.replace(collect_image_facts(image, fs), gpu_code=gpu_code_facts(fs))
    [code] = f.gpu_code
    assert code.path == "opt/app/lib/libk.so.1.0" and code.provenance.layer_index == 1
    found = check(f, target(pool("h100", driver="580.65.06", gpus=("H100",))))
    errors = [x for x in found if x.severity == "error"]
    if fires:
        [e] = errors
        assert "/opt/app/lib/libk.so.1.0 (layer 1)" in e.text and "has sm_80;" in e.text
    else:
        assert errors == [] and [x.severity for x in found] == ["info"]
        assert "(ISA 9.0)" in found[0].text and "CUDA 13.0" in found[0].text
        # CUDA 13.0's PTX (ISA 9.0) is past what a 535 driver's JIT compiles (CUDA 12.2: ISA 8.2).
        [e] = check(f, target(pool("h100", driver="535.104.05", gpus=("H100",))))
        assert e.severity == "error" and e.extra["outcome"] == "ptx-too-new"
        assert "unsupported toolchain" in e.text and "CUDA 13.0 or newer" in e.remediation
    assert check(f, target(pool("a100", gpus=("A100",)))) == []


def test_code_for_the_gpu_that_the_library_loads_itself_is_not_an_error():
    """libcufft.so.11 from nvidia-cufft-cu12: .nv_fatbin has one sm_52 helper; its kernels are fatbins in
    .ldata that cuFFT loads itself. Not the runtime's to load, not ours to fail."""
    f = with_code(lib_isa("usr/lib/libcufft.so.11", sass=("sm_52",), not_loaded=(".ldata: sm_90", ".ldata: lto_90")))
    [finding] = check(f, target(pool("h100", driver="580.65.06", gpus=("H100",))))
    assert finding.severity == "info" and "sm_90 (.ldata)" in finding.text
    assert finding.extra["outcome"] == "own-loaded-code"
    [finding] = check(f, target(pool("b200", driver="580.65.06", gpus=("B200",))))
    assert finding.severity == "error"  # nothing anywhere for 10.0


def test_the_jit_is_the_libcuda_the_compatibility_verdict_loads():
    """PTX ISA 8.4 (CUDA 12.4) on a 535 driver (JIT up to 8.2): too new for the host's JIT, but
    where the runtime loads the image's cuda-compat-12-4 libcuda, that libcuda's JIT compiles it."""
    from tests.rules.helpers import compat_lib

    code = lib_isa("usr/lib/libk.so", ptx=("compute_75",), isa="8.4")
    image = dataclasses.replace(
        facts({"CUDA_VERSION": "12.4.1"}, driver_libraries=(compat_lib("550.54.15", "12.4", (470, 525, 535)),)),
        gpu_code=(code,),
    )
    before = check(image, target(pool("t4", driver="535.104.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.17.3")))
    assert [f.extra["outcome"] for f in before] == ["ptx-too-new"]
    after = check(image, target(pool("t4", driver="535.104.05", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0")))
    assert [(f.severity, f.extra["outcome"]) for f in after] == [("info", "jit")]
    assert "forward-compat libcuda 550.54.15" in after[0].text


def test_no_kernel_judgement_says_when_cuda_itself_does_not_start():
    image = dataclasses.replace(facts({"CUDA_VERSION": "12.4.1"}), gpu_code=(lib_isa("usr/lib/libk.so", ptx=("compute_75",), isa="8.4"),))
    [f] = check(image, target(pool("t4", driver="470.57.02", gpus=("T4",), runtime_mode="cdi", toolkit="1.18.0")))
    assert "CUDA itself does not initialise" in f.text


@pytest.mark.network
@pytest.mark.slow
def test_real_rdc_library_in_an_image_has_no_kernel_on_b200(tmp_path):
    """nvcc -rdc=true: sm_80 in .nv_fatbin, compute_90 PTX only in __nv_relfatbin. Counting the latter
    said 'runs by JIT' on B200; the runtime never loads it: no kernel image."""
    so = compile_library(("arch=compute_80,code=sm_80", "arch=compute_90,code=compute_90"), ("-rdc=true",)).read_bytes()
    image = open_spec(tmp_path, ImageSpec(layers=[[File("opt/app/lib/librdc.so", so, 0o755)]],
                                          env={"CUDA_VERSION": "13.0.1"}))
    fs = read_image_filesystem(image, _merged_spec())
    f = dataclasses.replace(collect_image_facts(image, fs), gpu_code=gpu_code_facts(fs))
    [code] = f.gpu_code
    assert code.sass == ("sm_80",) and code.ptx == () and code.not_loaded == ("__nv_relfatbin: sm_80", "__nv_relfatbin: compute_90")
    [e] = check(f, target(pool("b200", driver="580.65.06", gpus=("B200",))))
    assert e.severity == "error" and "no kernel image is available" in e.text
    assert "compute_90 in __nv_relfatbin" in e.text
