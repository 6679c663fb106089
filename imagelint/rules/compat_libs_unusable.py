"""Forward-compat CUDA libraries in the image that a node pool will not use, or that break it.

The image's ``cuda-compat`` libcuda (``/usr/local/cuda/compat/libcuda.so.*``) replaces the
host's libcuda only when something puts it first on the loader path: the image itself
(``LD_LIBRARY_PATH`` or ``ld.so.conf``, as NGC images do), libnvidia-container in legacy
mode before toolkit 1.17.4 and again from 1.17.7 (``cuda-compat-mode=ldconfig``), or the
``enable-cuda-compat`` hook the nvidia runtime adds from toolkit 1.17.5 (cdi, jit-cdi, and
legacy 1.17.5-1.17.6; from 1.19.0 only when the library's ``.note.cuda.fwd_compatibility``
lists the host branch) — each only when the compat driver is newer than the host's.
Toolkit 1.17.4, and cdi / jit-cdi mode before 1.17.5, never load it. Neither path looks at the GPU, and NVIDIA supports
forward compatibility only on data-centre GPUs (and NGC server-ready RTX SKUs, Jetson).

The rule renders the compatibility model's verdict (the one IL101 renders) from the
compat library's side:

* loaded on a GPU forward compatibility does not support (GeForce, workstation cards):
  error 804 "forward compatibility was attempted on non supported HW" — an error (a
  warning when only some runtime modes / toolkit releases load it);
* loaded on a host branch its package does not support: error 803;
* not loaded where the image needs it: a warning naming why (toolkit release, mode,
  ELF note) and what the image does instead;
* not loaded where the host driver runs the image natively anyway: info.

Remediation: on data-centre pools, let the compat library load (toolkit >= 1.17.5, or
``/usr/local/cuda/compat`` on ``LD_LIBRARY_PATH``); elsewhere remove the ``cuda-compat``
package (or keep it off the loader path) and build for the host driver's CUDA version.
"""

from __future__ import annotations

from collections.abc import Iterator

from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_FILES,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.rules.pools import compat_libcudas

ID = "IL107"
NAME = "compat-libs-unusable"
SEVERITY = WARNING
TITLE = "Forward-compat libraries will not be used on a pool, or fail there"
NEEDS = (NEEDS_FILES, NEEDS_TARGET)
REFERENCES = (
    "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/release-notes.html",
)
REMEDIATION = "Target data-centre GPUs on a supported driver branch, or build for the host driver's CUDA."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    libs = compat_libcudas(ctx.facts)
    if not libs or not ctx.pools or ctx.matrix is None:
        return
    from imagelint.compat.judge import judge_pool
    from imagelint.compat.verdict import FAILS, FORWARD, NATIVE
    from imagelint.rules import _verdict as words

    lib = libs[0]  # the one the loader would pick (the model judges the newest)
    for pool in ctx.pools:
        for verdict in judge_pool(ctx.facts, pool, ctx.matrix):
            broken = [c for c in verdict.cases if c.compat is not None and c.outcome == FAILS]
            unused = [c for c in verdict.cases if c.compat is None and c.compat_skipped]
            inert = [c for c in verdict.cases if c.compat_inert]
            if not broken and not unused and not inert:
                continue  # loaded and working (IL101 says so), or judged without it (no runtime question)
            lead = f"forward-compat libcuda {lib.version}"
            where = words.subject(verdict)
            if not broken and not unused:
                # The image loads it itself: never "not loaded"; it changes nothing on this driver.
                yield finding(
                    words.fit([f"{lead} is loaded by the image's own loader path for {where}, and adds nothing: "
                               "the host's own branch, no newer than its driver",
                               f"{lead} is loaded by the image's own loader path for {where}, and adds nothing"]),
                    lib.provenance, severity=INFO, pool=pool, details=words.details(verdict, inert),
                    remediation="", compat_version=lib.version, **words.extra(verdict),
                )
                continue
            if broken:
                level = ERROR if len(broken) == len(verdict.cases) else WARNING
                how = " or ".join(dict.fromkeys(words.failure_code(c) for c in broken))
                only = [f" ({c.situation or c.condition})" for c in broken if len(broken) < len(verdict.cases)]
                head = words.fit([f"{lead} breaks {where}: CUDA fails with {how}{''.join(only)}",
                                  f"{lead} breaks {where}: CUDA fails with {how}"
                                  + (" in some situations" if only else "")])
            elif all(c.outcome in (NATIVE, FORWARD) for c in verdict.cases):
                level = INFO
                head = words.fit([f"{lead} is not loaded for {where}; harmless: the host driver runs it"])
            else:
                level = WARNING
                situations = [c.situation or c.condition for c in unused if c.situation or c.condition]
                when = f" ({'; '.join(situations)})" if situations and len(unused) < len(verdict.cases) else ""
                head = words.fit([f"{lead} is not loaded for {where}, where the image needs it{when}",
                                  f"{lead} is not loaded for {where}, where the image needs it"
                                  + (" (some situations)" if when else "")])
            # Only the situations this library decides; the rest of the verdict is IL101's.
            shown = broken or (unused if level != INFO else verdict.cases)
            yield finding(
                head, lib.provenance, severity=level, pool=pool, details=words.details(verdict, shown),
                remediation=words.fixes(verdict) or ("" if level == INFO else REMEDIATION),
                compat_version=lib.version, **words.extra(verdict),
            )

