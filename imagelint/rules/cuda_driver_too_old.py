"""The image's CUDA runtime will not work (or works only with limits) on a node pool's driver.

IL101 renders the compatibility model's verdict (``imagelint.compat``) for the CUDA
runtime: the highest CUDA version any evidence shows (``version.json``,
``CUDA_VERSION``, ``libcudart.so.X.Y``, a CUDA wheel ...) against the pool's driver,
its GPU, the image's forward-compat libraries and what the container toolkit does
with them in the pool's runtime mode:

* **native**: the driver is at or above the release's floor (NVIDIA release notes,
  Table 3) — no finding;
* **minor-version compatibility**: within one CUDA major, a driver at or above that
  major's floor (11.x: 450.80.02, 12.x: 525.60.13, 13.x: 580) runs newer minor
  runtimes, except PTX newer than the driver ("the provided PTX was compiled with an
  unsupported toolchain") and APIs newer than it (``cudaErrorCallRequiresNewerDriver``)
  — a warning;
* **forward compatibility**: the image's ``cuda-compat`` libcuda is loaded (the image
  puts ``/usr/local/cuda/compat`` on its loader path, or the runtime does: legacy mode
  except toolkit 1.17.4, the ``enable-cuda-compat`` hook in cdi / jit-cdi from 1.17.5) on a
  data-centre GPU and a host branch the package supports — info;
* **NVIDIA's own images**: an NGC framework container (``FROM nvcr.io/nvidia/pytorch:23.10-py3``,
  or an image whose files show an NGC release and its compat package) runs on the data-centre
  drivers its release notes list ("Driver Requirements": 23.10 on R450 >= 450.51, R470 >= 470.57,
  R510, R525, R535) through its entrypoint — info; on GeForce or workstation GPUs the host driver
  alone decides; with no GPU named, a warning says which way each goes. An official
  ``nvidia/cuda`` base carries ``cuda-compat-X-Y`` off the loader path: it runs through forward
  compatibility where the toolkit loads it (the enable-cuda-compat hook from 1.17.5) and the
  package supports the host branch — a warning naming the condition, exact with ``--toolkit`` and
  ``--runtime-mode``;
* **fails**: "CUDA driver version is insufficient for CUDA runtime version", or, when
  a compat libcuda is loaded on a GPU forward compatibility does not support (GeForce,
  workstation cards), error 804 "forward compatibility was attempted on non supported
  HW", or on a host branch it does not support, error 803 — an error, or a warning when
  it fails only in some runtime modes / toolkit releases the target leaves open (the
  finding names which);
* **could not judge**: a CUDA release the matrix does not know, a pool without a
  driver version or GPU model where the outcome needs it — a warning saying what is
  missing.

Without a target, the rule reports (info) the minimum driver the image needs. Every
finding carries the concrete fixes the matrix knows: the driver floor, the newest CUDA
release the pool's driver runs natively, the ``cuda-compat-X-Y`` package on data-centre
pools.

Remediation: run the image on nodes with a driver at or above the floor, build it on
an older CUDA base image that the cluster's driver supports, or (data-centre GPUs)
install the matching ``cuda-compat`` package.

Anti-pattern::

    # needs >= 550.54.15; cluster: driver 470.57.02
    FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04

Best practice::

    # 535.104.05 nodes run it natively
    FROM nvidia/cuda:12.2.2-runtime-ubuntu22.04
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from imagelint.rules.base import (
    ERROR,
    INFO,
    NEEDS_CONFIG,
    NEEDS_FILES,
    NEEDS_TARGET,
    WARNING,
    Finding,
    FindingFactory,
    RuleContext,
)
from imagelint.rules.pools import governing_cuda

if TYPE_CHECKING:
    from imagelint.matrix.model import Matrix

ID = "IL101"
NAME = "cuda-driver-too-old"
SEVERITY = ERROR
TITLE = "CUDA runtime needs a newer driver than the target has"
NEEDS = (NEEDS_CONFIG, NEEDS_FILES, NEEDS_TARGET)
REFERENCES = (
    "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#cuda-major-component-versions",
    "https://docs.nvidia.com/deploy/cuda-compatibility/",
)
REMEDIATION = "Upgrade the pool's driver to at least the floor, or rebuild on a CUDA base the driver supports."

finding = FindingFactory(ID, NAME, SEVERITY, REMEDIATION)


def check(ctx: RuleContext) -> Iterator[Finding]:
    cuda = governing_cuda(ctx.facts, ctx.matrix)
    if cuda is None or ctx.matrix is None:
        return
    where = cuda.evidence.provenance
    basis = f"CUDA {cuda.version} (from {cuda.evidence.source})"
    if not ctx.pools:
        yield _no_target(ctx.matrix, cuda, basis, where)
        return
    from imagelint.compat.judge import judge_pool
    from imagelint.compat.verdict import GPU_UNSUPPORTED, REFUSED
    from imagelint.rules import _verdict as words

    for pool in ctx.pools:
        for verdict in judge_pool(ctx.facts, pool, ctx.matrix):
            level = words.severity(verdict)
            if level is None:
                continue
            failures = {c.failure for c in verdict.cases if c.failure}
            others = [c for c in verdict.cases if not c.failure and c.outcome != "native"]
            if failures and failures <= {REFUSED, GPU_UNSUPPORTED} and not others:
                continue  # IL102 (requirement refused) / IL503 (driver cannot drive the GPU) report it
            head, details = words.render(verdict)
            yield finding(
                head, words.where_of(verdict, ctx.facts, where), severity=level, pool=pool,
                details=[*details, f"CUDA {cuda.version} is the image's CUDA runtime: {cuda.evidence.source} "
                                   f"({cuda.evidence.provenance.describe()})"],
                remediation=words.fixes(verdict) or ("" if level == INFO else REMEDIATION), **words.extra(verdict),
            )


def _no_target(matrix: Matrix, cuda, basis: str, where) -> Finding:
    floor = matrix.driver_floor(cuda.version) if cuda.major_minor else None
    if floor is None:
        newest = matrix.newest_cuda_release()
        why = (f"the image names only CUDA major {cuda.version}" if cuda.major_minor is None
               else f"CUDA {cuda.version} is not a release the matrix {matrix.version} knows (newest: {newest})")
        return finding(
            f"could not judge the driver {basis} needs: {why}", where, severity=WARNING if cuda.major_minor else INFO,
            remediation="Use a newer imagelint matrix (--matrix) that knows this CUDA release." if cuda.major_minor else "",
            cuda=cuda.version, outcome="unknown",
        )
    kind = f"floor of CUDA {floor.release}" if floor.exact else f"GA floor of CUDA {floor.release}"
    if floor.uncertain:
        kind += ", uncertain matrix row"
    return finding(
        f"{basis} needs NVIDIA driver >= {floor.min_driver} ({kind}); no target given to compare against",
        where, severity=INFO, remediation="", min_driver=floor.min_driver, cuda=cuda.version,
    )
