"""IL401 for an NGC framework release on GPUs older than it is built for (issue 37).

NGC releases on CUDA 13 carry no kernels below Turing: the CUDA 13.0 release notes removed
offline compilation and library support for Maxwell, Pascal and Volta, Triton 26.09's notes say
"Release 26.09 supports CUDA compute capability 7.5 and later", and PyTorch 26.07's own
``CUDA_ARCH_LIST`` starts at 7.5. A ``FROM`` of such a release (or a manifest's image of it) on a
V100 (7.0) or P100 (6.0) pool is "no kernel image is available for execution on the device",
known without pulling the image; a T4 (7.5) pool and newer GPUs are fine. Older releases (23.10:
compute capability 6.0 and later in its notes) are not judged by this floor at all.
"""

from __future__ import annotations

import json

from imagelint.core.config import Config
from imagelint.core.engine import run_rules
from imagelint.static.dockerfile import parse_dockerfile
from imagelint.static.dockerfile_facts import dockerfile_facts
from imagelint.deploytarget import GpuSpec, NodePool, Target
from tests.cli.test_check import imagelint
from tests.rules.helpers import matrix


def il401(dockerfile: str, *gpus: str, driver: str = "580.95.05"):
    facts = dockerfile_facts(parse_dockerfile(dockerfile, "Dockerfile"), matrix())
    pool = NodePool("p", driver=driver, gpus=tuple(GpuSpec(product=g) for g in gpus))
    result = run_rules(facts, Target(pools=(pool,), source="flags"), matrix(), Config(select=("IL401",)))
    return [f for f in result.findings if f.rule == "IL401"]


def test_a_26xx_release_on_volta_has_no_kernel_and_says_which_release_sets_the_floor() -> None:
    [f] = il401("FROM nvcr.io/nvidia/tritonserver:26.09-py3\n", "V100", "A100")
    assert (f.severity, f.extra["compute_capability"], f.extra["min_compute_capability"]) == ("error", "7.0", "7.5")
    assert "26.09" in f.text and "rel-26-09" in f.text and "V100" in f.message


def test_pascal_too_and_turing_or_newer_is_fine() -> None:
    assert [f.extra["compute_capability"] for f in il401("FROM nvcr.io/nvidia/pytorch:26.07-py3\n", "P100")] == ["6.0"]
    assert il401("FROM nvcr.io/nvidia/pytorch:26.07-py3\n", "T4", "H100", "B200", "RTX PRO 6000 Blackwell Server Edition") == []


def test_an_uncertain_row_is_a_warning_that_says_so() -> None:
    [f] = il401("FROM nvcr.io/nvidia/jax:26.04-py3\n", "V100")  # the JAX 26.04 row is assumed from the release
    assert f.severity == "warning" and "uncertain" in f.text


def test_a_release_built_for_volta_is_not_judged_by_a_floor() -> None:
    assert il401("FROM nvcr.io/nvidia/pytorch:23.10-py3\n", "V100") == []


def test_a_manifest_image_is_judged_the_same_way(tmp_path) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  containers:\n  - name: t\n"
                   "    image: nvcr.io/nvidia/pytorch:26.08-py3\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n")
    out = imagelint("lint", str(pod), "--driver", "580.95.05", "--gpu", "V100", "--select", "IL401", "--format", "json")
    findings = [f for r in json.loads(out.stdout)["results"] for f in r["findings"] if f["rule"] == "IL401"]
    assert [f["extra"]["compute_capability"] for f in findings] == ["7.0"], out.stdout


def test_an_image_whose_libraries_were_read_is_judged_by_them_not_by_the_floor() -> None:
    import dataclasses

    from imagelint.facts.model import CudaVersionEvidence, GpuCodeObject
    from imagelint.rules import no_kernel_for_gpu as rule
    from imagelint.rules.base import RuleContext
    from tests.rules.helpers import env_prov, facts, file_prov, pool, target

    release = CudaVersionEvidence("26.07", "env", env_prov("NVIDIA_PYTORCH_VERSION"), "minor", "ngc-pytorch")
    image = facts({"CUDA_VERSION": "13.3.1"}, versions=(release,))
    on_v100 = target(pool("v", driver="580.95.05", gpus=("V100",)))
    [floor] = list(rule.check(RuleContext(image, on_v100, matrix())))
    assert floor.extra["evidence"] == "ngc-release"
    path = "usr/lib/libtorch_cuda.so"
    read = dataclasses.replace(image, gpu_code=(GpuCodeObject(path, ("sm_75", "sm_80"), (), file_prov(path)),))
    assert [f.extra["evidence"] for f in rule.check(RuleContext(read, on_v100, matrix()))] == ["fatbin"]
