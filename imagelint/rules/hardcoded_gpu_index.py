"""A GPU index is hard-coded in the entrypoint, a script or an app config.

Inside a container the runtime renumbers the GPUs it exposes from 0, so a pod
that gets one GPU only ever has device 0. ``gpu-id=1`` in a DeepStream config,
``--device cuda:1`` or ``torch.cuda.set_device(1)`` then fails with "invalid
device ordinal" (or a buffer-pool/NvBufSurface error). Index 0 works with one
GPU but silently ignores any others (info), the same for every spelling
(``CUDA_VISIBLE_DEVICES=0`` in IL301 agrees). In a manifest whose pod requests
enough GPUs for the index, a higher index is info too.

Remediation: use device 0 (or read the index from an env var the deployment
sets), and request the number of GPUs in the pod spec.

Anti-pattern::

    [primary-gie]
    gpu-id=1

Best practice::

    [primary-gie]
    gpu-id=0
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_FILES,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL302"
NAME = "hardcoded-gpu-index"
SEVERITY = ERROR
TITLE = "Hard-coded GPU index"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
REFERENCES = ("https://docs.nvidia.com/metropolis/deepstream/dev-guide/text/DS_ref_app_deepstream.html",)
REMEDIATION = "Use GPU 0 inside the container (the runtime renumbers), or read the index from the environment."

# Index 0 already is the first GPU the pod gets: the advice is about using more than one.
REMEDIATION_INDEX_ZERO = ("Nothing to change for a single-GPU pod; to use every GPU the pod requests, leave the "
                          "device unset or read the index from the environment (e.g. LOCAL_RANK), and silence this "
                          "line with '# imagelint ignore=IL302 single-GPU job'.")

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_INDEX_KINDS = frozenset({"gpu-id", "cli-flag", "code"})


def check(ctx: RuleContext) -> Iterator[Finding]:
    from imagelint.kube.scheduler import pod_gpu_count

    gpus = pod_gpu_count(ctx.facts)
    for s in ctx.facts.gpu.index_settings:
        if s.kind not in _INDEX_KINDS or not s.indices:
            continue
        high = max(s.indices)
        reached = "" if s.referenced else " (not reached from the entrypoint)"
        if high >= 1 and gpus is not None and high < gpus:
            yield finding(
                f"GPU index {high} hard-coded{reached}: {s.text.strip()!r}; the pod requests {gpus} GPU(s), so "
                f"the index exists, but a change of the GPU count breaks it",
                s.provenance, severity=INFO, index=high, kind=s.kind,
            )
        elif high >= 1:
            yield finding(
                f"GPU index {high} hard-coded{reached}: {_clip(s.text.strip())!r} needs at least {high + 1} GPUs in "
                "the pod ('invalid device ordinal' otherwise)",
                s.provenance, details=[*_whole(s.text.strip()),
                                       "a container sees its GPUs numbered from 0, whatever GPUs of the node it got"], severity=ERROR if s.referenced else INFO, index=high, kind=s.kind,
            )
        else:
            yield finding(
                f"GPU index 0 hard-coded{reached}: {_clip(s.text.strip())!r} works, but only ever uses the first GPU "
                "the pod gets",
                s.provenance, details=_whole(s.text.strip()), severity=INFO, index=0, kind=s.kind,
                remediation=REMEDIATION_INDEX_ZERO,
            )


def _clip(text: str, limit: int = 40) -> str:
    """The image's line, shortened for a headline."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _whole(text: str) -> list[str]:
    """The whole line as a detail, when the headline had to shorten it."""
    return [f"the line: {text!r}"] if _clip(text) != text else []
