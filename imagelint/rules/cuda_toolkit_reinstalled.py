"""A CUDA toolkit is installed on top of a CUDA ``devel`` base image that already has one.

``nvidia/cuda:X.Y.Z-devel-*`` ships the whole toolkit (``cuda-toolkit-X-Y``: nvcc, headers,
libraries). Installing ``cuda-toolkit-*`` again downloads gigabytes into another layer: the same
release duplicates what is there, another release puts a second toolkit beside it, and which
``nvcc``/``libcudart`` a build or the loader picks then depends on ``PATH`` and
``LD_LIBRARY_PATH`` (IL105 reports the CUDA versions that conflict).

Remediation: pick the base image of the CUDA release you need (``nvidia/cuda:12.4.1-devel-…``)
and install only the extra packages it lacks.

Anti-pattern::

    FROM nvidia/cuda:12.1.1-devel-ubuntu22.04
    RUN apt-get install -y cuda-toolkit-12-4

Best practice::

    FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.lazyre import lazy_pattern
from imagelint.rules.base import (
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL704"
NAME = "cuda-toolkit-reinstalled"
SEVERITY = WARNING
TITLE = "CUDA toolkit installed again on a CUDA devel base image"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = ("https://hub.docker.com/r/nvidia/cuda", "https://gitlab.com/nvidia/container-images/cuda")
REMEDIATION = "Use the devel base image of the CUDA release you need instead of installing a toolkit on top."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_CUDA_DEVEL = lazy_pattern(r"(?:^|/)nvidia/cuda:(\d+\.\d+)(?:\.\d+)?-(?:cudnn\d*-)?devel\b")


def check(ctx: RuleContext) -> Iterator[Finding]:
    build = ctx.facts.build
    if build is None or not build.toolkit_installs:
        return
    m = _CUDA_DEVEL.search(build.final_base)
    if m is None:
        return
    base_cuda = m.group(1)
    for version, where in build.toolkit_installs:
        what = "the same toolkit again" if version == base_cuda else f"a second toolkit beside its CUDA {base_cuda}"
        yield finding(f"cuda-toolkit {version} installed on {build.final_base}, which ships CUDA {base_cuda}'s toolkit: "
                      f"{what}", where, base=build.final_base, installed=version)
