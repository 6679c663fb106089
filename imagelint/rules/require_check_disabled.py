"""The image turns the runtime's driver check off, or its requirement checks nothing.

``NVIDIA_DISABLE_REQUIRE`` read as true by Go's ``strconv.ParseBool``
(``1``, ``t``, ``T``, ``TRUE``, ``true``, ``True``) drops every
``NVIDIA_REQUIRE_*`` check: an image that needs a newer driver starts and fails
inside CUDA instead of being refused with a clear message.

A requirement whose ``cuda>=`` floor is below the image's own CUDA
major.minor checks nothing useful: NGC images set ``NVIDIA_REQUIRE_CUDA=cuda>=9.0``
on CUDA 12 runtimes, so any driver passes. That NGC pattern is deliberate (the
containers rely on forward compatibility and their entrypoint's driver check), so
an NGC image's ``cuda>=9.0`` is reported once, at info; anywhere else it is a warning.

Anti-pattern::

    ENV NVIDIA_DISABLE_REQUIRE=true

Best practice::

    ENV NVIDIA_REQUIRE_CUDA="cuda>=12.4"

``NVIDIA_DISABLE_REQUIRES`` (plural) is read by nothing (it appears only in a
changelog and an issue comment); setting it is reported as info, since the
author probably believed it disabled the check.

Remediation: remove ``NVIDIA_DISABLE_REQUIRE``, and set ``NVIDIA_REQUIRE_CUDA``
to ``cuda>=X.Y`` for the image's CUDA version (plus the brand/driver terms of
the official images if forward compatibility is intended).
"""

from __future__ import annotations

import re
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
from imagelint.rules.pools import compare, governing_cuda
from imagelint.versions import version_key

ID = "IL104"
NAME = "require-check-disabled"
SEVERITY = WARNING
TITLE = "The runtime's NVIDIA_REQUIRE_* check is disabled or checks nothing"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = ("https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/internal/config/image/cuda_image.go",)
REMEDIATION = "Set NVIDIA_REQUIRE_CUDA=cuda>=X.Y for the image's CUDA (and remove NVIDIA_DISABLE_REQUIRE where it is set)."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

# Go's strconv.ParseBool true spellings (the runtime parses NVIDIA_DISABLE_REQUIRE with it).
_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_CUDA_FLOOR = lazy_pattern(r"^cuda>=([0-9.]+)$", re.IGNORECASE)


def check(ctx: RuleContext) -> Iterator[Finding]:
    cuda = ctx.facts.cuda
    if cuda.disable_require is not None and cuda.disable_require.value in _GO_TRUE:
        yield finding(
            f"NVIDIA_DISABLE_REQUIRE={cuda.disable_require.value} turns off every NVIDIA_REQUIRE_* check: "
            f"on a too-old driver the container starts and fails inside CUDA",
            cuda.disable_require.provenance,
            remediation="Remove NVIDIA_DISABLE_REQUIRE (and set NVIDIA_REQUIRE_CUDA=cuda>=X.Y for the image's CUDA).",
        )
    if cuda.disable_requires_plural is not None:
        yield finding(
            "NVIDIA_DISABLE_REQUIRES (plural) is read by no NVIDIA component; it does not disable the "
            "requirement check (the variable is NVIDIA_DISABLE_REQUIRE)",
            cuda.disable_requires_plural.provenance, severity=INFO,
            remediation="Remove it (or use NVIDIA_DISABLE_REQUIRE if disabling is really intended).",
        )
    governing = governing_cuda(ctx.facts, ctx.matrix)
    if governing is None:
        return
    # Major-only evidence (libcudart.so.12) is held to its major: cuda>=11.0 is below 12, cuda>=12.0 is not.
    image_cuda = governing.major_minor or governing.version
    for setting in cuda.requires:
        if setting.name != "NVIDIA_REQUIRE_CUDA" or not setting.value.strip():
            continue
        floors = [m.group(1) for t in setting.value.split(" ") for f in t.split(",") if (m := _CUDA_FLOOR.match(f))]
        if floors and all(compare(f, image_cuda) < 0 for f in floors):
            if _ngc_convention(ctx.facts, setting.value):
                # NGC's deliberate pattern: the container relies on forward compatibility and its
                # entrypoint's driver check. Said at info, the severity a platform team would choose.
                yield finding(
                    f"NVIDIA_REQUIRE_CUDA={setting.value.strip()} is NGC's convention: the runtime does not check "
                    f"the driver for CUDA {governing.version}; the NGC entrypoint and forward-compat libraries "
                    "do (data-centre GPUs only), so a too-old driver shows up at container start, not at admission",
                    setting.provenance, severity=INFO, remediation="", floor=max(floors, key=version_key),
                    cuda=governing.version, convention="ngc",
                )
                continue
            yield finding(
                f"NVIDIA_REQUIRE_CUDA asks only for cuda>={max(floors, key=version_key)} but the image's CUDA is "
                f"{governing.version}: the runtime lets it start on drivers too old for it",
                setting.provenance, floor=max(floors, key=version_key), cuda=governing.version,
                remediation=f"Set NVIDIA_REQUIRE_CUDA=cuda>={image_cuda} (the image's CUDA), "
                "plus the brand/driver terms of the official images if forward compatibility is intended.",
            )


# Env NGC framework containers set (nvidia-facts: NVIDIA_PRODUCT_NAME, NVIDIA_<FRAMEWORK>_VERSION,
# CUDA_DRIVER_VERSION next to NVIDIA_REQUIRE_CUDA=cuda>=9.0).
_NGC_ENV = lazy_pattern(r"^(?:NVIDIA_PRODUCT_NAME|NVIDIA_BUILD_ID|NVIDIA_[A-Z]+_VERSION|CUDA_DRIVER_VERSION)$")


def _ngc_convention(facts, value: str) -> bool:
    return value.strip() == "cuda>=9.0" and any(_NGC_ENV.match(e.name) for e in facts.env)

