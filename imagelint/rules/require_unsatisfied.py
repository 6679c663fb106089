"""An ``NVIDIA_REQUIRE_*`` requirement is false on a node pool.

The NVIDIA container runtime evaluates every ``NVIDIA_REQUIRE_*`` variable
(ANDed; inside one, spaces separate OR terms and commas AND factors) against
the node's driver, its CUDA version and each visible GPU's brand and compute
capability. What happens when one is false depends on the toolkit's mode:

* **legacy** (``nvidia-container-runtime-hook``, ``docker --gpus``) and **csv**:
  the container refuses to start with ``nvidia-container-cli: requirement
  error: unsatisfied condition: cuda>=12.4, please update your driver to a newer
  version, or use an earlier cuda container``.
* **cdi / jit-cdi** (the default from toolkit 1.18.0): nothing is checked; the
  container starts, and fails later inside CUDA ("CUDA driver version is
  insufficient for CUDA runtime version") when the driver is really too old for
  the image's runtime — which IL101 judges, minor-version compatibility included.

The rule evaluates once per GPU model of the pool, with the toolkit mode from
the pool, else derived from its toolkit version through the matrix, else both.

Every ``NVIDIA_REQUIRE_*`` variable that is false is reported on its own, at the
variable it came from (``CUDA_VERSION`` when the runtime derives ``cuda>=X.Y`` from it),
with the fix that fits it: an ``arch`` term is about the GPU (schedule on other GPUs or
rebuild), a ``cuda``/``driver`` term about the driver or the base image. In cdi/jit-cdi
mode the finding says what the compatibility model (IL101) expects once it starts.

Remediation: schedule the image on pools whose driver (or GPU, for ``arch`` terms)
satisfies the requirement, or rebuild it on a base image whose requirement the driver meets.
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.compat.pool import PoolGpu
from imagelint.rules.base import (
    ERROR,
    NEEDS_CONFIG,
    NEEDS_TARGET,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.rules.pools import pool_cuda, pool_gpus, runtime_modes

ID = "IL102"
NAME = "require-unsatisfied"
SEVERITY = ERROR
TITLE = "NVIDIA_REQUIRE_* is not satisfied by a node pool"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
REFERENCES = ("https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/cmd/nvidia-container-runtime/README.md",)
REMEDIATION = "Run on nodes whose driver satisfies the requirement, or rebuild on a base image the driver supports."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def cli_message(message: str | None, requirement: str | None) -> str:
    """The line libnvidia-container prints, from the evaluator's message."""
    text = message or f"unsatisfied condition: {requirement}"
    if not text.startswith("requirement error"):
        text = f"requirement error: {text}"
    return f"nvidia-container-cli: {text}"


def check(ctx: RuleContext) -> Iterator[Finding]:
    if not ctx.pools or ctx.matrix is None:
        return
    from imagelint.matrix.require import (
        Device,
        RequireEnvError,
        evaluate_env,
        requirements_from_env,
    )

    env = dict(ctx.facts.cuda.env)
    try:
        if not requirements_from_env(env):
            return
    except RequireEnvError:
        return  # IL103 reports an invalid CUDA_VERSION
    from imagelint.rules._verdict import fit

    for pool in ctx.pools:
        if not pool.driver:
            continue
        cuda = pool_cuda(pool, ctx.matrix)
        gpus: list[PoolGpu | None] = [*pool_gpus(pool, ctx.matrix)] or [None]
        modes = runtime_modes(pool, ctx.matrix)
        eval_mode = "csv" if modes == ("csv",) else "legacy"
        after: str | None = None
        for gpu in gpus:
            devices = [Device(brand=gpu.brand, arch=gpu.arch)] if gpu else [Device(brand=None, arch=None)]
            outcome = evaluate_env(env, pool.driver, cuda, devices, eval_mode)
            if outcome.result != "fail":
                continue
            on = f"pool {pool.name} (driver {pool.driver}" + (f", {gpu.label}" if gpu else "") + ")"
            reports = f"driver {pool.driver} reports CUDA {cuda or '?'}" + (
                f"; {gpu.label} is compute {gpu.arch}" if gpu and gpu.arch else "")
            failing = list(_failing_variables(ctx, pool.driver, cuda, devices)) if eval_mode == "legacy" else []
            if not failing:  # csv semantics, or a failure only the whole check shows
                where = ctx.facts.cuda.requires[0].provenance if ctx.facts.cuda.requires else (
                    ctx.facts.cuda.cuda_version_env.provenance if ctx.facts.cuda.cuda_version_env else None)
                failing = [("NVIDIA_REQUIRE_*", outcome.requirement or "", where, outcome.message)]
            if after is None:
                after = _after_start(ctx, pool)
            for name, requirement, where, message in failing:
                head, details = _effect(modes, message, requirement, after)
                yield finding(
                    fit([f"{name} {_short(requirement, 40)!r} is false on {on}: {h}" for h in head]),
                    where, details=[*details, reports], pool=pool, requirement=requirement, variable=name, runtime_modes=list(modes),
                    gpu=gpu.label if gpu else None, remediation=_fix(name, requirement, gpu),
                )
            break  # one GPU model per pool says enough (every failing variable of it is reported)


