"""An ``NVIDIA_REQUIRE_*`` value the runtime cannot parse, or a ``CUDA_VERSION`` it chokes on.

libnvidia-container answers ``requirement error: invalid expression`` (and the
container does not start) when it reaches a factor it cannot parse: an unknown
operator (``==``, ``=<``), an empty value, a non-numeric version, an operator
other than ``=``/``!=`` on ``brand``, an unknown property name. Evaluation
short-circuits, so a broken term may only bite on some nodes: every factor is
checked here on its own.

A *legacy* image (``CUDA_VERSION`` set, ``NVIDIA_REQUIRE_CUDA`` empty or unset)
gets ``cuda>=MAJOR.MINOR`` from ``CUDA_VERSION``, parsed as semver: a 4-part
value such as ``12.2.2.009`` makes the hook fail with "failed to get
requirements". NGC images set ``NVIDIA_REQUIRE_CUDA`` and are not affected.

Remediation: fix the requirement's syntax (``cuda>=12.4``, ``brand=tesla``;
spaces mean OR, commas AND), or set ``NVIDIA_REQUIRE_CUDA`` (or a 3-part
``CUDA_VERSION``).

Anti-pattern::

    ENV NVIDIA_REQUIRE_CUDA="cuda==12.4"

Best practice::

    ENV NVIDIA_REQUIRE_CUDA="cuda>=12.4"
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    ERROR,
    NEEDS_CONFIG,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL103"
NAME = "require-invalid"
SEVERITY = ERROR
TITLE = "NVIDIA_REQUIRE_* or CUDA_VERSION cannot be parsed by the runtime"
NEEDS = (NEEDS_CONFIG,)
REFERENCES = ("https://github.com/NVIDIA/libnvidia-container/blob/master/src/cli/dsl.c",)
REMEDIATION = "Fix the requirement syntax (spaces = OR, commas = AND; operators = != < <= > >=)."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)

# Values that make every factor comparable, so that only syntax decides the outcome.
_PROBE_DRIVER = "999.99.99"
_PROBE_CUDA = "99.9"


def check(ctx: RuleContext) -> Iterator[Finding]:
    from imagelint.matrix.require import (
        Device,
        RequireEnvError,
        evaluate_requirement,
        requirements_from_env,
    )

    cuda = ctx.facts.cuda
    try:
        requirements_from_env(dict(cuda.env))
    except RequireEnvError as exc:
        where = cuda.cuda_version_env.provenance if cuda.cuda_version_env else None
        yield finding(
            f"CUDA_VERSION={cuda.cuda_version_env.value if cuda.cuda_version_env else '?'} is not a version the "
            "runtime can derive a requirement from: the container fails to start",
            where, details=[f"the image is a legacy image (NVIDIA_REQUIRE_CUDA unset or empty), so the runtime derives "
                            f"cuda>=X.Y from CUDA_VERSION: {exc}"], remediation="Set NVIDIA_REQUIRE_CUDA, or use a 3-part CUDA_VERSION.",
        )
    probe = [Device(brand="tesla", arch="9.0")]
    for setting in cuda.requires:
        if setting.name.startswith("NVIDIA_REQUIRE_JETPACK"):
            continue  # the runtime ignores these
        for term in setting.value.split(" "):
            for factor in term.split(","):
                if not factor:
                    continue
                outcome = evaluate_requirement(factor, _PROBE_DRIVER, _PROBE_CUDA, probe)
                if outcome.result == "error":
                    yield finding(
                        f"{setting.name}: {_clip(factor)!r} is not a valid requirement",
                        setting.provenance, details=["the runtime stops with 'requirement error: invalid expression' "
                                                     "when it reaches it"], factor=factor,
                    )


def _clip(text: str, limit: int = 60) -> str:
    """An image-controlled term, shortened for a headline (the whole term is in ``extra``)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
