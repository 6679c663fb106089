"""The pool's driver branch cannot drive its GPUs, is past end of life, or is unknown to the matrix.

Facts from NVIDIA's data-centre driver documentation, in the matrix:

* **GPU support** (``driver_gpu_support``, "CUDA Toolkit, Driver, and Architecture
  Matrix"): R580 is the last branch for Maxwell, Pascal and Volta (a V100 pool on R590
  has no usable GPU); Blackwell needs R570 or newer (CUDA 12.8's branch); Kepler ended
  with R470. An error: no CUDA device is usable ("no CUDA-capable device is detected").
* **lifecycle** (``driver_lifecycle``, "Supported Drivers and CUDA Toolkit Versions"),
  compared with the run's date: a branch past its end-of-life date, or one NVIDIA's list
  no longer names ("all other previous driver branches ... are end of life": R525, R550,
  R590), gets no more security or bug fixes — a warning, the same for every such branch;
  a branch the list names and supports today — nothing. The advice names only branches
  supported today that drive the pool's GPUs (``imagelint drivers`` shows the same
  column).
* **unknown branches**: a driver newer than every branch the matrix knows (``--driver
  999.1``) is not mapped to any CUDA version or lifecycle; the rule says so (info). A bare
  branch (``--driver 535`` / ``R535``) is judged as the oldest 535.x, and said so (info).

A pool finding is about the pool, not the file: a run reports it once per pool.

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
from collections.abc import Iterator

from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)

ID = "IL503"
NAME = "driver-branch-unsupported"
SEVERITY = WARNING  # past end of life; a driver that cannot drive the GPU is an error
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
    from imagelint.compat.pool import (
        driver_facts,
        driver_supports_gpu,
        host_driver,
        pool_gpus,
    )

    today = today or ctx.today or _dt.date.today()
    for pool in ctx.pools:
        host = host_driver(pool.driver)
        if host is None:
            continue
        facts = driver_facts(host, ctx.matrix)
        if facts.beyond_known:
            yield finding(
                f"pool {pool.name}: could not judge driver {host}: newer than any branch the matrix knows "
                f"(newest R{facts.newest_known})", None, severity=INFO, pool=pool,
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
                None, severity=ERROR, pool=pool, details=[f"{why}{note}"], remediation=fix, outcome="fails",
                failure="gpu-unsupported-by-driver",
                architecture=support.architecture,
            )
        if not facts.beyond_known:
            yield from _lifecycle(ctx, pool, host.branch, today)


def _lifecycle(ctx: RuleContext, pool, branch: int, today: _dt.date) -> Iterator[Finding]:
    from imagelint.compat.lifecycle import PAST_EOL, branch_status, supported_branches
    from imagelint.compat.pool import pool_gpus

    status = branch_status(branch, ctx.matrix, today)
    if status.status != PAST_EOL:
        return
    archs = tuple(g.arch for g in pool_gpus(pool, ctx.matrix) if g.arch)
    choices = supported_branches(ctx.matrix, today, archs)
    if status.listed:
        head = f"pool {pool.name}: driver branch R{branch} ({status.designation}) reached end of life in {status.eol}"
    else:
        head = (f"pool {pool.name}: driver branch R{branch} is past end of life: NVIDIA's list of supported "
                "data-centre branches no longer names it")
    advice = ", ".join(c.describe() for c in choices)
    yield finding(
        head, None, severity=WARNING, pool=pool,
        details=["it gets no more security or bug fixes",
                 f"supported on {today.isoformat()}" + (" for its GPUs" if archs else "") + f": {advice or 'none the matrix knows'}"],
        remediation=(f"Move the pool to a supported branch: {advice}." if advice else
                     "Move the pool to a supported branch (see NVIDIA's 'Supported Drivers and CUDA Toolkit Versions')."),
        eol=status.eol or "", supported=[c.branch for c in choices],
    )
