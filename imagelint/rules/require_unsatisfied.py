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

Remediation: schedule the image on pools whose driver satisfies the
requirement, or rebuild it on a base image whose requirement the driver meets.
"""

from __future__ import annotations

from typing import Iterator

from imagelint.rules._common import pool_cuda, pool_gpus, runtime_modes
from imagelint.rules.base import ERROR, NEEDS_CONFIG, NEEDS_TARGET, Finding, FindingFactory, RuleContext

ID = "IL102"
NAME = "require-unsatisfied"
SEVERITY = ERROR
TITLE = "NVIDIA_REQUIRE_* is not satisfied by a node pool"
NEEDS = (NEEDS_CONFIG, NEEDS_TARGET)
TAGS = ("gpu", "cuda", "driver-compatibility")
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
    from imagelint.matrix.require import Device, RequireEnvError, evaluate_env, requirements_from_env

    env = dict(ctx.facts.cuda.env)
    try:
        if not requirements_from_env(env):
            return
    except RequireEnvError:
        return  # IL103 reports an invalid CUDA_VERSION
    where = ctx.facts.cuda.requires[0].provenance if ctx.facts.cuda.requires else (
        ctx.facts.cuda.cuda_version_env.provenance if ctx.facts.cuda.cuda_version_env else None
    )
    for pool in ctx.pools:
        if not pool.driver:
            continue
        cuda = pool_cuda(pool, ctx.matrix)
        gpus = pool_gpus(pool, ctx.matrix) or [None]
        for gpu in gpus:
            devices = [Device(brand=gpu.brand, arch=gpu.arch)] if gpu else [Device(brand=None, arch=None)]
            modes = runtime_modes(pool, ctx.matrix)
            eval_mode = "csv" if modes == ("csv",) else "legacy"
            outcome = evaluate_env(env, pool.driver, cuda, devices, eval_mode)
            if outcome.result != "fail":
                continue
            on = f"pool {pool.name} (driver {pool.driver}, CUDA {cuda or '?'}" + (f", {gpu.label}" if gpu else "") + ")"
            effect = _effect(modes, outcome.message, outcome.requirement)
            yield finding(
                f"requirement {_short(outcome.requirement)!r} is false on {on}: {effect}",
                where, pool=pool, requirement=outcome.requirement, runtime_modes=list(modes),
                gpu=gpu.label if gpu else None,
            )
            break  # one finding per pool: the first failing GPU model says enough


def _short(requirement: str | None, limit: int = 100) -> str | None:
    """Official images carry a 60-term requirement; show its first OR term and how many follow
    (the whole string is in the finding's ``requirement`` field)."""
    if requirement is None or len(requirement) <= limit:
        return requirement
    terms = [t for t in requirement.split(" ") if t]
    return f"{terms[0]} ... (+{len(terms) - 1} more OR terms)"


def _effect(modes: tuple[str, ...], message: str | None, requirement: str | None) -> str:
    refuses = f"the container refuses to start with '{cli_message(message, requirement)}'"
    starts = ("the requirement is not checked, so the container starts anyway and fails later inside CUDA "
              "if the driver is too old for the image's CUDA runtime (IL101 says whether it is)")
    from imagelint.matrix.require import runtime_enforces_requirements

    enforcing = [m for m in modes if runtime_enforces_requirements(m)]
    lax = [m for m in modes if not runtime_enforces_requirements(m)]
    if enforcing and lax:
        return f"in legacy mode {refuses}; in cdi/jit-cdi mode {starts} (runtime mode unknown)"
    if enforcing:
        return f"in {enforcing[0]} mode {refuses}"
    return f"in {lax[0]} mode {starts}"