def _failing_variables(ctx: RuleContext, driver: str, cuda: str | None, devices):
    """Each NVIDIA_REQUIRE_* variable (and the cuda>=X.Y an image without NVIDIA_REQUIRE_CUDA
    gets from CUDA_VERSION) evaluated on its own: the runtime ANDs them, so each false one is
    a separate reason, reported at the variable it came from."""
    from imagelint.matrix.require import (
        RequireEnvError,
        evaluate_requirement,
        is_legacy_image,
        legacy_cuda_requirement,
        requirements_disabled,
    )

    env = dict(ctx.facts.cuda.env)
    if requirements_disabled(env):
        return
    settings = [(s.name, s.value, s.provenance) for s in ctx.facts.cuda.requires
                if not s.name.startswith("NVIDIA_REQUIRE_JETPACK")]
    if is_legacy_image(env) and ctx.facts.cuda.cuda_version_env is not None:
        try:
            settings.append(("CUDA_VERSION", legacy_cuda_requirement(env["CUDA_VERSION"]),
                             ctx.facts.cuda.cuda_version_env.provenance))
        except RequireEnvError:
            pass
    for name, value, where in settings:
        outcome = evaluate_requirement(value, driver, cuda, devices)
        if outcome.result == "fail":
            yield name, value, where, outcome.message


def _fix(name: str, requirement: str, gpu) -> str:
    """The fix that fits what the requirement is about: an architecture is fixed by other GPUs
    (or a rebuild), a brand by other GPUs, a cuda/driver floor by the driver or the base image."""
    import re

    about = set(re.findall(r"(cuda|driver|arch|brand)\s*[<>=!]", requirement.lower()))
    if about and about <= {"arch"}:
        cc = f" (this pool's GPU is compute {gpu.arch})" if gpu is not None and gpu.arch else ""
        return ("Schedule the image on GPUs whose compute capability satisfies it (e.g. a nodeSelector on "
                f"nvidia.com/gpu.compute.major){cc}, or rebuild it for this GPU's architecture and relax {name}.")
    if about and about <= {"brand"}:
        return f"Schedule the image on GPUs of the brand {name} names, or relax {name}."
    if name == "CUDA_VERSION":
        return ("Run on nodes whose driver supports the image's CUDA (the runtime derives cuda>=X.Y from CUDA_VERSION "
                "when NVIDIA_REQUIRE_CUDA is unset), or rebuild on a base image the driver supports.")
    return REMEDIATION


def _after_start(ctx: RuleContext, pool) -> str:
    """What happens once the container starts anyway (cdi/jit-cdi): the compatibility verdict."""
    from imagelint.compat.judge import judge_pool
    from imagelint.compat.verdict import FAILS, FORWARD, MINOR, NATIVE, REFUSED, UNKNOWN

    phrases = {
        NATIVE: "then runs: the driver supports the image's CUDA natively",
        MINOR: "then runs only through minor-version compatibility (IL101)",
        FORWARD: "then runs through forward compatibility (IL101)",
        FAILS: "then fails inside CUDA (IL101 says how)",
        UNKNOWN: "then IL101 could not judge whether CUDA works",
    }
    outcomes = []
    for verdict in judge_pool(ctx.facts, pool, ctx.matrix):
        for case in verdict.cases:
            if case.failure != REFUSED and case.outcome not in outcomes:
                outcomes.append(case.outcome)
    if not outcomes:
        return "then fails inside CUDA if the driver is too old for the image's CUDA runtime (IL101 says whether it is)"
    return " or ".join(phrases[o] for o in outcomes) + (" depending on the runtime" if len(outcomes) > 1 else "")


def _short(requirement: str | None, limit: int = 100) -> str | None:
    """Official images carry a 60-term requirement; show its first OR term and how many follow
    (the whole string is in the finding's ``requirement`` field)."""
    if requirement is None or len(requirement) <= limit:
        return requirement
    terms = [t for t in requirement.split(" ") if t]
    first = terms[0] if len(terms[0]) <= limit // 2 else terms[0][: limit // 2 - 1] + "…"
    return f"{first} ... (+{len(terms) - 1} more OR terms)" if len(terms) > 1 else first


def _effect(modes: tuple[str, ...], message: str | None, requirement: str | None, after: str) -> tuple[list[str], list[str]]:
    """(headline endings, longest first; detail lines) for the runtime modes the pool may use."""
    refuses = f"libnvidia-container refuses to start the container with '{cli_message(message, requirement)}'"
    starts = f"the requirement is not checked, so the container starts anyway and {after}"
    from imagelint.matrix.require import runtime_enforces_requirements

    enforcing = [m for m in modes if runtime_enforces_requirements(m)]
    lax = [m for m in modes if not runtime_enforces_requirements(m)]
    if enforcing and lax:
        return (["the container refuses to start in legacy mode, starts in cdi/jit-cdi mode (runtime mode unknown)",
                 "refuses to start in legacy mode, starts in cdi/jit-cdi"],
                [f"legacy mode: {refuses}", f"cdi/jit-cdi mode: {starts}"])
    if enforcing:
        return ([f"the container refuses to start ({enforcing[0]} mode)", "refuses to start"], [refuses])
    return ([f"not checked in {lax[0]} mode: the container starts", "the container starts"], [starts])
