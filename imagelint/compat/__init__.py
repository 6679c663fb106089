"""One compatibility model: will an image's CUDA code run on a node pool, and if not, how it fails.

Every rule that speaks about "does this run" (IL101, IL102's notes, IL107, IL401, IL503)
asks this package and renders its answer, so no two findings can disagree. The
model reads facts (``imagelint.facts.model``), the pool (``imagelint.deploytarget``) and
the matrix (duck-typed ``imagelint.matrix.Matrix``); it never imports a rule.

* ``evidence``: which CUDA runtime governs, which forward-compat libcuda the image has;
* ``pool``: the pool's GPUs (class, compute capability) and driver (bare branch, unknown branch);
* ``runtime``: what the container toolkit does with compat libraries, per mode and release;
* ``verdict``: the answer types (``Verdict`` made of ``Case`` s, one per runtime situation);
* ``judge``: the decision itself (``judge_pool``).
"""

from __future__ import annotations

from imagelint.compat.verdict import (
    DEPENDS,
    FAILS,
    FORWARD,
    MINOR,
    NATIVE,
    UNKNOWN,
    Case,
    CompatUse,
    Verdict,
)

__all__ = ["DEPENDS", "FAILS", "FORWARD", "MINOR", "NATIVE", "UNKNOWN", "Case", "CompatUse", "Verdict"]
