"""No platform of the image matches a node pool's CPU architecture.

A pool of ``arm64`` nodes (Grace Hopper GH200, Jetson) cannot run an
``amd64``-only image, and the reverse: the pod fails with "exec format error"
or stays in ``ErrImagePull`` (no matching manifest for linux/arm64).

Remediation: build and push a multi-platform index (``docker buildx build
--platform linux/amd64,linux/arm64``), or schedule the image only on pools of
its architecture.
"""

from __future__ import annotations

from typing import Iterator

from imagelint.image import normalize_arch
from imagelint.rules.base import ERROR, NEEDS_CONFIG, NEEDS_TARGET, Finding, FindingFactory, RuleContext

ID = "IL402"
NAME = "platform-mismatch"
SEVERITY = ERROR
TITLE = "Image platform does not match the pool's architecture"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = ("https://github.com/opencontainers/image-spec/blob/main/image-index.md",)
REMEDIATION = "Publish a multi-platform image that includes the pool's architecture."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    platforms = list(facts.platforms) or ([facts.platform] if facts.platform else [])
    if not platforms:
        return  # static inputs have no platform
    archs = sorted({normalize_arch(p.architecture) for p in platforms if p.os == "linux"})
    for pool in ctx.pools:
        if not pool.arch:
            continue
        if normalize_arch(pool.arch) not in archs:
            yield finding(
                f"pool {pool.name} runs linux/{normalize_arch(pool.arch)} but the image offers only "
                f"{', '.join(str(p) for p in platforms)}: pods fail with 'exec format error' or no matching manifest",
                None, pool=pool, pool_arch=pool.arch, image_platforms=[str(p) for p in platforms],
            )
