"""A real NVIDIA driver library is in the image, on the loader path.

The driver's user-space libraries (``libcuda.so``, ``libnvidia-ml.so``,
``libnvidia-ptxjitcompiler.so``...) must match the kernel module of the node:
the container toolkit mounts the host's copies at start. A copy baked into the
image, found first by the dynamic loader, shadows them and fails with "CUDA
driver version is insufficient" or ``NVML: Driver/library version mismatch``
on every node whose driver differs. Link-time stubs (``.../stubs/``) and
forward-compat libraries (``.../compat/``) are not reported here.

Where every target pool runs exactly the library's driver, the image works today: a warning
that it breaks on the next driver change (an upgrade planned with ``audit --plan`` shows the
error then), not an error. Without a target, or on a pool with another or no driver version,
an error.

Remediation: do not install driver packages (``libnvidia-compute-*``,
``libcuda1``) in the image; link against the CUDA stubs and let the toolkit
inject the host driver.

Anti-pattern::

    RUN apt-get install -y libnvidia-compute-535

Best practice::

    # nothing: the NVIDIA container toolkit mounts the host driver
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from imagelint.rules.base import (
    ERROR,
    NEEDS_FILES,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL201"
NAME = "driver-lib-bundled"
SEVERITY = ERROR
TITLE = "Driver library bundled in the image"
NEEDS = (NEEDS_FILES,)
REFERENCES = ("https://github.com/NVIDIA/nvidia-container-toolkit",)
REMEDIATION = "Remove driver packages from the image; the container toolkit injects the host's driver libraries."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def _matching_pools(ctx: RuleContext, version: str | None) -> tuple[str, ...]:
    """The pools when every one of them runs exactly ``version`` (the bundled copy matches the
    kernel module there, so it works today); () otherwise."""
    from imagelint.versions import DriverVersion

    wanted = DriverVersion.parse(version) if version else None
    if wanted is None or wanted.bare or not ctx.pools:
        return ()
    drivers = [DriverVersion.parse(p.driver) if p.driver else None for p in ctx.pools]
    if any(d is None or d.parts != wanted.parts for d in drivers):
        return ()
    return tuple(p.name for p in ctx.pools)


def check(ctx: RuleContext) -> Iterator[Finding]:
    real = [d for d in ctx.facts.driver_libraries if d.role == "real" and d.on_loader_path]
    files = [d for d in real if not d.is_symlink] or real
    for lib in files:
        version = f" {lib.version}" if lib.version else ""
        where = lib.provenance
        layer = f" in layer {where.layer_index}" if where.layer_index is not None else ""
        shadow = (f"/{lib.path.lstrip('/')}{layer} is in {os.path.dirname('/' + lib.path.lstrip('/'))}, "
                  "on the loader path, so it shadows the host driver the toolkit mounts")
        matching = _matching_pools(ctx, lib.version)
        if matching:
            yield finding(
                f"driver library {lib.name} is bundled in the image on the loader path: it works on driver{version} "
                f"today and breaks on the next driver change",
                where, severity=WARNING,
                details=[shadow, f"pool(s) {', '.join(matching)} run driver{version}, the library's own; on any other "
                                 "driver it fails ('Driver/library version mismatch', 'CUDA driver version is insufficient')"],
                library=lib.name, version=lib.version, path="/" + lib.path.lstrip("/"),
            )
            continue
        yield finding(
            f"driver library {lib.name} is bundled in the image on the loader path: it breaks on every node whose "
            f"driver is not{version or ' the same'}",
            where, details=[shadow], library=lib.name, version=lib.version, path="/" + lib.path.lstrip("/"),
        )
