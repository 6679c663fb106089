"""Arch lists named by build settings (secondary evidence of GPU code): parsing, finding them in
env, Dockerfiles, build history and scripts, and IL401 reading them."""

from __future__ import annotations

from pathlib import Path

import pytest

from imagelint.facts.archlist import (
    ENV_SETTINGS,
    arch_targets,
    image_arch_lists,
    settings_in_text,
)
from imagelint.facts.model import ArchListSetting, EnvSetting, Provenance
from imagelint.image import HistoryEntry
from imagelint.rules import no_kernel_for_gpu
from tests.rules.helpers import matrix

P = Provenance(kind="env", key="X")


def targets(setting: str, value: str):
    t = arch_targets(ArchListSetting(setting, value, P), matrix().gpu_arch_names())
    return list(t.sass), list(t.ptx), list(t.unknown)


@pytest.mark.parametrize(
    "value, sass, ptx",
    [
        ("Kepler;Maxwell;Pascal;Volta;Turing", ["sm_35", "sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75"],
         ["compute_35", "compute_52", "compute_61", "compute_70", "compute_75"]),
        ("8.0 8.6+PTX", ["sm_80", "sm_86"], ["compute_86"]),
        ("7.0;7.5;8.0;8.6;9.0+PTX", ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], ["compute_90"]),
        ("Ampere+Tegra;Ampere", ["sm_87", "sm_80", "sm_86"], ["compute_86"]),  # combined names first
        ("9.0a 10.0f 12.0", ["sm_90a", "sm_100f", "sm_120"], []),
        ("Blackwell", ["sm_100", "sm_103", "sm_120", "sm_121"], ["compute_121"]),
    ],
)
def test_torch_arch_lists_expand_as_pytorch_does(value, sass, ptx):
    assert targets("TORCH_CUDA_ARCH_LIST", value) == (sass, ptx, [])


def test_items_that_cannot_be_judged_are_kept_apart():
    assert targets("TORCH_CUDA_ARCH_LIST", "8.0 All Ampere+PTX") == (["sm_80"], [], ["All", "8.6+PTX+PTX"])
    assert targets("CMAKE_CUDA_ARCHITECTURES", "native") == ([], [], ["native"])


@pytest.mark.parametrize(
    "setting, value, sass, ptx",
    [
        ("CMAKE_CUDA_ARCHITECTURES", "80;86", ["sm_80", "sm_86"], ["compute_80", "compute_86"]),  # real + virtual
        ("CMAKE_CUDA_ARCHITECTURES", "80-real;90-virtual", ["sm_80"], ["compute_90"]),
        ("CUDAARCHS", "90a-real 100f-real", ["sm_90a", "sm_100f"], []),
        ("CUDA_ARCH_LIST", "7.5 8.0+PTX", ["sm_75", "sm_80"], ["compute_80"]),
        ("CUDA_ARCH_LIST", "75;80", ["sm_75", "sm_80"], ["compute_75", "compute_80"]),
        ("nvcc", "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]",
         ["sm_80", "sm_90"], ["compute_90"]),
        ("nvcc", "-arch=sm_86", ["sm_86"], ["compute_86"]),  # shorthand for compute_86 + sm_86,compute_86
        ("nvcc", "-arch=compute_80", [], ["compute_80"]),
        ("nvcc", "-arch=compute_80 -code=sm_80,sm_86", ["sm_80", "sm_86"], []),
    ],
)
def test_cmake_and_nvcc_syntax(setting, value, sass, ptx):
    assert targets(setting, value)[:2] == (sass, ptx)


def test_settings_in_shell_text():
    text = """
    export TORCH_CUDA_ARCH_LIST="8.0 8.6+PTX"
    TORCH_CUDA_ARCH_LIST='9.0' pip install flash-attn
    cmake -S . -B build -DCMAKE_CUDA_ARCHITECTURES:STRING="80;90" -G Ninja
    nvcc -O3 -shared \\
        -gencode arch=compute_75,code=sm_75 --generate-code=arch=compute_89,code=[sm_89,compute_89] -o libk.so k.cu
    clang -arch x86_64 -o tool tool.c
    echo $TORCH_CUDA_ARCH_LIST
    CUDA_ARCH_LIST=$ARCHS make
    """
    got = [(s.setting, s.value) for s in settings_in_text(text, P)]
    assert got == [
        ("TORCH_CUDA_ARCH_LIST", "8.0 8.6+PTX"), ("TORCH_CUDA_ARCH_LIST", "9.0"),
        ("CMAKE_CUDA_ARCHITECTURES", "80;90"),
        ("nvcc", "-gencode arch=compute_75,code=sm_75 -gencode arch=compute_89,code=[sm_89,compute_89]"),
    ]


