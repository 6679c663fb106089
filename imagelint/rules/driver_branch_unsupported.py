"""The pool's driver branch cannot drive its GPUs, is past end of life, or is unknown to the matrix.

Facts from NVIDIA's data-centre driver documentation, in the matrix:

* **GPU support** (``driver_gpu_support``, "CUDA Toolkit, Driver, and Architecture
  Matrix"): R580 is the last branch for Maxwell, Pascal and Volta (a V100 pool on R590
  has no usable GPU); Blackwell needs R570 or newer (CUDA 12.8's branch); Kepler ended
  with R470. An error: no CUDA device is usable ("no CUDA-capable device is detected").
* **lifecycle** (``driver_lifecycle``, "Supported Drivers and CUDA Toolkit Versions"):
  a branch past its end-of-life date gets no more security or bug fixes (R535 ended in
  June 2026) — a warning; a branch NVIDIA's current list does not name (an older
  production branch or a short-lived New Feature Branch) — info.
* **unknown branches**: a driver newer than every branch the matrix knows (``--driver
  999.1``) is not mapped to any CUDA version; the rule says it could not judge (a
  warning). A bare branch (``--driver 535`` / ``R535``) is judged as the oldest 535.x,
  and said so (info).

The compatibility verdicts of IL101/IL107 rest on the same facts, so a pool whose
driver cannot drive its GPU is never reported as running an image.

Remediation: move the pool to a supported driver branch for its GPUs (R580 for Volta
and older; R570 or newer for Blackwell), and off branches past end of life.

Anti-pattern::

    imagelint check img --driver 590.44.01 --gpu V100   # R590 dropped Volta

Best practice::

    imagelint check img --driver 580.95.05 --gpu V100
"""

from __future__ import annotations

import datetime as _dt
from typing import Iterator

from imagelint.rules.base import ERROR, INFO, NEEDS_TARGET, WARNING, Finding, FindingFactory, RuleContext

ID = "IL503"
NAME = "driver-branch-unsupported"
SEVERITY = ERROR
TITLE = "Driver branch cannot drive the pool's GPUs, is past end of life, or is unknown"
NEEDS = (NEEDS_TARGET,)
REFERENCES = (
    "https://docs.nvidia.com/datacenter/tesla/drivers/cuda-toolkit-driver-and-architecture-matrix.html",
    "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html",
)
REMEDIATION = "Run the pool on a supported driver branch for its GPUs."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext, today: _dt.date | None = None) -> Iterator[Finding]:
    if ctx.matrix is None:
        return
    from imagelint.compat.pool import driver_facts, driver_supports_gpu, host_driver, pool_gpus

    today = today or _dt.date.today()
    for pool in ctx.pools:
        host = host_driver(pool.driver)
        if host is None:
            continue
        facts = driver_facts(host, ctx.matrix)
        if facts.beyond_known:
            yield finding(
                f"pool {pool.name}: could not judge driver {host}: newer than any branch the matrix knows "
                f"(newest R{facts.newest_known})", None, severity=WARNING, pool=pool,
                details=[f"the matrix {ctx.matrix.version} does not know the CUDA version it reports or the GPUs it drives"],
                remediation="Use a newer imagelint matrix (--matrix), or check the driver version.", outcome="unknown",
            )
        if host.bare:
            yield finding(
                f"pool {pool.name}: driver given as branch R{host.branch} without a patch level",
                None, severity=INFO, pool=pool,
                details=[f"every floor inside the branch is judged against the oldest {host.branch}.x"],
                remediation="Give the full driver version (e.g. 535.104.05) for exact floors.",
            )
        for gpu in pool_gpus(pool, ctx.matrix):
            support = driver_supports_gpu(host.branch, gpu.arch, ctx.matrix)
            if support.supported is not False:
                continue
            if support.last_branch is not None and host.branch > support.last_branch:
                why = f"R{support.last_branch} is the last branch that drives {support.architecture} GPUs"
                fix = f"Run the pool on an R{support.last_branch} driver, or move the workload to newer GPUs."
            else:
                why = f"{support.architecture} GPUs need branch R{support.first_branch} or newer"
                fix = f"Upgrade the pool's driver to R{support.first_branch} or newer."
            note = " (uncertain matrix row)" if support.uncertain else ""
            yield finding(
                f"pool {pool.name}: driver {host.label} cannot drive {gpu.label} (compute {gpu.arch}): "
                "no CUDA device is usable ('no CUDA-capable device is detected')",
                None, pool=pool, details=[f"{why}{note}"], remediation=fix, outcome="fails", failure="gpu-unsupported-by-driver",
                architecture=support.architecture,
            )
        yield from _lifecycle(ctx, pool, host.branch, today)


def _lifecycle(ctx: RuleContext, pool, branch: int, today: _dt.date) -> Iterator[Finding]:  # type: ignore[no-untyped-def]
    life = ctx.matrix.driver_lifecycle(branch)
    if life is None:
        listed = [r["branch"] for r in ctx.matrix.rows("driver_lifecycle")]
        if listed and min(listed) < branch < max(listed) or (listed and branch < min(listed)):
            yield finding(
                f"pool {pool.name}: driver branch R{branch} is not a supported data-centre branch: past end of life, "
                "or a short-lived New Feature Branch", None, severity=INFO, pool=pool,
                details=[f"NVIDIA's list of supported branches: {', '.join('R' + str(b) for b in sorted(listed))}"],
                remediation="Move the pool to a Long Term Support or Production Branch.",
            )
        return
    eol = life.get("eol_date")
    if eol and _dt.date.fromisoformat(eol) < today:
        yield finding(
            f"pool {pool.name}: driver branch R{branch} ({life['designation']}) reached end of life in {life['eol']}",
            None, severity=WARNING, pool=pool, details=["it gets no more security or bug fixes"],
            remediation="Move the pool to a supported branch (see NVIDIA's 'Supported Drivers and CUDA Toolkit Versions').",
            eol=life["eol"],
        )
