"""A ``RUN`` step queries the GPU: there is none while the image builds.

``docker build`` (BuildKit), ``buildah``, kaniko and every CI builder run ``RUN`` steps without
GPUs and without the NVIDIA driver: ``nvidia-smi`` is not found (or cannot talk to a driver),
CUDA's ``deviceQuery`` reports no device, and ``torch.cuda.is_available()`` is ``False``. The step
fails the build, or, when its result is only printed or ignored (``|| true``), it tests nothing
about where the image will run. The GPU exists only in the container the runtime starts. (The
legacy builder on a host whose Docker default runtime is ``nvidia`` sees the build host's GPUs,
which makes the image depend on where it was built.) A step that asks BuildKit for a GPU
(``RUN --device=nvidia.com/gpu=all``) is not reported, nor text a step only writes into a file
(``cat > /start.sh <<EOF``, ``echo 'nvidia-smi' >> /entrypoint.sh``, ``printf``): that runs when
the container starts, with its GPUs. A heredoc that is the step's own script (``RUN <<EOF``,
``RUN bash <<EOF``, ``cat <<EOF | sh``) runs at build time and is read.

Remediation: check the GPU when the container starts (an entrypoint check, a Kubernetes
startup probe) or in a test job that runs the built image on a GPU node.

Anti-pattern::

    RUN nvidia-smi && python -c "import torch; assert torch.cuda.is_available()"

Best practice::

    RUN python -c "import torch; print(torch.version.cuda)"   # what the image was built with
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.lazyre import lazy_pattern
from imagelint.rules.base import (
    INFO,
    NEEDS_CONFIG,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL701"
NAME = "gpu-query-at-build"
SEVERITY = WARNING
TITLE = "GPU queried in a RUN step (no GPU at build time)"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = (
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html",
    "https://docs.docker.com/reference/dockerfile/#run---device",
)
REMEDIATION = "Check the GPU when the container starts or in a test on a GPU node, not in RUN."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_TOOL = lazy_pattern(r"(?<![\w./-])(?:\S*/)?(nvidia-smi|deviceQuery(?:Drv)?)(?![\w-])([^;&|\n]*)(\s*\|\|)?")
_QUERY = r"(?:torch\.cuda\.(?:is_available|device_count)\s*\(\s*\)|tf\.test\.is_gpu_available\s*\(|list_physical_devices\(\s*['\"]GPU)"
_ASSERTED = lazy_pattern(r"assert\b[^;\n]*" + _QUERY + "|" + _QUERY + r"[^;\n]*(?:exit|raise)\b|not\s+" + _QUERY)
_PRINTED = lazy_pattern(r"print\s*\([^;\n]*" + _QUERY)


def check(ctx: RuleContext) -> Iterator[Finding]:
    build = ctx.facts.build
    if build is None:
        return
    for step in build.run_steps:
        if step.gpu_device:
            continue
        text = step.executed if step.executed is not None else step.text  # not what it only writes to a file
        for m in _TOOL.finditer(text):
            tool, ignored = m.group(1), bool(m.group(3))
            if ignored:
                yield finding(f"RUN runs {tool} and ignores its failure: at build time there is no GPU, so it tests "
                              "nothing about where the image runs", step.provenance, severity=INFO, tool=tool)
            else:
                yield finding(f"RUN runs {tool}: there is no GPU or NVIDIA driver while the image builds, so the step "
                              "fails the build (or depends on the build host)", step.provenance, tool=tool)
        asserted = _ASSERTED.search(text)
        if asserted:
            yield finding(f"RUN asserts a CUDA device ({asserted.group(0).strip()[:60]!r}): no GPU is visible at build time, "
                          "so the build fails", step.provenance, tool="cuda-query")
        elif _PRINTED.search(text):
            yield finding("RUN prints whether a CUDA device is visible: at build time it is always False",
                          step.provenance, severity=INFO, tool="cuda-query")