def test_image_env_history_and_scripts(tmp_path: Path):
    from tests.facts.helpers import open_spec
    from tests.support.imagebuilder import File, ImageSpec
    from imagelint.facts.capture import CAPTURE_SPEC
    from imagelint.layers.reader import read_image_filesystem

    image = open_spec(tmp_path, ImageSpec(layers=[[File("opt/build/build_ext.sh", b"nvcc -arch=sm_80 -c k.cu\n")]]))
    fs = read_image_filesystem(image, CAPTURE_SPEC)
    env = (EnvSetting("TORCH_CUDA_ARCH_LIST", "7.5 8.0", Provenance(kind="env", key="TORCH_CUDA_ARCH_LIST")),)
    history = (HistoryEntry("RUN |2 TORCH_CUDA_ARCH_LIST=8.0 9.0+PTX CUDAARCHS=90-real /bin/sh -c "
                            "pip install . && nvcc -gencode arch=compute_75,code=sm_75 -c k.cu"),
               HistoryEntry("ARG TORCH_CUDA_ARCH_LIST=7.5 8.0", empty_layer=True),
               HistoryEntry("/bin/sh -c #(nop)  ENV CUDA_ARCH_LIST=7.0 7.5", empty_layer=True))
    got = [(s.setting, s.value, s.provenance.kind) for s in image_arch_lists(env, history, fs)]
    assert got == [("TORCH_CUDA_ARCH_LIST", "7.5 8.0", "env"), ("TORCH_CUDA_ARCH_LIST", "8.0 9.0+PTX", "history"),
                   ("CUDAARCHS", "90-real", "history"), ("nvcc", "-gencode arch=compute_75,code=sm_75", "history"),
                   ("CUDA_ARCH_LIST", "7.0 7.5", "history"), ("nvcc", "-arch=sm_80", "file")]


DOCKERFILE = """\
ARG BASE=nvidia/cuda:12.4.1-devel-ubuntu22.04
FROM $BASE AS build
ARG TORCH_CUDA_ARCH_LIST="8.0 8.6"
ARG SMS=90
RUN pip install flash-attn && nvcc -gencode arch=compute_${SMS},code=sm_${SMS} -shared -o /libk.so k.cu
RUN cmake -DCMAKE_CUDA_ARCHITECTURES="80-real;90-real" .
FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
COPY --from=build /libk.so /usr/lib/libk.so
ENV TORCH_CUDA_ARCH_LIST="Ampere"
"""


def test_dockerfile_every_stage_with_args_substituted(tmp_path: Path):
    from imagelint.static.dockerfile import parse_dockerfile
    from imagelint.static.dockerfile_facts import dockerfile_facts

    f = dockerfile_facts(parse_dockerfile(DOCKERFILE, "Dockerfile"), matrix())
    got = [(s.setting, s.value, s.provenance.line) for s in f.arch_lists]
    assert got == [("TORCH_CUDA_ARCH_LIST", "8.0 8.6", 3), ("nvcc", "-gencode arch=compute_90,code=sm_90", 5),
                   ("CMAKE_CUDA_ARCHITECTURES", "80-real;90-real", 6), ("TORCH_CUDA_ARCH_LIST", "Ampere", 9)]


def test_il401_reads_named_lists_in_a_dockerfile():
    from imagelint.rules.base import RuleContext
    from imagelint.static.dockerfile import parse_dockerfile
    from imagelint.static.dockerfile_facts import dockerfile_facts
    from tests.rules.helpers import pool, target

    f = dockerfile_facts(parse_dockerfile(DOCKERFILE, "Dockerfile"), matrix())
    found = list(no_kernel_for_gpu.check(RuleContext(f, target(pool("h100", driver="580.65.06", gpus=("H100",))),
                                                     matrix())))
    by = {x.extra["library"]: x for x in found}
    # 8.0/8.6 SASS only: nothing for 9.0; Ampere = 8.0;8.6+PTX: JIT; the nvcc and cmake builds have sm_90.
    assert set(by) == {"TORCH_CUDA_ARCH_LIST=8.0 8.6", "TORCH_CUDA_ARCH_LIST=Ampere"}
    bad, jit = by["TORCH_CUDA_ARCH_LIST=8.0 8.6"], by["TORCH_CUDA_ARCH_LIST=Ampere"]
    # The headline says what fails; the details say on what evidence (findings are headline + details).
    bad_text, jit_text = (" ".join((x.message, *x.details)) for x in (bad, jit))
    assert bad.severity == "warning" and "secondary evidence" in bad_text and "Dockerfile" in bad_text
    assert bad.location.line == 3 and "no kernel image" in bad.message
    assert jit.severity == "info" and "compute_86" in jit_text


def test_the_rule_knows_the_same_env_names_as_the_facts():
    assert no_kernel_for_gpu.ARCH_ENV == ENV_SETTINGS


def test_values_that_are_not_plain_text_are_not_arch_lists():
    """Image text reaches findings: control characters (a terminal escape) never do."""
    assert settings_in_text('TORCH_CUDA_ARCH_LIST="8.0\x1b[31m"\n', P) == []
    env = [EnvSetting("TORCH_CUDA_ARCH_LIST", "8.0\x07", P), EnvSetting("CUDAARCHS", "x" * 600, P)]
    assert image_arch_lists(env, (), None) == ()
