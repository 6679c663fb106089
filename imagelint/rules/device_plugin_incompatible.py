"""The pool's NVIDIA device plugin version does not fit the rest of its GPU stack.

Each k8s-device-plugin release states what it needs: a container toolkit
version (>= 1.7.0; >= 1.11.0 for Tegra), a driver, the device-list and MIG
strategies it knows. A pool that misses one advertises no ``nvidia.com/gpu``
(pods stay Pending) or hands containers devices the runtime cannot set up.
Checked per pool against the matrix; a plugin version the matrix does not know
is reported as info.

Remediation: upgrade the device plugin (or the GPU Operator) to a release
that supports the pool's driver, toolkit and strategies.
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules._requirements import component_findings, device_plugin_unmet
from imagelint.rules.base import (
    ERROR,
    NEEDS_TARGET,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL501"
NAME = "device-plugin-incompatible"
SEVERITY = ERROR
TITLE = "Device plugin requirements not met by the pool"
NEEDS = (NEEDS_TARGET,)
REFERENCES = ("https://github.com/NVIDIA/k8s-device-plugin#prerequisites",)
REMEDIATION = "Upgrade the device plugin (or GPU Operator) to a release that supports the pool's stack."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    yield from component_findings(
        ctx, finding, "device plugin", lambda pool: pool.device_plugin, lambda matrix, v: matrix.device_plugin(v), device_plugin_unmet
    )
