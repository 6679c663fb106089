"""A multi-stage build ships a ``devel`` image as its final stage.

``devel`` images (``nvidia/cuda:*-devel-*``, ``pytorch/pytorch:*-devel``) carry the compiler,
headers and static libraries: several gigabytes more than ``runtime``, slower pulls on every
node, and more packages with CVEs. A multi-stage build exists to leave them behind: compile in a
``devel`` stage, copy the result into a ``runtime`` (or ``base``) stage.

Remediation: make the last stage ``FROM`` the matching ``runtime`` image and ``COPY --from`` the
build stage's output.

Anti-pattern::

    FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build
    RUN make
    FROM build
    CMD ["./app"]

Best practice::

    FROM nvidia/cuda:12.4.1-devel-ubuntu22.04 AS build
    RUN make
    FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
    COPY --from=build /src/app /app
    CMD ["/app"]
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

ID = "IL705"
NAME = "devel-final-stage"
SEVERITY = WARNING
TITLE = "devel image as the final stage of a multi-stage build"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = ("https://docs.docker.com/build/building/multi-stage/", "https://hub.docker.com/r/nvidia/cuda")
REMEDIATION = "Build in a devel stage and copy the output into a runtime-based final stage."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

_DEVEL_TAG = lazy_pattern(r":[^/@]*(?:^|[-_.:])devel(?:$|[-_.])")


def check(ctx: RuleContext) -> Iterator[Finding]:
    build = ctx.facts.build
    if build is None or build.stages < 2 or not _DEVEL_TAG.search(build.final_base):
        return
    yield finding(f"the final stage builds on {build.final_base}: the image ships the compiler and headers the "
                  "multi-stage build could leave behind", build.final_from, base=build.final_base)
