"""The answer of the compatibility model: one ``Verdict`` per image, pool and GPU model.

A verdict is made of ``Case`` s: one when the outcome is the same whatever the runtime
does, several when it depends on what the pool did not say (runtime mode, toolkit
release) — each case names the condition it holds under, so findings can say which
outcome depends on what instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NATIVE = "native"                 # the host driver runs the image's CUDA as is
MINOR = "minor-version-compat"    # runs within the CUDA major, with documented limits
FORWARD = "forward-compat"        # runs through the image's cuda-compat libcuda
FAILS = "fails"                   # CUDA calls fail (or the container is refused)
UNKNOWN = "unknown"               # could not judge: ``missing`` says what is missing
DEPENDS = "depends"               # Verdict.outcome only: the cases disagree

# How a failing case fails (``Case.failure``), with the words the user will see.
INSUFFICIENT = "driver-insufficient"
COMPAT_HW = "compat-not-supported-on-device"
COMPAT_MISMATCH = "system-driver-mismatch"
REFUSED = "requirement-refused"
GPU_UNSUPPORTED = "gpu-unsupported-by-driver"

ERRORS = {
    INSUFFICIENT: "cudaErrorInsufficientDriver (35): 'CUDA driver version is insufficient for CUDA runtime version'",
    COMPAT_HW: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804): 'forward compatibility was attempted on non supported HW'",
    COMPAT_MISMATCH: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): 'system has unsupported display driver / cuda driver combination'",
    REFUSED: "nvidia-container-cli: requirement error: unsatisfied condition (the container does not start)",
    GPU_UNSUPPORTED: "the driver does not drive this GPU: 'no CUDA-capable device is detected'",
}

# Worst first: the order findings use to pick a severity.
_RANK = {FAILS: 0, UNKNOWN: 1, MINOR: 2, FORWARD: 3, NATIVE: 4}


@dataclass(frozen=True)
class CompatUse:
    """The forward-compat libcuda a case loads, and who put it on the loader path."""

    path: str
    version: str
    cuda: str | None
    by: str  # "the image (LD_LIBRARY_PATH)", "the enable-cuda-compat hook (toolkit >= 1.17.5)", ...


@dataclass(frozen=True)
class Case:
    """One outcome and why, under ``condition`` ("" = whatever the runtime does)."""

    outcome: str
    reason: str
    failure: str | None = None
    limits: tuple[str, ...] = ()      # what stops working (minor-version compatibility)
    compat: CompatUse | None = None   # the compat libcuda loaded, if one is
    compat_skipped: str | None = None  # why the image's compat libcuda is not loaded
    fixes: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()     # what would let the model judge (UNKNOWN)
    condition: str = ""
    driver_cuda: str | None = None    # the CUDA the loaded libcuda supports (PTX JIT ceiling)
    situation: str = ""               # ``condition`` in few words ("legacy <1.17.4; cdi >=1.17.5")
    loaded_by: tuple[str, ...] = ()   # every ``compat.by`` of the situations merged into this case
    skipped_because: tuple[str, ...] = ()  # every ``compat_skipped`` of them
    # The image's own loader path loads its compat libcuda, and it changes nothing (the host's own
    # branch, not newer than the host's driver): why. Never said as "not loaded".
    compat_inert: str | None = None

    @property
    def error(self) -> str | None:
        return ERRORS.get(self.failure or "")

    def key(self) -> tuple[object, ...]:
        """What makes two cases the same outcome for a user (conditions aside)."""
        return (self.outcome, self.failure, self.compat is not None)


@dataclass(frozen=True)
class Verdict:
    """Whether the image's CUDA runs on one pool (one GPU model of it), and why."""

    pool: str
    gpu: str | None
    cuda: str | None              # the governing CUDA runtime version
    cuda_source: str | None
    min_driver: str | None        # the floor of that CUDA (None when the matrix does not know it)
    driver: str | None            # the pool's driver as given
    cases: tuple[Case, ...]
    notes: tuple[str, ...] = ()       # bare branch, driver newer than the matrix knows, ...
    uncertain: tuple[str, ...] = ()   # matrix rows the verdict rests on that are uncertain

    @property
    def outcome(self) -> str:
        outcomes = {c.outcome for c in self.cases}
        return outcomes.pop() if len(outcomes) == 1 else DEPENDS

    @property
    def worst(self) -> Case:
        return min(self.cases, key=lambda c: _RANK.get(c.outcome, 9))

    @property
    def depends(self) -> bool:
        return len(self.cases) > 1

    def failing(self) -> tuple[Case, ...]:
        return tuple(c for c in self.cases if c.outcome == FAILS)


def merge_cases(cases: list[Case], situations: list[Any] | None = None, describe: Any = None) -> tuple[Case, ...]:
    """Cases with the same outcome become one, their situations described together
    (``describe(chosen, every)``); when all agree, one case remains, with the condition the
    pool itself fixed (its given mode/toolkit), if any."""
    situations = situations or [None] * len(cases)
    groups: dict[tuple[object, ...], list[tuple[Case, Any]]] = {}
    for case, sc in zip(cases, situations):
        groups.setdefault(case.key(), []).append((case, sc))
    every = [sc for sc in situations if sc is not None]
    out = []
    for members in groups.values():
        first = members[0][0]
        chosen = [sc for _, sc in members if sc is not None]
        if describe is not None and every:
            if len(groups) > 1:
                condition, situation = describe(chosen, every), describe(chosen, every, short=True)
            else:
                keep = all(getattr(sc, "era", None) is None for sc in every)
                condition = situation = first.condition if keep else ""
        else:
            condition = situation = " or ".join(dict.fromkeys(c.condition for c, _ in members if c.condition))
        reason = first.reason
        bys = tuple(dict.fromkeys(c.compat.by for c, _ in members if c.compat is not None))
        if first.compat is not None and len(bys) > 1:
            # Who loads it differs by situation: the case line lists them (``loaded_by``).
            reason = reason.replace(first.compat.by, "the container runtime", 1)
        skips = tuple(dict.fromkeys(c.compat_skipped for c, _ in members if c.compat_skipped))
        if first.compat_skipped and len(skips) > 1:
            reason = reason.replace(first.compat_skipped, " / ".join(skips), 1)
        out.append(Case(**{**first.__dict__, "condition": condition, "reason": reason, "situation": situation,
                           "loaded_by": bys, "skipped_because": skips}))
    return tuple(sorted(out, key=lambda c: _RANK.get(c.outcome, 9)))
