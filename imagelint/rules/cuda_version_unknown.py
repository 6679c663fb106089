"""GPU libraries are present but no CUDA version can be determined.

The image bundles CUDA or driver libraries, or compiled GPU code, yet nothing
(``version.json``, ``version.txt``, ``libcudart.so.X.Y.Z``, a CUDA pip wheel,
``torch/version.py``, ``CUDA_VERSION``) says which CUDA runtime it uses, so the
driver floor cannot be checked. Also reported when the only evidence is a
libcudart named by its SONAME (``libcudart.so.12``, ``libcudart.so.11.0``, as
pip wheels ship it): the major is known, the minor is not. When the only evidence
is an NGC release (``NVIDIA_PYTORCH_VERSION=26.11``) the matrix does not know, the
rule says it could not judge (a warning): "no findings" must never mean "could not
look".

Remediation: set ``CUDA_VERSION`` (or a ``com.nvidia.cuda.version`` label) to
the CUDA release the image is built with.
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    INFO,
    NEEDS_CONFIG,
    NEEDS_FILES,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL106"
NAME = "cuda-version-unknown"
SEVERITY = INFO
TITLE = "GPU libraries present, CUDA version unknown"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
PRECISION = "medium"
REFERENCES = ()
REMEDIATION = "Set CUDA_VERSION (or a com.nvidia.cuda.version label) to the CUDA release used."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    facts = ctx.facts
    major_only = [v for v in facts.cuda.versions if v.precision == "major"]
    if major_only and len(major_only) == len(facts.cuda.versions):
        # Only SONAME-named libcudart files (libcudart.so.12): the major is known, its minor --
        # and so the driver floor within that major -- is not.
        ev = major_only[0]
        yield finding(
            f"only the CUDA major is known ({ev.version}.x): the driver floor within CUDA {ev.version} cannot be checked",
            ev.provenance, details=[f"the evidence is a libcudart named by its SONAME: {ev.provenance.describe()}"],
        )
        return
    from imagelint.compat.evidence import cuda_runtime_evidence, unknown_ngc_releases

    unknown_ngc = unknown_ngc_releases(facts, ctx.matrix)
    if unknown_ngc and ctx.matrix is not None and not cuda_runtime_evidence(facts, ctx.matrix):
        # An NGC release (NVIDIA_PYTORCH_VERSION=26.11) is the only evidence, and the matrix does not know it.
        ev = unknown_ngc[0]
        product = (ev.component or "ngc-").split("-", 1)[1]
        yield finding(
            f"could not judge: NGC {product} release {ev.version} is not in the matrix {ctx.matrix.version}",
            ev.provenance, severity=WARNING,
            details=[f"so the CUDA version it ships, and the driver it needs, are unknown (seen at "
                     f"{ev.provenance.describe()})"],
            remediation="Use a newer imagelint matrix (--matrix), or set CUDA_VERSION to the CUDA release the image ships.",
        )
        return
    if facts.cuda.versions or not facts.complete:
        return
    evidence = [lib.provenance for lib in facts.driver_libraries] + [code.provenance for code in facts.gpu_code]
    if not evidence:
        return
    yield finding(
        "could not judge: the image holds GPU libraries but no CUDA version, so the driver floor cannot be checked",
        evidence[0], details=[f"GPU libraries: {evidence[0].describe()}"
                              + (f" and {len(evidence) - 1} more" if len(evidence) > 1 else "")],
    )
