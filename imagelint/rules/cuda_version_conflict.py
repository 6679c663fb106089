"""Evidence in the image disagrees about the CUDA major.minor.

``CUDA_VERSION`` says 12.2 but ``/usr/local/cuda/version.json`` says 12.4, or a
pip wheel brings its own CUDA 12.4 runtime into a CUDA 12.1 base: the runtime a
process actually loads depends on its library path. The highest version
governs the driver floor (IL101), because some process will load it.

Remediation: keep one CUDA runtime per image, or update the env/labels to match
the toolkit that is installed.
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    NEEDS_CONFIG,
    NEEDS_FILES,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.rules.pools import distinct_major_minors, governing_cuda

ID = "IL105"
NAME = "cuda-version-conflict"
SEVERITY = WARNING
TITLE = "CUDA version evidence disagrees"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES)
PRECISION = "medium"
REFERENCES = ("https://docs.nvidia.com/deploy/cuda-compatibility/",)
REMEDIATION = "Keep one CUDA runtime per image, or make CUDA_VERSION/labels match the installed toolkit."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    by_mm = distinct_major_minors(ctx.facts, ctx.matrix)
    if len(by_mm) < 2:
        return
    governing = governing_cuda(ctx.facts, ctx.matrix)
    assert governing is not None  # there is evidence
    parts = []
    for mm, evs in sorted(by_mm.items(), key=lambda kv: tuple(int(x) for x in kv[0].split("."))):
        parts.append(f"{mm} ({', '.join(f'{e.source} {e.provenance.describe()}' for e in evs)})")
    yield finding(
        f"CUDA version evidence disagrees ({', '.join(sorted(by_mm))}): CUDA {governing.version} from "
        f"{governing.evidence.source} governs the driver floor",
        governing.evidence.provenance, details=[f"CUDA {p}" for p in parts], versions=sorted(by_mm), governing=governing.version,
    )
