"""The pool's NVIDIA container toolkit version does not fit its driver or settings.

Toolkit releases change outcomes: brand names such as ``quadrortx``/``nvidia``
need >= 1.9.0, CDI needs >= 1.12.0, ``jit-cdi`` became the default (and stopped
enforcing ``NVIDIA_REQUIRE_*``) in 1.18.0. A pool configured for a mode or
driver its toolkit version does not support starts GPU containers wrongly or
not at all. Checked per pool against the matrix; an unknown toolkit version is
reported as info.

Remediation: upgrade the container toolkit (or the GPU Operator) to a release
that supports the pool's driver and runtime mode.
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules._requirements import component_findings, toolkit_unmet
from imagelint.rules.base import (
    ERROR,
    NEEDS_TARGET,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL502"
NAME = "toolkit-incompatible"
SEVERITY = ERROR
TITLE = "Container toolkit requirements not met by the pool"
NEEDS = (NEEDS_TARGET,)
REFERENCES = ("https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/CHANGELOG.md",)
REMEDIATION = "Upgrade the NVIDIA container toolkit (or GPU Operator) to a release that supports the pool."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    yield from component_findings(
        ctx, finding, "container toolkit", lambda pool: pool.toolkit, lambda matrix, v: matrix.toolkit(v), toolkit_unmet
    )
